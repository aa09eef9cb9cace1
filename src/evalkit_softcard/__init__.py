"""Set representations over item lists: soft cardinality, exact matching and thresholded matching.

Fränti & Mariescu-Istodor, "Soft precision and recall" (after Jimenez et al., "Text comparison
using soft cardinality"): the soft count of an item is 1 / Σ_j sim(a_i, a_j)^p over its set
(eq. 4), a set's soft cardinality is the sum of the counts (eq. 5), the union is the
concatenation G ⧺ P and card(G ∩ P) = card(G) + card(P) − card(G ⧺ P) (eq. 7).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import (
    BaseComponent,
    CardinalityTable,
    Cells,
    ItemSets,
    PluginContractError,
    Similarity,
    TNorm,
    cross_blocks,
    hookimpl,
    optional,
    pair_similarities,
    who,
)


@hookimpl
def evalkit_register_set_representations(register):
    for cls in (SoftCardinality, ExactMatch, ThresholdMatch):
        register(cls)


def power(sim: np.ndarray, p: float) -> np.ndarray:
    """sim^p in place (p = 1, the default, costs nothing)."""
    return sim if p == 1 else np.power(sim, p, out=sim)


class SoftCardinalityParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    p: float = Field(1.0, gt=0, description="Jimenez's exponent: soft count = 1 / Σ sim^p")
    bound: bool = Field(
        False, description="cap card(A) at |A| and card(G∩P) at min(card G, card P), so P, R ≤ 1"
    )


class SoftCardinality(BaseComponent[SoftCardinalityParams]):
    """Jimenez's soft cardinality: near-duplicate items count partly (Fränti & Mariescu-Istodor)."""

    name = "soft_cardinality"
    uses = frozenset({"similarity"})
    data = "items"
    Params = SoftCardinalityParams

    def cardinalities(
        self, reference: ItemSets, prediction: ItemSets, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        assert similarity is not None, "soft_cardinality uses a similarity, so evalkit always passes one"
        cells = Cells(reference, prediction)
        n, p = len(cells.item_list), self.params.p
        union = np.zeros(n)  # Σ_j sim^p over G ⧺ P, per item
        own = np.zeros(n)  # Σ_j sim^p over the item's own set
        blocks = cells.as_blocks(similarity)
        for rows, sim in cells.matrices(similarity, np.flatnonzero(blocks)):
            to_ref, to_pred = cells.side_sums(rows, power(sim, p))
            own[rows] = np.where(cells.in_ref[rows], to_ref, to_pred)
            union[rows] = to_ref + to_pred
        i, j = cells.pairs(np.flatnonzero(~blocks), cross=False)
        symmetric = optional(similarity, "symmetric")
        if symmetric:
            # Each unordered pair once, counted for both items; sim(a, a) = 1 by contract.
            i, j = i[i < j], j[i < j]
            diagonal = np.bincount(np.flatnonzero(~blocks[cells.cell_of_item]), minlength=n)
            union += diagonal
            own += diagonal
        sim = power(pair_similarities(similarity, cells, i, j), p)
        same_side = sim * (cells.in_ref[i] == cells.in_ref[j])
        union += np.bincount(i, weights=sim, minlength=n)
        own += np.bincount(i, weights=same_side, minlength=n)
        if symmetric:
            union += np.bincount(j, weights=sim, minlength=n)
            own += np.bincount(j, weights=same_side, minlength=n)
        if n and (union.min() <= 0 or own.min() <= 0):
            item = cells.item_list[int(np.argmin(own))]
            raise PluginContractError(
                f"{who(similarity, 'similarity')} gives {item!r} no similarity to itself; a "
                "similarity must be 1 for identical items"
            )
        ref_items, pred_items = np.flatnonzero(cells.in_ref), np.flatnonzero(~cells.in_ref)
        card_ref = cells.per_cell(1 / own[ref_items], ref_items)
        card_pred = cells.per_cell(1 / own[pred_items], pred_items)
        card_union = cells.per_cell(1 / union, np.arange(n))
        # card(G ⧺ P) <= card(G) + card(P) exactly; rounding may leave -1e-16.
        inter = np.maximum(card_ref + card_pred - card_union, 0)
        if self.params.bound:
            card_ref = np.minimum(card_ref, cells.n_ref.reshape(cells.shape))
            card_pred = np.minimum(card_pred, cells.n_pred.reshape(cells.shape))
            inter = np.minimum(inter, np.minimum(card_ref, card_pred))
        return CardinalityTable(card_ref, card_pred, inter)


class ExactMatch(BaseComponent):
    """Crisp sets of items: |A| = number of distinct items, |G ∩ P| = distinct items in both."""

    name = "exact_match"
    uses: ClassVar[frozenset[str]] = frozenset()
    data = "items"

    def cardinalities(
        self, reference: ItemSets, prediction: ItemSets, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        counts = np.array(
            [
                (len(g), len(p), len(g & p))
                for ref_sample, pred_sample in zip(reference.samples, prediction.samples)
                for g, p in zip(map(set, ref_sample), map(set, pred_sample))
            ],
            dtype=np.float64,
        ).reshape(len(reference), len(reference.classes), 3)
        return CardinalityTable(counts[..., 0], counts[..., 1], counts[..., 2])


class ThresholdMatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    threshold: float = Field(0.8, ge=0, le=1, description="two items match when sim >= threshold")


class ThresholdMatch(BaseComponent[ThresholdMatchParams]):
    """Crisp*: items match when sim >= threshold (0.8), each at most once, as many as possible.

    Among the matchings with the most matched pairs, the one with the largest total similarity is
    taken (an optimal assignment, so ties and one-to-many candidates are resolved globally, not by
    a greedy order). |A| = number of items (duplicates count), |G ∩ P| = matched pairs.
    """

    name = "threshold_match"
    uses = frozenset({"similarity"})
    data = "items"
    Params = ThresholdMatchParams

    def cardinalities(
        self, reference: ItemSets, prediction: ItemSets, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        assert similarity is not None, "threshold_match uses a similarity, so evalkit always passes one"
        cells = Cells(reference, prediction)
        matched = np.zeros(len(cells.size))
        for cell, sim in cross_blocks(similarity, cells):
            matched[cell] = max_matching(sim, self.params.threshold)
        shape = cells.shape
        return CardinalityTable(
            cells.n_ref.reshape(shape).astype(np.float64), cells.n_pred.reshape(shape).astype(np.float64),
            matched.reshape(shape),
        )


def max_matching(sim: np.ndarray, threshold: float) -> int:
    """The most pairs with sim >= threshold, each row and column used at most once."""
    from scipy.optimize import linear_sum_assignment  # here: scipy.optimize takes 0.15 s to import

    eligible = sim >= threshold
    if not eligible.any():
        return 0
    # Every eligible pair outweighs any sum of similarities, so the most pairs win first and the
    # largest total similarity breaks ties among them.
    weight = np.where(eligible, min(sim.shape) + 1 + sim, 0.0)
    rows, cols = linear_sum_assignment(weight, maximize=True)
    return int(eligible[rows, cols].sum())
