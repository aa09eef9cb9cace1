"""Event lists streamed a block at a time (issue 24): from any file on, in chunks of any size,
the stream of the ``events`` (CSV/TSV) and ``parquet_events`` loaders is exactly what ``load``
gives; a file listed again after other files' rows is an error naming its line or row; a bad
row is named by the same line as ``load`` names it; and a streamed run of sound-event lists
gives the in-memory numbers."""

from __future__ import annotations

import copy
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import yaml
from allocation import allocation_peak
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_depth import examples

import evalkit
from evalkit.errors import DataError
from evalkit.items import Intervals, ItemSets
from evalkit.streaming import joined
from evalkit_segments import columnar, event_stream, loaders, parquet_events
from evalkit_segments.loaders import EventListLoader
from evalkit_segments.parquet_events import ParquetEventList

CONFIGS = Path(__file__).parents[1] / "configs"
LABELS = ["speech", "dog bark", "car", "alarm/bell"]
FILES = [f"f{i:02d}.wav" for i in range(12)]
TIMES = st.sampled_from([0.0, 0.5, 1.0, 1.25, 2.0, 3.5]) | st.floats(0, 60, allow_nan=False).map(lambda t: round(t, 3))


@st.composite
def grouped_lists(draw):
    """Rows (file, onset, offset, label, score) grouped by file, in any order of the files;
    ``None`` times and label: a file without events (a row with only its filename)."""
    files = draw(st.lists(st.sampled_from(FILES), min_size=1, max_size=8, unique=True))
    rows = []
    for file in files:
        if draw(st.integers(0, 5)) == 0:
            rows.append((file, None, None, None, None))
            continue
        for _ in range(draw(st.integers(1, 6))):
            onset = draw(TIMES)
            score = draw(st.sampled_from([0.1, 0.5, 0.9]))
            rows.append((file, onset, round(onset + draw(TIMES), 3), draw(st.sampled_from(LABELS)), score))
    return rows


def write_text(path: Path, rows, *, header: bool, scores: bool) -> Path:
    sep = "," if path.suffix == ".csv" else "\t"
    names = ["filename", "onset", "offset", "event_label"] + (["score"] if scores else [])
    lines = [sep.join(names)] if header else []
    for file, onset, offset, label, score in rows:
        if onset is None:
            lines.append(file)
            continue
        label = f'"{label}"' if sep == "," and "/" in label else label
        lines.append(sep.join(map(str, [file, onset, offset, label] + ([score] if scores else []))))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_parquet(path: Path, rows) -> Path:
    frame = pd.DataFrame(rows, columns=["filename", "onset", "offset", "event_label", "score"])
    frame = frame.astype({"onset": float, "offset": float})  # times, even where every row is a file without events
    frame.drop(columns="score").to_parquet(path, index=False)
    return path


def assert_same(parts: list[ItemSets], whole: ItemSets, start: int) -> None:
    """The parts, one after the other, are ``whole``'s files from ``start`` on: ids, classes,
    and every interval (events as listed, compared as exact columns, and merged as items)."""
    want = whole[start:]
    assert {p.classes for p in parts} <= {whole.classes}
    assert sum((p.ids for p in parts), ()) == want.ids
    if not parts:
        assert not len(want)
        return
    got = joined(parts)
    assert isinstance(got.samples, Intervals) and isinstance(want.samples, Intervals)
    assert got.samples.merge == want.samples.merge and got.samples.n_classes == want.samples.n_classes
    assert got.samples == want.samples

    def columns(s: Intervals) -> np.ndarray:
        table = np.c_[s.sample, s.klass, s.onset, s.offset]
        return table[np.lexsort(table.T[::-1])]

    np.testing.assert_array_equal(columns(got.samples), columns(want.samples))


#: Bytes and rows read at a time: a few lines (blocks cut inside a file and between files) or all.
BLOCKS = st.sampled_from([(40, 3), (200, 7), (1 << 20, 65_536)])


def small_blocks(sizes: tuple[int, int]):
    stream_bytes, rows = sizes
    return mock.patch.multiple(columnar, STREAM_BYTES=stream_bytes), mock.patch.multiple(loaders, BLOCK_ROWS=rows)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=grouped_lists(), suffix=st.sampled_from([".tsv", ".csv"]), header=st.booleans(), scores=st.booleans(),
       labels=st.booleans(), merge=st.booleans(), min_score=st.sampled_from([None, 0.5]), start=st.integers(0, 9),
       size=st.integers(1, 5), blocks=BLOCKS)
def test_an_event_list_streamed_from_any_file_is_the_loaded_list_from_there(
    tmp_path, rows, suffix, header, scores, labels, merge, min_score, start, size, blocks,
):
    path = write_text(tmp_path / f"events{suffix}", rows, header=header or scores, scores=scores)
    params = {"labels": LABELS[::-1] + ["bird"] if labels else None, "merge": merge} | (
        {"min_score": min_score} if scores else {})
    loader = EventListLoader(EventListLoader.Params(**params))
    whole = loader.load(path, "reference")
    first, second = small_blocks(blocks)
    with first, second:
        parts = list(loader.stream(path, "reference", size, start))
    assert all(len(p) <= size for p in parts)
    assert_same(parts, whole, start)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=grouped_lists(), labels=st.booleans(), start=st.integers(0, 9), size=st.integers(1, 5),
       batch=st.sampled_from([2, 5, 65_536]))
def test_a_parquet_event_list_streamed_from_any_file_is_the_loaded_list_from_there(tmp_path, rows, labels, start, size, batch):
    path = write_parquet(tmp_path / "events.parquet", rows)
    loader = ParquetEventList(ParquetEventList.Params(labels=LABELS[::-1] + ["bird"] if labels else None))
    whole = loader.load(path, "reference")
    with mock.patch.object(parquet_events, "BATCH_ROWS", batch):
        parts = list(loader.stream(path, "reference", size, start))
    assert all(len(p) <= size for p in parts)
    assert_same(parts, whole, start)


def test_memory_does_not_grow_with_the_list(tmp_path):
    """Streamed in blocks of 16 KiB (TSV) or 1,024 rows (Parquet), a list of 4x the files peaks
    at about the same traced allocations: it grows by the hashes of the files passed (8 bytes a
    file, with the copies made as they are added: 0.06 MiB for 3,000 more files), where the peak
    of loading it whole grows by 0.5 (TSV) to 1.7 MiB (Parquet)."""
    rng = np.random.default_rng(0)
    peaks = {}
    for files in (1_000, 4_000):
        file = np.repeat(np.arange(files), 5)
        onset = rng.uniform(0, 9, file.size).round(3)
        frame = pd.DataFrame({"filename": [f"Y{i:07d}.wav" for i in file], "onset": onset, "offset": onset + 1,
                              "event_label": np.array(LABELS)[rng.integers(0, len(LABELS), file.size)]})
        frame.to_csv(tmp_path / f"{files}.tsv", sep="\t", index=False)
        frame.to_parquet(tmp_path / f"{files}.parquet", index=False)
        for loader, suffix in ((EventListLoader(EventListLoader.Params()), "tsv"),
                               (ParquetEventList(ParquetEventList.Params()), "parquet")):
            path = tmp_path / f"{files}.{suffix}"
            list(loader.stream(path, "reference", 100))  # first uses (imports, caches) not counted
            with mock.patch.object(columnar, "STREAM_BYTES", 16 << 10), \
                    mock.patch.object(parquet_events, "BATCH_ROWS", 1_024), allocation_peak() as streamed:
                assert sum(len(chunk) for chunk in loader.stream(path, "reference", 100)) == files
            with allocation_peak() as loaded:
                loader.load(path, "reference")
            peaks[suffix, files] = streamed.mib, loaded.mib
    for suffix in ("tsv", "parquet"):
        (small, small_whole), (large, large_whole) = peaks[suffix, 1_000], peaks[suffix, 4_000]
        assert large - small < 0.25 * (large_whole - small_whole), (suffix, peaks)


# --- a file listed again -------------------------------------------------------------------------

SCATTERED = [("a.wav", 0.0, 1.0, "car", 0.5), ("a.wav", 2.0, 3.0, "dog bark", 0.5), ("b.wav", 1.0, 2.0, "car", 0.5),
             ("c.wav", None, None, None, None), ("a.wav", 4.0, 5.0, "car", 0.5)]


@pytest.mark.parametrize("blocks", [(30, 2), (1 << 20, 65_536)], ids=["blocks apart", "one block"])
@pytest.mark.parametrize("fast", [True, False], ids=["columnar", "row by row"])
def test_a_file_listed_again_after_other_files_is_an_error_naming_its_line(tmp_path, blocks, fast):
    rows = SCATTERED if not fast else [r for r in SCATTERED if r[1] is not None]  # a lone filename: row by row
    path = write_text(tmp_path / "events.tsv", rows, header=True, scores=False)
    loader = EventListLoader(EventListLoader.Params())
    assert loader.load(path, "reference").ids == ("a.wav", "b.wav") + (() if fast else ("c.wav",))  # in memory: any order
    first, second = small_blocks(blocks)
    with first, second, pytest.raises(DataError) as caught:
        list(loader.stream(path, "reference", 100))
    line = len(rows) + 1  # the last row, after the header
    assert str(caught.value) == (
        f"{path}:{line}: file 'a.wav' is listed again after other files' rows (first at {path}:2); a streamed run "
        "reads a file's events together: group the rows by filename (sort the list), or run without `stream: true`"
    )


@pytest.mark.parametrize("batch", [2, 65_536])
def test_a_file_listed_again_in_a_parquet_list_is_an_error_naming_its_row(tmp_path, batch):
    path = write_parquet(tmp_path / "events.parquet", SCATTERED)
    loader = ParquetEventList(ParquetEventList.Params())
    assert loader.load(path, "reference").ids == ("a.wav", "b.wav", "c.wav")
    with mock.patch.object(parquet_events, "BATCH_ROWS", batch), pytest.raises(DataError) as caught:
        list(loader.stream(path, "reference", 100))
    assert str(caught.value).startswith(f"{path}: row 5: file 'a.wav' is listed again after other files' rows "
                                        f"(first at {path}: row 1); a streamed run")


def test_a_hash_collision_is_no_error(tmp_path):
    """Files passed are kept as hashes; two names of one hash are told apart by a look back."""
    rows = [(f, 0.0, 1.0, "car", None) for f in ("a.wav", "b.wav", "c.wav")]
    path = write_text(tmp_path / "events.tsv", rows, header=False, scores=False)
    loader = EventListLoader(EventListLoader.Params())
    same = mock.patch.object(event_stream._Passed, "_hash", staticmethod(lambda names: np.zeros(len(names), np.uint64)))
    first, second = small_blocks((16, 1))
    with same, first, second:
        parts = list(loader.stream(path, "reference", 1))
    assert_same(parts, loader.load(path, "reference"), 0)


# --- a bad row -----------------------------------------------------------------------------------

GOOD = [(f"f{i}.wav", 1.0, 2.0, "car", 0.5) for i in range(6)]


@pytest.mark.parametrize(("row", "expected"), [
    (("f3.wav", "x", 2.0, "car", 0.5), "onset 'x' is not a number"),
    (("f3.wav", 3.0, 2.0, "car", 0.5), "offset 2.0 is before onset 3.0"),
    (("f3.wav", -1.0, 2.0, "car", 0.5), "onset -1.0 is negative"),
    (("f3.wav", 1.0, 2.0, "bird", 0.5), "unknown label 'bird'"),
    (("f3.wav", 1.0, 2.0, "car", "high"), "event score 'high' is not a finite number"),
])
@pytest.mark.parametrize("blocks", [(30, 2), (1 << 20, 65_536)], ids=["blocks apart", "one block"])
def test_a_bad_row_streamed_is_named_by_the_line_load_names(tmp_path, row, expected, blocks):
    rows = GOOD[:4] + [row] + GOOD[4:]
    path = write_text(tmp_path / "events.tsv", rows, header=True, scores=True)
    loader = EventListLoader(EventListLoader.Params(labels=["car", "dog"], min_score=None))
    with pytest.raises(DataError, match=expected) as loaded:
        loader.load(path, "reference")
    first, second = small_blocks(blocks)
    with first, second, pytest.raises(DataError) as streamed:
        list(loader.stream(path, "reference", 2))
    assert str(streamed.value) == str(loaded.value) and f"{path}:6:" in str(loaded.value)


@pytest.mark.parametrize("batch", [2, 65_536])
def test_a_bad_parquet_row_streamed_is_named_by_the_row_load_names(tmp_path, batch):
    frame = pd.DataFrame(GOOD, columns=["filename", "onset", "offset", "event_label", "score"]).drop(columns="score")
    frame.loc[4, "onset"] = np.inf
    frame.loc[2, "offset"] = -1.0  # before its onset, and earlier: the first problem in the file
    frame.to_parquet(tmp_path / "events.parquet", index=False)
    loader = ParquetEventList(ParquetEventList.Params())
    with pytest.raises(DataError, match="row 3: offset -1 is before onset 1") as loaded:
        loader.load(tmp_path / "events.parquet", "reference")
    with mock.patch.object(parquet_events, "BATCH_ROWS", batch), pytest.raises(DataError) as streamed:
        list(loader.stream(tmp_path / "events.parquet", "reference", 2))
    assert str(streamed.value) == str(loaded.value)


def test_a_list_without_rows_is_the_same_error_streamed(tmp_path):
    path = tmp_path / "events.tsv"
    path.write_text("filename\tonset\toffset\tevent_label\n", encoding="utf-8")
    loader = EventListLoader(EventListLoader.Params())
    with pytest.raises(DataError, match="no rows") as loaded:
        loader.load(path, "reference")
    with pytest.raises(DataError) as streamed:
        list(loader.stream(path, "reference", 2))
    assert str(streamed.value) == str(loaded.value)


# --- a streamed run ------------------------------------------------------------------------------


def sorted_copy(source: Path, out: Path) -> str:
    """The event list with its rows sorted by filename (stable: a file's rows keep their order)."""
    lines = source.read_text(encoding="utf-8").splitlines()
    head = lines[:1] if not lines[0].split("\t")[1].replace(".", "").isdigit() else []
    rows = sorted(lines[len(head):], key=lambda line: line.split("\t")[0])
    out.write_text("".join(f"{line}\n" for line in head + rows), encoding="utf-8")
    return str(out)


@pytest.mark.parametrize("kind", ["tsv", "parquet"])
def test_a_streamed_run_of_sound_event_lists_gives_the_in_memory_numbers(tmp_path, kind):
    """configs/sound_events.yaml (segment-based and event-based, micro and macro) on its lists
    sorted by file, streamed (read in blocks of a few lines or rows), against the same lists in
    memory."""
    config = yaml.safe_load((CONFIGS / "sound_events.yaml").read_text())
    config.pop("report")
    data = config["data"]
    for name, given_path in [("reference", data["reference"]), *data["systems"].items()]:
        path = Path(sorted_copy(CONFIGS / given_path, tmp_path / f"{name}.tsv"))
        if kind == "parquet":
            frame = pd.read_csv(path, sep="\t", header=None if name != "reference" else 0)
            frame.columns = ["filename", "onset", "offset", "event_label"]
            frame.to_parquet(path := tmp_path / f"{name}.parquet", index=False)
        if name == "reference":
            data["reference"] = str(path)
        else:
            data["systems"][name] = str(path)
    want = evalkit.run(copy.deepcopy(config))
    config["data"]["stream"] = True
    first, second = small_blocks((200, 7))
    with first, second, mock.patch.object(parquet_events, "BATCH_ROWS", 9):
        got = evalkit.run(config)
    assert [r.measure for r in got.rows] == [r.measure for r in want.rows]
    for a, b in zip(got.rows, want.rows):
        # chunks add up in another order than the whole list, so sums may differ in their last bits
        assert (a.value is None) == (b.value is None), a.measure
        assert a.value is None or a.value == pytest.approx(b.value, rel=1e-12), a.measure
    assert any("streamed" in note for note in got.notes)
