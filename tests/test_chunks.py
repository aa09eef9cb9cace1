"""Chunks are sized in bytes (issue 25, item 5): a chunk of rows holds a few MB of float64
whatever the number of classes, in memory, in the Evaluator and streamed, and the numbers do
not depend on it beyond the order of float sums."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from allocation import allocation_peak
from hypothesis import given
from hypothesis import strategies as st

import evalkit
from evalkit import table

WIDE = 527  # AudioSet's classes


@given(width=st.integers(1, 1_000_000))
def test_a_chunk_holds_as_many_rows_as_fit_in_its_bytes(width):
    rows = table.chunk_rows(width)
    assert table.MIN_CHUNK_ROWS <= rows <= table.MAX_CHUNK_ROWS
    assert rows * width * 8 <= table.CHUNK_BYTES or rows == table.MIN_CHUNK_ROWS
    assert (rows + 1) * width * 8 > table.CHUNK_BYTES or rows == table.MAX_CHUNK_ROWS


def wide_pair(rows: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(25)
    return rng.random((rows, WIDE), dtype=np.float32), rng.random((rows, WIDE), dtype=np.float32)


def test_wide_rows_are_reduced_a_few_megabytes_at_a_time():
    """20,000 x 527 float32 (40 MiB a side): the reduction's traced peak stays within a few
    chunks' bytes (the table's three float64 columns and the casts of a chunk), where chunks
    of 16,384 rows allocated 100 MiB (one of them is 69 MB as float64)."""
    ref, pred = wide_pair(20_000)
    evalkit.evaluate(ref[:10], pred[:10], averaging="samples")  # warm: registry, imports
    with allocation_peak() as peak:
        evalkit.evaluate(ref, pred, averaging="samples")
    assert peak.bytes < 4 * table.CHUNK_BYTES


def test_wide_rows_give_the_same_numbers_in_memory_in_batches_and_streamed(tmp_path):
    """More than one chunk of 527 classes: one call, the Evaluator fed 1,000-row batches, and a
    streamed run of the .npy and of the CSV files (chunks sized from their headers) agree, to
    float sums in another order (rel=1e-12: a few thousand terms)."""
    ref, pred = wide_pair(3_000)
    assert 3_000 > 2 * table.chunk_rows(WIDE)
    metrics = ["precision", "recall", "f1"]
    whole = evalkit.evaluate(ref, pred, averaging="macro", metrics=metrics)
    batches = evalkit.Evaluator(averaging="macro", metrics=metrics)
    for start in range(0, len(ref), 1_000):
        batches.update(ref[start : start + 1_000], pred[start : start + 1_000])
    assert {m.metric: v for m, v in batches.values().items()} == pytest.approx(whole, rel=1e-12)
    classes = [str(i) for i in range(WIDE)]
    for suffix in ("npy", "csv"):
        paths = [tmp_path / f"{side}.{suffix}" for side in ("ref", "pred")]
        for path, values in zip(paths, (ref, pred)):
            if suffix == "npy":
                np.save(path, values)
            else:
                pd.DataFrame(values.astype(np.float64), columns=classes).to_csv(path, index=False, float_format="%.9g")
        results = evalkit.run({"name": "wide", "metrics": metrics, "averaging": "macro",
                               "data": {"reference": str(paths[0]), "systems": {"s": str(paths[1])}, "stream": True}},
                              write_reports=False)
        streamed = {r.metric: r.value for r in results.rows}
        if suffix == "npy":
            assert streamed == pytest.approx(whole, rel=1e-12)
        assert f"read {table.chunk_rows(WIDE):,} rows at a time" in " ".join(results.notes)


def test_column_sums_cast_in_each_threads_own_block():
    """Float32 columns are cast into a block each thread keeps (no new block per chunk): sums
    taken on four threads at once, of arrays wider and narrower than the block, equal float64
    sums of the same values (rel=1e-12: float64 sums of up to 40,000 terms in another order)."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(5)
    arrays = [rng.random((rows, width), dtype=np.float32) for rows, width in
              [(40_000, 3), (3_000, WIDE), (17, 2), (20_000, 40_000 // 3_000)] * 2]
    with ThreadPoolExecutor(4) as pool:
        sums = list(pool.map(table.column_sums, arrays))
    for values, found in zip(arrays, sums):
        assert found == pytest.approx(values.astype(np.float64).sum(axis=0), rel=1e-12)
