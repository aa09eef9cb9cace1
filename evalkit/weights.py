"""Sample weights from a data source (``data: weights:`` in a config): one number per sample,
matched to the reference's samples by id, like a system's rows.

A weight of k counts a sample k times in every sum, as scikit-learn's ``sample_weight``: set
metrics, data metrics that take weights, bootstrap resamples and paired tests alike.
"""

from __future__ import annotations

import numpy as np

from evalkit.data import LabelMatrix, align
from evalkit.errors import DataError
from evalkit.items import ItemSets


def aligned_weights(weights: LabelMatrix, reference: LabelMatrix | ItemSets) -> np.ndarray:
    """The weights in the reference's sample order, float64, checked finite and >= 0.

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
        sample = reference.ids[i] if reference.ids is not None else f"row {i + 1}"
        raise DataError(
            f"{weights.source}: the weight of sample {sample!r} is {float(values[i])!r}; weights must be finite "
            f"numbers >= 0 ({int(bad.sum())} are not)"
        )
    if not values.any():
        raise DataError(f"{weights.source}: every weight is 0, so no sample would count")
    return values
