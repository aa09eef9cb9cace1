"""``durations: column``: each file's clip duration read from the reference event list's own
``duration`` column (DCASE metadata carrying it beside the events), instead of a durations table.

The same durations as a column or as a table are the same inputs, so every number is the
same; against sed_scores_eval, whose ``audio_durations`` is the table, on the bundled DESED
folders. Rows of one file that disagree, a reference without the column and a reference that is
not a file are errors naming what to fix."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped]
import pytest
from test_score_folder_metrics import DESED, check_segment_based, ours, peer
from test_sed_scores_eval_events import assert_equal_to_peer, seeded, write

import evalkit
from evalkit.errors import DataError

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sed_scores_eval import segment_based


def with_column(reference: Path, durations: Path, to: Path) -> Path:
    """The reference with each row's file duration as a last column, as DCASE metadata has it."""
    table = pd.read_csv(reference, sep="\t").merge(pd.read_csv(durations, sep="\t"), on="filename", how="left")
    assert table["duration"].notna().all()
    table.to_csv(to, sep="\t", index=False)
    return to


def test_segment_based_with_the_column_equals_sed_scores_eval_on_desed(tmp_path):
    """segment_based (best F, AUROC, AP, F at 0.5) with the durations as a column equals the
    peer given them as ``audio_durations``, and our run given the table."""
    reference = with_column(DESED / "reference.tsv", DESED / "durations.tsv", tmp_path / "reference.tsv")
    classes = list(pd.read_csv(next((DESED / "baseline").iterdir()), sep="\t", nrows=0).columns[2:])
    got = ours(reference, DESED / "baseline", {"name": "segment_based", "threshold": 0.5, "durations": "column"})
    check_segment_based(got, DESED / "baseline", DESED / "reference.tsv", DESED / "durations.tsv", classes, 1.0, 0.5, None)
    table = ours(DESED / "reference.tsv", DESED / "baseline",
                 {"name": "segment_based", "threshold": 0.5, "durations": str(DESED / "durations.tsv")})
    assert got == table  # the same inputs, the same computation
    # segments on the score files at 0.5, cut at the column's durations: the peer's fscore
    f, precision, recall, _ = peer(segment_based.fscore, str(DESED / "baseline"), str(DESED / "reference.tsv"),
                                   str(DESED / "durations.tsv"), 0.5, segment_length=1.0)
    results = evalkit.run({
        "name": "desed", "data": {"reference": str(reference), "systems": {"s": str(DESED / "baseline")}},
        "representation": {"name": "segments", "resolution": 1.0, "threshold": 0.5, "durations": "column"},
        "averaging": ["micro", "none"], "metrics": ["precision", "recall", "f1"],
    })
    rows = {(row.averaging, row.metric, row.class_): row.value for row in results.rows}
    for metric, expected in (("f1", f), ("precision", precision), ("recall", recall)):
        assert rows["micro", metric, None] == pytest.approx(expected["micro_average"], rel=1e-12)
        for c in classes:
            assert rows["none", metric, c] == pytest.approx(expected[c], rel=1e-12, nan_ok=True), (metric, c)


def test_psds_with_the_column_is_psds_with_the_table(tmp_path):
    reference = with_column(DESED / "reference.tsv", DESED / "durations.tsv", tmp_path / "reference.tsv")
    psds = {"name": "psds", "dtc_threshold": 0.7, "gtc_threshold": 0.7, "alpha_st": 1.0, "max_efpr": 100.0}
    got = ours(reference, DESED / "baseline", {**psds, "durations": "column"})
    assert got == ours(DESED / "reference.tsv", DESED / "baseline", {**psds, "durations": str(DESED / "durations.tsv")})


@pytest.mark.parametrize("stream", [False, True])
def test_segments_with_the_column_equal_sed_scores_eval(tmp_path, stream):
    """Events past their file's end (seeded clips): the grid is cut at the column's duration as
    the peer cuts it at ``audio_durations``; streamed a chunk of files at a time too."""
    files = write(tmp_path, seeded(0))
    files["gt"] = str(with_column(Path(files["gt"]), Path(files["durations"]), tmp_path / "gt_durations.tsv"))
    f, p, r, _ = peer(segment_based.fscore, files["scores"], str(tmp_path / "gt.tsv"), files["durations"], 0.5,
                      segment_length=1.0)
    results = evalkit.run({
        "name": "column", "data": {"reference": files["gt"], "systems": {"s": files["sys"]}, "stream": stream},
        "representation": {"name": "segments", "resolution": 1.0, "durations": "column"},
        "averaging": ["micro", "none"], "metrics": ["precision", "recall", "f1"],
    })
    got = {(row.averaging, row.metric, row.class_): row.value for row in results.rows}
    assert_equal_to_peer(got, f, p, r)
    assert any("column 5 ('duration') is each row's clip duration" in note for note in results.notes)
    uncut = evalkit.run({
        "name": "uncut", "data": {"reference": files["gt"], "systems": {"s": files["sys"]}},
        "representation": {"name": "segments", "resolution": 1.0}, "averaging": "micro", "metrics": ["f1"],
    })
    assert uncut.rows[0].value != got[("micro", "f1", None)]  # the column was read: events end past their files


def segments_on(reference: Path, system: Path) -> None:
    evalkit.run({"name": "bad", "data": {"reference": str(reference), "systems": {"s": str(system)}, "missing": "empty"},
                 "representation": {"name": "segments", "resolution": 1.0, "durations": "column"}, "metrics": ["f1"]})


def test_rows_of_a_file_that_disagree_are_named(tmp_path):
    (tmp_path / "gt.tsv").write_text(
        "filename\tonset\toffset\tevent_label\tduration\n"
        "a.wav\t0.5\t1.0\tdog\t10.0\n"
        "b.wav\t0.5\t1.0\tdog\t8\n"
        "a.wav\t2.0\t3.0\tdog\t10\n"
        "a.wav\t4.0\t5.0\tcat\t9.5\n"
    )
    (tmp_path / "sys.tsv").write_text("a.wav\t0.5\t1.0\tdog\nb.wav\t0.5\t1.0\tdog\n")
    with pytest.raises(DataError) as error:
        segments_on(tmp_path / "gt.tsv", tmp_path / "sys.tsv")
    assert str(error.value) == (
        f"{tmp_path / 'gt.tsv'}: file 'a.wav' has 2 durations in its 'duration' column (10 on lines 2, 4; 9.5 on "
        "line 5); every row of a file gives the file's duration, so they must agree"
    )


@pytest.mark.parametrize(("text", "message"), [
    ("filename\tonset\toffset\tevent_label\n", "gt.tsv:1: `durations: column` reads a 'duration' column, but the "
     "header names 'filename', 'onset', 'offset', 'event_label'; add a column 'duration'"),
    ("filename\tonset\toffset\tevent_label\tduration\na.wav\t0.5\t1.0\tdog\tlong\n",
     "gt.tsv:2: duration 'long' of 'a.wav' is not a positive number of seconds"),
    ("filename\tonset\toffset\tevent_label\tduration\na.wav\t0.5\t1.0\tdog\t0\n",
     "gt.tsv:2: duration '0' of 'a.wav' is not a positive number of seconds"),
    ("filename\tonset\toffset\tevent_label\tduration\na.wav\t0.5\t1.0\tdog\t10\nb.wav\n",
     "gt.tsv:3: duration '' of 'b.wav' is not a positive number of seconds"),  # a file without events: its duration too
])
def test_a_bad_column_is_named_with_its_line(tmp_path, text, message):
    (tmp_path / "gt.tsv").write_text(text + ("a.wav\t0.5\t1.0\tdog\n" if text.count("\n") == 1 else ""))
    (tmp_path / "sys.tsv").write_text("a.wav\t0.5\t1.0\tdog\n")
    with pytest.raises(DataError, match=re.escape(message)):
        segments_on(tmp_path / "gt.tsv", tmp_path / "sys.tsv")


def test_a_parquet_reference_gives_its_column(tmp_path):
    rows = [("a.wav", 0.5, 12.0, "dog", 10.0), ("b.wav", 1.0, 2.0, "dog", 5.0)]
    frame = pd.DataFrame(rows, columns=["filename", "onset", "offset", "event_label", "duration"])
    frame.to_parquet(tmp_path / "gt.parquet")
    frame.drop(columns="duration").to_csv(tmp_path / "gt.tsv", sep="\t", index=False)
    frame[["filename", "duration"]].to_csv(tmp_path / "durations.tsv", sep="\t", index=False)
    (tmp_path / "sys.tsv").write_text("a.wav\t0.0\t12.0\tdog\nb.wav\t0.0\t9.0\tdog\n")

    def f1(reference: Path, durations: str) -> float:
        results = evalkit.run({"name": "pq", "data": {"reference": str(reference), "systems": {"s": str(tmp_path / "sys.tsv")}},
                               "representation": {"name": "segments", "resolution": 1.0, "durations": durations},
                               "metrics": ["f1"]})
        return results.rows[0].value

    assert f1(tmp_path / "gt.parquet", "column") == f1(tmp_path / "gt.tsv", str(tmp_path / "durations.tsv"))
    frame.assign(duration=[10.0, None]).to_parquet(tmp_path / "gt.parquet")
    with pytest.raises(DataError, match=r"gt.parquet, row 2: duration '' of 'b.wav' is not a positive number"):
        f1(tmp_path / "gt.parquet", "column")


def test_an_inline_reference_has_no_column():
    with pytest.raises(DataError, match=r"segments: `durations: column` reads the reference event list's 'duration' "
                                        r"column, but the reference is inline data, not an event-list file"):
        evalkit.run({"name": "inline", "data": {"reference": [[[0.0, 1.0]]], "systems": {"s": [[[0.0, 1.0]]]}},
                     "representation": {"name": "segments", "durations": "column"}, "metrics": ["f1"]})


def test_a_duration_column_beside_a_row_index_loads_the_same_events(tmp_path):
    """DESED_task-style predictions with pandas' unnamed row index and a duration column: the
    events are those of the plain list, and each extra column is named in a note."""
    from evalkit_segments.loaders import EventListLoader

    frame = pd.DataFrame({"event_label": ["Speech", "Dog", "Speech"], "onset": [0.5, 2.0, 6.25],
                          "offset": [1.75, 2.5, 9.0], "filename": ["a.wav", "a.wav", "b.wav"]})
    frame.assign(duration=10.0).to_csv(tmp_path / "with.tsv", sep="\t")
    frame.to_csv(tmp_path / "plain.tsv", sep="\t", index=False)
    loader = EventListLoader(EventListLoader.Params())
    assert loader.sniff(tmp_path / "with.tsv")
    got, plain = loader.load(tmp_path / "with.tsv", "s"), loader.load(tmp_path / "plain.tsv", "s")
    assert (got.ids, got.classes, got.samples) == (plain.ids, plain.classes, plain.samples)
    assert [note.split(": ", 1)[1][:30] for note in got.notes] == [
        "column 1 (unnamed) is a row in", "column 6 ('duration') is each "]


@pytest.mark.parametrize("component", [
    "representation: {name: segments, resolution: 1.0, durations: column}\nmetrics: [f1]",
    "metrics: [{name: segment_based, durations: column}]",
    "metrics: [{name: psds, dtc_threshold: 0.7, gtc_threshold: 0.7, durations: column}]",
])
def test_validate_refuses_a_reference_without_the_column_as_run_does(tmp_path, component):
    """The header is read at plan time (``check_reference``): `validate` gives `run`'s message,
    before any score file is read; with the column it says ok."""
    from in_process import evalkit_cli

    system = "scores" if "metrics: [{" in component else "sys.tsv"
    files = write(tmp_path, seeded(1, files=3))
    (tmp_path / "run.yaml").write_text(f"name: v\ndata: {{reference: gt.tsv, systems: {{s: {system}}}}}\n{component}\n")
    refused, ran = evalkit_cli("validate", tmp_path / "run.yaml"), evalkit_cli("run", tmp_path / "run.yaml")
    assert refused.returncode == ran.returncode == 1
    assert "`durations: column` reads a 'duration' column, but the header names 'filename', 'onset'" in refused.stderr
    assert refused.stderr == ran.stderr
    with_column(Path(files["gt"]), Path(files["durations"]), tmp_path / "gt.tsv")
    assert evalkit_cli("validate", tmp_path / "run.yaml").returncode == 0


@pytest.mark.slow  # a LocalCluster on loopback
def test_a_dask_run_reads_the_column_on_its_workers(tmp_path):
    """Each worker reads the reference's duration column itself (by the reference's path): the
    same numbers as in memory, for segment_based and psds."""
    from distributed import LocalCluster

    reference = with_column(DESED / "reference.tsv", DESED / "durations.tsv", tmp_path / "reference.tsv")
    metrics = ({"name": "segment_based", "threshold": 0.5, "durations": "column"},
               {"name": "psds", "dtc_threshold": 0.7, "gtc_threshold": 0.7, "durations": "column"})
    memory = ours(reference, DESED / "baseline", *metrics)
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as cluster:
        data = {"reference": str(reference), "systems": {"s": str(DESED / "baseline")}}
        engine = {"name": "dask", "address": cluster.scheduler_address, "partition_rows": 4}
        dask = {(r.metric, r.class_): r.value
                for r in evalkit.run({"name": "d", "metrics": list(metrics), "data": data, "engine": engine}).rows}
    assert dask.keys() == memory.keys()
    for key, value in memory.items():  # partitions' counts and durations summed in another order
        assert dask[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key
