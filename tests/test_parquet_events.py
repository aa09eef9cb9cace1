"""Event lists in Parquet give the item sets of the same list as TSV, and errors naming the row."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from allocation import allocation_peak

import evalkit
from evalkit import budget
from evalkit.errors import DataError
from evalkit_segments.loaders import EventListLoader
from evalkit_segments.parquet_events import CELL_BYTES, ParquetEventList


def events(seed: int, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    onset = np.round(rng.random(n) * 30, 3)
    return pd.DataFrame({
        "filename": rng.choice(["a.wav", "b.wav", "c d.wav"], n),
        "onset": onset, "offset": np.round(onset + rng.random(n) * 3, 3),
        "event_label": rng.choice(["dog", "car", "door/bell"], n),
    })


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parquet_and_tsv_give_the_same_item_sets(tmp_path, seed):
    frame = events(seed)
    frame.to_csv(tmp_path / "events.tsv", sep="\t", index=False)
    quiet = pd.DataFrame({"filename": ["silent.wav"], "onset": [np.nan], "offset": [np.nan], "event_label": [None]})
    with_quiet = pd.concat([frame, quiet], ignore_index=True)
    with_quiet.to_csv(tmp_path / "quiet.tsv", sep="\t", index=False, na_rep="")
    # other column names (aliases), another order, an extra column
    renamed = with_quiet.rename(columns={"filename": "file", "event_label": "label"})[["label", "offset", "file", "onset"]]
    renamed.assign(confidence=1.0).to_parquet(tmp_path / "events.parquet", index=False)
    parquet = ParquetEventList(ParquetEventList.Params()).load(tmp_path / "events.parquet", "reference")
    tsv = EventListLoader(EventListLoader.Params()).load(tmp_path / "quiet.tsv", "reference")
    assert parquet.samples == tsv.samples and parquet.ids == tsv.ids and parquet.classes == tsv.classes
    assert parquet.ids[-1] == "silent.wav" and parquet.samples[-1] == ((), (), ())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f.assign(onset=f.onset.where(f.index != 4, -1.0)), "row 5: onset -1 is negative"),
        (lambda f: f.assign(offset=f.offset.where(f.index != 7, 0.0), onset=f.onset.where(f.index != 7, 2.0)),
         "row 8: offset 0 is before onset 2"),
        (lambda f: f.assign(event_label=f.event_label.where(f.index != 2, "")), "row 3: empty event label"),
        (lambda f: f.assign(filename=f.filename.where(f.index != 9, None)), "row 10: empty filename"),
        (lambda f: f.assign(onset=f.onset.where(f.index != 3, np.inf)), "row 4: onset inf is not a finite time"),
        (lambda f: f.assign(onset=f.onset.astype(str)), "the onset column holds"),
        (lambda f: f.drop(columns="offset"), "an event list needs filename"),
    ],
)
def test_a_bad_row_is_an_error_naming_it(tmp_path, change, message):
    change(events(3)).to_parquet(tmp_path / "events.parquet", index=False)
    with pytest.raises(DataError, match=message) as caught:
        ParquetEventList(ParquetEventList.Params()).load(tmp_path / "events.parquet", "reference")
    assert "events.parquet" in str(caught.value)


def test_the_labels_parameter(tmp_path):
    events(4).to_parquet(tmp_path / "events.parquet", index=False)
    loader = ParquetEventList(ParquetEventList.Params(labels=["door/bell", "dog", "car", "bird"]))
    loaded = loader.load(tmp_path / "events.parquet", "reference")
    assert loaded.classes == ("door/bell", "dog", "car", "bird") and all(s[3] == () for s in loaded.samples)
    with pytest.raises(DataError, match="row 1: unknown label"):
        ParquetEventList(ParquetEventList.Params(labels=["x"])).load(tmp_path / "events.parquet", "reference")


def test_an_event_list_that_would_not_fit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """The check the Parquet matrices and item lists make (evalkit.plugin.read_parquet): the
    footer's sizes of the columns decompressed, and every cell as a Python object, against the
    memory there is. A million events in 13 files, a few MB on disk, would take hundreds of MiB;
    refused with the file, both figures and the limit, at a traced peak under 16 MiB."""
    rows = 1_000_000
    onset = np.arange(rows) % 1000 / 10
    files = np.array([f"f{i}.wav" for i in range(13)])[np.arange(rows) % 13]
    table = pa.table({"filename": pa.array(files, pa.string()), "onset": onset,
                      "offset": onset + 0.05, "event_label": pa.array(["dog"] * rows)})
    path = tmp_path / "events.parquet"
    pq.write_table(table, path, compression="zstd")
    assert path.stat().st_size < 4_000_000
    # the definition: a fixed-width column takes rows x width, a text column its uncompressed
    # pages and an offset per row; then each of the rows x 4 cells as a Python object
    meta = pq.read_metadata(path)
    groups = [meta.row_group(g) for g in range(meta.num_row_groups)]
    decompressed = sum(group.num_rows * 8 if table.schema.field(c).type == pa.float64()
                       else group.column(c).total_uncompressed_size + 8 * group.num_rows
                       for group in groups for c in range(meta.num_columns))
    needed = budget.human(decompressed + rows * 4 * CELL_BYTES)
    monkeypatch.setattr("evalkit.budget.available_memory", lambda: 64 * 2**20)
    config = {"data": {"reference": str(path), "systems": {"s": str(path)}}, "representation": "soft_cardinality",
              "similarity": "segment_overlap", "averaging": "micro", "metrics": ["f1"]}
    expected = (f"{path}: its columns, decompressed, and their rows as Python objects, would take {needed} of memory, "
                "but 64 MiB is available; use a smaller file, or a machine with more memory")
    with allocation_peak() as peak, pytest.raises(DataError, match=f"^{re.escape(expected)}$"):
        evalkit.run(config)
    assert peak.mib < 16, peak.mib
