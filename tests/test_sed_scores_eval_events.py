"""Event lists scored by sed_scores_eval's rules, where they differ from sed_eval's defaults.

- ``segments`` with ``durations``: each file's grid ends after ceil(duration / resolution)
  segments (``segment_based.fscore`` with ``audio_durations``), so an event that ends past its
  file is cut there; without it, a file reaches its last offset (sed_eval's default).
- ``event_based`` with ``time_decimals``: |distance| − collar is rounded before it is compared
  with 0 (``collar_based.fscore``), so an offset 0.20000000000000018 s off matches a 0.2 s
  collar; without it the comparison is exact, as sed_eval's ``EventBasedMetrics``.

The peer scores score files: a system's events become scores of 1 inside them and 0 outside,
at a threshold of 0.5, which sed_scores_eval turns back into the same events (events of one
class neither overlap nor touch, as the peer requires of its ground truth).
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from run_depth import examples

import evalkit
from evalkit.errors import DataError

with warnings.catch_warnings():  # dcase_util imports pkg_resources, which warns of its removal
    warnings.simplefilter("ignore")
    import sed_eval
    from sed_scores_eval import collar_based, segment_based
    from sed_scores_eval.base_modules.io import write_sed_scores

CLASSES = ["alarm", "dog", "speech"]
#: A file: its duration, then its reference and system events (onset, offset, label).
Clip = tuple[float, list[tuple[float, float, str]], list[tuple[float, float, str]]]


def apart(times: list[float], label: str) -> list[tuple[float, float, str]]:
    """Distinct times, sorted, paired as (onset, offset) events of ``label``: they neither overlap
    nor touch."""
    times = sorted(set(times))
    return [(times[k], times[k + 1], label) for k in range(0, len(times) - 1, 2)]


def seeded(seed: int, files: int = 12) -> dict[str, Clip]:
    """Clips of 5 to 10 s on a millisecond grid; events may end past their file's end, and some
    start past it."""
    rng = np.random.default_rng(seed)

    def events(duration: float) -> list[tuple[float, float, str]]:
        return [e for label in CLASSES
                for e in apart([round(float(t), 3) for t in rng.random(2 * int(rng.integers(1, 4))) * (duration + 2)], label)]

    clips = {}
    for f in range(files):
        duration = round(float(rng.uniform(5, 10)), 3)
        clips[f"clip{f:02d}.wav"] = (duration, events(duration), events(duration))
    return clips


def write(root: Path, clips: dict[str, Clip]) -> dict[str, str]:
    """The reference and system event lists and the durations, as DCASE writes them, and the
    system's events as the peer's score files."""
    (root / "scores").mkdir()

    def listed(side: int) -> pd.DataFrame:
        rows = [(name, *event) for name, clip in clips.items() for event in clip[side]]
        rows += [(name, None, None, None) for name, clip in clips.items() if not clip[side]]  # a file without events
        return pd.DataFrame(rows, columns=["filename", "onset", "offset", "event_label"])

    listed(1).to_csv(root / "gt.tsv", sep="\t", index=False)
    listed(2).to_csv(root / "sys.tsv", sep="\t", index=False)
    pd.DataFrame([(name, clip[0]) for name, clip in clips.items()], columns=["filename", "duration"]).to_csv(
        root / "durations.tsv", sep="\t", index=False)
    for name, (duration, _, system) in clips.items():
        times = np.unique([0.0, duration, *(t for on, off, _ in system for t in (on, off))])
        scores = np.zeros((len(times) - 1, len(CLASSES)))
        for on, off, label in system:
            scores[(times[:-1] >= on) & (times[1:] <= off), CLASSES.index(label)] = 1.0
        write_sed_scores(scores, root / "scores" / f"{name[:-4]}.tsv", timestamps=times, event_classes=CLASSES)
    return {key: str(root / f) for key, f in (("gt", "gt.tsv"), ("sys", "sys.tsv"), ("durations", "durations.tsv"),
                                               ("scores", "scores"))}


def ours(files: dict[str, str], representation: dict, system: str = "sys", **data) -> dict:
    results = evalkit.run({
        "name": "peer", "data": {"reference": files["gt"], "systems": {"s": files[system]}, **data},
        "representation": representation, "averaging": ["micro", "none"], "metrics": ["precision", "recall", "f1"],
    })
    return {(r.averaging, r.metric, r.class_): r.value for r in results.rows}


def assert_equal_to_peer(got: dict, f: dict, p: dict, r: dict) -> None:
    """Micro and per-class F, P and R equal the peer's; the peer's sums are of integer counts, so
    only the last division rounds, the same one on both sides (1e-12 leaves room for its order)."""
    for metric, peer in (("f1", f), ("precision", p), ("recall", r)):
        assert got[("micro", metric, None)] == pytest.approx(peer["micro_average"], rel=1e-12), metric
        for label in CLASSES:
            assert got[("none", metric, label)] == pytest.approx(peer[label], rel=1e-12), (metric, label)


# --- segments: durations ------------------------------------------------------------------------


@pytest.mark.parametrize("resolution", [1.0, 0.5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_segments_with_durations_equal_sed_scores_eval(tmp_path, seed, resolution):
    clips = seeded(seed)
    files = write(tmp_path, clips)
    assert any(off > clip[0] for clip in clips.values() for side in clip[1:] for _, off, _ in side)  # events past the end
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, p, r, _ = segment_based.fscore(files["scores"], files["gt"], files["durations"], 0.5,
                                          segment_length=resolution)
    got = ours(files, {"name": "segments", "resolution": resolution, "durations": files["durations"]})
    assert_equal_to_peer(got, f, p, r)
    # the same from the score files at the peer's threshold, and streamed (a chunk of files at a time)
    scored = {"name": "segments", "resolution": resolution, "durations": files["durations"], "threshold": 0.5}
    assert ours(files, scored, system="scores") == got  # the same events, the same counts
    assert ours(files, {"name": "segments", "resolution": resolution, "durations": files["durations"]},
                stream=True) == got
    # without durations, the grid runs to the last offset (sed_eval's default): other numbers
    assert ours(files, {"name": "segments", "resolution": resolution})[("micro", "f1", None)] != got[("micro", "f1", None)]


@pytest.mark.parametrize("seed", [0, 1])
def test_segments_with_durations_equal_sed_eval_given_the_evaluated_length(tmp_path, seed):
    """sed_eval cuts its grid at the same segment when each file's ``evaluated_length_seconds`` is
    its duration; error rates too (substitutions counted on the cut grid)."""
    clips = seeded(seed)
    files = write(tmp_path, clips)
    metrics = sed_eval.sound_event.SegmentBasedMetrics(event_label_list=CLASSES, time_resolution=1.0)
    for name, (duration, reference, system) in clips.items():
        metrics.evaluate([{"filename": name, "onset": a, "offset": b, "event_label": c} for a, b, c in reference],
                         [{"filename": name, "onset": a, "offset": b, "event_label": c} for a, b, c in system],
                         evaluated_length_seconds=duration)
    results = evalkit.run({
        "name": "sed_eval", "data": {"reference": files["gt"], "systems": {"s": files["sys"]}},
        "representation": {"name": "segments", "resolution": 1.0, "durations": files["durations"]},
        "averaging": "micro", "metrics": ["f1", "error_rate", "substitution_rate"],
    })
    got = {r.metric: r.value for r in results.rows}
    # counts of segments summed exactly; one division each (1e-12: its order may differ)
    assert got["f1"] == pytest.approx(metrics.overall_f_measure()["f_measure"], rel=1e-12)
    assert got["error_rate"] == pytest.approx(metrics.overall_error_rate()["error_rate"], rel=1e-12)
    assert got["substitution_rate"] == pytest.approx(metrics.overall_error_rate()["substitution_rate"], rel=1e-12)


def test_exact_lengths_are_cut_at_the_files_end(tmp_path):
    """Without a grid, an interval is cut at its file's duration: 8 to 12 s in a 10 s file counts 2 s."""
    clips = {"a.wav": (10.0, [(8.0, 12.0, "dog")], [(9.0, 11.0, "dog")])}
    files = write(tmp_path, clips)
    results = evalkit.run({
        "name": "cut", "data": {"reference": files["gt"], "systems": {"s": files["sys"]}},
        "representation": {"name": "segments", "durations": files["durations"]}, "averaging": "micro",
        "metrics": ["card_ref", "card_pred", "card_inter"],
    })
    got = {r.metric: r.value for r in results.rows}
    assert (got["card_ref"], got["card_pred"], got["card_inter"]) == (10.0 - 8.0, 10.0 - 9.0, 10.0 - 9.0)


def test_a_file_without_a_duration_is_named(tmp_path):
    files = write(tmp_path, seeded(0, files=3))
    Path(files["durations"]).write_text("filename\tduration\nclip00.wav\t10\nclip01\t8\n")  # a name without .wav matches
    with pytest.raises(DataError, match=r"segments: file 'clip02\.wav' has no duration in .*durations\.tsv"):
        ours(files, {"name": "segments", "resolution": 1.0, "durations": files["durations"]})


# --- event_based: time_decimals -----------------------------------------------------------------

COLLARS = {"t_collar": 0.2, "percentage_of_length": 0.2}


def collar_peer(files: dict[str, str], **options) -> tuple[dict, dict, dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, p, r, _ = collar_based.fscore(files["scores"], files["gt"], 0.5, onset_collar=COLLARS["t_collar"],
                                         offset_collar=COLLARS["t_collar"],
                                         offset_collar_rate=COLLARS["percentage_of_length"], **options)
    return f, p, r


def sed_eval_peer(clips: dict[str, Clip]):
    metrics = sed_eval.sound_event.EventBasedMetrics(event_label_list=CLASSES, **COLLARS)
    for name, (_, reference, system) in clips.items():
        metrics.evaluate([{"filename": name, "onset": a, "offset": b, "event_label": c} for a, b, c in reference],
                         [{"filename": name, "onset": a, "offset": b, "event_label": c} for a, b, c in system])
    return metrics


def test_an_offset_a_rounding_error_past_the_collar_matches_with_time_decimals(tmp_path):
    """|8.4 − 8.2| is 0.20000000000000107 in floats (DESED has such a pair at 0.20000000000000018):
    past a 0.2 s collar for sed_eval, within it for sed_scores_eval, which rounds to 6 decimals."""
    assert abs(8.4 - 8.2) > 0.2
    others = [(1.0, 2.0, "alarm"), (3.0, 4.0, "speech")]  # matched by both rules (the peer needs every class)
    clips = {"a.wav": (10.0, [(8.0, 8.2, "dog"), *others], [(8.0, 8.4, "dog"), *others])}
    files = write(tmp_path, clips)
    exact = ours(files, {"name": "event_based", **COLLARS})
    rounded = ours(files, {"name": "event_based", **COLLARS, "time_decimals": 6})
    f = collar_peer(files)[0]
    assert exact[("none", "f1", "dog")] == sed_eval_peer(clips).class_wise_f_measure("dog")["f_measure"] == 0.0
    assert rounded[("none", "f1", "dog")] == f["dog"] == 1.0
    assert exact[("micro", "f1", None)] == pytest.approx(sed_eval_peer(clips).overall_f_measure()["f_measure"], rel=1e-12)
    assert rounded[("micro", "f1", None)] == f["micro_average"] == 1.0
    assert collar_peer(files, time_decimals=30)[0]["dog"] == 0.0  # the peer's rounding is the cause


@st.composite
def tenth_clips(draw) -> dict[str, Clip]:
    """Clips with times on a 0.1 s grid, the system's mostly the reference's moved by up to 0.2 s,
    where distances of 0.2 s fall either side of 0.2 in floats: the collar's boundary, often.
    Every class has events on both sides of every file, so every P and R is defined."""
    clips = {}
    for f in range(draw(st.integers(1, 4))):
        reference, system = [], []
        for label in CLASSES:
            tenths = draw(st.lists(st.integers(0, 100), min_size=2, max_size=6, unique=True))
            moved = [max(k + draw(st.integers(-2, 2)), 0) for k in tenths]
            if len(set(moved)) < 2 or draw(st.booleans()) and draw(st.booleans()):  # now and then, unrelated events
                moved = draw(st.lists(st.integers(0, 100), min_size=2, max_size=6, unique=True))
            reference += apart([k / 10 for k in tenths], label)
            system += apart([k / 10 for k in moved], label)
        clips[f"f{f}.wav"] = (10.0, reference, system)
    return clips


@settings(max_examples=examples(60), deadline=None)
@given(clips=tenth_clips())
def test_event_based_is_sed_scores_eval_with_time_decimals_and_sed_eval_without(clips):
    with tempfile.TemporaryDirectory() as root:
        files = write(Path(root), clips)
        f, p, r = collar_peer(files)
        assert_equal_to_peer(ours(files, {"name": "event_based", **COLLARS, "time_decimals": 6}), f, p, r)
        expected = sed_eval_peer(clips)
        exact = ours(files, {"name": "event_based", **COLLARS})
        assert exact[("micro", "f1", None)] == pytest.approx(expected.overall_f_measure()["f_measure"], rel=1e-12)
        for label in CLASSES:
            assert exact[("none", "f1", label)] == pytest.approx(
                expected.class_wise_f_measure(label)["f_measure"], rel=1e-12), label


@pytest.mark.parametrize(("text", "message"), [
    ("filename\tduration\nclip00.wav\t10\nclip01.wav\tten\n",
     r"durations\.tsv:3: duration 'ten' of 'clip01\.wav' is not a positive"),
    ("filename\tseconds\nclip00.wav\t10\n", r"durations\.tsv:1: columns filename, seconds; a durations table has the columns"),
    ("filename\tduration\nclip00.wav\t10\nclip00.wav\t9\n", r"durations\.tsv:3: 'clip00\.wav' is listed twice"),
])
def test_a_bad_durations_table_is_refused_by_validate_naming_its_line(tmp_path, text, message):
    files = write(tmp_path, seeded(0, files=2))
    Path(files["durations"]).write_text(text)
    config = {"name": "bad", "data": {"reference": files["gt"], "systems": {"s": files["sys"]}},
              "representation": {"name": "segments", "resolution": 1.0, "durations": files["durations"]}}
    with pytest.raises(DataError, match=message):
        evalkit.api.plan(config, writes=False)  # read with the component, before any event is
