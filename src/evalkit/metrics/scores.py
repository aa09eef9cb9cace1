"""scikit-learn's metrics of scores and probabilities: ``roc_curve``, ``precision_recall_curve``,
``roc_auc_score``, ``log_loss``, ``brier_score_loss`` and ``top_k_accuracy_score``.

A curve counts the positives and negatives at or above each threshold, and a membership is
neither: the ranking metrics refuse soft references unless ``positives_from=`` says where the
positives start (memberships at or above it, as the DCASE metrics' parameter of that name).
``top_k_accuracy_score`` asks whether the one true label is among the k best scores, and soft
references name no one label: it refuses them. ``log_loss`` and ``brier_score_loss`` compare a
probability with a target, and a soft target is a target: the cross-entropy −Σₖ tₖ log pₖ and
the squared error Σₖ (tₖ − pₖ)² against the memberships t.

The area under the ROC curve of every column is computed at once, as the trapezoids over its
points sum to: the weighted share of (positive, negative) pairs ranked right, ties counting half.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from evalkit.keywords import suggest_keywords
from evalkit.metrics.sets import (
    Bounds,
    UndefinedMetricWarning,
    _array,
    _at,
    _check_average,
    _check_pos_label,
    _floats,
    _is_soft,
    _labels_of,
    _memberships,
    _one_hot,
    _outside,
    _pair,
    _plain,
    _weights,
)

__all__ = [
    "brier_score_loss",
    "log_loss",
    "precision_recall_curve",
    "roc_auc_score",
    "roc_curve",
    "top_k_accuracy_score",
]

MULTI_CLASS = ("raise", "ovr", "ovo")


# --------------------------------------------------------------------------- reading the truth


def _crisp(true: np.ndarray, bounds: Bounds, positives_from: Any, what: str) -> np.ndarray:
    """``y_true`` itself when crisp, or soft memberships binarized at ``positives_from``
    (1 at or above it); soft memberships without it are refused, saying why."""
    if positives_from is not None:
        if isinstance(positives_from, bool) or not (isinstance(positives_from, (int, float)) and 0 < positives_from <= 1):
            raise ValueError(f"positives_from: a membership in (0, 1] (e.g. 0.5), got {positives_from!r}")
        return (_memberships(true, "y_true", bounds) >= positives_from).astype(np.int64)
    if _is_soft(true):
        bad = true != np.round(true)
        raise ValueError(
            f"y_true holds memberships ({true[bad][0]:g} at {_at(bad)}): {what} counts positives and negatives, "
            "and a membership is neither; give positives_from=0.5 (memberships at or above it are the positives), "
            "as the DCASE metrics take it, or binarize y_true"
        )
    return true


def _pos_label(classes: np.ndarray, pos_label: Any) -> Any:
    """``pos_label``, or 1 where the labels are {0, 1} or {-1, 1} (or one of them), as in
    scikit-learn; other labels need it named."""
    if pos_label is not None:
        return pos_label
    plain = _plain(classes)
    if classes.dtype.kind in "OUS" or not any(plain == known for known in ([0, 1], [-1, 1], [0], [-1], [1])):
        raise ValueError(
            f"y_true takes value in {{{', '.join(map(repr, plain))}}} and pos_label is not specified: either make "
            "y_true take value in {0, 1} or {-1, 1} or pass pos_label explicitly."
        )
    return 1


def _one_dimension(y: np.ndarray) -> np.ndarray:
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    return y


# ------------------------------------------------------------------------------------- curves


def _points(positive: np.ndarray, score: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At each distinct score, from the highest: the (weighted) false and true positives at or
    above it, and the score. Samples of weight 0 are left out, as in scikit-learn."""
    if weights is not None:
        kept = weights != 0
        positive, score, weights = positive[kept], score[kept], weights[kept]
    order = np.argsort(score)[::-1]  # a tie group is cut at its last row, whatever its order
    ranked, hits = score[order], positive[order]
    last = np.r_[np.flatnonzero(ranked[1:] != ranked[:-1]), len(ranked) - 1]
    w = 1.0 if weights is None else weights[order]
    tps = np.cumsum(hits * w, dtype=np.float64)[last]
    fps = np.cumsum((1 - hits) * w, dtype=np.float64)[last] if weights is not None else 1 + last - tps
    return fps, tps, ranked[last]


def _binary_points(
    y_true: Any, y_score: Any, pos_label: Any, sample_weight: Any, positives_from: Any, what: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The points of :func:`_points` of a binary ``y_true`` (or a multiclass one with ``pos_label``)."""
    _check_pos_label(pos_label)
    true, score, (bounds, _) = _pair(y_true, y_score, "y_score")
    if true.ndim == 2:
        raise ValueError("multilabel-indicator format is not supported")
    true, score = _crisp(true, bounds, positives_from, what), _one_dimension(score)
    weights = _weights(sample_weight, len(true), nonzero=False, column=True)
    classes = _labels_of(true)
    if len(classes) > 2 and pos_label is None:
        raise ValueError("multiclass format is not supported")
    positive = _one_hot(true, [_pos_label(classes, pos_label)])[:, 0]
    return _points(positive, score, weights)


@suggest_keywords
def roc_curve(
    y_true: Any, y_score: Any, *, pos_label: Any = None, sample_weight: Any = None, drop_intermediate: bool = True,
    positives_from: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """False and true positive rates at each threshold (the first one infinite), as
    scikit-learn's function of this name (``drop_intermediate``: points collinear with their
    neighbours left out)."""
    fps, tps, thresholds = _binary_points(y_true, y_score, pos_label, sample_weight, positives_from, "a ROC curve")
    return _rates(fps, tps, thresholds.astype(np.float64), drop_intermediate)


def _rates(
    fps: np.ndarray, tps: np.ndarray, thresholds: np.ndarray, drop_intermediate: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if drop_intermediate and len(fps) > 2:
        kept = np.r_[True, (np.diff(fps, 2) != 0) | (np.diff(tps, 2) != 0), True]
        fps, tps, thresholds = fps[kept], tps[kept], thresholds[kept]
    fps, tps, thresholds = np.r_[0.0, fps], np.r_[0.0, tps], np.r_[np.inf, thresholds]
    if fps[-1] <= 0:
        warnings.warn("No negative samples in y_true, false positive value should be meaningless",
                      UndefinedMetricWarning, stacklevel=_outside())
        fpr = np.full(fps.shape, np.nan)
    else:
        fpr = fps / fps[-1]
    if tps[-1] <= 0:
        warnings.warn("No positive samples in y_true, true positive value should be meaningless",
                      UndefinedMetricWarning, stacklevel=_outside())
        tpr = np.full(tps.shape, np.nan)
    else:
        tpr = tps / tps[-1]
    return fpr, tpr, thresholds


@suggest_keywords
def precision_recall_curve(
    y_true: Any, y_score: Any, *, pos_label: Any = None, sample_weight: Any = None, drop_intermediate: bool = False,
    positives_from: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision and recall at each threshold, from the lowest (then precision 1 and recall 0 at
    no detection), as scikit-learn's function of this name."""
    fps, tps, thresholds = _binary_points(y_true, y_score, pos_label, sample_weight, positives_from,
                                          "a precision-recall curve")
    if drop_intermediate and len(fps) > 2:
        kept = np.r_[True, (np.diff(tps[:-1]) != 0) | (np.diff(tps[1:]) != 0), True]
        fps, tps, thresholds = fps[kept], tps[kept], thresholds[kept]
    detected = tps + fps
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(detected != 0, tps / detected, 0.0)
    if tps[-1] == 0:
        warnings.warn("No positive class found in y_true, recall is set to one for all thresholds.", UserWarning,
                      stacklevel=_outside())
        recall = np.ones(tps.shape)
    else:
        recall = tps / tps[-1]
    return np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0], thresholds[::-1]


# ---------------------------------------------------------------------------------- ROC AUC


def _auc_columns(positive: np.ndarray, score: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Each column's area under its ROC curve, Σ_pos Σ_neg w w' ([s > s'] + [s = s'] / 2) over
    the weights of positives times negatives, with scikit-learn's warning and NaN where a column
    has one class, or no weight on one. One sort of all the columns (each a contiguous row of the
    transpose); each tie group's positives count the negatives below it and half of its own."""
    k, columns = score.shape[1], np.ascontiguousarray(score.T)
    order = np.argsort(columns, axis=1)  # ties are grouped by value: no need of a stable sort
    ranked = np.take_along_axis(columns, order, axis=1)
    hits = np.take_along_axis(np.ascontiguousarray(positive.T), order, axis=1)
    w = 1.0 if weights is None else weights[order]
    pos, neg = hits * w, (1 - hits) * w
    ends = np.ones(ranked.shape, dtype=bool)  # the last row of each tie group, in each column
    ends[:, :-1] = ranked[:, 1:] != ranked[:, :-1]
    column = np.nonzero(ends)[0]
    pos_to, neg_to = np.cumsum(pos, axis=1, dtype=np.float64)[ends], np.cumsum(neg, axis=1, dtype=np.float64)[ends]
    first = np.r_[True, column[1:] != column[:-1]]  # a column's first group starts from nothing
    pos_from, neg_from = (np.where(first, 0.0, np.r_[0.0, to[:-1]]) for to in (pos_to, neg_to))
    ranked_right = np.bincount(column, weights=(pos_to - pos_from) * (neg_from + neg_to) / 2, minlength=k)
    pairs = pos.sum(axis=1, dtype=np.float64) * neg.sum(axis=1, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(_defined(positive, pos.T, neg.T), ranked_right / pairs, np.nan)


def _defined(positive: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """Which columns have an ROC curve, with scikit-learn's warnings for those that do not."""
    both = (positive == 1).any(axis=0) & (positive == 0).any(axis=0)
    if not both.all():
        warnings.warn("Only one class is present in y_true. ROC AUC score is not defined in that case.",
                      UndefinedMetricWarning, stacklevel=_outside())
    for mass, side in ((neg, "negative"), (pos, "positive")):
        if (both & (mass.sum(axis=0) <= 0)).any():
            warnings.warn(f"No {side} samples in y_true, {'false' if side == 'negative' else 'true'} positive value "
                          "should be meaningless", UndefinedMetricWarning, stacklevel=_outside())
    return both & (neg.sum(axis=0) > 0) & (pos.sum(axis=0) > 0)


def _partial_auc(positive: np.ndarray, score: np.ndarray, weights: np.ndarray | None, max_fpr: float) -> float:
    """The area up to ``max_fpr`` with McClish's correction (0.5 by chance, 1 at best), as
    scikit-learn's."""
    if len(np.unique(positive)) != 2:
        warnings.warn("Only one class is present in y_true. ROC AUC score is not defined in that case.",
                      UndefinedMetricWarning, stacklevel=_outside())
        return math.nan
    fpr, tpr, _ = _rates(*_points(positive, score, weights), drop_intermediate=True)
    stop = int(np.searchsorted(fpr, max_fpr, "right"))
    tpr = np.r_[tpr[:stop], np.interp(max_fpr, fpr[stop - 1 : stop + 1], tpr[stop - 1 : stop + 1])]
    fpr = np.r_[fpr[:stop], max_fpr]
    area = float((np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2).sum())
    low = 0.5 * max_fpr**2
    return 0.5 * (1 + (area - low) / (max_fpr - low))


def _auc(positive: np.ndarray, score: np.ndarray, weights: np.ndarray | None, max_fpr: float | None) -> np.ndarray:
    """The AUC of each column (partial up to ``max_fpr``: one curve per column)."""
    if max_fpr is None or max_fpr == 1:
        return _auc_columns(positive, score, weights)
    return np.array([_partial_auc(positive[:, c], score[:, c], weights, max_fpr) for c in range(score.shape[1])])


def _averaged(positive: np.ndarray, score: np.ndarray, average: str | None, weights: np.ndarray | None,
              max_fpr: float | None) -> Any:
    """scikit-learn's averages of a per-column binary score: micro (every cell one ranking),
    macro, weighted (by each column's positive weight; none at all is 0), samples (each row a
    ranking, the rows' weights averaging them) or None."""
    if positive.shape != score.shape:
        raise ValueError(f"y_true and y_score have different shapes: {positive.shape} and {score.shape}")
    if average == "micro":
        cells = None if weights is None else np.repeat(weights, positive.shape[1])
        return float(_auc(positive.reshape(-1, 1), score.reshape(-1, 1), cells, max_fpr)[0])
    mean_weights = None
    if average == "weighted":
        mean_weights = positive.sum(axis=0) if weights is None else weights @ positive
        if np.isclose(mean_weights.sum(), 0):
            return 0.0
    if average == "samples":
        values, mean_weights = _auc(positive.T, score.T, None, max_fpr), weights
    else:
        values = _auc(positive, score, weights, max_fpr)
    if average is None:
        return values
    if mean_weights is not None:
        values[mean_weights == 0] = 0  # a NaN that weighs nothing, as in scikit-learn
    return float(np.average(values, weights=mean_weights))


@suggest_keywords
def roc_auc_score(
    y_true: Any, y_score: Any, *, average: str | None = "macro", sample_weight: Any = None,
    max_fpr: float | None = None, multi_class: str = "raise", labels: Sequence[Any] | None = None,
    positives_from: float | None = None,
) -> Any:
    """The area under the ROC curve, as scikit-learn's function of this name: of the greater
    label of binary labels, of each column of a multi-label matrix (averaged as ``average``
    says), or of multiclass probabilities one class against the rest (``multi_class="ovr"``) or
    each pair of classes against each other (``"ovo"``, Hand & Till)."""
    _check_average(average, (None, "micro", "macro", "weighted", "samples"))
    if multi_class not in MULTI_CLASS:
        raise ValueError(f"multi_class must be one of {MULTI_CLASS}, got {multi_class!r}")
    if max_fpr is not None and not (isinstance(max_fpr, numbers.Real) and 0 < max_fpr <= 1):
        raise ValueError(f"Expected max_fpr in range (0, 1], got: {max_fpr!r}")
    true, score, (bounds, _) = _pair(y_true, y_score, "y_score")
    true = _crisp(true, bounds, positives_from, "the ROC curve")
    weights = _weights(sample_weight, len(true), nonzero=False, column=True)
    if true.ndim == 2:
        return _averaged(_memberships(true, "y_true"), _floats(score), average, weights, max_fpr)
    classes = _labels_of(true)
    if len(classes) > 2 or (score.ndim == 2 and score.shape[1] > 2):
        return _multiclass_auc(true, score, labels, multi_class, average, weights, max_fpr)
    positive = _one_hot(true, [_plain(classes)[-1]]) if len(classes) == 2 else np.zeros((len(true), 1))
    return float(_auc(positive, _one_dimension(score)[:, None], weights, max_fpr)[0])


def _multiclass_auc(true: np.ndarray, score: np.ndarray, labels: Sequence[Any] | None, multi_class: str,
                    average: str | None, weights: np.ndarray | None, max_fpr: float | None) -> Any:
    if max_fpr is not None and max_fpr != 1:
        raise ValueError("Partial AUC computation not available in multiclass setting, 'max_fpr' must be set to "
                         f"`None`, received `max_fpr={max_fpr}` instead")
    if multi_class == "raise":
        raise ValueError("multi_class must be in ('ovo', 'ovr')")
    if score.ndim != 2:
        raise ValueError("`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple "
                         f"classes. Got `y_score.shape={score.shape}`.")
    if not np.allclose(1, score.sum(axis=1)):
        raise ValueError("Target scores need to be probabilities for multiclass roc_auc, i.e. they should sum up to "
                         "1.0 over classes")
    options = (*(("micro",) if multi_class == "ovr" else ()), "macro", "weighted", None)
    if average not in options:
        raise ValueError(f"average must be one of {options} for multiclass problems")
    if average is None and multi_class == "ovo":
        raise NotImplementedError("average=None is not implemented for multi_class='ovo'.")
    classes = _plain(_classes(true, labels, score.shape[1], "columns in 'y_score'"))
    if multi_class == "ovr":
        return _averaged(_one_hot(true, classes), _floats(score), average, weights, None)
    if weights is not None:
        raise ValueError("sample_weight is not supported for multiclass one-vs-one ROC AUC, 'sample_weight' must be "
                         "None in this case.")
    return _one_vs_one(_one_hot(true, classes), _floats(score), average)


def _classes(true: np.ndarray, labels: Sequence[Any] | None, columns: int, what: str) -> np.ndarray:
    """The classes the columns of the scores stand for: ``labels`` (unique, sorted, one per
    column, holding every label of ``y_true``) or the sorted labels of ``y_true``."""
    if labels is None:
        classes = _labels_of(true)
        if len(classes) != columns:
            raise ValueError(f"Number of classes in y_true not equal to the number of {what}")
        return classes
    given = np.asarray(labels)
    classes = _labels_of(given)
    if len(classes) != len(given):
        raise ValueError("Parameter 'labels' must be unique")
    if not np.array_equal(classes, given):
        raise ValueError("Parameter 'labels' must be ordered")
    if len(classes) != columns:
        raise ValueError(f"Number of given labels, {len(classes)}, not equal to the number of {what}, {columns}")
    if len(np.setdiff1d(true, classes)):
        raise ValueError("'y_true' contains labels not in parameter 'labels'")
    return classes


def _one_vs_one(positive: np.ndarray, score: np.ndarray, average: str | None) -> float:
    """Hand & Till's mean over pairs of present classes of the two AUCs of each pair, on the
    samples of either class (weighted: by the pair's share of the samples)."""
    present = np.flatnonzero(positive.any(axis=0))
    pairs = list(combinations(present, 2))
    values, shares = np.empty(len(pairs)), np.empty(len(pairs))
    for i, (a, b) in enumerate(pairs):  # one vectorized AUC per pair of classes
        rows = (positive[:, a] + positive[:, b]) > 0
        both = positive[rows][:, [a, b]]
        values[i] = _auc_columns(both, score[rows][:, [a, b]], None).mean()
        shares[i] = rows.mean()
    return float(np.average(values, weights=shares if average == "weighted" else None))


# --------------------------------------------------------------------------- probabilities


def _probabilities(y_true: Any, y_proba: Any, sample_weight: Any, labels: Sequence[Any] | None, low: str,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(targets, probabilities, weights), one column per class: scikit-learn's reading of
    ``log_loss``'s arguments (a 1-D ``y_proba`` is the probability of the greater label; a 1-D
    soft ``y_true`` the membership of label 1, a 2-D one the membership of each class)."""
    true, proba, (bounds, _) = _pair(y_true, y_proba, "y_proba")
    proba = _floats(proba)
    _check_range(proba, low)
    weights = _weights(sample_weight, len(true), nonzero=False)
    target = _soft_targets(true, bounds, labels) if _is_soft(true) else _class_targets(true, labels)
    if proba.ndim == 1:
        proba = proba[:, None]
    if proba.shape[1] == 1:
        proba = np.hstack([1 - proba, proba])
    if not np.isclose(proba.sum(axis=1), 1, rtol=math.sqrt(np.finfo(proba.dtype).eps)).all():
        warnings.warn("The y_prob values do not sum to one. Make sure to pass probabilities.", UserWarning,
                      stacklevel=_outside())
    if target.shape[1] != proba.shape[1]:
        if labels is None:
            raise ValueError(
                f"y_true and y_prob contain different number of classes: {target.shape[1]} vs {proba.shape[1]}. "
                "Please provide the true labels explicitly through the labels argument."
            )
        raise ValueError(f"The number of classes in labels is different from that in y_prob ({target.shape[1]} "
                         f"vs {proba.shape[1]}).")
    return target, proba, weights


def _check_range(proba: np.ndarray, low: str) -> None:
    if proba.max() > 1:
        raise ValueError(f"y_prob contains values greater than 1: {proba.max()}")
    if proba.min() < 0:
        raise ValueError(f"y_prob contains values {low} than 0: {proba.min()}")


def _soft_targets(true: np.ndarray, bounds: Bounds, labels: Sequence[Any] | None) -> np.ndarray:
    if labels is not None:
        raise ValueError("labels= names the classes of crisp labels; soft targets are memberships, one column per "
                         "class already (a 1-D array: the membership of label 1): leave labels=None")
    target = _memberships(true, "y_true", bounds)
    return np.stack([1 - target, target], axis=1) if target.ndim == 1 else target


def _class_targets(true: np.ndarray, labels: Sequence[Any] | None) -> np.ndarray:
    """One-hot columns of the sorted classes (``labels``, or those of ``y_true``; a matrix is its
    own columns), as scikit-learn's LabelBinarizer gives them."""
    if true.ndim == 2:
        if labels is not None:
            raise ValueError("labels= names the classes of 1-D labels; a multi-label matrix's columns are its classes")
        return true
    if labels is None:
        classes = _labels_of(true)
    else:
        classes = _labels_of(np.asarray(labels))
        if _plain(classes) != list(labels):
            warnings.warn(
                f"Labels passed were {labels}. But this function assumes labels are ordered lexicographically. "
                f"Pass the ordered labels={classes.tolist()} and ensure that the columns of y_prob correspond to this "
                "ordering.", UserWarning, stacklevel=_outside(),
            )
        undeclared = set(_plain(_labels_of(true))) - set(_plain(classes))
        if undeclared:
            raise ValueError(f"y_true contains values {undeclared} not belonging to the passed labels {labels}.")
    if len(classes) == 1:
        if labels is None:
            raise ValueError(f"y_true contains only one label ({classes[0]}). Please provide the list of all expected "
                             "class labels explicitly through the labels argument.")
        raise ValueError(f"The labels array needs to contain at least two labels, got {classes}.")
    return _one_hot(true, _plain(classes))


def _mean(losses: np.ndarray, weights: np.ndarray | None, normalize: bool = True) -> float:
    if normalize:
        return float(np.average(losses, weights=weights))
    return float(losses.sum() if weights is None else losses @ weights)


@suggest_keywords
def log_loss(
    y_true: Any, y_proba: Any, *, normalize: bool = True, sample_weight: Any = None,
    labels: Sequence[Any] | None = None,
) -> float:
    """The cross-entropy −Σₖ tₖ log pₖ of each sample, averaged (or summed, ``normalize=False``),
    as scikit-learn's ``log_loss`` (probabilities clipped to [eps, 1 − eps]); the targets t are
    one-hot labels or, soft, memberships."""
    target, proba, weights = _probabilities(y_true, y_proba, sample_weight, labels, "lower")
    eps = np.finfo(proba.dtype).eps
    losses = -(target * np.log(np.clip(proba, eps, 1 - eps))).sum(axis=1)
    return _mean(losses, weights, normalize)


@suggest_keywords
def brier_score_loss(
    y_true: Any, y_proba: Any, *, sample_weight: Any = None, pos_label: Any = None,
    labels: Sequence[Any] | None = None, scale_by_half: bool | str = "auto",
) -> float:
    """The squared error Σₖ (tₖ − pₖ)² of each sample, averaged, as scikit-learn's
    ``brier_score_loss`` (halved for two classes when ``scale_by_half="auto"``, so that a binary
    Brier score is the mean (t − p)² of the positive class); the targets t are one-hot labels
    or, soft, memberships."""
    _check_pos_label(pos_label)
    if not (isinstance(scale_by_half, bool) or scale_by_half == "auto"):
        raise ValueError(f"scale_by_half must be True, False or 'auto', got {scale_by_half!r}")
    if _array(y_proba, "y_proba")[0].ndim == 1:  # (n, 1) included
        target, proba, weights = _binary_probabilities(y_true, y_proba, sample_weight, pos_label)
    else:
        target, proba, weights = _probabilities(y_true, y_proba, sample_weight, labels, "lower")
    score = _mean(((target - proba) ** 2).sum(axis=1), weights)
    return score * 0.5 if scale_by_half is True or (scale_by_half == "auto" and proba.shape[1] < 3) else score


def _binary_probabilities(y_true: Any, y_proba: Any, sample_weight: Any, pos_label: Any,
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The Brier score's reading of a 1-D ``y_proba``: the probability of ``pos_label`` (or of 1,
    or of the greater label), against 1-D labels or memberships of label 1."""
    true, proba, (bounds, _) = _pair(y_true, y_proba, "y_proba")
    true, proba = _one_dimension(true), _floats(proba)
    weights = _weights(sample_weight, len(true), nonzero=False)
    _check_range(proba, "less")
    if _is_soft(true):
        if pos_label not in (None, 1):
            raise ValueError(f"pos_label={pos_label!r}: 1-D memberships are those of label 1")
        positive = _memberships(true, "y_true", bounds)
    else:
        classes = _labels_of(true)
        if len(classes) > 2:
            raise ValueError("The type of the target inferred from y_true is multiclass but should be binary according "
                             "to the shape of y_prob.")
        try:
            pos_label = _pos_label(classes, pos_label)
        except ValueError:
            if classes.dtype.kind in "OUS":
                raise
            pos_label = _plain(classes)[-1]  # numbers: the greater label, as scikit-learn does
        positive = _one_hot(true, [pos_label])[:, 0]
    return np.stack([1 - positive, positive], axis=1), np.stack([1 - proba, proba], axis=1), weights


@suggest_keywords
def top_k_accuracy_score(
    y_true: Any, y_score: Any, *, k: int = 2, normalize: bool = True, sample_weight: Any = None,
    labels: Sequence[Any] | None = None,
) -> float:
    """The share of samples whose true label is among the k of highest score (or their weighted
    count, ``normalize=False``), as scikit-learn's function of this name. Soft references are
    refused: no one label is the true one."""
    true, score, (bounds, _) = _pair(y_true, y_score, "y_score")
    if true.ndim == 2:
        raise ValueError("y type must be 'binary' or 'multiclass', got 'multilabel-indicator' instead.")
    if _is_soft(true):
        bad = true != np.round(true)
        raise ValueError(
            f"y_true holds memberships ({true[bad][0]:g} at {_at(bad)}): top-k accuracy asks whether the one true "
            "label of each sample is among the k best scores, and memberships name no one label; give class labels "
            "(e.g. the label of the highest membership)"
        )
    binary = len(_labels_of(true)) <= 2 and not (labels is not None and len(labels) > 2)
    if binary and score.ndim == 2 and score.shape[1] != 1:
        raise ValueError(f"`y_true` is binary while y_score is 2d with {score.shape[1]} classes. If `y_true` does not "
                         "contain all the labels, `labels` must be provided.")
    if not binary and score.ndim != 2:
        raise ValueError("`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains multiple "
                         f"classes. Got `y_score.shape={score.shape}`.")
    weights = _weights(sample_weight, len(true), nonzero=False)
    columns = score.shape[1] if score.ndim == 2 else 2
    classes = _plain(_classes(true, labels, columns, "classes in 'y_score'"))
    if k >= len(classes):
        warnings.warn(f"'k' ({k}) greater than or equal to 'n_classes' ({len(classes)}) will result in a perfect "
                      "score and is therefore meaningless.", UndefinedMetricWarning, stacklevel=_outside())
    encoded = np.argmax(_one_hot(true, classes), axis=1)
    if binary:
        if k == 1:
            threshold = 0.5 if score.min() >= 0 and score.max() <= 1 else 0
            hits = (score > threshold).astype(np.int64) == encoded
        else:
            hits = np.ones(len(true), dtype=bool)
    else:
        best = np.argsort(score, axis=1, kind="mergesort")[:, ::-1][:, :k]
        hits = (best == encoded[:, None]).any(axis=1)
    if normalize:
        return float(np.average(hits, weights=weights))
    return float(hits.sum() if weights is None else hits @ weights)
