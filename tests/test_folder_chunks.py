"""An in-memory run (no ``stream: true``) reads a system's folder of score files a chunk of
files at a time (:mod:`evalkit.folders`): its memory stays that of a chunk as the folder grows,
and its numbers are those of the streamed run and of the whole read (a loader that cannot list
its samples, or ``keyed: false`` draws, still read the folder whole, and say so)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_psds import CLASSES, SETTINGS, make

import evalkit
from evalkit.api import plan
from evalkit_segments.score_files import ScoreFiles

PSDS = {"name": "psds", **SETTINGS[1]}


def config(root: Path, metrics: list, **data) -> dict:
    return {"name": "chunks", "metrics": metrics,
            "data": {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "scores")}, **data}}


def values(results: evalkit.Results) -> dict:
    return {(r.system, r.representation, r.averaging, r.metric, r.class_): (r.value, r.ci_low, r.ci_high) for r in results.rows}


def assert_same(got: dict, want: dict) -> None:
    """Equal to a relative 1e-12: the chunks add their sums (durations, counts of a fuzzy
    table) in another order than one pass over the whole."""
    assert got.keys() == want.keys()
    for key, expected in want.items():
        assert got[key] == pytest.approx(expected, rel=1e-12, nan_ok=True), key


def long_files(root: Path, files: int, frames: int = 2_000) -> Path:
    """``files`` score files of ``frames`` frames (so a file's scores outweigh what a run holds
    whatever its data) and a reference of one event per file."""
    rng = np.random.default_rng(files)
    (root / "scores").mkdir(parents=True)
    times = np.round(np.arange(frames + 1) * 0.01, 6)
    rows = []
    for i in range(files):
        table = pd.DataFrame(np.round(rng.random((frames, len(CLASSES))), 2), columns=list(CLASSES))
        table.insert(0, "offset", times[1:])
        table.insert(0, "onset", times[:-1])
        table.to_csv(root / "scores" / f"clip{i:04d}.tsv", sep="\t", index=False)
        rows.append((f"clip{i:04d}.wav", 1.0, 3.0, CLASSES[i % len(CLASSES)]))
    pd.DataFrame(rows, columns=["filename", "onset", "offset", "event_label"]).to_csv(root / "gt.tsv", sep="\t", index=False)
    return root


def peak(run: dict) -> int:
    """The most bytes the run held at once (tracemalloc: numpy's arrays included)."""
    tracemalloc.start()
    try:
        evalkit.run(run)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_peak_stays_that_of_a_chunk_as_the_folder_doubles(tmp_path, monkeypatch):
    """Twice the files, the same peak (within a quarter) in memory; read whole (by a loader that
    cannot list its samples, as every run did before), the peak grows with the files, which
    shows that the measure sees the folder."""
    monkeypatch.setattr("evalkit.budget.FOLDER_ROWS", 4)
    roots = [long_files(tmp_path / str(files), files) for files in (20, 40)]
    evalkit.run(config(roots[0], [PSDS]))  # imports and caches first: they are not the folder's
    chunked = [peak(config(root, [PSDS])) for root in roots]
    monkeypatch.delattr(ScoreFiles, "sample_ids")
    whole = [peak(config(root, [PSDS])) for root in roots]
    assert chunked[1] < 1.25 * chunked[0], chunked
    assert whole[1] > 1.6 * whole[0], whole
    assert whole[0] > 2 * chunked[0], (whole, chunked)


@pytest.mark.parametrize("stream", [False, True])
def test_the_plan_estimate_covers_the_peak_of_a_chunked_read(tmp_path, monkeypatch, stream):
    """The plan's estimate of a folder read a chunk at a time is at least what the run holds at
    its peak above the interpreter (tracemalloc, after a first run has done the imports and
    caches), and not three times it."""
    monkeypatch.setattr("evalkit.budget.FOLDER_ROWS", 8)
    root = long_files(tmp_path, 40)
    run = config(root, [PSDS], **({"stream": True} if stream else {}))
    evalkit.run(run)
    (need,) = plan(run, writes=False).needs
    assert "(8 of its 40 files at a time" in need.what
    held = peak(run)
    assert held <= need.bytes < 3 * held, (held, need.bytes)


def test_each_file_is_read_once_a_chunk_at_a_time(tmp_path, monkeypatch):
    """The loader's reads, counted, with a reference that lists the files backwards: every score
    file parsed once, never more than a chunk's files in one read, and never more than a chunk's
    samples handed to the metric at once."""
    monkeypatch.setattr("evalkit.budget.FOLDER_ROWS", 5)
    root = make(tmp_path, 11, files=23)
    reference = pd.read_csv(root / "gt.tsv", sep="\t")
    reference.iloc[::-1].to_csv(root / "gt.tsv", sep="\t", index=False)
    read: list[int] = []
    stream = ScoreFiles.stream

    def counted(self, path, role, rows, start=0):
        for part in stream(self, path, role, rows, start):
            read.append(len(part))
            yield part

    monkeypatch.setattr(ScoreFiles, "stream", counted)
    from evalkit_segments.psds import PSDS as Metric

    update, handed = Metric.update, []

    def seen(self, reference, prediction, *weights):
        handed.append(len(prediction))
        return update(self, reference, prediction, *weights)

    monkeypatch.setattr(Metric, "update", seen)
    evalkit.run(config(root, [PSDS]))
    assert sum(read) == 23 + 1  # each file once, and the first listed once more for the classes
    assert max(read) == 5 and max(handed) == 5


@pytest.mark.parametrize("settings", SETTINGS[:2])
def test_in_memory_equals_streamed_on_the_psds_folders(tmp_path, settings, monkeypatch):
    """The PSDS tests' folders, 17 files in chunks of 5: PSDS, per class, and its PSD-ROC equal
    the streamed run's."""
    monkeypatch.setattr("evalkit.budget.FOLDER_ROWS", 5)
    root = make(tmp_path, 7, files=17)
    run = config(root, [{"name": "psds", **settings}])
    memory, streamed = evalkit.run(run), evalkit.run({**run, "data": {**run["data"], "stream": True}})
    assert not any("read whole" in note for note in memory.notes)
    assert_same(values(memory), values(streamed))
    (curve,), (expected,) = memory.curves, streamed.curves
    np.testing.assert_allclose(curve.curve.x, expected.curve.x, rtol=1e-12)
    np.testing.assert_array_equal(curve.curve.y, expected.curve.y)


def test_in_chunks_as_read_whole_unsorted_missing_and_per_sample(tmp_path, monkeypatch):
    """A reference in no order, a file it lists that the folder lacks and one it does not list
    (``missing: empty``), an event-list system beside the folder, every score-folder metric,
    keyed bootstrap intervals and per-sample values: read in chunks of 4, the same rows, notes and
    per-sample values, in the same order, as the folder read whole (a loader without
    ``sample_ids``)."""
    monkeypatch.setattr("evalkit.budget.FOLDER_ROWS", 4)
    root = make(tmp_path, 5, files=13)
    reference = pd.read_csv(root / "gt.tsv", sep="\t")
    names = reference["filename"].unique()
    order = {name: i for i, name in enumerate(np.random.default_rng(1).permutation(names))}
    reference = reference.iloc[np.argsort([order[n] for n in reference["filename"]], kind="stable")]
    reference.to_csv(root / "gt.tsv", sep="\t", index=False)
    (root / "scores" / "clip003.tsv").unlink()  # listed in the reference, not scored
    (root / "scores" / "clip012.tsv").rename(root / "scores" / "extra.tsv")  # scored, not listed
    events = reference.dropna().assign(onset=lambda t: t.onset + 0.05)
    events.to_csv(root / "events.tsv", sep="\t", index=False)
    durations = str(root / "durations.tsv")  # clip003 has no score file to tell its length
    with open(durations, "a") as table:
        table.write(f"extra.wav\t{pd.read_csv(root / 'scores' / 'extra.tsv', sep=chr(9)).offset.iloc[-1]}\n")
    folder_metrics = config(root, [
        {**PSDS, "durations": durations},
        {"name": "psds", **SETTINGS[0], "durations": durations, "bootstrapped": {"n_folds": 3, "n_iterations": 2}},
        {"name": "collar_fscore", "onset_collar": 0.2, "offset_collar": 0.2, "threshold": 0.5},
        {"name": "segment_based", "durations": durations},
        {"name": "intersection_based", "dtc_threshold": 0.5, "gtc_threshold": 0.5},
    ], missing="empty")
    intervals = config(root, [{**PSDS, "durations": durations}], missing="empty") | {
        "statistics": {"bootstrap": {"resamples": 10}}}
    set_metrics = config(root, ["f1", "error_rate"], missing="empty") | {
        "representation": {"name": "event_based", "t_collar": 0.2, "threshold": 0.5}, "averaging": ["micro"],
        "per_sample": True, "statistics": {"bootstrap": {"resamples": 10}}}
    set_metrics["data"]["systems"]["events"] = str(root / "events.tsv")
    runs = (folder_metrics, intervals, set_metrics)
    chunked = [evalkit.run(run) for run in runs]
    monkeypatch.delattr(ScoreFiles, "sample_ids")
    read_whole = [evalkit.run(run) for run in runs]
    for got, want in zip(chunked, read_whole):
        assert_same(values(got), values(want))
        assert got.notes == want.notes
    chunks, whole = chunked[2], read_whole[2]
    assert [(b.system, b.metric, b.samples) for b in chunks.sample_values] == \
        [(b.system, b.metric, b.samples) for b in whole.sample_values]
    for got, want in zip(chunks.sample_values, whole.sample_values):
        np.testing.assert_allclose(got.values, want.values, rtol=1e-12)  # each sample's own sums
    assert chunks.timelines == whole.timelines and chunks.timelines  # the event-list system's worst files


def test_the_plan_counts_a_chunk_or_says_why_the_folder_is_read_whole(tmp_path, monkeypatch):
    """The memory estimate: in memory, a chunk's largest files at ``CHUNK_BYTES``, as streamed;
    with ``keyed: false`` draws, every file, and the run says why (in the estimate and in a
    note)."""
    from evalkit import budget

    monkeypatch.setattr("evalkit.budget.FOLDER_ROWS", 3)
    root = make(tmp_path, 8, files=12)
    path = tmp_path / "run.yaml"
    text = (f"name: folders\ndata:\n  reference: {root / 'gt.tsv'}\n  systems:\n    s: {root / 'scores'}\n"
            f"metrics:\n  - {{name: psds, dtc_threshold: 0.7, gtc_threshold: 0.7}}\n")
    path.write_text(text)
    sizes = sorted((f.stat().st_size for f in (root / "scores").iterdir()), reverse=True)
    (need,) = plan(path, writes=False).needs
    assert need.bytes == sum(sizes[:3]) * budget.CHUNK_BYTES
    assert "(3 of its 12 files at a time" in need.what
    path.write_text(text + "statistics:\n  bootstrap: {method: percentile, keyed: false, resamples: 10}\n")
    folder = next(n for n in plan(path, writes=False).needs if "the data of" in n.what)
    assert folder.bytes == sum(sizes) * budget.FOLDER_BYTES
    reason = "`statistics.bootstrap.keyed: false` draws over all the samples at once"
    assert f"(its 12 files whole: {reason}" in folder.what
    assert "leave out `keyed: false`" in folder.lower
    assert f"data folders read whole: {reason}" in evalkit.run(path).notes


def test_tied_worst_files_keep_their_timelines_whatever_the_reference_order(tmp_path, monkeypatch):
    """Chunks of 8 files (more than the 5 worst kept), a reference listing the files backwards,
    an event-list system whose every file scores F = 0 (all tied): a chunk ranks its rows, ties
    included, in the reference's order as the whole run does, so each of the run's 5 worst
    files keeps its timeline (a review found 2 of 5 left, the others dropped without a word)."""
    monkeypatch.setattr("evalkit.budget.FOLDER_ROWS", 8)
    root = make(tmp_path, 5, files=16)
    reference = pd.read_csv(root / "gt.tsv", sep="\t")
    names = list(dict.fromkeys(reference["filename"]))
    reference = reference.iloc[np.argsort([-names.index(n) for n in reference["filename"]], kind="stable")]
    reference.to_csv(root / "gt.tsv", sep="\t", index=False)
    late = reference.dropna().assign(onset=lambda t: t.onset + 50, offset=lambda t: t.offset + 50)  # never overlaps
    late.to_csv(root / "events.tsv", sep="\t", index=False)
    run = config(root, ["f1"], missing="empty") | {
        "representation": {"name": "event_based", "t_collar": 0.2, "threshold": 0.5}, "averaging": ["micro"],
        "per_sample": True}
    run["data"]["systems"]["events"] = str(root / "events.tsv")
    chunked = evalkit.run(run)
    monkeypatch.delattr(ScoreFiles, "sample_ids")
    whole = evalkit.run(run)
    worst = [sample for sample, _ in whole.worst_samples()["events"][1]]
    assert len(worst) == 5
    assert [t.sample for t in chunked.timelines if t.system == "events"] == worst
    assert chunked.timelines == whole.timelines
