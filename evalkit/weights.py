"""Sample weights from a data source (``data: weights:`` in a config): one number per sample,
matched to the reference's samples by id, like a system's rows.

A weight of k counts a sample k times in every sum, as scikit-learn's ``sample_weight``: set
metrics, data metrics that take weights, bootstrap resamples and paired tests alike.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from evalkit.data import LabelMatrix, align
from evalkit.errors import DataError
from evalkit.items import ItemSets

#: The most the weights may add up to: 2**-64 of float64's range (about 9.7e288). A run's sums
#: multiply them by a sample's cardinality (at most its classes, or its items), a bootstrap
#: count and F's factor 2, none near 2**64, so no sum overflows; real weights never come close.
MAX_TOTAL = float(np.finfo(np.float64).max) / 2.0**64


def aligned_weights(weights: LabelMatrix, reference: LabelMatrix | ItemSets) -> np.ndarray:
    """The weights in the reference's sample order, float64, checked finite, >= 0, not all 0 and
    adding up to at most :data:`MAX_TOTAL`.

    The source holds one value column (its name is free: ``weight``, ``w``); rows are matched
    by id when both sides have ids and by position when neither has, as for a system's file.
    """
    if len(weights.classes) != 1:
        raise DataError(
            f"{weights.source}: sample weights take one value column (and an id column), but it has "
            f"{len(weights.classes)}: {', '.join(map(repr, weights.classes[:5]))}"
        )
    # Matched like a system's file with the one column of the reference's stand-in.
    stand_in = LabelMatrix(np.zeros((len(reference), 1)), weights.classes, reference.ids, reference.source)
    values = np.asarray(align(stand_in, weights).values[:, 0], dtype=np.float64)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(
            f"{weights.source}: the weight of sample {_sample(reference, i)!r} is {float(values[i])!r}; weights must be "
            f"finite numbers >= 0 ({int(bad.sum())} are not)"
        )
    if not values.any():
        raise DataError(f"{weights.source}: every weight is 0, so no sample would count")
    check_total(values, weights.source, lambda i: _sample(reference, i))
    return values


def check_total(values: np.ndarray, source: str, sample: Callable[[int], str]) -> None:
    """Refuse weights adding up to more than :data:`MAX_TOTAL`, naming the ``sample`` (a name
    for a row) at which their running total passes it."""
    with np.errstate(over="ignore"):
        beyond = ~(np.cumsum(values) <= MAX_TOTAL)  # an overflow to inf included
    if beyond.any():
        i = int(np.argmax(beyond))
        raise DataError(
            f"{source}: the weights add up to more than {MAX_TOTAL:.3g} at sample {sample(i)!r} (weight "
            f"{float(values[i])!r}), so the run's sums could overflow; divide every weight by the same factor "
            "(no ratio changes)"
        )


def _sample(reference: LabelMatrix | ItemSets, row: int) -> str:
    return reference.ids[row] if reference.ids is not None else f"row {row + 1}"
