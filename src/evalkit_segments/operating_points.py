"""What a detector scores at every decision threshold of each class, read from counts that merge.

sed_scores_eval computes its threshold-independent measures from *intermediate statistics*: for
each class and each distinct score at which a count changes, the true and false positives when
the threshold falls just below that score (detected: score above the threshold), and the number
of reference instances. Segment-based (segments of a grid) and intersection-based (events under
the DTC and GTC) measures differ only in what they count; both states are
:class:`evalkit_segments.psds.Counts` (columns TP and FP, ``n_ref`` the reference instances), so
F at a threshold, the best F, average precision and the ROC's area are read here once, as
sed_scores_eval's ``base_modules.precision_recall`` and ``roc`` read them. A class without
reference instances has no recall: NaN, left out of the means (sed_scores_eval refuses it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import AfterValidator, Field

from evalkit.plugin import DataError, PerClass
from evalkit_segments.psds import Counts

BETA = Field(1.0, gt=0, allow_inf_nan=False, description="weight of recall against precision in F")
MIN_PRECISION = Field(0.0, ge=0, le=1, description="the best F only among thresholds with at least this precision")
MIN_RECALL = Field(0.0, ge=0, le=1, description="the best F only among thresholds with at least this recall")


def _a_number(threshold: float) -> float:
    if math.isnan(threshold):
        raise ValueError("a threshold is a number (-inf and inf included), not nan")
    return threshold


#: A decision threshold: any number but nan; -inf detects every frame (a best threshold where
#: detecting everything is best), inf none.
Threshold = Annotated[float, AfterValidator(_a_number)]


@dataclass(frozen=True)
class Operating:
    """One class's operating points, by rising score: the scores (the last +inf: nothing
    detected) and the TP and FP counts when the threshold falls just below each."""

    scores: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_ref: float

    @classmethod
    def of(cls, state: Counts, c: int) -> Operating:
        rows = state.klass == c
        change = state.change[rows, :2]  # one row per distinct score, rising
        stats = np.vstack([np.cumsum(change[::-1], axis=0)[::-1], np.zeros((1, 2))])
        return cls(np.r_[state.score[rows], np.inf], stats[:, 0], stats[:, 1], float(state.n_ref[c]))

    def precision_recall(self) -> tuple[np.ndarray, np.ndarray]:
        """Precision (1 where nothing is detected) and recall at every point."""
        detected = self.tp + self.fp
        return np.where(detected > 0, self.tp / np.maximum(detected, 1), 1.0), self.tp / self.n_ref

    def at(self, threshold: float) -> int:
        """The point of a threshold: the lowest score above it (+inf: nothing detected)."""
        return min(int(np.searchsorted(self.scores, threshold, side="right")), len(self.scores) - 1)

    def best(self, beta: float, min_precision: float, min_recall: float) -> tuple[int, float]:
        """The point of the best F_β (the highest score among equals) with precision and recall
        at least the minima, and its threshold: centred between its score and the next lower
        one, -inf when every instance is best detected (the lowest point)."""
        p, r = self.precision_recall()
        f = np.where((p < min_precision) | (r < min_recall), 0.0, f_beta(p, r, beta))
        k = len(f) - 1 - int(np.argmax(f[::-1]))
        return k, self.centred(k)

    def lowest_error(self) -> tuple[int, float]:
        """The point of the lowest error rate (the highest score among equals) and its threshold,
        centred as :meth:`best`'s."""
        er = (self.fp + self.n_ref - self.tp) / self.n_ref
        k = len(er) - 1 - int(np.argmin(er[::-1]))
        return k, self.centred(k)

    def centred(self, k: int) -> float:
        """The threshold of point ``k``: between its score and the next lower one (-inf for the
        lowest: every frame detected)."""
        return float((self.scores[k] + self.scores[k - 1]) / 2) if k > 0 else -np.inf

    def average_precision(self) -> float:
        """Σ precision × recall step over the distinct recalls, each at its highest precision."""
        p, r = self.precision_recall()
        order = np.lexsort((p, r))
        p, r = p[order], r[order]
        last = np.r_[r[1:] != r[:-1], True]  # the highest precision at each recall
        p, r = p[last], r[last]
        return float(np.sum(p[1:] * np.diff(r)))

    def auroc(self, n_negative: float, max_fpr: float | None) -> float:
        """The area under the ROC (staircase: the TPR of the lower FPR held to the next one, the
        highest TPR of points at one FPR), up to ``max_fpr`` and divided by it."""
        tpr, fpr = self.tp / self.n_ref, self.fp / n_negative
        order = np.lexsort((tpr, fpr))
        tpr, fpr = tpr[order], fpr[order]
        if max_fpr is None:
            return float(np.sum(tpr[:-1] * np.diff(fpr)))
        inside = int(np.searchsorted(fpr, max_fpr, side="right"))
        return float(np.sum(tpr[:inside] * np.diff(np.r_[fpr[:inside], max_fpr])) / max_fpr)


def f_beta(precision: Any, recall: Any, beta: float) -> Any:
    return (1 + beta**2) * precision * recall / np.maximum(beta**2 * precision + recall, 1e-15)


def per_class(threshold: float | dict[str, float], classes: Sequence[str], who: str) -> np.ndarray:
    """A threshold for all classes, or one per class by name (every class, no other), as an array
    in the classes' order."""
    if not isinstance(threshold, dict):
        return np.full(len(classes), float(threshold))
    unknown = sorted(set(threshold) - set(classes))
    missing = [c for c in classes if c not in threshold]
    if unknown or missing:
        raise DataError(
            f"{who} threshold: " + (f"no class {unknown[0]!r} (classes: {', '.join(classes)})" if unknown else
                                    f"class {missing[0]!r} has no threshold")
            + "; give every class its threshold, or one number for all"
        )
    return np.array([threshold[c] for c in classes], dtype=np.float64)


def fscores(
    name: str, state: Counts, beta: float, threshold: np.ndarray | None = None, min_precision: float = 0.0,
    min_recall: float = 0.0,
) -> dict[str, Any]:
    """F_β of every class at its ``threshold``, or at its best threshold (None), as ``name``
    (the mean over classes), ``name_micro`` (of the summed counts), ``name_per_class`` and, for
    the best, ``name_threshold``. A class without reference instances has no F; at a given
    threshold its detections still count as false positives in the micro F (at the best
    thresholds it has none to count at: no best threshold without positives)."""
    n = len(state.n_ref)
    f, threshold_of, tp, fp = (np.full(n, np.nan) for _ in range(4))
    defined = state.n_ref > 0
    for c in range(n) if threshold is not None else np.flatnonzero(defined):
        points = Operating.of(state, int(c))
        if threshold is None:
            k, threshold_of[c] = points.best(beta, min_precision, min_recall)
        else:
            k = points.at(float(threshold[c]))
        tp[c], fp[c] = points.tp[k], points.fp[k]
        if defined[c]:
            p, r = points.precision_recall()
            f[c] = f_beta(p[k], r[k], beta)
    if not defined.any():
        out: dict[str, Any] = {name: np.nan, f"{name}_micro": np.nan, f"{name}_per_class": PerClass(f)}
    else:
        counted = defined if threshold is None else np.ones(n, dtype=bool)
        tps, fps, n_ref = tp[counted].sum(), fp[counted].sum(), state.n_ref[defined].sum()
        micro = f_beta(tps / max(tps + fps, 1.0), tps / n_ref, beta)
        out = {name: float(f[defined].mean()), f"{name}_micro": float(micro), f"{name}_per_class": PerClass(f)}
    if threshold is None:
        out[f"{name}_threshold"] = PerClass(threshold_of)
    return out


def error_rates(prefix: str, state: Counts, thresholds: np.ndarray | None) -> dict[str, Any]:
    """A data metric's error rates: at each class's lowest error rate (``prefix_best_…``), and at
    ``thresholds`` too when given (``prefix_…``); see :func:`_error_rates`."""
    out = _error_rates(f"{prefix}_best", state)
    if thresholds is not None:
        out |= _error_rates(prefix, state, thresholds)
    return out


def _error_rates(name: str, state: Counts, threshold: np.ndarray | None = None) -> dict[str, Any]:
    """Each class's error rate, (insertions + deletions) / reference instances (a class alone has
    no substitutions), with its insertion and deletion rates, at its ``threshold`` or at its
    lowest error rate (None): ``name_error_rate`` (the mean over classes with reference
    instances, as sed_scores_eval's ``macro_average``), ``name_insertion_rate``,
    ``name_deletion_rate``, each also ``_per_class``, and for the lowest, the thresholds
    (``name_error_rate_threshold``)."""
    n = len(state.n_ref)
    defined = state.n_ref > 0
    tp, fp, threshold_of = np.zeros(n), np.zeros(n), np.full(n, np.nan)
    for c in np.flatnonzero(defined):
        points = Operating.of(state, int(c))
        if threshold is None:
            k, threshold_of[c] = points.lowest_error()
        else:
            k = points.at(float(threshold[c]))
        tp[c], fp[c] = points.tp[k], points.fp[k]
    out = named_rates(name, rates(tp, fp, np.where(defined, state.n_ref, np.nan)), defined)
    if threshold is None:
        out[f"{name}_error_rate_threshold"] = PerClass(threshold_of)
    return out


def rates(tp: Any, fp: Any, n_ref: Any) -> tuple[Any, Any, Any]:
    """(error rate, insertion rate, deletion rate): (insertions + deletions) / N, I / N, D / N
    (a class alone has no substitutions)."""
    insertions, deletions = fp, n_ref - tp
    return (insertions + deletions) / n_ref, insertions / n_ref, deletions / n_ref


def named_rates(name: str, values: tuple[Any, Any, Any], defined: np.ndarray) -> dict[str, Any]:
    """The :func:`rates` of every class as ``name_error_rate`` (the mean over the ``defined``
    classes), ``name_insertion_rate``, ``name_deletion_rate``, each also ``_per_class``."""
    out: dict[str, Any] = {}
    for kind, rate in zip(("error_rate", "insertion_rate", "deletion_rate"), values):
        out[f"{name}_{kind}"] = float(rate[defined].mean()) if defined.any() else np.nan
        out[f"{name}_{kind}_per_class"] = PerClass(rate)
    return out


class ClassThresholds:
    """For a data metric with an optional ``threshold`` (one number, or one per class by name):
    the classes, and each one's threshold, resolved once the classes are known, before any
    number (a threshold per class that misses one is refused then, and by `validate --data`)."""

    name: str
    params: Any
    classes: tuple[str, ...] = ()
    thresholds: np.ndarray | None = None

    def prepare(self, classes: Any) -> None:
        self.classes = tuple(classes)
        threshold = self.params.threshold
        self.thresholds = None if threshold is None else per_class(threshold, self.classes, self.name)
