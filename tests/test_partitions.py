"""Reading and reducing part of a file: a loader's ``stream`` from any row equals the rows of its
``load`` from there; ranges of rows reduced apart and added equal the whole (what the Dask
engine does with blocks), and the order where two ranges meet is checked as they are added."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from run_depth import examples

import evalkit
from evalkit.api import plan
from evalkit.discovery import default_registry
from evalkit.errors import DataError
from evalkit.reduction import scored
from evalkit.streaming import reduce_rows

N = 3_000
CLASSES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The same table as C- and Fortran-ordered .npy, 1-D .npy, wide and long Parquet, and CSV."""
    folder = tmp_path_factory.mktemp("partitions")
    rng = np.random.default_rng(3)
    values = rng.random((N, 3)).round(3)
    ids = np.array([f"s{i:05d}" for i in range(N)])
    np.save(folder / "c.npy", values)
    np.save(folder / "f.npy", np.asfortranarray(values))
    np.save(folder / "one.npy", values[:, 0].astype(np.float32))
    pq.write_table(pa.table({"id": ids, **{c: values[:, i] for i, c in enumerate(CLASSES)}}), folder / "wide.parquet",
                   row_group_size=701)
    long = pd.DataFrame({"id": np.repeat(ids, 3), "class": CLASSES * N, "value": values.ravel()})
    pq.write_table(pa.Table.from_pandas(long, preserve_index=False), folder / "long.parquet", row_group_size=999)
    pd.DataFrame(values, columns=CLASSES, index=pd.Index(ids, name="id")).to_csv(folder / "m.csv")
    targets = (rng.random((N, 3)) < 0.3).astype(float)  # a crisp reference, as map_binned wants
    pq.write_table(pa.table({"id": ids, **{c: targets[:, i] for i, c in enumerate(CLASSES)}}), folder / "ref.parquet",
                   row_group_size=500)
    return folder


LOADERS = {"c.npy": "npy", "f.npy": "npy", "one.npy": "npy", "wide.parquet": "parquet", "long.parquet": "parquet",
           "m.csv": "csv"}


@settings(max_examples=examples(40), deadline=None)
@given(name=st.sampled_from(sorted(LOADERS)), start=st.integers(0, N + 5), rows=st.integers(1, 2_000))
def test_a_stream_from_any_row_is_the_files_rows_from_there(files, name, start, rows):
    loader = default_registry().create("loader", LOADERS[name])
    whole = loader.load(files / name, "reference")
    parts = list(loader.stream(files / name, "reference", rows, start))
    assert sum(len(p) for p in parts) == max(N - start, 0)
    if parts:
        values = np.concatenate([p.values for p in parts])
        np.testing.assert_array_equal(values, whole.values[start:])
        assert {p.classes for p in parts} == {whole.classes}
        if whole.ids is not None:
            assert sum((p.ids for p in parts), ()) == whole.ids[start:]


def config(files, system="m.csv", **extra):
    return {
        "name": "p", "data": {"reference": str(files / "ref.parquet"), "systems": {"s": str(files / system)}, **extra},
        "representation": ["fuzzy", "crisp"], "averaging": ["micro", "macro", "samples"],
        "metrics": ["f1", "hamming_loss", "kld", {"name": "map_binned", "bins": 20}],
    }


@settings(max_examples=examples(15), deadline=None)
@given(cuts=st.lists(st.integers(1, N - 1), max_size=6, unique=True))
def test_ranges_reduced_apart_add_up_to_the_whole(files, cuts):
    checked = plan(config(files), writes=False)
    bounds = [0, *sorted(cuts), None]
    parts = [reduce_rows(checked.work, start, stop) for start, stop in zip(bounds, bounds[1:])]
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    whole = scored(checked.job, reduce_rows(checked.work).tally, "reference").rows
    added = scored(checked.job, total.tally, "reference").rows
    assert [r.measure for r in added] == [r.measure for r in whole]
    for got, want in zip(added, whole):
        assert got.value == pytest.approx(want.value, rel=1e-12, abs=1e-15), got.measure


def test_ranges_out_of_order_where_they_meet_are_an_error(files, tmp_path):
    ids = np.array([f"s{i:05d}" for i in range(N)])
    ids[[1_499, 1_500]] = ids[[1_500, 1_499]]  # rows 1,500 and 1,501: either side of a cut at 1,500
    values = np.zeros((N, 3))
    pq.write_table(pa.table({"id": ids, **{c: values[:, i] for i, c in enumerate(CLASSES)}}), tmp_path / "r.parquet")
    checked = plan({**config(files), "data": {"reference": str(tmp_path / "r.parquet"),
                                              "systems": {"s": str(tmp_path / "r.parquet")}}}, writes=False)
    first, second = reduce_rows(checked.work, 0, 1_500), reduce_rows(checked.work, 1_500, None)
    with pytest.raises(DataError, match="r.parquet: row 1501 is sample 's01499', which does not come after 's01500'"):
        first + second


def test_a_streamed_chunks_bad_value_names_its_row_in_the_file(files, tmp_path):
    values = np.random.default_rng(0).random((N, 3))
    values[2_345, 2] = 1.5  # past the first chunk of the stream (1,000 rows here)
    np.save(tmp_path / "p.npy", values)
    np.save(tmp_path / "r.npy", values.clip(0, 1).round())
    checked = plan({**config(files), "data": {"reference": str(tmp_path / "r.npy"), "systems": {"s": str(tmp_path / "p.npy")},
                                              "stream": True}}, writes=False)
    from evalkit import streaming

    with pytest.raises(DataError, match="p.npy: 1 value\\(s\\) outside \\[0, 1\\], first 1.5 at row 2346, class '2'"):
        list(streaming.chunks_of(checked.work, checked.systems["s"][0], rows=1_000))[2].check_memberships(clip=False)
    with pytest.raises(DataError, match="p.npy: 1 value\\(s\\) outside \\[0, 1\\], first 1.5 at row 2346, class '2'"):
        evalkit.run(checked.config)
