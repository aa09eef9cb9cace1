"""evalkit.metrics reads its inputs where they are (issue 25, item 2): float32 and float64
memberships reach the Evaluator without a whole-array copy, a float32 matrix gives the numbers
of its float64 cast, and soft labels are found wherever they are in a large array."""

from __future__ import annotations

import numpy as np
import pytest
from allocation import allocation_peak

import evalkit.metrics as ekm

ROWS, CLASSES = 200_000, 17


def soft_pair(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(25)
    ref = rng.random((ROWS, CLASSES)).astype(dtype)
    pred = np.clip(ref + rng.normal(0, 0.25, ref.shape), 0, 1).astype(dtype)
    return ref, pred


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted", "samples"])
def test_no_whole_array_copy(dtype, average):
    """A copy of either side (a cast, a column selection, a rounded or masked array) would
    allocate at least one input's size; the Evaluator's blocks of rows stay far under it."""
    ref, pred = soft_pair(dtype)
    ekm.precision_recall_fscore_support(ref, pred, average=average)  # warm: registry, imports
    with allocation_peak() as peak:
        ekm.precision_recall_fscore_support(ref, pred, average=average)
    assert peak.bytes < ref.nbytes


def test_float32_gives_the_numbers_of_its_float64_cast():
    """Bit for bit: the cast to float64 is exact, the minimum T-norm is exact, and the Evaluator
    sums each block of rows in float64 in the same order for both dtypes."""
    ref, pred = soft_pair(np.float32)
    for average in (None, "micro", "macro", "samples"):
        got = ekm.precision_recall_fscore_support(ref, pred, average=average)
        wide = ekm.precision_recall_fscore_support(ref.astype(np.float64), pred.astype(np.float64), average=average)
        for a, b in zip(got, wide):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("fraction", [False, True])
def test_one_soft_value_in_the_last_rows_makes_support_a_mass(fraction):
    """Softness is read a block of rows at a time: a single membership strictly between 0 and 1
    in the very last row still makes support a float mass (the reference's sum per label); crisp
    0/1 floats give scikit-learn's integer counts. The sums are exact (whole numbers and a half)."""
    ref = (np.arange(300_000) % 3 == 0).astype(np.float64)[:, None].repeat(2, axis=1)
    pred = ref.copy()
    if fraction:
        ref[-1, 1] = 0.5
    support = ekm.precision_recall_fscore_support(ref, pred)[3]
    assert support.dtype == (np.float64 if fraction else np.int64)
    np.testing.assert_array_equal(support, ref.sum(axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_memberships_check_reads_the_bounds_of_what_it_scores(dtype):
    """The [0, 1] check reuses the minimum and maximum the finite check took of the whole array,
    and takes them again for a ``labels=`` subset: 1.5 in a column left out changes nothing
    (the subset's numbers equal those of the subset given alone), 1.5 or -0.5 in a column
    scored is refused with its place, from either side."""
    ref, pred = (side[:1000, :4].copy() for side in soft_pair(dtype))
    for side, bad in ((ref, 1.5), (pred, -0.5)):
        wide = side.copy()
        side[7, 3] = bad
        with pytest.raises(ValueError, match=rf"memberships .* lie in \[0, 1\]; got {bad:g} at \(7, 3\)"):
            ekm.f1_score(ref, pred, average="macro")
        with pytest.raises(ValueError, match=rf"got {bad:g} at \(7, 2\)"):  # column 3 is the subset's third
            ekm.f1_score(ref, pred, average="macro", labels=[0, 1, 3])
        subset = ekm.f1_score(ref, pred, average="macro", labels=[0, 1, 2])
        np.testing.assert_array_equal(subset, ekm.f1_score(ref[:, :3], pred[:, :3], average="macro"))
        side[:] = wide
