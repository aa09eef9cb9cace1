"""Set representations over item lists: soft cardinality, exact matching and thresholded matching.

Fränti & Mariescu-Istodor, "Soft precision and recall" (after Jimenez et al., "Text comparison
using soft cardinality"): the soft count of an item is 1 / Σ_j sim(a_i, a_j)^p over its set
(eq. 4), a set's soft cardinality is the sum of the counts (eq. 5), the union is the
concatenation G ⧺ P and card(G ∩ P) = card(G) + card(P) − card(G ⧺ P) (eq. 7).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from scipy.optimize import linear_sum_assignment

from evalkit import hookimpl
from evalkit.errors import PluginContractError
from evalkit.items import ItemSets
from evalkit.protocols import BaseComponent, Similarity, TNorm
from evalkit.table import CardinalityTable


@hookimpl
def evalkit_register_set_representations(register):
    for cls in (SoftCardinality, ExactMatch, ThresholdMatch):
        register(cls)


class Cells:
    """The (sample, class) cells of a batch, flattened: every cell's items G ⧺ P in one list.

    ``pairs(i)`` style index arrays let a similarity score all within-cell pairs in one call.
    """

    def __init__(self, reference: ItemSets, prediction: ItemSets) -> None:
        self.shape = (len(reference), len(reference.classes))
        items: list[Any] = []
        n_ref, n_pred = [], []
        for ref_sample, pred_sample in zip(reference.samples, prediction.samples):
            for g, p in zip(ref_sample, pred_sample):
                items += g
                items += p
                n_ref.append(len(g))
                n_pred.append(len(p))
        self.items = np.empty(len(items), dtype=object)
        self.items[:] = items if items else []
        self.n_ref, self.n_pred = np.array(n_ref, dtype=np.intp), np.array(n_pred, dtype=np.intp)
        self.size = self.n_ref + self.n_pred
        self.offset = np.concatenate([[0], np.cumsum(self.size)[:-1]]).astype(np.intp)
        self.cell_of_item = np.repeat(np.arange(len(self.size)), self.size)
        position = np.arange(len(items)) - np.repeat(self.offset, self.size)
        self.in_ref = position < np.repeat(self.n_ref, self.size)

    def all_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Global item indices (I, J) of every ordered pair within each cell, row-major per cell."""
        squares = self.size**2
        start = np.repeat(np.concatenate([[0], np.cumsum(squares)[:-1]]), squares)
        t = np.arange(squares.sum()) - start
        k = np.repeat(self.size, squares)
        base = np.repeat(self.offset, squares)
        return base + t // k, base + t % k

    def cross_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Global item indices (I in G, J in P) of every reference x prediction pair per cell."""
        counts = self.n_ref * self.n_pred
        start = np.repeat(np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        t = np.arange(counts.sum()) - start
        n_pred = np.repeat(self.n_pred, counts)
        base = np.repeat(self.offset, counts)
        return base + t // n_pred, base + np.repeat(self.n_ref, counts) + t % n_pred

    def per_cell(self, weights: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Sum ``weights`` of the selected items per cell, as a (samples, classes) array."""
        totals = np.bincount(self.cell_of_item[items], weights=weights, minlength=len(self.size))
        return totals.reshape(self.shape)


def similarities(similarity: Similarity, cells: Cells, pairs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """sim(items[I], items[J]) for the index pairs: one ``pairs`` call when the similarity has it,
    else one ``matrix`` per cell (same row-major order)."""
    i, j = pairs
    if not len(i):
        return np.zeros(0)
    if hasattr(similarity, "pairs"):
        values = similarity.pairs(cells.items[i].tolist(), cells.items[j].tolist())
    else:
        values = _by_cell_matrices(similarity, cells, i, j)
    values = np.asarray(values, dtype=np.float64)
    if values.shape != i.shape or not (values.min() >= 0 and values.max() <= 1):
        raise PluginContractError(
            f"similarity {similarity.name!r} returned values of shape {values.shape} with range "
            f"[{values.min():g}, {values.max():g}]; expected shape {i.shape} in [0, 1]"
        )
    return values


def _by_cell_matrices(similarity: Similarity, cells: Cells, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    cell = cells.cell_of_item[i]
    bounds = np.flatnonzero(np.diff(cell)) + 1
    parts = []
    for lo, hi in zip(np.concatenate([[0], bounds]), np.concatenate([bounds, [len(i)]])):
        rows, cols = np.unique(i[lo:hi]), np.unique(j[lo:hi])
        block = np.asarray(similarity.matrix(cells.items[rows].tolist(), cells.items[cols].tolist()))
        parts.append(block.ravel())
    return np.concatenate(parts)


class SoftCardinalityParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    p: float = Field(1.0, gt=0, description="Jimenez's exponent: soft count = 1 / Σ sim^p")
    bound: bool = Field(
        False, description="cap card(A) at |A| and card(G∩P) at min(card G, card P), so P, R ≤ 1"
    )


class SoftCardinality(BaseComponent):
    """Jimenez's soft cardinality: near-duplicate items count partly (Fränti & Mariescu-Istodor)."""

    name = "soft_cardinality"
    uses = frozenset({"similarity"})
    data = "items"
    Params = SoftCardinalityParams

    def cardinalities(
        self, reference: ItemSets, prediction: ItemSets, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        cells = Cells(reference, prediction)
        i, j = cells.all_pairs()
        sim = similarities(similarity, cells, (i, j))
        if self.params.p != 1:
            sim = sim**self.params.p
        n = len(cells.items)
        same_side = cells.in_ref[i] == cells.in_ref[j]
        union = np.bincount(i, weights=sim, minlength=n)  # over G ⧺ P
        own = np.bincount(i, weights=sim * same_side, minlength=n)  # over the item's own set
        if n and (union.min() <= 0 or own.min() <= 0):
            item = cells.items[np.argmin(own)]
            raise PluginContractError(
                f"similarity {similarity.name!r} gives {item!r} no similarity to itself; a "
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
    uses = frozenset()
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
    model_config = ConfigDict(extra="forbid")
    threshold: float = Field(0.8, ge=0, le=1, description="two items match when sim >= threshold")


class ThresholdMatch(BaseComponent):
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
        cells = Cells(reference, prediction)
        i, j = cells.cross_pairs()
        sim = similarities(similarity, cells, (i, j))
        matched = np.zeros(len(cells.size))
        counts = cells.n_ref * cells.n_pred
        ends = np.cumsum(counts)
        for cell in np.flatnonzero(counts):
            block = sim[ends[cell] - counts[cell] : ends[cell]].reshape(cells.n_ref[cell], cells.n_pred[cell])
            matched[cell] = max_matching(block, self.params.threshold)
        shape = cells.shape
        return CardinalityTable(
            cells.n_ref.reshape(shape).astype(np.float64), cells.n_pred.reshape(shape).astype(np.float64),
            matched.reshape(shape),
        )


def max_matching(sim: np.ndarray, threshold: float) -> int:
    """The most pairs with sim >= threshold, each row and column used at most once."""
    eligible = sim >= threshold
    if not eligible.any():
        return 0
    # Every eligible pair outweighs any sum of similarities, so the most pairs win first and the
    # largest total similarity breaks ties among them.
    weight = np.where(eligible, min(sim.shape) + 1 + sim, 0.0)
    rows, cols = linear_sum_assignment(weight, maximize=True)
    return int(eligible[rows, cols].sum())
