"""scikit-learn-shaped metric functions, for people who reach for ``sklearn.metrics`` first.

``precision_score``, ``recall_score``, ``f1_score``, ``fbeta_score``, ``jaccard_score``,
``precision_recall_fscore_support``, ``hamming_loss``, ``accuracy_score`` and
``average_precision_score`` take scikit-learn's arguments, in its order and with its defaults,
and return its shapes. On crisp labels they give scikit-learn's numbers (``sample_weight`` and
``zero_division`` included); on soft labels (memberships in [0, 1]) evalkit's fuzzy ones, with
evalkit's own keywords ``tnorm`` and ``representation``. Each call is one
:class:`~evalkit.evaluator.Evaluator` update.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit.api import evaluate
from evalkit.config import Spec
from evalkit.keywords import suggest_keywords

__all__ = [
    "UndefinedMetricWarning",
    "accuracy_score",
    "average_precision_score",
    "f1_score",
    "fbeta_score",
    "hamming_loss",
    "jaccard_score",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
]

AVERAGES = (None, "binary", "micro", "macro", "weighted", "samples")
#: metric -> (the sides whose mass 0 leaves it undefined, its name, what those parts lack)
UNDEFINED = {
    "precision": (("pred",), "Precision", "predicted"),
    "recall": (("ref",), "Recall", "true"),
    "f-score": (("ref", "pred"), "F-score", "true nor predicted"),
    "jaccard": (("ref", "pred"), "Jaccard", "true or predicted"),
}


class UndefinedMetricWarning(UserWarning):
    """A ratio was 0/0 and ``zero_division="warn"`` set it to 0 (scikit-learn's warning)."""


@dataclass(frozen=True)
class Targets:
    """Both sides as (samples x labels) memberships, with what scikit-learn would call them."""

    ref: np.ndarray
    pred: np.ndarray
    kind: str  # "binary", "multiclass" or "multilabel"


# --------------------------------------------------------------------------------- the targets


def _matrix(y: Any, name: str) -> np.ndarray:
    """``y`` as a numpy array (lists, DataFrames, tensors through ``__array__``)."""
    try:
        array = np.asarray(y)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected an array of labels or memberships ({exc})") from None
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim not in (1, 2):
        raise ValueError(f"{name}: expected a 1-D array of labels or a 2-D indicator matrix, got {array.ndim} dimensions")
    return array


def _is_soft(y: np.ndarray) -> bool:
    """Memberships strictly between 0 and 1 somewhere: soft labels, not class labels."""
    return y.dtype.kind == "f" and bool(((y > 0) & (y < 1)).any())


def _targets(y_true: Any, y_pred: Any, labels: Sequence[Any] | None, pos_label: Any, average: str | None) -> Targets:
    """The labels of both sides as indicator (or membership) columns, one per label, in the
    order scikit-learn reports them: ``labels`` when given, else the sorted labels present."""
    true, pred = _matrix(y_true, "y_true"), _matrix(y_pred, "y_pred")
    if len(true) != len(pred):
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{len(true)}, {len(pred)}]")
    if true.ndim != pred.ndim:
        kinds = ["multilabel-indicator" if y.ndim == 2 else "multiclass" for y in (true, pred)]
        raise ValueError(f"Classification metrics can't handle a mix of {kinds[0]} and {kinds[1]} targets")
    if true.ndim == 2:
        return _multilabel(true, pred, labels, average)
    if _is_soft(true) or _is_soft(pred):  # soft memberships of the positive class
        if average not in ("binary", "micro", "macro", "weighted", None):
            raise ValueError(f"average={average!r}: soft 1-D labels are one class; use 'binary'")
        return Targets(true.astype(np.float64).reshape(-1, 1), pred.astype(np.float64).reshape(-1, 1), "binary")
    present = np.unique(np.concatenate([true, pred])) if len(true) else np.array([])
    kind = "binary" if len(present) <= 2 else "multiclass"
    if average == "binary":
        if kind != "binary":
            raise ValueError(
                "Target is multiclass but average='binary'. Please choose another average setting, one of "
                "[None, 'micro', 'macro', 'weighted']."
            )
        if len(present) >= 2 and pos_label not in present:
            raise ValueError(f"pos_label={pos_label!r} is not a valid label. It should be one of {present.tolist()}")
        chosen = [pos_label]
    elif average == "samples":
        raise ValueError(
            "Sample-based precision, recall, fscore is not meaningful outside multilabel classification. "
            "See the accuracy_score instead."
        )
    else:
        chosen = list(present) if labels is None else list(labels)
    return Targets(_one_hot(true, chosen), _one_hot(pred, chosen), kind)


def _one_hot(y: np.ndarray, labels: Sequence[Any]) -> np.ndarray:
    """One indicator column per label, in the order of ``labels``."""
    columns = np.zeros((len(y), len(labels)))
    for j, label in enumerate(labels):  # a loop over labels, each a vectorized comparison
        columns[:, j] = y == label
    return columns


def _multilabel(true: np.ndarray, pred: np.ndarray, labels: Sequence[Any] | None, average: str | None) -> Targets:
    if true.shape[1] != pred.shape[1]:
        raise ValueError(f"y_true and y_pred have different numbers of labels: {true.shape[1]} and {pred.shape[1]}")
    if average == "binary":
        raise ValueError(
            "Target is multilabel-indicator but average='binary'. Please choose another average setting, "
            "one of [None, 'micro', 'macro', 'weighted', 'samples']."
        )
    columns = list(range(true.shape[1])) if labels is None else list(labels)
    if any(not isinstance(c, (int, np.integer)) or not 0 <= c < true.shape[1] for c in columns):
        raise ValueError(f"All labels must be in [0, n labels) for multilabel targets. Got {columns}")
    return Targets(true[:, columns].astype(np.float64), pred[:, columns].astype(np.float64), "multilabel")


# ------------------------------------------------------------------------ evaluation and warnings


def _weights(sample_weight: Any, n: int) -> np.ndarray | None:
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    if len(weights) != n:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n}, {len(weights)}]")
    return weights


def _zero_division(zero_division: Any) -> float:
    if zero_division == "warn":
        return 0.0
    if isinstance(zero_division, (int, float)) and (zero_division in (0, 1) or math.isnan(zero_division)):
        return float(zero_division)
    raise ValueError(f"zero_division must be 'warn', 0.0, 1.0 or np.nan, got {zero_division!r}")


def _scores(
    targets: Targets, metrics: dict[str, Spec], average: str | None, weights: np.ndarray | None,
    zero_division: Any, tnorm: Spec, representation: Spec,
) -> dict[str, Any]:
    """Each metric under ``average`` (a float, or one value per label for None), by evaluating
    the label columns with evalkit; ``zero_division="warn"`` warns as scikit-learn does."""
    n_labels = targets.ref.shape[1]
    averaging = _averaging(average)
    if n_labels == 0:
        return {key: np.array([]) if average is None else 0.0 for key in metrics}
    got = evaluate(
        targets.ref, targets.pred, representation=representation, tnorm=tnorm, averaging=averaging,
        metrics=list(metrics.values()), zero_division=_zero_division(zero_division),
        classes=[f"label {i}" for i in range(n_labels)], sample_weight=weights,
    )
    out = {key: np.asarray(got[_label(spec)], dtype=np.float64) if average is None else float(got[_label(spec)])
           for key, spec in metrics.items()}
    if zero_division == "warn":
        _warn_undefined(targets, list(metrics), averaging, weights, depth=4)  # _scores, _one, f1_score, keywords
    return out


def _label(spec: Spec) -> str:
    """The key ``evaluate`` gives a metric: its name, with its parameters."""
    if isinstance(spec, str):
        return spec
    params = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name")
    return f"{spec['name']}({params})" if params else str(spec["name"])


def _warn_undefined(
    targets: Targets, names: Sequence[str], averaging: str, weights: np.ndarray | None, depth: int,
) -> None:
    """scikit-learn's UndefinedMetricWarning for each metric with a 0/0 among what is averaged:
    the whole data (micro), a label (macro, weighted, none) or a sample (samples). ``depth``:
    the frames between the user's call and this one, so the warning points at the call."""
    sums = {}
    for side, values in (("ref", targets.ref), ("pred", targets.pred)):
        if averaging == "samples":  # weighted too: a sample of weight 0 has nothing predicted
            sums[side] = values.sum(axis=1) if weights is None else values.sum(axis=1) * weights
        else:
            per_label = values.sum(axis=0) if weights is None else weights @ values
            sums[side] = np.array([per_label.sum()]) if averaging == "micro" else per_label
    part, lacking = ("sample", "labels") if averaging == "samples" else ("label", "samples")
    where = "due to" if len(sums["ref"]) == 1 else f"in {part}s with"
    for name in names:
        sides, shown, missing = UNDEFINED[name]
        if (sum(sums[side] for side in sides) == 0).any():
            warnings.warn(
                f"{shown} is ill-defined and being set to 0.0 {where} no {missing} {lacking}. Use `zero_division` "
                "parameter to control this behavior.",
                UndefinedMetricWarning, stacklevel=depth + 1,
            )


def _check_average(average: Any, allowed: Sequence[Any] = AVERAGES) -> None:
    if average not in allowed:
        raise ValueError(f"average has to be one of {tuple(allowed)}")


# ------------------------------------------------------------------------------ the functions


@suggest_keywords
def precision_recall_fscore_support(
    y_true: Any, y_pred: Any, *, beta: float = 1.0, labels: Sequence[Any] | None = None, pos_label: Any = 1,
    average: str | None = None, warn_for: Sequence[str] = ("precision", "recall", "f-score"),
    sample_weight: Any = None, zero_division: Any = "warn", tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> tuple[Any, Any, Any, Any]:
    """Precision, recall, F-beta and support, as scikit-learn's function of this name: per label
    (``average=None``), or averaged (support is then None). Soft labels give fuzzy values."""
    _check_average(average)
    if beta < 0:
        raise ValueError("beta should be >=0 in the F-beta score")
    targets = _targets(y_true, y_pred, labels, pos_label, average)
    weights = _weights(sample_weight, len(targets.ref))
    f_metric: Spec = "precision" if beta == 0 else {"name": "fbeta", "beta": float(beta)}
    metrics = {"precision": "precision", "recall": "recall", "f-score": f_metric}
    warn = "warn" if zero_division == "warn" else None
    got = _scores(targets, metrics, average, weights, 0.0 if warn else zero_division, tnorm, representation)
    if warn:
        _warn_undefined(targets, [m for m in metrics if m in warn_for], _averaging(average), weights, depth=2)
    support = None
    if average is None:  # the reference's mass per label: its sample count for crisp labels
        support = targets.ref.sum(axis=0) if weights is None else weights @ targets.ref
        if weights is None and not _is_soft(targets.ref):
            support = support.astype(np.int64)
    return got["precision"], got["recall"], got["f-score"], support


def _averaging(average: str | None) -> str:
    return "none" if average is None else "micro" if average == "binary" else average


def _one(metric: str, spec: Spec, y_true: Any, y_pred: Any, labels: Any, pos_label: Any, average: Any,
         sample_weight: Any, zero_division: Any, tnorm: Spec, representation: Spec) -> Any:
    """One metric of scikit-learn's P/R/F/Jaccard family."""
    _check_average(average)
    targets = _targets(y_true, y_pred, labels, pos_label, average)
    weights = _weights(sample_weight, len(targets.ref))
    return _scores(targets, {metric: spec}, average, weights, zero_division, tnorm, representation)[metric]


@suggest_keywords
def precision_score(
    y_true: Any, y_pred: Any, *, labels: Sequence[Any] | None = None, pos_label: Any = 1, average: str | None = "binary",
    sample_weight: Any = None, zero_division: Any = "warn", tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> Any:
    """|G ∩ P| / |P|, as scikit-learn's ``precision_score``."""
    return _one("precision", "precision", y_true, y_pred, labels, pos_label, average, sample_weight, zero_division,
                tnorm, representation)


@suggest_keywords
def recall_score(
    y_true: Any, y_pred: Any, *, labels: Sequence[Any] | None = None, pos_label: Any = 1, average: str | None = "binary",
    sample_weight: Any = None, zero_division: Any = "warn", tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> Any:
    """|G ∩ P| / |G|, as scikit-learn's ``recall_score``."""
    return _one("recall", "recall", y_true, y_pred, labels, pos_label, average, sample_weight, zero_division,
                tnorm, representation)


@suggest_keywords
def fbeta_score(
    y_true: Any, y_pred: Any, *, beta: float, labels: Sequence[Any] | None = None, pos_label: Any = 1,
    average: str | None = "binary", sample_weight: Any = None, zero_division: Any = "warn", tnorm: Spec = "minimum",
    representation: Spec = "fuzzy",
) -> Any:
    """(1 + β²) |G ∩ P| / (β² |G| + |P|), as scikit-learn's ``fbeta_score``."""
    if beta < 0:
        raise ValueError("beta should be >=0 in the F-beta score")
    spec: Spec = "precision" if beta == 0 else {"name": "fbeta", "beta": float(beta)}
    return _one("f-score", spec, y_true, y_pred, labels, pos_label, average, sample_weight, zero_division,
                tnorm, representation)


@suggest_keywords
def f1_score(
    y_true: Any, y_pred: Any, *, labels: Sequence[Any] | None = None, pos_label: Any = 1, average: str | None = "binary",
    sample_weight: Any = None, zero_division: Any = "warn", tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> Any:
    """2 |G ∩ P| / (|G| + |P|), as scikit-learn's ``f1_score``."""
    return _one("f-score", "f1", y_true, y_pred, labels, pos_label, average, sample_weight, zero_division,
                tnorm, representation)


@suggest_keywords
def jaccard_score(
    y_true: Any, y_pred: Any, *, labels: Sequence[Any] | None = None, pos_label: Any = 1, average: str | None = "binary",
    sample_weight: Any = None, zero_division: Any = "warn", tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> Any:
    """|G ∩ P| / |G ∪ P|, as scikit-learn's ``jaccard_score``."""
    return _one("jaccard", "jaccard", y_true, y_pred, labels, pos_label, average, sample_weight, zero_division,
                tnorm, representation)


@suggest_keywords
def hamming_loss(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> float:
    """The share of labels that differ, as scikit-learn's ``hamming_loss``: per (sample, label)
    cell for multi-label data (soft: |G| + |P| − 2|G ∩ P| per cell), per sample for labels."""
    targets = _targets(y_true, y_pred, None, 1, "micro")
    weights = _weights(sample_weight, len(targets.ref))
    loss = _scores(targets, {"loss": "hamming_loss"}, "micro", weights, 0.0, tnorm, representation)["loss"]
    if targets.kind == "multilabel" or _is_soft(targets.ref) or _is_soft(targets.pred):
        return float(loss)  # per cell
    return float(loss * targets.ref.shape[1] / 2)  # one label per sample: a miss differs in two cells


@suggest_keywords
def accuracy_score(y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None) -> float:
    """The share of samples predicted exactly (the exact match ratio for multi-label data; for
    soft labels, the mean of each sample's min over labels of 1 − |μG − μP|), or their
    (weighted) count with ``normalize=False``, as scikit-learn's ``accuracy_score``."""
    targets = _targets(y_true, y_pred, None, 1, "micro")
    weights = _weights(sample_weight, len(targets.ref))
    if targets.ref.shape[1] == 0:
        return float("nan") if normalize else 0.0
    ratio = float(evaluate(
        targets.ref, targets.pred, metrics=["exact_match_ratio"], sample_weight=weights,
        classes=[f"label {i}" for i in range(targets.ref.shape[1])],
    )["exact_match_ratio"])
    if normalize:
        return ratio
    return ratio * (len(targets.ref) if weights is None else float(weights.sum()))


@suggest_keywords
def average_precision_score(
    y_true: Any, y_score: Any, *, average: str | None = "macro", pos_label: Any = 1, sample_weight: Any = None,
) -> Any:
    """The area under the precision-recall curve as scikit-learn's step sum, per label and
    averaged as scikit-learn's ``average_precision_score`` (micro: all cells as one ranking;
    samples: each sample's labels as a ranking)."""
    _check_average(average, (None, "micro", "macro", "weighted", "samples"))
    true, score = _matrix(y_true, "y_true"), _matrix(y_score, "y_score").astype(np.float64)
    if len(true) != len(score):
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{len(true)}, {len(score)}]")
    weights = _weights(sample_weight, len(true))
    if true.ndim == 1 and score.ndim == 1:  # binary: the positive label's column
        present = np.unique(true)
        if len(present) > 2:
            raise ValueError("multiclass format is not supported")
        return _ap_per_label((true == pos_label).astype(np.float64)[:, None], score[:, None], weights)[0]
    if true.ndim == 1:  # multiclass: one score column per label present, in sorted order
        present = np.unique(true)
        if len(present) <= 2:
            raise ValueError(
                f"y_true holds at most two labels, so it is binary: y_score should be the positive label's "
                f"scores, a 1d array, not an array of shape {score.shape}"
            )
        if score.shape[1] != len(present):
            raise ValueError(
                f"`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains "
                f"{len(present)} classes (column j is the j-th of them, sorted). Got `y_score.shape={score.shape}`."
            )
        if pos_label != 1:
            raise ValueError(
                "Parameter pos_label is fixed to 1 for multiclass y_true. Do not set pos_label or set pos_label to 1."
            )
        true = _one_hot(true, list(present))
    true = true.astype(np.float64)
    if true.shape != score.shape:
        raise ValueError(f"y_true and y_score have different shapes: {true.shape} and {score.shape}")
    if average == "micro":
        repeated = None if weights is None else np.repeat(weights, true.shape[1])
        return _ap_per_label(true.reshape(-1, 1), score.reshape(-1, 1), repeated)[0]
    if average == "samples":
        per_sample = _ap_per_label(true.T, score.T, None)
        return float(np.average(per_sample, weights=weights))
    per_label = _ap_per_label(true, score, weights)
    if average is None:
        return per_label
    if average == "weighted":
        support = true.sum(axis=0) if weights is None else weights @ true
        return float(np.average(per_label, weights=support)) if support.sum() > 0 else 0.0
    return float(per_label.mean())


def _ap_per_label(true: np.ndarray, score: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """The AP of each column (a label with no positive gets 0, as scikit-learn)."""
    got = evaluate(
        true, score, metrics=[{"name": "map", "per_class": True}], sample_weight=weights,
        classes=[f"label {i}" for i in range(true.shape[1])],
    )
    return np.asarray(got["map_per_class"], dtype=np.float64)
