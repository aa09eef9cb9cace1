"""scikit-learn's set metrics and the input reading every function of :mod:`evalkit.metrics` shares.

``precision_recall_fscore_support``, ``precision_score``, ``recall_score``, ``f1_score``,
``fbeta_score``, ``jaccard_score``, ``hamming_loss``, ``accuracy_score`` and
``average_precision_score`` take scikit-learn's arguments, in its order and with its defaults,
and return its shapes. On crisp labels they give scikit-learn's numbers (``sample_weight`` and
``zero_division`` included, with its ``UndefinedMetricWarning``); on soft labels (memberships in
[0, 1]) evalkit's fuzzy ones, under evalkit's own keywords ``tnorm`` and ``representation``.

Each call turns the labels into indicator (or membership) columns, one per label, and makes one
:class:`~evalkit.evaluator.Evaluator` update of them: everything is vectorized over the samples.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from evalkit import keywords
from evalkit.arrays import check_real, host_array
from evalkit.config import Spec
from evalkit.errors import DataError
from evalkit.evaluator import Evaluator
from evalkit.keywords import suggest_keywords
from evalkit.weights import sample_weights

__all__ = [
    "InputTypeError",
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
#: The largest finite beta evalkit's F-beta takes (beyond it, beta² times the counts overflows).
MAX_BETA = 1e6


class UndefinedMetricWarning(UserWarning):
    """A ratio was 0/0 and ``zero_division="warn"`` set it to 0 (scikit-learn's warning of this
    name, defined here since scikit-learn is not a dependency)."""


class InputTypeError(ValueError, TypeError):
    """Input of a kind scikit-learn refuses, some of it with a ValueError and some with a
    TypeError (a scalar where it wants an array, strings sorted among numbers): like
    scikit-learn's own ``InvalidParameterError``, either ``except`` clause catches it."""


@dataclass(frozen=True)
class Targets:
    """Both sides as (samples x labels) memberships, one column per label reported."""

    ref: np.ndarray
    pred: np.ndarray
    kind: str  # scikit-learn's type of target: "binary", "multiclass" or "multilabel"
    labels: list[Any]  # the label of each column (a column number for multi-label data)
    counts: bool = True  # support is an integer count (scikit-learn's dtype; see _targets)

    @cached_property
    def soft(self) -> bool:
        """Some membership strictly between 0 and 1: looked at only when it matters (the dtype
        of support), since it reads both sides."""
        return _is_soft(self.ref) or _is_soft(self.pred)


@dataclass(frozen=True)
class Ratio:
    """How scikit-learn says a metric is undefined: the sides whose mass 0 makes it 0/0."""

    shown: str
    sides: tuple[str, ...]
    lacking: str


RATIOS = {
    "precision": Ratio("Precision", ("pred",), "predicted"),
    "recall": Ratio("Recall", ("ref",), "true"),
    "f-score": Ratio("F-score", ("ref", "pred"), "true nor predicted"),
    "jaccard": Ratio("Jaccard", ("ref", "pred"), "true or predicted"),
}


# ------------------------------------------------------------------------------ reading input


#: A float array's minimum and maximum, taken once by the finite check and read again by the
#: [0, 1] check of memberships (None: not taken, for other dtypes or no values).
Bounds = tuple[Any, Any] | None


def _array(y: Any, name: str) -> tuple[np.ndarray, Bounds]:
    """``y`` as a 1-D or 2-D numpy array (lists, pandas objects, tensors, sparse matrices), with
    its :data:`Bounds`."""
    y = host_array(y, name)
    if callable(getattr(y, "toarray", None)):  # a scipy sparse matrix (multi-label indicators)
        y = y.toarray()
    try:
        array = np.asarray(y)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected an array of labels or memberships ({exc})") from None
    if array.ndim == 2 and array.shape[1] == 1:  # a column vector, as scikit-learn reads it
        array = array[:, 0]
    if array.ndim not in (1, 2):
        raise ValueError(f"{name}: expected a 1-D array of labels or a 2-D indicator matrix, got {array.ndim} dimensions")
    return array, _check_values(array, name)


def _check_values(y: np.ndarray, name: str) -> Bounds:
    """What scikit-learn refuses as labels, memberships or scores: a matrix without columns,
    complex numbers, NaN, infinity, and objects other than strings. Floats are checked by two
    reductions (NaN and ±inf reach the minimum or the maximum), without a copy; they are the
    :data:`Bounds` returned."""
    if y.ndim == 2 and y.shape[1] == 0:
        raise ValueError(f"{name}: a matrix without columns (shape {y.shape}); give one column per label")
    check_real(y.dtype, name, ValueError)
    bounds = (y.min(), y.max()) if y.dtype.kind == "f" and y.size else None
    if bounds is not None and not (np.isfinite(bounds[0]) and np.isfinite(bounds[1])):
        bad = ~np.isfinite(y)
        what = "NaN" if np.isnan(y[bad][0]) else "infinity"
        raise ValueError(
            f"Input {name} contains {what} (first at {_at(bad)}); labels, memberships and scores are finite numbers: "
            "fix or remove that sample"
        )
    # Python objects have no vectorized check (np.unique compares them one by one too): their
    # types are collected in C, and the first odd one is looked for only to say where it is.
    if y.dtype == object and not all(issubclass(t, str) for t in set(map(type, y.flat))):
        index, value = next((i, v) for i, v in np.ndenumerate(y) if not isinstance(v, str))
        raise InputTypeError(
            f"{name}: an object array of labels holds {value!r} ({type(value).__name__}) at "
            f"{index[0] if y.ndim == 1 else index}; labels are numbers in a numeric array, or strings: "
            f"convert them with np.asarray({name}, dtype=float) or dtype=str"
        )
    return bounds


def _at(bad: np.ndarray) -> str:
    """Where the first True of ``bad`` is: a sample index, or (sample, column)."""
    place = tuple(int(i) for i in np.argwhere(bad)[0])
    return str(place[0] if len(place) == 1 else place)


def _pair(y_true: Any, y_pred: Any, second: str = "y_pred") -> tuple[np.ndarray, np.ndarray, tuple[Bounds, Bounds]]:
    """Both sides as arrays of as many samples, and their :data:`Bounds`."""
    (true, true_bounds), (pred, pred_bounds) = _array(y_true, "y_true"), _array(y_pred, second)
    if len(true) != len(pred):
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{len(true)}, {len(pred)}]")
    if len(true) == 0:
        raise ValueError(
            "Found empty input array (e.g., `y_true` or `y_pred`) while a minimum of 1 sample is required."
        )
    return true, pred, (true_bounds, pred_bounds)


def _is_soft(y: np.ndarray) -> bool:
    """Float values that are not whole numbers: memberships, not class labels. Read a block of
    rows at a time (about 64k values), so soft data answers at its first block and nothing the
    size of ``y`` is built."""
    if y.dtype.kind != "f" or not y.size:
        return False
    step = max(1, 2**16 * len(y) // y.size)
    return any(bool((block != np.round(block)).any()) for block in (y[i : i + step] for i in range(0, len(y), step)))


def _weights(sample_weight: Any, n: int, nonzero: bool = True, column: bool = False) -> np.ndarray | None:
    """One finite weight >= 0 per sample (:func:`~evalkit.weights.sample_weights`, raising
    scikit-learn's kinds of error), not all 0 (as scikit-learn asks) unless ``nonzero`` is False."""
    if sample_weight is None:
        return None
    weights = sample_weights(sample_weight, n, column=column, error=ValueError, type_error=InputTypeError)
    if nonzero and not weights.any():
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return weights


def _labels_of(y: np.ndarray) -> np.ndarray:
    """The distinct labels of ``y``, sorted (scikit-learn refuses strings mixed with numbers)."""
    try:
        return np.unique(y)
    except TypeError:
        raise InputTypeError("Mix of label input types (string and number)") from None


def _present(true: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """The sorted labels of either side (of two kinds of array: compared as Python objects)."""
    if true.dtype.kind == pred.dtype.kind:
        return _labels_of(np.concatenate([true, pred]))
    return _labels_of(np.concatenate([true.astype(object), pred.astype(object)]))


def _one_hot(y: np.ndarray, labels: Sequence[Any]) -> np.ndarray:
    """One indicator column per label, in the order of ``labels`` (a label absent from ``y``
    gives a column of zeros; a value of ``y`` not among ``labels``, a row of zeros; a label
    repeated, its column again, as scikit-learn counts it once per mention). Looks up each
    distinct value once; the samples are placed in one vectorized step."""
    values, inverse = np.unique(y, return_inverse=True)
    mentioned = _plain(labels)
    column = {label: j for j, label in enumerate(dict.fromkeys(mentioned))}  # 1 and 1.0 are one label
    of_value = np.array([column.get(v, -1) for v in _plain(values)], dtype=np.int64)
    cols = of_value[inverse.reshape(-1)] if len(of_value) else np.full(len(y), -1)
    out = np.zeros((len(y), len(column)))
    rows = np.flatnonzero(cols >= 0)
    out[rows, cols[rows]] = 1.0
    return out if len(column) == len(mentioned) else out[:, [column[label] for label in mentioned]]


def _plain(values: Any) -> list[Any]:
    """Python scalars, so that 1, 1.0 and np.int64(1) are one dictionary key."""
    return np.asarray(values, dtype=object).tolist() if not isinstance(values, list) else [
        v.item() if isinstance(v, np.generic) else v for v in values
    ]


def _floats(y: np.ndarray) -> np.ndarray:
    """``y`` itself when float32 or float64 (the Evaluator reads both, summing in float64), else
    one cast to float64."""
    return y if y.dtype in (np.float32, np.float64) else y.astype(np.float64)


def _memberships(y: np.ndarray, name: str, bounds: Bounds = None) -> np.ndarray:
    """``y`` as float memberships (:func:`_floats`), each in [0, 1] (0/1 for crisp indicators).
    Checked by a minimum and a maximum (``y``'s :data:`Bounds`, when the finite check took
    them); a mask is built only to say where a bad value is."""
    try:
        values = _floats(y)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected memberships in [0, 1] (numbers), got {y.dtype} values") from None
    low, high = bounds if bounds is not None else (values.min(), values.max()) if values.size else (0, 0)
    if not (low >= 0 and high <= 1):
        bad = ~((values >= 0) & (values <= 1))
        raise ValueError(
            f"{name}: memberships (soft labels, or 0/1 indicators) lie in [0, 1]; got {values[bad][0]:g} at {_at(bad)}"
        )
    return values


def _targets(
    y_true: Any, y_pred: Any, labels: Sequence[Any] | None, pos_label: Any, average: str | None,
) -> Targets:
    """Both sides as columns, one per label, in the order scikit-learn reports them: ``labels``
    when given, else the sorted labels present (for ``average="binary"``, ``pos_label`` only)."""
    if labels is not None and (isinstance(labels, (str, bytes)) or _ndim(labels) != 1):
        raise InputTypeError(f"labels: expected a list of labels (one dimension), got {labels!r}")
    _check_pos_label(pos_label)
    true, pred, bounds = _pair(y_true, y_pred)
    if true.ndim != pred.ndim:
        kinds = ["multilabel-indicator" if y.ndim == 2 else "multiclass" for y in (true, pred)]
        raise ValueError(f"Classification metrics can't handle a mix of {kinds[0]} and {kinds[1]} targets")
    if average != "binary" and pos_label not in (None, 1):
        warnings.warn(
            f"Note that pos_label (set to {pos_label!r}) is ignored when average != 'binary' (got {average!r}). "
            "You may use labels=[pos_label] to specify a single positive class.",
            UserWarning, stacklevel=_outside(),
        )
    if true.ndim == 2:
        return _multilabel(true, pred, labels, average, bounds)
    if average == "samples":
        raise ValueError(
            "Sample-based precision, recall, fscore is not meaningful outside multilabel classification. "
            "See the accuracy_score instead."
        )
    if _is_soft(true) or _is_soft(pred):
        return _soft_binary(_memberships(true, "y_true", bounds[0]), _memberships(pred, "y_pred", bounds[1]),
                            labels, pos_label, average)
    present = _present(true, pred)
    kind = "binary" if len(present) <= 2 else "multiclass"
    if average == "binary":
        if kind != "binary":
            raise ValueError(
                "Target is multiclass but average='binary'. Please choose another average setting, one of "
                "[None, 'micro', 'macro', 'weighted']."
            )
        if len(present) >= 2 and pos_label not in _plain(present):
            raise ValueError(f"pos_label={pos_label!r} is not a valid label. It should be one of {present.tolist()}")
        chosen = [pos_label]
    else:
        chosen = _plain(present) if labels is None else _of_kind(list(labels), true.dtype.kind in "UO")
    # scikit-learn's support of 1-D labels is float when no sample is right (its counts then
    # pass through a float array): the same dtype here.
    right = bool((true == pred).any())
    return Targets(_one_hot(true, chosen), _one_hot(pred, chosen), kind, chosen, right)


def _of_kind(labels: list[Any], text: bool) -> list[Any]:
    """``labels``, when they are of the data's kind (``text``: strings; an object array holds
    nothing else). scikit-learn compares labels of the other kind as text (labels=[5] would
    count '5', labels=['0'] the label 0 but not 0.0): a match by spelling, refused here."""
    odd = [label for label in labels if isinstance(label, str) != text]
    if odd:
        raise InputTypeError(
            f"Mix of label input types (string and number): labels= holds {odd[0]!r} where y_true and y_pred hold "
            f"{'strings' if text else 'numbers'}; name each label as the data does"
        )
    return labels


def _check_pos_label(pos_label: Any) -> None:
    """A label is a real number or a string (or None), as scikit-learn's parameter checks say."""
    if not (pos_label is None or isinstance(pos_label, (numbers.Real, str, np.bool_))):
        raise InputTypeError(f"pos_label: expected a label (a real number or a string), got {pos_label!r}")


def _ndim(values: Any) -> int:
    """How many dimensions ``values`` has, -1 for a ragged nesting."""
    try:
        return int(np.ndim(values))
    except ValueError:
        return -1


def _soft_binary(
    true: np.ndarray, pred: np.ndarray, labels: Sequence[Any] | None, pos_label: Any, average: str | None,
) -> Targets:
    """1-D memberships are the binary problem of labels 0 and 1, as 0/1 labels are: μ is the
    membership of label 1 and 1 − μ that of label 0."""
    if average == "binary":
        if pos_label not in (0, 1):
            raise ValueError(f"pos_label={pos_label!r} is not a valid label. It should be one of [0, 1]")
        chosen = [pos_label]
    else:
        chosen = [0, 1] if labels is None else list(labels)

    def columns(mu: np.ndarray) -> np.ndarray:
        out = np.zeros((len(mu), len(chosen)))
        for j, label in enumerate(chosen):  # one vectorized column per label
            if label in (0, 1) and not isinstance(label, str):
                out[:, j] = mu if label == 1 else 1 - mu
        return out

    return Targets(columns(true), columns(pred), "binary", chosen, counts=False)  # support is a mass


def _multilabel(
    true: np.ndarray, pred: np.ndarray, labels: Sequence[Any] | None, average: str | None, bounds: tuple[Bounds, Bounds],
) -> Targets:
    if true.shape[1] != pred.shape[1]:
        raise ValueError(f"y_true and y_pred have different numbers of labels: {true.shape[1]} and {pred.shape[1]}")
    if average == "binary":
        raise ValueError(
            "Target is multilabel-indicator but average='binary'. Please choose another average setting, "
            "one of [None, 'micro', 'macro', 'weighted', 'samples']."
        )
    columns = list(range(true.shape[1]))
    if labels is not None:  # a copy of the columns asked for, unless they are all of them in order
        chosen = _columns(list(labels), true.shape[1])
        if chosen != columns:
            true, pred, bounds, columns = true[:, chosen], pred[:, chosen], (None, None), chosen  # a subset's own bounds
    return Targets(_memberships(true, "y_true", bounds[0]), _memberships(pred, "y_pred", bounds[1]), "multilabel",
                   columns)


# --------------------------------------------------------------------------------- evaluation


def _evaluate(
    ref: np.ndarray, pred: np.ndarray, metrics: Sequence[Spec], weights: np.ndarray | None, *,
    averaging: str = "micro", zero_division: float = 0.0, tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> tuple[list[str], dict[str, Any], dict[str, np.ndarray]]:
    """One evaluator update of the columns: the labels of the metrics, each value the
    evaluator reports by its name (an array, one value per column, for ``averaging="none"``
    and per-class data metrics), and the (weighted) mass of each column on each side, read
    from the evaluator's state (empty without set metrics)."""
    classes = [f"label {j}" for j in range(ref.shape[1])]
    evaluator = Evaluator(
        representation=representation, tnorm=tnorm, averaging=averaging, metrics=list(metrics),
        classes=classes, zero_division=zero_division,
    )
    try:
        values = evaluator.update(ref, pred, sample_weight=weights).values()
    except DataError as exc:  # bad data is a ValueError here, as in scikit-learn
        raise ValueError(str(exc)) from None
    summary = next(iter(evaluator.state().summaries.values()), None)
    masses = {} if summary is None else {"ref": summary.ref, "pred": summary.pred}
    column = {name: j for j, name in enumerate(classes)}
    out: dict[str, Any] = {}
    for measure, value in values.items():
        if measure.class_ is None:
            out.setdefault(measure.metric, value)
        else:
            out.setdefault(measure.metric, np.zeros(len(classes)))[column[measure.class_]] = value
    return [c.label for c in evaluator.axes.metrics], out, masses


def _columns(labels: list[Any], k: int) -> list[int]:
    """Multi-label ``labels=`` as column numbers: whole numbers in [0, k), 2.0 and True included
    as scikit-learn reads them (it would also cut 1.5 down to column 1: refused here)."""
    message = f"All labels must be in [0, n labels) for multilabel targets: whole column numbers, 0 to {k - 1}. Got {labels}"
    if not all(isinstance(c, (numbers.Real, np.bool_)) for c in labels):
        raise InputTypeError(message)
    if not all(float(c).is_integer() and 0 <= c < k for c in labels):
        raise ValueError(message)
    return [int(c) for c in labels]


def _zero_division(zero_division: Any) -> float:
    if isinstance(zero_division, str) and zero_division == "warn":
        return 0.0
    if isinstance(zero_division, (int, float, np.number)) and not isinstance(zero_division, bool) and (
        zero_division in (0, 1) or math.isnan(zero_division)
    ):
        return float(zero_division)
    raise ValueError(f"zero_division must be 'warn', 0.0, 1.0 or np.nan, got {zero_division!r}")


def _averaging(average: str | None) -> str:
    """evalkit's averaging for scikit-learn's ``average``: binary is micro over one column."""
    return "none" if average is None else "micro" if average == "binary" else average


def _check_average(average: Any, allowed: Sequence[Any] = AVERAGES) -> None:
    if not (average is None or isinstance(average, str)) or average not in allowed:
        raise ValueError(f"average has to be one of {tuple(allowed)}, got {average!r}")


def _f_spec(beta: float) -> tuple[str, Spec]:
    """(what F-beta is, evalkit's metric): beta = 0 is precision and beta = inf recall, as in
    scikit-learn (which then warns as for them)."""
    if not beta >= 0:
        raise ValueError("beta should be >=0 in the F-beta score")
    if beta == 0:
        return "precision", "precision"
    if math.isinf(beta):
        return "recall", "recall"
    if beta > MAX_BETA:
        raise ValueError(f"beta={beta:g}: evalkit's F-beta takes beta up to {MAX_BETA:g}; beta=np.inf is recall")
    return "f-score", "f1" if beta == 1 else {"name": "fbeta", "beta": float(beta)}


def _set_scores(
    targets: Targets, wanted: dict[str, Spec], average: str | None, weights: np.ndarray | None,
    zero_division: Any, tnorm: Spec, representation: Spec,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Each wanted metric under ``average`` (a float, or one value per label for None), and the
    mass of each label on each side (:func:`_evaluate`)."""
    if targets.ref.shape[1] == 0:
        return _no_labels(wanted, average, zero_division), {"ref": np.zeros(0), "pred": np.zeros(0)}
    specs = list({_key(spec): spec for spec in wanted.values()}.values())  # F-beta may be precision itself
    labels, got, masses = _evaluate(
        targets.ref, targets.pred, [*specs, *(["card_ref"] if average is None else [])], weights,
        averaging=_averaging(average), zero_division=_zero_division(zero_division), tnorm=tnorm,
        representation=representation,
    )
    value_of = {_key(spec): got[label] for spec, label in zip(specs, labels)}
    out: dict[str, Any] = {
        key: np.asarray(value_of[_key(spec)], dtype=np.float64) if average is None else float(value_of[_key(spec)])
        for key, spec in wanted.items()
    }
    if average is None:
        out["support"] = got["card_ref"]  # |G| per label: the sample count of crisp labels
    return out, masses


def _no_labels(wanted: dict[str, Spec], average: str | None, zero_division: Any) -> dict[str, Any]:
    """Each metric over ``labels=[]``, as scikit-learn gives it: no value per label; micro and
    samples are 0/0 (the ``zero_division`` value, with its warning); macro and weighted are the
    mean of no values, NaN, which is said with a RuntimeWarning rather than left silent."""
    if average in ("macro", "weighted"):
        warnings.warn(
            f"labels=[] leaves no label to average: the {average} mean is NaN, as in scikit-learn. "
            "Give at least one label, or labels=None for those present.", RuntimeWarning, stacklevel=_outside(),
        )
    value: Any = np.array([]) if average is None else math.nan if average in ("macro", "weighted") else (
        _zero_division(zero_division))
    return {key: value for key in [*wanted, "support"]}


def _key(spec: Spec) -> str:
    return spec if isinstance(spec, str) else repr(sorted(spec.items()))


def _warn_undefined(
    targets: Targets, names: Sequence[str], average: str | None, weights: np.ndarray | None,
    masses: dict[str, np.ndarray],
) -> None:
    """scikit-learn's UndefinedMetricWarning for each metric with a 0/0 among what is averaged:
    the whole data (micro, binary), a label (macro, weighted, None) or a sample (samples). The
    labels' ``masses`` are the evaluator's (no second pass over the data); a sample's are summed
    here. A sample of weight 0 weighs nothing on either side, as in scikit-learn."""
    averaging = _averaging(average)
    mass = {}
    for side, values in (("ref", targets.ref), ("pred", targets.pred)):
        if averaging == "samples":
            mass[side] = values.sum(axis=1) if weights is None else values.sum(axis=1) * weights
        else:
            mass[side] = np.array([masses[side].sum()]) if averaging == "micro" else masses[side]
    part, lacking = ("sample", "labels") if averaging == "samples" else ("label", "samples")
    where = "due to" if len(mass["ref"]) == 1 else f"in {part}s with"
    for name in dict.fromkeys(names):
        ratio = RATIOS[name]
        if (sum(mass[side] for side in ratio.sides) == 0).any():
            warnings.warn(
                f"{ratio.shown} is ill-defined and being set to 0.0 {where} no {ratio.lacking} {lacking}. "
                "Use `zero_division` parameter to control this behavior.",
                UndefinedMetricWarning, stacklevel=_outside(),
            )


#: The modules of this package (and the keyword check): a warning points at the first frame outside.
_INTERNAL = {str(path) for path in Path(__file__).parent.glob("*.py")} | {keywords.__file__}


def _outside() -> int:
    """The ``stacklevel`` of the first frame outside this module: warnings point at the call."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename in _INTERNAL:
        frame, level = frame.f_back, level + 1
    return level


# ------------------------------------------------------------------ precision, recall, F, Jaccard


@suggest_keywords
def precision_recall_fscore_support(
    y_true: Any, y_pred: Any, *, beta: float = 1.0, labels: Sequence[Any] | None = None, pos_label: Any = 1,
    average: str | None = None, warn_for: Sequence[str] = ("precision", "recall", "f-score"),
    sample_weight: Any = None, zero_division: Any = "warn", tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> tuple[Any, Any, Any, Any]:
    """Precision, recall, F-beta and support, as scikit-learn's function of this name: one value
    per label (``average=None``, support is then the reference's mass per label, its sample
    count on crisp labels) or averaged (support is None). Soft labels give the fuzzy values
    under ``tnorm`` and ``representation``."""
    _check_average(average)
    f_is, f_spec = _f_spec(beta)
    _zero_division(zero_division)
    targets = _targets(y_true, y_pred, labels, pos_label, average)
    weights = _weights(sample_weight, len(targets.ref))
    wanted = {"precision": "precision", "recall": "recall", "f-score": f_spec}
    got, masses = _set_scores(targets, wanted, average, weights, zero_division, tnorm, representation)
    if zero_division == "warn":
        warned = [m for m in ("precision", "recall") if m in warn_for]
        if f_is == "f-score" and "f-score" in warn_for:
            warned.append("f-score")
        _warn_undefined(targets, warned, average, weights, masses)
    support = None
    if average is None:
        support = np.asarray(got["support"], dtype=np.float64)
        if weights is None and not targets.soft and targets.counts:
            support = np.rint(support).astype(np.int64)
    return got["precision"], got["recall"], got["f-score"], support


def _one(
    name: str, spec: Spec, y_true: Any, y_pred: Any, labels: Any, pos_label: Any, average: Any,
    sample_weight: Any, zero_division: Any, tnorm: Spec, representation: Spec, warns: bool = True,
) -> Any:
    """One metric of scikit-learn's precision, recall, F and Jaccard family."""
    _check_average(average)
    _zero_division(zero_division)
    targets = _targets(y_true, y_pred, labels, pos_label, average)
    weights = _weights(sample_weight, len(targets.ref))
    got, masses = _set_scores(targets, {name: spec}, average, weights, zero_division, tnorm, representation)
    if zero_division == "warn" and warns:
        _warn_undefined(targets, [name], average, weights, masses)
    return got[name]


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
    """(1 + β²) |G ∩ P| / (β² |G| + |P|), as scikit-learn's ``fbeta_score`` (β = 0 is
    precision and β = inf recall, which, as there, never warn here)."""
    f_is, spec = _f_spec(beta)
    return _one("f-score", spec, y_true, y_pred, labels, pos_label, average, sample_weight, zero_division,
                tnorm, representation, warns=f_is == "f-score")


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
    """|G ∩ P| / |G ∪ P|, as scikit-learn's ``jaccard_score`` (which refuses
    ``zero_division=np.nan``; here it is NaN, ignored by the means as for the others)."""
    return _one("jaccard", "jaccard", y_true, y_pred, labels, pos_label, average, sample_weight, zero_division,
                tnorm, representation)


# --------------------------------------------------------------- Hamming loss, accuracy, AP


def _all_labels(y_true: Any, y_pred: Any) -> Targets:
    """Every label as a column (1-D labels one-hot over the labels present)."""
    return _targets(y_true, y_pred, None, 1, "micro")


@suggest_keywords
def hamming_loss(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, tnorm: Spec = "minimum", representation: Spec = "fuzzy",
) -> float:
    """The share of labels that differ, as scikit-learn's ``hamming_loss``: of the (sample,
    label) cells for multi-label data, of the samples for 1-D labels. Soft labels give the
    fuzzy symmetric difference |G| + |P| − 2 |G ∩ P| (Σ |μG − μP| with the minimum) per cell,
    or per sample for 1-D memberships."""
    targets = _all_labels(y_true, y_pred)
    weights = _weights(sample_weight, len(targets.ref))
    loss = _evaluate(targets.ref, targets.pred, ["hamming_loss"], weights, tnorm=tnorm, representation=representation)[1][
        "hamming_loss"]
    if targets.kind == "multilabel":
        return float(loss)
    # One label per sample: a sample that differs does so in the two cells of its two labels.
    return float(loss) * targets.ref.shape[1] / 2


@suggest_keywords
def accuracy_score(y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None) -> float:
    """The share of samples predicted exactly, as scikit-learn's ``accuracy_score`` (for
    multi-label data the exact match ratio), or their (weighted) count with ``normalize=False``.
    Soft labels give the mean over samples of min over labels of 1 − |μG − μP|."""
    targets = _all_labels(y_true, y_pred)
    weights = _weights(sample_weight, len(targets.ref))
    ratio = _evaluate(targets.ref, targets.pred, ["exact_match_ratio"], weights)[1]["exact_match_ratio"]
    if normalize:
        return float(ratio)
    return float(ratio) * (len(targets.ref) if weights is None else float(weights.sum()))


@suggest_keywords
def average_precision_score(
    y_true: Any, y_score: Any, *, average: str | None = "macro", pos_label: Any = 1, sample_weight: Any = None,
) -> Any:
    """The area under the precision-recall curve as scikit-learn's step sum Σ (Rₜ − Rₜ₋₁) Pₜ,
    per label and averaged as scikit-learn's ``average_precision_score``: macro (the mean of the
    labels' APs, evalkit's ``map``), weighted (by each label's positive weight), micro (every
    cell as one ranking), samples (each sample's labels as a ranking, then the mean over
    samples) or None (one value per label). ``y_true`` is 0/1; scores are any finite numbers."""
    _check_average(average, (None, "micro", "macro", "weighted", "samples"))
    _check_pos_label(pos_label)
    true, score, (bounds, _) = _pair(y_true, y_score, "y_score")
    weights = _weights(sample_weight, len(true), nonzero=False, column=True)
    if true.ndim == 1:
        present = _labels_of(true)
        if len(present) <= 2:  # binary: the positive label's ranking, whatever the average
            if len(present) == 2 and pos_label not in _plain(present):
                raise ValueError(f"pos_label={pos_label!r} is not a valid label. It should be one of {present.tolist()}")
            if score.ndim != 1:
                raise ValueError(f"y_true is binary, so y_score should be the positive label's scores, a 1-D array; "
                                 f"got an array of shape {score.shape}")
            _weights(weights, len(true))  # not all 0
            return float(_ap_columns(_one_hot(true, [pos_label]), score[:, None], weights)[0])
        if pos_label != 1:
            raise ValueError(
                "Parameter pos_label is fixed to 1 for multiclass y_true. Do not set pos_label or set pos_label to 1."
            )
        if score.ndim != 2 or score.shape[1] != len(present):
            raise ValueError(
                f"`y_score` needs to be of shape `(n_samples, n_classes)`, since `y_true` contains "
                f"{len(present)} classes (column j is the j-th of them, sorted). Got `y_score.shape={score.shape}`."
            )
        true, bounds = _one_hot(true, _plain(present)), None
    elif pos_label != 1:
        raise ValueError(
            "Parameter pos_label is fixed to 1 for multilabel-indicator y_true. Do not set pos_label or set pos_label to 1."
        )
    if true.shape != score.shape:
        raise ValueError(f"y_true and y_score have different shapes: {true.shape} and {score.shape}")
    true = _memberships(true, "y_true", bounds)
    if average == "weighted":  # by each label's positive weight; none at all is 0, as in scikit-learn
        positives = true.sum(axis=0) if weights is None else weights @ true
        if not positives.sum() > 0:
            return 0.0
    _weights(weights, len(true))  # not all 0
    if average == "micro":
        cells = None if weights is None else np.repeat(weights, true.shape[1])
        return float(_ap_columns(true.reshape(-1, 1), score.reshape(-1, 1), cells)[0])
    if average == "samples":  # each sample's labels are a ranking; the samples' weights average them
        return float(np.average(_ap_columns(true.T, score.T, None), weights=weights))
    per_label = _ap_columns(true, score, weights)
    if average is None:
        return per_label
    if average == "weighted":
        return float(np.average(per_label, weights=positives))
    return float(per_label.mean())


def _ap_columns(true: np.ndarray, score: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """The AP of each column, by evalkit's ``map`` (a column without positive weight gets 0,
    with scikit-learn's warning)."""
    positives = true.sum(axis=0) if weights is None else weights @ true
    if (positives == 0).any():
        warnings.warn(
            "No positive class found in y_true, recall is set to one for all thresholds.", UserWarning,
            stacklevel=_outside(),
        )
    got = _evaluate(_floats(true), _floats(score), [{"name": "map", "per_class": True}], weights)[1]
    return np.asarray(got["map_per_class"], dtype=np.float64)
