"""Streamed runs (data: {stream: true}) give the numbers of in-memory runs, whatever the chunk
boundaries of the two sides (Parquet row groups, .npy, a CSV read whole), and stop with an error
naming the row at the first sample out of order, missing or extra."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalkit
from evalkit.errors import ConfigError, DataError

N, CLASSES = 40_000, ["a", "b", "c"]  # more than two chunks of 16,384 rows
SETTINGS = {
    "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"],
    "averaging": ["micro", "macro", "weighted", "samples", "none"],
    "metrics": ["precision", "recall", "f1", "hamming_loss", "kld", "exact_match_ratio",
                {"name": "map_binned", "bins": 50}],
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    ref = rng.random((N, 3)).round(3)
    ref[rng.random((N, 3)) < 0.3] = 0.0
    ids = np.array([f"s{i:06d}" for i in range(N)])  # sorted as text
    return ids, (ref > 0.5).astype(float), rng.random((N, 3)).round(3)


def write_parquet(path, ids, values, row_group):
    table = pa.table({"id": ids, **{c: values[:, i] for i, c in enumerate(CLASSES)}})
    pq.write_table(table, path, row_group_size=row_group)
    return str(path)


def run(reference, systems, **extra):
    config = {"name": "s", "data": {"reference": reference, "systems": systems}, **SETTINGS, **extra}
    results = evalkit.run(config)
    return {(r.system, r.representation, r.tnorm, r.averaging, r.metric, r.class_): r.value for r in results.rows}, results


def test_streamed_values_equal_in_memory_ones(tmp_path, data):
    ids, ref, pred = data
    reference = write_parquet(tmp_path / "ref.parquet", ids, ref, 7_000)
    systems = {
        "groups": write_parquet(tmp_path / "pred.parquet", ids, pred, 12_345),  # other row groups than the reference
        "columns_swapped": str(tmp_path / "swapped.csv"),  # read whole, then chunked
    }
    pd.DataFrame(pred[:, ::-1], columns=CLASSES[::-1], index=pd.Index(ids, name="id")).to_csv(systems["columns_swapped"])
    in_memory, _ = run(reference, systems)
    streamed, results = run(reference, systems, data={"reference": reference, "systems": systems, "stream": True})
    assert streamed.keys() == in_memory.keys()
    for key, value in in_memory.items():
        assert streamed[key] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), key
    assert results.notes == [f"streamed: {N:,} samples read 16,384 rows at a time"]


def test_npy_files_stream_by_position(tmp_path, data):
    _, ref, pred = data
    np.save(tmp_path / "ref.npy", ref)
    np.save(tmp_path / "pred.npy", pred.astype(np.float32))
    files = (str(tmp_path / "ref.npy"), {"p": str(tmp_path / "pred.npy")})
    in_memory, _ = run(*files)
    streamed, results = run(*files, data={"reference": files[0], "systems": files[1], "stream": True})
    for key, value in in_memory.items():
        assert streamed[key] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), key
    assert "p: rows aligned with the reference by position: neither file has sample ids" in results.notes


def test_classes_name_npy_columns_as_in_memory(tmp_path, data):
    _, ref, pred = data
    np.save(tmp_path / "ref.npy", ref)
    np.save(tmp_path / "pred.npy", pred)
    files = {"reference": str(tmp_path / "ref.npy"), "systems": {"p": str(tmp_path / "pred.npy")}}
    named = ["speech", "music", "car"]
    in_memory, _ = run(**files, data={**files, "classes": named})
    streamed, _ = run(**files, data={**files, "classes": named, "stream": True})
    assert {key[-1] for key in streamed} >= set(named)
    for key, value in in_memory.items():
        assert streamed[key] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), key
    for stream in (False, True):  # a wrong count of names: the in-memory message
        with pytest.raises(DataError, match="ref.npy: 3 unnamed columns but 2 names in `classes`; give one name per column"):
            run(**files, data={**files, "classes": named[:2], "stream": stream})


def stream(reference, system):
    return evalkit.run({"name": "s", "data": {"reference": reference, "systems": {"p": system}, "stream": True}})


def test_a_sample_out_of_order_is_an_error_naming_its_row(tmp_path, data):
    ids, ref, pred = data
    reference = write_parquet(tmp_path / "ref.parquet", ids, ref, 10_000)
    swapped = ids.copy()
    swapped[[30_000, 30_001]] = swapped[[30_001, 30_000]]
    system = write_parquet(tmp_path / "pred.parquet", swapped, pred, 10_000)
    # Every file's order is checked as it streams, the systems' as the reference's.
    with pytest.raises(DataError, match="pred.parquet: row 30002 is sample 's030000', which does not come after 's030001'"):
        stream(reference, system)
    unsorted = write_parquet(tmp_path / "unsorted.parquet", swapped, ref, 10_000)
    with pytest.raises(DataError, match="unsorted.parquet: row 30002 is sample 's030000', which does not come after 's030001'"):
        stream(unsorted, unsorted)


def test_a_shorter_or_longer_system_is_an_error(tmp_path, data):
    ids, ref, pred = data
    reference = write_parquet(tmp_path / "ref.parquet", ids, ref, 10_000)
    short = write_parquet(tmp_path / "short.parquet", ids[:20_000], pred[:20_000], 10_000)
    # Matched by id as in memory: the same messages, naming the first ids (counted in the chunk
    # where they are found).
    with pytest.raises(DataError, match="short.parquet: missing \\d+ reference id\\(s\\): 's020000', 's020001'"):
        stream(reference, short)
    with pytest.raises(DataError, match="ref.parquet: \\d+ id\\(s\\) not in the reference: 's020000'"):
        stream(short, reference)


def test_a_metric_that_keeps_its_data_is_refused_at_its_key_with_the_bounded_one(tmp_path, data):
    ids, ref, _ = data
    reference = write_parquet(tmp_path / "ref.parquet", ids, ref, 10_000)
    config = {"name": "s", "data": {"reference": reference, "systems": {"p": reference}, "stream": True},
              "metrics": ["f1", "map"]}
    with pytest.raises(ConfigError, match=r"^metrics.1: map keeps every score .* while a streamed run holds bounded "
                                          r"sums: use map_binned"):
        evalkit.run(config)
    with pytest.raises(ConfigError, match=r"^metrics.1: map keeps every score .* while a Dask run holds bounded"):
        evalkit.run({**config, "data": {**config["data"], "stream": False}, "engine": "dask"})


def test_a_streamed_bca_bootstrap_equals_the_one_in_memory(tmp_path, data):
    """BCa's resample counts and jackknife groups are keyed by sample id, so a stream draws them
    as a run in memory does."""
    ids, ref, pred = data
    reference = write_parquet(tmp_path / "ref.parquet", ids[:2_000], ref[:2_000], 500)
    system = write_parquet(tmp_path / "pred.parquet", ids[:2_000], pred[:2_000], 500)
    config = {"name": "s", "data": {"reference": reference, "systems": {"p": system}},
              "statistics": {"bootstrap": {"resamples": 50, "method": "bca"}}}
    streamed = evalkit.run({**config, "data": {**config["data"], "stream": True}})
    whole = evalkit.run(config)
    assert not any("bootstrap" in note for note in streamed.notes)  # nothing taken in its place
    for got, want in zip(streamed.rows, whole.rows, strict=True):
        assert got.measure == want.measure
        # Sums taken a chunk at a time differ from the whole's in the last bits.
        assert (got.value, got.ci_low, got.ci_high) == pytest.approx(
            (want.value, want.ci_low, want.ci_high), rel=1e-12, abs=1e-15)


def test_streamed_poisson_intervals_equal_in_memory_ones(tmp_path, data):
    ids, ref, pred = data
    reference = write_parquet(tmp_path / "ref.parquet", ids[:20_000], ref[:20_000], 3_000)
    system = write_parquet(tmp_path / "pred.parquet", ids[:20_000], pred[:20_000], 5_000)
    config = {
        "name": "s", "representation": "fuzzy", "averaging": ["micro", "samples", "none"],
        "metrics": ["f1", "kld", {"name": "map_binned", "bins": 20}],
        "statistics": {"bootstrap": {"resamples": 50, "method": "poisson", "seed": 3}},
    }
    data_section = {"reference": reference, "systems": {"p": system}}

    def bounds(stream):
        results = evalkit.run({**config, "data": {**data_section, "stream": stream}})
        return {(r.averaging, r.metric, r.class_): (r.value, r.ci_low, r.ci_high) for r in results.rows}

    streamed, in_memory = bounds(True), bounds(False)
    assert streamed.keys() == in_memory.keys()
    for key, expected in in_memory.items():
        assert streamed[key] == pytest.approx(expected, rel=1e-12), key
        assert expected[1] <= expected[0] <= expected[2], key


def test_a_bad_cell_in_a_streamed_csv_names_its_line(tmp_path, data):
    ids, ref, pred = data
    frame = pd.DataFrame(pred[:30_000], columns=CLASSES, index=pd.Index(ids[:30_000], name="id"))
    frame.to_csv(tmp_path / "pred.csv")
    text = (tmp_path / "pred.csv").read_text().splitlines()
    text[25_001] = text[25_001].rsplit(",", 1)[0] + ",oops"  # line 25,002: past the first chunk
    (tmp_path / "pred.csv").write_text("\n".join(text) + "\n")
    reference = write_parquet(tmp_path / "ref.parquet", ids[:30_000], ref[:30_000], 10_000)
    with pytest.raises(DataError, match="pred.csv:25002: .*'oops'"):
        stream(reference, str(tmp_path / "pred.csv"))


def test_classes_and_clip_as_in_memory(tmp_path, data):
    ids, ref, pred = data
    over = pred.copy()
    over[::1000, 1] = 1.25  # clipped with clip: true
    reference = write_parquet(tmp_path / "ref.parquet", ids, ref, 9_000)
    system = write_parquet(tmp_path / "pred.parquet", ids, over, 11_000)

    def rows(stream):
        results = evalkit.run({
            "name": "s", "metrics": ["f1", "kld"], "averaging": ["micro", "none"],
            "data": {"reference": reference, "systems": {"p": system}, "stream": stream, "classes": ["c", "b"], "clip": True},
        })
        return {(r.averaging, r.metric, r.class_): r.value for r in results.rows}, results.notes

    (streamed, notes), (in_memory, memory_notes) = rows(True), rows(False)
    assert streamed.keys() == in_memory.keys() and {k[2] for k in streamed} == {None, "c", "b"}
    for key, value in in_memory.items():
        assert streamed[key] == pytest.approx(value, rel=1e-12), key
    assert notes[0] == memory_notes[0] == "p: 40 prediction value(s) outside [0, 1] were clipped (clip: true)"


def test_a_file_that_breaks_while_streaming_is_a_data_error_naming_it(tmp_path, data):
    ids, ref, pred = data
    reference = write_parquet(tmp_path / "ref.parquet", ids, ref, 10_000)
    broken = tmp_path / "broken.parquet"
    body = bytearray((tmp_path / "ref.parquet").read_bytes())
    middle = len(body) // 2
    body[middle : middle + 64] = b"\xff" * 64  # a row group's pages, not the footer
    broken.write_bytes(bytes(body))
    with pytest.raises(DataError, match="broken.parquet"):
        stream(reference, str(broken))
    np.save(tmp_path / "pred.npy", pred)
    (tmp_path / "cut.npy").write_bytes((tmp_path / "pred.npy").read_bytes()[:-8])
    np.save(tmp_path / "ref.npy", ref)
    with pytest.raises(DataError, match="cut.npy: the header promises"):
        stream(str(tmp_path / "ref.npy"), str(tmp_path / "cut.npy"))


def npy_loader():
    from evalkit.discovery import default_registry

    return default_registry().create("loader", "npy")


def test_npy_chunks_are_read_into_reused_buffers_never_under_a_kept_chunk(tmp_path, data):
    """The .npy stream reads each chunk into a buffer of its own only while the chunk before is
    still held: chunks kept all at once (a Dask block, a window waiting for ids) each keep their
    rows, and chunks dropped in turn take turns in two buffers (no new array per chunk)."""
    _, _, pred = data
    path = tmp_path / "pred.npy"
    np.save(path, pred.astype(np.float32))
    kept = list(npy_loader().stream(path, "prediction", 1_000))
    assert len(kept) == N // 1_000
    assert np.array_equal(np.concatenate([chunk.values for chunk in kept]), np.load(path))  # read back: exact
    places = set()
    for start, chunk in zip(range(0, N, 1_000), npy_loader().stream(path, "prediction", 1_000)):
        assert np.array_equal(chunk.values, pred[start : start + 1_000].astype(np.float32))
        places.add(chunk.values.__array_interface__["data"][0])
    assert len(places) == 2


def test_an_npy_file_cut_while_streamed_is_a_data_error_naming_it(tmp_path, data):
    _, _, pred = data
    path = tmp_path / "pred.npy"
    np.save(path, pred)
    chunks = npy_loader().stream(path, "prediction", 1_000)
    next(chunks)
    with path.open("r+b") as handle:  # the file is cut after its header was checked
        handle.truncate(path.stat().st_size - 8)
    with pytest.raises(DataError, match=r"pred\.npy: ends before the rows its header declares"):
        list(chunks)
