"""scikit-learn's metrics of the confusion matrix: ``confusion_matrix``,
``multilabel_confusion_matrix``, ``classification_report``, ``balanced_accuracy_score``,
``matthews_corrcoef`` and ``zero_one_loss``.

On crisp labels they are scikit-learn's. On soft labels each cell is a fuzzy cardinality under
the T-norm T: TP = |G ∩ P| = Σ T(μG, μP), FP = |P| − TP, FN = |G| − TP (so TP/(TP + FP) is the
fuzzy precision and TP/(TP + FN) the fuzzy recall) and TN = |¬G ∩ ¬P| = Σ T(1 − μG, 1 − μP).
Under the minimum, the product and Łukasiewicz (T(a, b) + S(a, b) = a + b) the four add up to the
number of samples, as counts do. A 1-D array of memberships is the binary problem of labels 0 and
1, as in :mod:`evalkit.metrics.sets`; a matrix of memberships has no classes crossed with classes
(``confusion_matrix`` and the metrics read from it refuse it and say what to use instead).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.config import Spec
from evalkit.discovery import default_registry
from evalkit.keywords import suggest_keywords
from evalkit.metrics.sets import (
    InputTypeError,
    Targets,
    _all_labels,
    _array,
    _is_soft,
    _labels_of,
    _memberships,
    _ndim,
    _of_kind,
    _outside,
    _pair,
    _plain,
    _present,
    _soft_binary,
    _targets,
    _weights,
    accuracy_score,
    precision_recall_fscore_support,
)

__all__ = [
    "balanced_accuracy_score",
    "classification_report",
    "confusion_matrix",
    "matthews_corrcoef",
    "multilabel_confusion_matrix",
    "zero_one_loss",
]

NORMALIZE = (None, "true", "pred", "all")


def _sums(cells: np.ndarray, weights: np.ndarray | None, samplewise: bool) -> np.ndarray:
    """Each column's (or, ``samplewise``, each row's) weighted sum, in float64."""
    if samplewise:
        sums = cells.sum(axis=1, dtype=np.float64)
        return sums if weights is None else sums * weights
    return cells.sum(axis=0, dtype=np.float64) if weights is None else weights @ cells


def _cells(targets: Targets, weights: np.ndarray | None, tnorm: Spec, samplewise: bool = False) -> np.ndarray:
    """[[TN, FP], [FN, TP]] of each column (or sample): counts of crisp labels (integers without
    weights, as scikit-learn's), fuzzy cardinalities of memberships (see the module)."""
    t = default_registry().create("tnorm", tnorm)  # checked on crisp labels too, which need no T-norm
    ref, pred, soft = targets.ref, targets.pred, targets.soft
    tp = _sums(t(ref, pred) if soft else ref * pred, weights, samplewise)
    fp = _sums(pred, weights, samplewise) - tp
    fn = _sums(ref, weights, samplewise) - tp
    if soft:
        tn = _sums(t(1 - ref, 1 - pred), weights, samplewise)
    else:
        cells = ref.shape[1] if samplewise else len(ref)
        total = cells if weights is None else weights * cells if samplewise else weights.sum()
        tn = total - tp - fp - fn
    out = np.stack([tn, fp, fn, tp], axis=-1).reshape(-1, 2, 2)
    # scikit-learn's counts of 1-D labels are floats when no sample is right (Targets.counts).
    return np.rint(out).astype(np.int64) if weights is None and not soft and targets.counts else out


@suggest_keywords
def multilabel_confusion_matrix(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, labels: Sequence[Any] | None = None,
    samplewise: bool = False, tnorm: Spec = "minimum",
) -> np.ndarray:
    """[[TN, FP], [FN, TP]] of each label (one-vs-rest for 1-D labels), or of each sample of a
    multi-label matrix (``samplewise=True``), as scikit-learn's function of this name; fuzzy
    cardinalities of soft labels under ``tnorm``."""
    targets = _targets(y_true, y_pred, labels, 1, None)
    if samplewise and targets.kind != "multilabel":
        raise ValueError("Samplewise metrics are not available outside of multilabel classification.")
    return _cells(targets, _weights(sample_weight, len(targets.ref)), tnorm, samplewise)


@suggest_keywords
def confusion_matrix(
    y_true: Any, y_pred: Any, *, labels: Sequence[Any] | None = None, sample_weight: Any = None,
    normalize: str | None = None, tnorm: Spec = "minimum",
) -> np.ndarray:
    """C[i, j]: the samples of true label i predicted as label j, as scikit-learn's function of
    this name (``normalize`` over the true labels, the predicted ones or all). 1-D memberships
    give the fuzzy [[TN, FP], [FN, TP]] of label 1 (labels 0 and 1, in the order of ``labels``)."""
    if normalize not in NORMALIZE:
        raise ValueError(f"normalize must be one of {NORMALIZE}, got {normalize!r}")
    if labels is not None and (isinstance(labels, (str, bytes)) or _ndim(labels) != 1):
        raise InputTypeError(f"labels: expected a list of labels (one dimension), got {labels!r}")
    true, pred, bounds = _pair(y_true, y_pred)
    if true.ndim == 2 or pred.ndim == 2:
        _targets(y_true, y_pred, None, 1, None)  # a 1-D side with a 2-D one: scikit-learn's error for the mix
        raise ValueError(
            "multilabel-indicator is not supported: a confusion matrix crosses one true label with one predicted "
            "label per sample, and a matrix (of 0/1 indicators or of memberships) gives several; use "
            "multilabel_confusion_matrix for each label's TN, FP, FN and TP"
        )
    weights = _weights(sample_weight, len(true))
    if _is_soft(true) or _is_soft(pred):
        cm = _soft_matrix(_memberships(true, "y_true", bounds[0]), _memberships(pred, "y_pred", bounds[1]), labels,
                          weights, tnorm)
    else:
        cm = _crisp_matrix(true, pred, labels, weights)
    if normalize is not None:
        with np.errstate(all="ignore"):
            total = cm.sum(axis=1, keepdims=True) if normalize == "true" else cm.sum(
                axis=0, keepdims=True) if normalize == "pred" else cm.sum()
            cm = np.nan_to_num(cm / total)
    if cm.shape == (1, 1):
        warnings.warn(
            "A single label was found in 'y_true' and 'y_pred'. For the confusion matrix to have the correct shape, "
            "use the 'labels' parameter to pass all known labels.", UserWarning, stacklevel=_outside(),
        )
    return cm


def _crisp_matrix(true: np.ndarray, pred: np.ndarray, labels: Sequence[Any] | None,
                  weights: np.ndarray | None) -> np.ndarray:
    """The (weighted) count of each (true label, predicted label) pair, by one ``bincount``. A
    label named twice in ``labels`` counts at its last place, as in scikit-learn; samples of
    labels not named are left out."""
    text = true.dtype.kind in "UO"
    if labels is None:
        chosen = _plain(_present(true, pred))
    else:
        chosen = _of_kind(list(labels), text)
        if not chosen:
            raise ValueError("'labels' should contain at least one label.")
        if not set(_plain(_labels_of(true))) & set(chosen):
            raise ValueError("At least one label specified must be in y_true")
    place = {label: j for j, label in enumerate(chosen)}
    k = len(chosen)

    def codes(y: np.ndarray) -> np.ndarray:
        values, inverse = np.unique(y, return_inverse=True)
        return np.array([place.get(v, -1) for v in _plain(values)], dtype=np.int64)[inverse.reshape(-1)]

    t, p = codes(true), codes(pred)
    kept = (t >= 0) & (p >= 0)
    cells = np.bincount(t[kept] * k + p[kept], weights=None if weights is None else weights[kept], minlength=k * k)
    return cells.reshape(k, k)


def _soft_matrix(true: np.ndarray, pred: np.ndarray, labels: Sequence[Any] | None, weights: np.ndarray | None,
                 tnorm: Spec) -> np.ndarray:
    """The fuzzy [[TN, FP], [FN, TP]] of label 1, its rows and columns in the order of ``labels``."""
    chosen = [0, 1] if labels is None else list(labels)
    if not chosen or any(isinstance(label, str) or label not in (0, 1) for label in chosen):
        raise ValueError(
            f"labels={chosen!r}: 1-D memberships are the binary problem of labels 0 and 1 (μ of label 1, "
            "1 − μ of label 0); name those, or give labels=None"
        )
    cm = _cells(_soft_binary(true, pred, None, 1, "binary"), weights, tnorm)[0]
    order = [int(label) for label in chosen]
    return cm[np.ix_(order, order)]


def _one_per_sample(y_true: Any, name: str) -> None:
    """scikit-learn's metrics of the classes' confusion matrix refuse multi-label data."""
    if _array(y_true, "y_true")[0].ndim == 2:
        raise ValueError(f"multilabel-indicator is not supported by {name}: it reads a confusion matrix of classes "
                         "(one label per sample); use multilabel_confusion_matrix, or the macro recall_score")


@suggest_keywords
def balanced_accuracy_score(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, adjusted: bool = False, tnorm: Spec = "minimum",
) -> float:
    """The mean over the true labels of each one's recall, as scikit-learn's function of this
    name (``adjusted``: rescaled so that chance is 0); of soft labels, read from the fuzzy
    confusion matrix."""
    _one_per_sample(y_true, "balanced_accuracy_score")
    cm = confusion_matrix(y_true, y_pred, sample_weight=sample_weight, tnorm=tnorm)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.diag(cm) / cm.sum(axis=1)
    if np.isnan(per_class).any():
        warnings.warn("y_pred contains classes not in y_true", UserWarning, stacklevel=_outside())
        per_class = per_class[~np.isnan(per_class)]
    score = per_class.mean()
    if adjusted:
        chance = 1 / len(per_class)
        score = (score - chance) / (1 - chance)
    return float(score)


@suggest_keywords
def matthews_corrcoef(y_true: Any, y_pred: Any, *, sample_weight: Any = None, tnorm: Spec = "minimum") -> float:
    """The correlation of true and predicted labels from their confusion matrix C (Gorodkin's
    multiclass form, as scikit-learn's): (c·s − t·p) / √((s² − p·p)(s² − t·t)) with t and p
    its row and column sums, c its trace and s its total; 0 where a side has one label. Of soft
    labels, read from the fuzzy confusion matrix."""
    _one_per_sample(y_true, "matthews_corrcoef")
    cm = confusion_matrix(y_true, y_pred, sample_weight=sample_weight, tnorm=tnorm)
    t, p = cm.sum(axis=1, dtype=np.float64), cm.sum(axis=0, dtype=np.float64)
    correct, total = np.trace(cm, dtype=np.float64), p.sum()
    cov_tp = correct * total - t @ p
    cov_pp, cov_tt = total**2 - p @ p, total**2 - t @ t
    if cov_pp * cov_tt == 0:
        return 0.0
    return float(cov_tp / np.sqrt(cov_pp * cov_tt))


@suggest_keywords
def zero_one_loss(y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None) -> float:
    """1 − accuracy_score (the share of samples not predicted exactly), or with
    ``normalize=False`` the (weighted) count of them, as scikit-learn's function of this name;
    of soft labels, 1 − the soft accuracy."""
    score = accuracy_score(y_true, y_pred, normalize=normalize, sample_weight=sample_weight)
    if normalize:
        return 1 - score
    n = len(_array(y_true, "y_true")[0])
    weights = _weights(sample_weight, n)
    return (n if weights is None else float(weights.sum())) - score


@suggest_keywords
def classification_report(
    y_true: Any, y_pred: Any, *, labels: Sequence[Any] | None = None, target_names: Sequence[str] | None = None,
    sample_weight: Any = None, digits: int = 2, output_dict: bool = False, zero_division: Any = "warn",
    tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> str | dict[str, Any]:
    """Precision, recall, F1 and support of each label, then their averages, as scikit-learn's
    function of this name (a text table, or a dict with ``output_dict=True``). Of soft labels,
    the fuzzy values with the support |G| (the reference's membership mass, a float), and the
    micro average as "micro avg" (not the accuracy, which it is only for counts)."""
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 0:
        raise InputTypeError(f"digits: expected a whole number >= 0, got {digits!r}")
    every = _all_labels(y_true, y_pred)
    if labels is None:
        shown, given = np.asarray(every.labels), False
    else:
        shown, given = np.asarray(labels), True
    micro_is_accuracy = every.kind in ("binary", "multiclass") and not every.soft and (
        not given or set(_plain(shown)) >= set(every.labels))
    if target_names is not None and len(shown) != len(target_names):
        if given:
            warnings.warn(f"labels size, {len(shown)}, does not match size of target_names, {len(target_names)}",
                          UserWarning, stacklevel=_outside())
        else:
            raise ValueError(
                f"Number of classes, {len(shown)}, does not match size of target_names, {len(target_names)}. "
                "Try specifying the labels parameter"
            )
    names = [f"{label}" for label in shown] if target_names is None else list(target_names)
    kwargs = {"labels": labels, "sample_weight": sample_weight, "zero_division": zero_division, "tnorm": tnorm,
              "representation": representation}
    p, r, f1, support = precision_recall_fscore_support(y_true, y_pred, average=None, **kwargs)
    headers = ["precision", "recall", "f1-score", "support"]
    rows = list(zip(names, p, r, f1, support))
    averages: dict[str, list[Any]] = {}
    for average in ("micro", "macro", "weighted", *(("samples",) if every.kind == "multilabel" else ())):
        heading = "accuracy" if average == "micro" and micro_is_accuracy else f"{average} avg"
        averages[heading] = [*precision_recall_fscore_support(y_true, y_pred, average=average, **kwargs)[:3],
                             np.sum(support)]
    if not names and not output_dict:
        raise ValueError("labels=[] leaves no label to report: give at least one label, or labels=None for those present")
    if output_dict:
        report: dict[str, Any] = {row[0]: dict(zip(headers, map(float, row[1:]))) for row in rows}
        for heading, values in averages.items():
            report[heading] = float(values[0]) if heading == "accuracy" else dict(zip(headers, map(float, values)))
        return report
    return _text(rows, averages, headers, digits, every.soft, names)


def _text(rows: list[tuple[Any, ...]], averages: dict[str, list[Any]], headers: list[str], digits: int,
          soft: bool, names: list[str]) -> str:
    """scikit-learn's layout of the report, as wide as every name given (``target_names`` may
    name more classes than ``labels`` keeps); a soft support (a mass) is shown with ``digits``."""
    width = max([len(str(name)) for name in names] + [len("weighted avg"), digits])

    def support(value: Any) -> Any:
        return f"{value:.{digits}f}" if soft else value

    report = ("{:>{width}s} " + " {:>9}" * len(headers)).format("", *headers, width=width) + "\n\n"
    row_fmt = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}\n"
    for name, *values in rows:
        report += row_fmt.format(name, *values[:3], support(values[3]), width=width, digits=digits)
    report += "\n"
    for heading, values in averages.items():
        if heading == "accuracy":
            report += ("{:>{width}s} " + " {:>9.{digits}}" * 2 + " {:>9.{digits}f} {:>9}\n").format(
                heading, "", "", values[2], support(values[3]), width=width, digits=digits)
        else:
            report += row_fmt.format(heading, *values[:3], support(values[3]), width=width, digits=digits)
    return report
