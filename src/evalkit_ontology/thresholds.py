"""Measures over every decision threshold of each class's ranking of the samples, as
sed_scores_eval takes them on segment scores: the best F with a class-wise optimal threshold
(``best_fscore``, the "Hard / OT" column of Harju & Mesaros's Table 2) and the area under the ROC
curve (``auroc``).

For each class, every distinct score is a threshold (a sample is detected when its score is at
least the threshold), giving one point of true and false positives per threshold. ``best_fscore``
keeps the largest F_β (0 if nothing detected is best) and reports its threshold centred between
the lowest detected score and the next smaller score (−inf when every sample is detected); its
mean over classes, and the F_β of the true and false positives summed over the classes at their
own thresholds (micro). ``auroc`` is the area under the ROC points with staircase interpolation
(the TPR of the lower false-positive rate held up to the next point, as sed_scores_eval takes
it: ties are not credited half), optionally up to ``max_fpr`` and divided by it. Like ``map``
they need every score (``ranks = True``: any finite scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import Array, Curve, CurvePerClass, PerClass
from evalkit_ontology.metrics import P, _RankingMetric
from evalkit_ontology.omap import _check_targets


def threshold_points(positive: Array, scores: Array) -> tuple[Array, Array, Array]:
    """Scores sorted from high to low; at each distinct score (the last sample it covers), the
    samples detected and the true positives among them."""
    order = np.argsort(-scores, kind="stable")
    ranked, hits = scores[order], positive[order]
    last = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])
    return ranked, (last + 1).astype(np.float64), np.cumsum(hits)[last].astype(np.float64)


CURVES = Field(False, description="also report each class's curve (every threshold's point), drawn in the HTML report")
#: A class without a curve (no positive, or no negative, sample): no points.
NO_POINTS = np.empty(0)

POSITIVES_FROM = Field(
    None, gt=0, le=1, allow_inf_nan=False,
    description="reference memberships at or above this value are the positives (soft labels binarized, "
    "e.g. 0.5); none: the reference must be 0/1",
)


class BestFParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    beta: float = Field(1.0, gt=0, allow_inf_nan=False, description="weight of recall against precision")
    positives_from: float | None = POSITIVES_FROM
    curves: bool = CURVES


class _ThresholdMetric(_RankingMetric[P]):
    """A measure over every threshold of each class: the reference's positives, checked."""

    keeps_data = "it has no bounded variant yet; run it in memory"

    def positives(self, targets: Array) -> Array:
        at = getattr(self.params, "positives_from", None)
        if at is None:
            try:
                return _check_targets(targets, self.classes or None)
            except ValueError as exc:
                raise ValueError(f"{exc}, or give the metric `positives_from: 0.5`") from None
        return np.asarray(targets) >= at


class BestFScore(_ThresholdMetric[BestFParams]):
    """The best F_β per class over decision thresholds, its mean over classes, the micro F at
    those thresholds, and the thresholds: ``best_fscore``, ``best_fscore_micro``,
    ``best_fscore_per_class``, ``best_fscore_threshold``. A class without a positive sample has
    no recall: its F and threshold are NaN, and it is left out of the mean."""

    name = "best_fscore"
    Params = BestFParams
    glossary = {
        "best_fscore": "Each class's F at its own best decision threshold, averaged over classes "
                       "(an optimistic bound: the thresholds are chosen on the data scored).",
        "best_fscore_micro": "The micro F with every class at its own best threshold.",
        "best_fscore_per_class": "Each class's best F over decision thresholds.",
        "best_fscore_threshold": "The decision threshold at which each class's F is best.",
    }
    weighted = False

    def score(self, targets: Array, scores: Array, weights: Array | None) -> dict[str, Any]:
        positive = self.positives(targets)
        best = [self._best(positive[:, c], scores[:, c]) for c in range(targets.shape[1])]
        f, threshold, tp, detected = (np.array(column, dtype=np.float64) for column in zip(*best))
        positives = positive.sum(axis=0)
        defined = positives > 0
        beta2 = self.params.beta**2
        micro = (1 + beta2) * tp[defined].sum() / max(beta2 * positives[defined].sum() + detected[defined].sum(), 1e-15)
        out: dict[str, Any] = {
            "best_fscore": float(f[defined].mean()) if defined.any() else np.nan,
            "best_fscore_micro": float(micro) if defined.any() else np.nan,
            "best_fscore_per_class": PerClass(np.where(defined, f, np.nan)),
            "best_fscore_threshold": PerClass(np.where(defined, threshold, np.nan)),
        }
        if self.params.curves:
            out["pr_curve"] = CurvePerClass(tuple(pr_curve(positive[:, c], scores[:, c]) for c in range(targets.shape[1])))
        return out

    def _best(self, positive: Array, scores: Array) -> tuple[float, float, float, float]:
        """(F, threshold, true positives, detections) at the best threshold of one class."""
        ranked, detected, tp = threshold_points(positive, scores)
        n = float(positive.sum())
        if n == 0:
            return np.nan, np.nan, 0.0, 0.0
        beta2 = self.params.beta**2
        precision, recall = tp / detected, tp / n
        f = (1 + beta2) * precision * recall / np.maximum(beta2 * precision + recall, 1e-15)
        if not len(f) or f.max() <= 0:  # detecting nothing is as good: no threshold below inf
            return 0.0, np.inf, 0.0, 0.0
        k = int(np.argmax(f))  # the highest threshold among the best
        at = int(detected[k]) - 1  # the lowest detected sample
        lower = ranked[at + 1] if at + 1 < len(ranked) else -np.inf
        return float(f[k]), float((ranked[at] + lower) / 2), float(tp[k]), float(detected[k])


def pr_curve(positive: Array, scores: Array) -> Curve:
    """Precision against recall at every threshold, "nothing detected" included (recall 0,
    precision 1, as sed_scores_eval takes it), ordered by recall."""
    n = float(positive.sum())
    if not n:
        return Curve(NO_POINTS, NO_POINTS, "recall", "precision")
    _, detected, tp = threshold_points(positive, scores)
    recall, precision = np.r_[0.0, tp / n], np.r_[1.0, tp / detected]
    order = np.lexsort((precision, recall))  # by recall, then precision, as sed_scores_eval orders them
    return Curve(recall[order], precision[order], "recall", "precision")


def roc_points(positive: Array, scores: Array) -> tuple[Array, Array] | None:
    """(FPR, TPR) at every threshold from "nothing detected" on; None without a positive or a
    negative sample."""
    n_pos = float(positive.sum())
    n_neg = len(positive) - n_pos
    if not n_pos or not n_neg:
        return None
    _, detected, tp = threshold_points(positive, scores)
    return np.r_[0.0, (detected - tp) / n_neg], np.r_[0.0, tp / n_pos]


class AUROCParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    positives_from: float | None = POSITIVES_FROM
    max_fpr: float | None = Field(
        None, gt=0, le=1, description="the partial area up to this false-positive rate, divided by it (none: all)",
    )
    curves: bool = CURVES


class AUROC(_ThresholdMetric[AUROCParams]):
    """The area under each class's ROC curve (staircase), and its mean over classes: ``auroc``
    and ``auroc_per_class``. A class without a positive or without a negative sample has no ROC
    curve: NaN, left out of the mean."""

    name = "auroc"
    Params = AUROCParams
    glossary = {
        "auroc": "The area under the ROC curve, averaged over classes: 0.5 is chance, 1 a perfect ranking.",
        "auroc_per_class": "Each class's area under its ROC curve (0.5 is chance).",
    }
    weighted = False

    def score(self, targets: Array, scores: Array, weights: Array | None) -> dict[str, Any]:
        positive = self.positives(targets)
        rocs = [roc_points(positive[:, c], scores[:, c]) for c in range(targets.shape[1])]
        area = np.array([np.nan if roc is None else self._area(*roc) for roc in rocs])
        out: dict[str, Any] = {
            "auroc": float(np.nanmean(area)) if not np.isnan(area).all() else np.nan,
            "auroc_per_class": PerClass(area),
        }
        if self.params.curves:
            points = [(NO_POINTS, NO_POINTS) if roc is None else roc for roc in rocs]
            out["roc_curve"] = CurvePerClass(tuple(Curve(x, y, "false positive rate", "true positive rate") for x, y in points))
        return out

    def _area(self, fpr: Array, tpr: Array) -> float:
        limit = self.params.max_fpr
        if limit is None:
            return float(np.sum(tpr[:-1] * np.diff(fpr)))
        inside = fpr <= limit  # the points up to the limit, then the last step cut at it
        x = np.r_[fpr[inside], limit]
        return float(np.sum(tpr[inside] * np.diff(x)) / limit)
