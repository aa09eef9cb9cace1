"""Score series (score files) under the representations that count events: with ``threshold``,
a system's scores become the events sed_scores_eval's ``scores_to_event_list`` detects, so the
segment-based and event-based numbers equal those of that event list (which equal sed_eval's,
tests/test_sed_eval_parity.py). Reordering and class selection keep every frame."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_psds import CLASSES, make

import evalkit
from evalkit.errors import DataError
from evalkit.plugin import ScoreSeries

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sed_scores_eval.base_modules.detection import scores_to_event_list
    from sed_scores_eval.base_modules.io import read_sed_scores

REPRESENTATIONS = [
    {"name": "segments", "resolution": 1.0},
    {"name": "segments"},
    {"name": "event_based", "t_collar": 0.2, "percentage_of_length": 0.2},
    {"name": "event_based", "t_collar": 0.5, "evaluate_offset": False},
]
METRICS = ["precision", "recall", "f1", "error_rate", "substitution_rate"]


def values(reference, system, representation):
    results = evalkit.run({
        "name": "t", "data": {"reference": reference, "systems": {"s": system}},
        "representation": representation, "averaging": ["micro", "none"], "metrics": METRICS,
    })
    return {(r.averaging, r.metric, r.class_): r.value for r in results.rows}


@pytest.mark.parametrize("threshold", [0.35, 0.5, 0.75])
@pytest.mark.parametrize("representation", REPRESENTATIONS)
def test_thresholded_scores_score_as_the_detected_event_list(tmp_path, representation, threshold):
    root = make(tmp_path, 11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        detected = scores_to_event_list(read_sed_scores(root / "scores"), threshold)
    lines = [f"{name}.wav\t{onset}\t{offset}\t{label}\n" for name, events in detected.items() for onset, offset, label in events]
    (root / "detected.tsv").write_text("filename\tonset\toffset\tevent_label\n" + "".join(lines))
    from_scores = values(str(root / "gt.tsv"), str(root / "scores"), {**representation, "threshold": threshold})
    from_events = values(str(root / "gt.tsv"), str(root / "detected.tsv"), representation)
    assert from_scores.keys() == from_events.keys()
    for key, value in from_events.items():
        assert from_scores[key] == pytest.approx(value, abs=1e-12, nan_ok=True), key
    assert 0 < from_events[("micro", "f1", None)] < 1


def test_scores_without_a_threshold_are_refused(tmp_path):
    root = make(tmp_path, 12, files=4)
    with pytest.raises(DataError, match="scores over time, not events; give the representation `threshold:`"):
        values(str(root / "gt.tsv"), str(root / "scores"), {"name": "segments"})


@st.composite
def series(draw):
    n = draw(st.integers(0, 6))
    frames = [draw(st.integers(0, 4)) for _ in range(n)]
    sample = np.repeat(np.arange(n), frames)
    onset = np.concatenate([np.arange(k, dtype=float) for k in frames]) if n else np.empty(0)
    scores = np.asarray(draw(st.lists(st.floats(0, 1), min_size=3 * len(sample), max_size=3 * len(sample)))).reshape(-1, 3)
    return ScoreSeries(sample, onset, onset + 1, scores, n)


@settings(max_examples=60, deadline=None)
@given(series(), st.data())
def test_take_and_select_keep_each_samples_frames(data, draw):
    """Any samples in any order, repeated or empty (-1), keep their frames in time order."""
    rows = draw.draw(st.lists(st.integers(-1, data.n_samples - 1), max_size=8))  # repeats: a bootstrap resample
    taken = data.take(np.asarray(rows, dtype=np.int64))
    assert len(taken) == len(rows)
    for new, old in enumerate(rows):
        expected = data[old] if old >= 0 else tuple(() for _ in range(3))
        assert taken[new] == expected
    chosen = data.select([2, -1, 0])
    for i in range(len(data)):
        original = data[i]
        assert chosen[i][0] == original[2] and chosen[i][2] == original[0]
        assert all(score == -np.inf for *_, score in chosen[i][1])
    assert [data[i] for i in range(len(data))] == list(data[0 : len(data)])


def test_classes_are_the_score_files_header(tmp_path):
    root = make(tmp_path, 13, files=2)
    from evalkit_segments.score_files import ScoreFiles

    items = ScoreFiles(ScoreFiles.Params()).load(root / "scores", "prediction")
    assert items.classes == CLASSES and items.ids == ("clip000", "clip001")


@settings(max_examples=30, deadline=None)
@given(series())
def test_scores_never_above_the_threshold_detect_nothing(data):
    """Scores in [0, 1] are never above 1: no detection (a chunk of quiet files once raised an
    IndexError here), as empty arrays of the detections' types."""
    cell, onset, offset = data.detections(1.0)
    assert cell.shape == onset.shape == offset.shape == (0,)
    assert cell.dtype == np.int64 and onset.dtype == offset.dtype == np.float64
