"""Sample weights, from a data source (``data: weights:`` in a config) or from Python
(``sample_weight=``): one finite number >= 0 per sample, matched to the reference's samples by
id (a file's rows, a pandas Series indexed by id) or by position (an array, a list, a tensor).

A weight of k counts a sample k times in every sum, as scikit-learn's ``sample_weight``: set
metrics, data metrics that take weights, bootstrap resamples and paired tests alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from evalkit.arrays import check_real, from_pandas, host_array, is_pandas
from evalkit.data import LabelMatrix, align
from evalkit.errors import DataError
from evalkit.items import ItemSets

#: The most the weights may add up to: 2**-64 of float64's range (about 9.7e288). A run's sums
#: multiply them by a sample's cardinality (at most its classes, or its items), a bootstrap
#: count and F's factor 2, none near 2**64, so no sum overflows; real weights never come close.
MAX_TOTAL = float(np.finfo(np.float64).max) / 2.0**64

def none_counts(where: str) -> DataError:
    """The error for weights that are all 0 (a config's `data: weights:`, `evaluate()`)."""
    return DataError(f"{where}: every weight is 0, so no sample would count; give some sample a weight > 0")


def batch_weights(sample_weight: Any, reference: LabelMatrix | ItemSets) -> np.ndarray:
    """A batch's ``sample_weight=`` in the reference's sample order: a pandas Series (or
    one-column DataFrame) indexed by sample id is matched by id, as a weights file is (a
    shuffled Series was applied by position); anything else (:func:`sample_weights`) by position."""
    if is_pandas(sample_weight):
        weights = from_pandas(sample_weight, "sample_weight")
        if weights.ids is not None:
            return matched_weights(weights, reference, python=True)
    values = sample_weights(sample_weight, len(reference), ids=reference.ids)
    _check_total(values, "sample_weight", _namer(reference.ids))
    return values


def matched_weights(weights: LabelMatrix, reference: LabelMatrix | ItemSets, python: bool = False) -> np.ndarray:
    """The one value column of ``weights`` (its name is free: ``weight``, ``w``) aligned to the
    reference's samples, by id when both sides have ids and by position when neither has, as a
    system's file is; float64, checked finite and >= 0 (all 0 is the caller's to refuse, once
    it has seen all the samples: :func:`none_counts`). ``python``: messages name keyword
    arguments."""
    one_column(weights)
    # Matched like a system's file with the one column of the reference's stand-in.
    stand_in = LabelMatrix(np.zeros((len(reference), 1)), weights.classes, reference.ids, reference.source)
    values = np.asarray(align(stand_in, weights, "required", python).values[:, 0], dtype=np.float64)
    sample = _namer(reference.ids)
    _check_finite(values, weights.source, sample)
    _check_total(values, weights.source, sample)
    return values


def one_column(weights: LabelMatrix) -> np.ndarray:
    """The weights' one value column; another number of columns is an error naming them."""
    if len(weights.classes) != 1:
        raise DataError(
            f"{weights.source}: sample weights take one value column (and an id column), but it has "
            f"{len(weights.classes)}: {', '.join(map(repr, weights.classes[:5]))}"
        )
    return weights.values[:, 0]


def _namer(ids: Sequence[str] | None) -> Callable[[int], str]:
    """How a message names the sample of a row: its id, else its row number."""
    return lambda i: repr(ids[i]) if ids is not None else repr(f"row {i + 1}")


def sample_weights(
    sample_weight: Any, n: int, *, ids: Sequence[str] | None = None, column: bool = False,
    error: type[Exception] = DataError, type_error: type[Exception] = DataError,
) -> np.ndarray:
    """``sample_weight`` given from Python (a list, an array, a tensor) for ``n`` samples: a 1-D
    array (or an (n, 1) column where ``column``, as scikit-learn's average_precision_score reads
    it) of finite numbers >= 0, as float64. A 2-D array is never flattened, nor a complex one
    cut to its real part. A bad weight is named by its sample's id in ``ids``, else its index.
    ``error`` and ``type_error`` are the exceptions raised (evalkit.metrics raises the kinds
    scikit-learn raises: a ValueError, or a TypeError for a scalar or text)."""
    try:
        raw = np.asarray(host_array(sample_weight, "sample_weight"))
        weights = raw if raw.dtype.kind == "c" else raw.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError):
        raise type_error("sample_weight: expected one number per sample") from None
    check_real(weights.dtype, "sample_weight", error)
    if weights.ndim == 0:
        raise type_error(f"sample_weight: expected an array of one weight per sample, got the scalar {weights:g}")
    if column and weights.ndim == 2 and weights.shape[1] == 1:
        weights = weights[:, 0]
    if weights.ndim != 1:
        raise error(
            f"sample_weight: expected a 1-D array of one weight per sample, got an array of shape {weights.shape}; "
            "pass np.ravel(sample_weight) if it holds one weight per sample in their order"
        )
    if len(weights) != n:
        raise error(f"sample_weight: {len(weights)} weights for {n} samples; give one weight per sample")
    _check_finite(weights, "sample_weight", lambda i: repr(ids[i]) if ids is not None else f"at index {i}", error)
    return weights


def _check_finite(
    values: np.ndarray, where: str, sample: Callable[[int], str], error: type[Exception] = DataError,
) -> None:
    """Every weight finite and >= 0, or an error naming the first other one by ``sample(i)``."""
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise error(
            f"{where}: the weight of sample {sample(i)} is {float(values[i])!r}; weights must be finite "
            f"numbers >= 0 ({int(bad.sum())} are not)"
        )


def _check_total(values: np.ndarray, where: str, sample: Callable[[int], str]) -> None:
    """Refuse weights adding up to more than :data:`MAX_TOTAL`, naming by ``sample(i)`` the
    sample at which their running total passes it."""
    with np.errstate(over="ignore"):
        beyond = ~(np.cumsum(values) <= MAX_TOTAL)  # an overflow to inf included
    if beyond.any():
        i = int(np.argmax(beyond))
        raise DataError(
            f"{where}: the weights add up to more than {MAX_TOTAL:.3g} at sample {sample(i)} (weight "
            f"{float(values[i])!r}), so the run's sums could overflow; divide every weight by the same factor "
            "(no ratio changes)"
        )
