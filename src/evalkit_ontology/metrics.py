"""mAP and ontology-aware mAP (OmAP) as metrics of a run: score matrices against binary targets.

``map`` and ``omap`` rank each class's clips by score, so they need all the data at once (their
chunk states are lists, concatenated by ``+``) and accept any finite scores, not only
memberships in [0, 1] (``ranks = True``): logits rank like probabilities. ``map_binned`` keeps
per-class score histograms of a fixed size instead, and bounds the exact mAP; its scores must be
memberships. All three take clip weights (``weighted``). The numbers come from
:mod:`evalkit_ontology.omap` and :mod:`evalkit_ontology.binned`, where the conventions are
documented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import Array, BaseComponent, DataError, PerClass, PerLevel
from evalkit_ontology.binned import binned_average_precision, histogram
from evalkit_ontology.omap import _check_scores, _check_targets, _check_weights, _class_text, average_precision, omap
from evalkit_ontology.ontology import OntologyFile

NoPositive = Literal["zero", "skip"]

NO_POSITIVE: NoPositive = Field(
    "zero",
    description="A class without a positive clip: AP 0, counted in the mean (zero, as "
    "scikit-learn >= 1.2), or left out of the mean (skip).",
)
PER_CLASS = Field(False, description="Also report the value of every class.")


#: The parameter model of a ranking metric.
P = TypeVar("P", bound=BaseModel)


#: A chunk as a ranking metric keeps it: targets, scores, and the clips' weights (None: 1 each).
Chunk = tuple[Array, Array, Array | None]


class _RankingMetric(BaseComponent[P]):
    """Collects the chunks of a system and scores them at once, with the class names known."""

    name: ClassVar[str]
    ranks = True
    weighted = True
    keeps_data = "use map_binned (a fixed-size histogram of the scores per class, within a stated error of map)"
    classes: tuple[str, ...] = ()

    def prepare(self, classes: Sequence[str]) -> None:
        self.classes = tuple(classes)

    def update(self, reference: Array, prediction: Array, weights: Array | None = None) -> list[Chunk]:
        return [(reference, prediction, weights)]

    def compute(self, state: list[Chunk]) -> dict[str, Any]:
        targets = np.concatenate([ref for ref, _, _ in state])
        scores = np.concatenate([pred for _, pred, _ in state])
        weights = None
        if any(w is not None for _, _, w in state):  # chunks given without weights weigh 1
            weights = np.concatenate([np.ones(len(ref)) if w is None else w for ref, _, w in state])
        try:
            return self.score(targets, scores, weights)
        except ValueError as exc:  # bad data, stated by the numeric module: say which metric
            raise DataError(f"metric {self.name!r}: {exc}") from None

    def score(self, targets: Array, scores: Array, weights: Array | None) -> dict[str, Any]:
        raise NotImplementedError


class MAPParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    no_positive: NoPositive = NO_POSITIVE
    per_class: bool = PER_CLASS


class MeanAveragePrecision(_RankingMetric[MAPParams]):
    """mAP: the mean over classes of the average precision of each class's ranking of the clips.

    AP = Σ_t (R_t − R_{t−1}) P_t over one threshold per distinct score (no interpolation), equal
    to scikit-learn's ``average_precision_score(average="macro")``, and with clip weights to its
    ``sample_weight=`` (TP and FP are sums of weights; a clip of weight 0 is left out, so a class
    whose positives all weigh 0 has no positive: AP 0, or left out of the mean with
    ``no_positive: skip``). Targets must be 0/1; scores may be any finite numbers. Reports
    ``map`` (and ``map_per_class`` with ``per_class: true``).
    """

    name = "map"
    Params = MAPParams
    glossary = {"map_per_class": "Each class's average precision (its ranking of the clips)."}

    def score(self, targets: Array, scores: Array, weights: Array | None) -> dict[str, Any]:
        ap = average_precision(targets, scores, classes=self.classes or None, weights=weights)
        if self.params.no_positive == "skip":  # no positive weight: a weight of 0 is a clip left out
            positive = targets.any(axis=0) if weights is None else (weights @ (targets != 0)) > 0
            ap[~positive] = np.nan
        out: dict[str, Any] = {"map": float(np.nanmean(ap)) if not np.isnan(ap).all() else np.nan}
        if self.params.per_class:
            out["map_per_class"] = PerClass(ap)
        return out


class BinnedMAPParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    bins: int = Field(
        1000, ge=2, le=1_000_000,
        description="equal score bins over [0, 1]: the state is classes x bins x 2 numbers, and the bound on "
        "the exact mAP narrows as bins are added",
    )
    no_positive: NoPositive = NO_POSITIVE
    per_class: bool = PER_CLASS


class BinnedMAP(BaseComponent[BinnedMAPParams]):
    """mAP from per-class score histograms: a state of fixed size that merges by ``+`` (for
    streams, torchmetrics, clusters), with a guaranteed bound on the exact mAP.

    Scores are memberships in [0, 1] cut into ``bins`` equal bins; each bin is one threshold, so
    ``map_binned`` is the exact mAP of the scores rounded down to their bins, and
    ``map_binned_lower`` / ``map_binned_upper`` bound the exact mAP of the scores themselves
    (every order of the clips within a bin allowed; the bound and its proof are in
    :mod:`evalkit_ontology.binned`). Clips may be weighted; a class without positive weight has AP
    0, or is left out of the means with ``no_positive: skip``.

    It does not rank only (no ``ranks = True``): the bins need bounded scores, so a run checks the
    predictions are memberships in [0, 1] (or clips them with ``clip: true``), and ``update``
    checks them again for callers that bypass a run. For logits, use ``map``.
    """

    name = "map_binned"
    Params = BinnedMAPParams
    glossary = {
        "map_binned_lower": "The least the exact mAP can be, given only the scores' bins.",
        "map_binned_upper": "The most the exact mAP can be, given only the scores' bins.",
        "map_binned_per_class": "Each class's AP from its score histogram.",
    }
    weighted = True
    classes: tuple[str, ...] = ()

    def prepare(self, classes: Sequence[str]) -> None:
        self.classes = tuple(classes)

    def update(self, reference: Array, prediction: Array, weights: Array | None = None) -> Array:
        try:
            targets = _check_targets(reference, self.classes or None)
            scores = _check_memberships(prediction, targets.shape, self.classes or None)
            weights = _check_weights(weights, targets.shape[0])
        except ValueError as exc:
            raise DataError(f"metric {self.name!r}: {exc}") from None
        return histogram(targets, scores, self.params.bins, weights)

    def compute(self, state: Array) -> dict[str, Any]:
        ap, lower, upper = binned_average_precision(state)
        if self.params.no_positive == "skip":
            keep = state[..., 1].sum(axis=1) > 0
            ap, lower, upper = (np.where(keep, v, np.nan) for v in (ap, lower, upper))
        out: dict[str, Any] = {
            "map_binned": _mean(ap), "map_binned_lower": _mean(lower), "map_binned_upper": _mean(upper),
        }
        if self.params.per_class:
            out["map_binned_per_class"] = PerClass(ap)
        return out


def _check_memberships(prediction: Any, shape: tuple[int, int], classes: Sequence[str] | None) -> Array:
    """The scores as float64, finite and in [0, 1]: the bins cover [0, 1] only.

    A run checks its predictions before any metric sees them (``map_binned`` does not rank, so
    they must be memberships); this repeats the check, one min and one max, for a caller of
    ``update`` itself, since a score outside [0, 1] would otherwise fall in another class's bins.
    """
    scores = np.asarray(_check_scores(prediction, shape, classes), dtype=np.float64)
    if scores.min() < 0 or scores.max() > 1:
        bad = (scores < 0) | (scores > 1)
        n, c = np.argwhere(bad)[0]
        raise ValueError(
            f"scores must be memberships in [0, 1], which the bins cover: {int(bad.sum())} cell(s) are "
            f"not, the first at clip {n}, {_class_text(c, classes)} (value {scores[n, c]:g}); "
            f"for scores that only rank, such as logits, use 'map'"
        )
    return scores


def _mean(values: Array) -> float:
    """The mean of the defined values (NaN when none is)."""
    return float(np.nanmean(values)) if not np.isnan(values).all() else float("nan")


class OMAPParams(OntologyFile):
    no_positive: NoPositive = NO_POSITIVE
    unlabeled: Literal["error", "skip"] = Field(
        "error",
        description="A clip without any label has no false-positive weight (a minimum distance "
        "to an empty label set): an error (error), or the clip is left out (skip).",
    )
    disconnected: Literal["error", "max_plus_one"] = Field(
        "error",
        description="Classes in different components of the ontology (an infinite distance): an "
        "error, or one hop farther than the farthest connected pair (max_plus_one).",
    )
    per_class: bool = PER_CLASS


class OntologyMAP(_RankingMetric[OMAPParams]):
    """OmAP (Liu et al., "Ontology-aware learning and evaluation for audio tagging", eq. 3–6):
    AP with each false positive weighted by its class's distance in the ontology to the clip's
    nearest label, at every coarse level λ = 0 … D_max, averaged over levels.

    The columns' class names are resolved in ``ontology`` (ids or names). Reports ``omap``,
    ``omap_lambda0`` and ``omap_per_level`` (one value per λ), and with ``per_class: true``
    ``omap_per_class`` (each class's AP averaged over the levels). Conventions follow the
    authors' public implementation; see docs/ontology.md.
    """

    name = "omap"
    Params = OMAPParams
    glossary = {
        "omap": "OmAP: AP with false positives weighted by their ontology distance to the clip's labels, "
                "averaged over the coarse levels λ = 0 … D_max (Liu et al. 2023, eq. 3–6).",
        "omap_lambda0": "OmAP at level λ = 0 alone: every false positive weighted by its distance to the "
                        "clip's nearest label (already distance-weighted, so not plain mAP).",
        "omap_per_level": "OmAP at each coarse level λ: classes within λ hops of a label count as right; "
                          "at the coarsest level every class with a positive has AP 1.",
        "omap_per_class": "Each class's ontology-weighted AP, averaged over the levels.",
    }

    def __init__(self, params: OMAPParams) -> None:
        super().__init__(params)
        self.ontology = params.load()  # now: a bad file is reported before any data is read
        self.distances: np.ndarray | None = None

    def prepare(self, classes: Sequence[str]) -> None:
        super().prepare(classes)
        self.distances = self.ontology.distances(self.classes, where=f"metric {self.name!r}, data classes")

    def score(self, targets: Array, scores: Array, weights: Array | None) -> dict[str, Any]:
        assert self.distances is not None, "prepare() sets the distances before any chunk is scored"
        p = self.params
        result = omap(
            targets, scores, self.distances, no_positive=p.no_positive, unlabeled=p.unlabeled,
            disconnected=p.disconnected, classes=self.classes or None, weights=weights,
        )
        out = {
            "omap": result["omap"],
            "omap_lambda0": result["omap_lambda0"],
            "omap_per_level": PerLevel(result["omap_per_level"]),
        }
        if p.per_class:
            out["omap_per_class"] = PerClass(result["ap_per_level"].mean(axis=0))
        return out
