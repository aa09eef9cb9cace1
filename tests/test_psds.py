"""``psds`` is sed_scores_eval's ``intersection_based.psds``: on seeded score files (scores rounded
so that they tie, several events per class, files without events) and DCASE event lists, the
PSDS and each class's PSDS equal the peer's for both DCASE scenarios and harsher settings
(cross-triggers, instability penalty, a small max_efpr). Score files and durations are read in
the DCASE layouts; bad files are errors naming the file and line."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.errors import ConfigError, DataError
from evalkit_segments.psds import staircase_area

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sed_scores_eval import intersection_based
    from sed_scores_eval.base_modules.io import write_sed_scores

CLASSES = ("alarm", "dog", "speech")


def make(root: Path, seed: int, files: int = 24, hop: float = 0.2) -> Path:
    """Score files (``root/scores``), an event list (``gt.tsv``, a file without events as a row
    with only its name) and durations (``durations.tsv``) of seeded random clips."""
    rng = np.random.default_rng(seed)
    (root / "scores").mkdir(parents=True)
    rows, durations = [], []
    for i in range(files):
        name = f"clip{i:03d}"
        frames = int(rng.integers(40, 60))
        times = np.round(np.arange(frames + 1) * hop, 6)
        scores = np.round(rng.random((frames, len(CLASSES))), 1)
        write_sed_scores(scores, root / "scores" / f"{name}.tsv", timestamps=times, event_classes=list(CLASSES))
        durations.append((f"{name}.wav", times[-1]))
        first = len(rows)
        for c in CLASSES:
            t = rng.random() * 3
            while rng.random() < 0.6 and t < times[-1] - 0.5:
                onset = round(t, 3)
                offset = round(min(onset + 0.2 + rng.random() * 3, times[-1]), 3)
                rows.append((f"{name}.wav", onset, offset, c))
                t = offset + 0.1 + rng.random() * 2
        if len(rows) == first:
            rows.append((f"{name}.wav", None, None, None))
    pd.DataFrame(rows, columns=["filename", "onset", "offset", "event_label"]).to_csv(root / "gt.tsv", sep="\t", index=False)
    pd.DataFrame(durations, columns=["filename", "duration"]).to_csv(root / "durations.tsv", sep="\t", index=False)
    return root


def run(root: Path, **params) -> evalkit.Results:
    return evalkit.run({
        "name": "psds", "metrics": [{"name": "psds", **params}],
        "data": {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "scores")}},
    })


def ours(root: Path, **params) -> dict:
    return {(r.metric, r.class_): r.value for r in run(root, **params).rows}


SETTINGS = [
    {"dtc_threshold": 0.7, "gtc_threshold": 0.7, "alpha_st": 1.0, "max_efpr": 5000.0},  # DCASE scenario 1
    {"dtc_threshold": 0.1, "gtc_threshold": 0.1, "cttc_threshold": 0.3, "alpha_ct": 0.5, "alpha_st": 1.0, "max_efpr": 5000.0},
    {"dtc_threshold": 0.3, "gtc_threshold": 0.5, "cttc_threshold": 0.2, "alpha_ct": 2.0, "alpha_st": 2.0, "max_efpr": 30000.0},
    {"dtc_threshold": 0.5, "gtc_threshold": 0.0, "max_efpr": 100.0, "unit_of_time": "minute"},
    {"dtc_threshold": 1.0, "gtc_threshold": 1.0, "max_efpr": 1e6},
]


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_psds_equals_sed_scores_eval(tmp_path, settings, seed):
    root = make(tmp_path, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, per_class, roc, _ = intersection_based.psds(
            str(root / "scores"), str(root / "gt.tsv"), str(root / "durations.tsv"), **settings,
        )
    results = run(root, durations=str(root / "durations.tsv"), **settings)
    got = {(r.metric, r.class_): r.value for r in results.rows}
    assert got[("psds", None)] == pytest.approx(expected, abs=1e-12)
    (curve,) = [c.curve for c in results.curves if c.metric == "psd_roc"]
    np.testing.assert_allclose(curve.y, roc[0], atol=1e-12)  # the PSD-ROC itself: eTPR at each eFPR
    np.testing.assert_allclose(curve.x, roc[1], atol=1e-9)
    for c in CLASSES:
        assert got[("psds_per_class", c)] == pytest.approx(per_class[c], abs=1e-12)
    assert 0 < expected < 1 or settings["dtc_threshold"] == 1.0  # the settings test something


def test_without_durations_a_file_lasts_to_its_last_frame(tmp_path):
    root = make(tmp_path, 3)
    settings = SETTINGS[1]
    # durations.tsv holds each file's last frame: the same inputs, the same computation
    assert ours(root, **settings) == ours(root, durations=str(root / "durations.tsv"), **settings)
    longer = pd.read_csv(root / "durations.tsv", sep="\t")
    longer["duration"] *= 2  # twice the audio: half the FP rate, a higher PSDS
    longer.to_csv(root / "longer.tsv", sep="\t", index=False)
    assert ours(root, durations=str(root / "longer.tsv"), **settings)[("psds", None)] > ours(root, **settings)[("psds", None)]


def test_harmless_variations_of_score_files_give_identical_numbers(tmp_path):
    """Classes in another order, CRLF line ends and a byte-order mark (files saved on Windows)."""
    root = make(tmp_path, 4, files=6)
    before = ours(root, **SETTINGS[0])
    for file in (root / "scores").iterdir():
        table = pd.read_csv(file, sep="\t")
        table[["onset", "offset", "speech", "alarm", "dog"]].to_csv(
            file, sep="\t", index=False, lineterminator="\r\n", encoding="utf-8-sig",
        )
    assert ours(root, **SETTINGS[0]) == before  # the same values read back: the same computation


@pytest.mark.parametrize(("text", "message"), [
    ("onset\toffset\talarm\tdog\tspeech\n0\t0.5\t0.1\t0.2\n", "4 tab-separated fields; the header has 5"),
    ("onset\toffset\talarm\tdog\tspeech\n0\t0.5\t0.1\t0.2\tx\n", "score 'x' is not a number"),
    ("onset\toffset\talarm\tdog\tspeech\n0\t0.5\t0.1\t0.2\t0.3\n0.6\t1\t0.1\t0.2\t0.3\n", "is not the previous frame's offset"),
    ("onset\toffset\talarm\tdog\tspeech\n0\t0\t0.1\t0.2\t0.3\n", "ends after it starts"),
    ("onset\toffset\talarm\tdog\tspeech\n0\t0.5\t0.1\tnan\t0.3\n", "not a finite number"),
    ("start\tend\talarm\tdog\tspeech\n0\t0.5\t0.1\t0.2\t0.3\n", "header is 'onset offset'"),
    ("onset\toffset\talarm\tdog\n0\t0.5\t0.1\t0.2\n", "differ from"),
    ("onset\toffset\talarm\tdog\tspeech\n", "a header and no frames"),
])
def test_a_bad_score_file_is_named_with_its_line(tmp_path, text, message):
    root = make(tmp_path, 5, files=3)
    (root / "scores" / "clip002.tsv").write_text(text)
    with pytest.raises(DataError, match=message) as error:
        ours(root, **SETTINGS[0])
    assert "clip002.tsv" in str(error.value)


def test_overlapping_reference_events_are_refused_as_the_peer_does(tmp_path):
    root = make(tmp_path, 6, files=8)
    with open(root / "gt.tsv", "a") as gt:
        gt.write("clip000.wav\t20.0\t21.0\tdog\nclip000.wav\t20.5\t21.5\tdog\n")
    with pytest.raises(DataError, match=r"'clip000.wav' has two 'dog' events that overlap \(20-21 and 20.5-21.5\)"):
        ours(root, **SETTINGS[0])


def test_a_class_without_reference_events_is_undefined_and_left_out(tmp_path):
    """Its TPR is undefined: NaN, and the PSD-ROC is that of the other classes (the peer refuses
    such data, so it is compared on the scores without the class)."""
    root = make(tmp_path, 7, files=12)
    gt = pd.read_csv(root / "gt.tsv", sep="\t")
    gt.loc[gt.event_label == "speech", ["onset", "offset", "event_label"]] = None  # the file stays listed
    gt.drop_duplicates().to_csv(root / "gt.tsv", sep="\t", index=False)
    reference = {"path": str(root / "gt.tsv"), "loader": {"name": "events", "labels": list(CLASSES)}}
    results = evalkit.run({"name": "p", "metrics": [{"name": "psds", **SETTINGS[0]}],
                           "data": {"reference": reference, "systems": {"s": str(root / "scores")}}})
    got = {(r.metric, r.class_): r.value for r in results.rows}
    assert np.isnan(got[("psds_per_class", "speech")])
    for file in (root / "scores").iterdir():
        pd.read_csv(file, sep="\t").drop(columns="speech").to_csv(file, sep="\t", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, per_class, *_ = intersection_based.psds(
            str(root / "scores"), str(root / "gt.tsv"), str(root / "durations.tsv"), **SETTINGS[0])
    assert got[("psds", None)] == pytest.approx(expected, abs=1e-12)
    assert got[("psds_per_class", "dog")] == pytest.approx(per_class["dog"], abs=1e-12)


def test_a_file_without_a_duration_is_named(tmp_path):
    root = make(tmp_path, 8, files=3)
    durations = pd.read_csv(root / "durations.tsv", sep="\t")
    durations.iloc[:2].to_csv(root / "durations.tsv", sep="\t", index=False)
    with pytest.raises(DataError, match="'clip002.wav' has no duration in"):
        ours(root, durations=str(root / "durations.tsv"), **SETTINGS[0])


@pytest.mark.parametrize(("params", "message"), [
    ({"dtc_threshold": 0.5, "gtc_threshold": 0.5, "alpha_ct": 1.0}, "give cttc_threshold too"),
    ({"dtc_threshold": 0.5, "gtc_threshold": 0.5, "cttc_threshold": 0.3}, "used only with alpha_ct > 0"),
    ({"dtc_threshold": 0.0, "gtc_threshold": 0.5}, "greater than 0"),
    ({"gtc_threshold": 0.5}, "dtc_threshold"),
])
def test_parameters_are_checked_before_any_data_is_read(tmp_path, params, message):
    with pytest.raises(ConfigError, match=message):
        evalkit.run({"name": "p", "metrics": [{"name": "psds", **params}],
                     "data": {"reference": str(tmp_path / "absent.tsv"), "systems": {"s": str(tmp_path)}}})


def test_an_event_list_system_needs_scores(tmp_path):
    root = make(tmp_path, 9, files=3)
    with pytest.raises(DataError, match="psds reads a system's scores over time"):
        evalkit.run({"name": "p", "metrics": [{"name": "psds", "dtc_threshold": 0.5, "gtc_threshold": 0.5}],
                     "data": {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "gt.tsv")}}})


def test_the_bundled_desed_config_equals_sed_scores_eval(monkeypatch):
    """configs/desed.yaml: both PSDS scenarios, under their own names, equal sed_scores_eval's
    on the bundled score files, for each system and class."""
    configs = Path(__file__).resolve().parent.parent / "configs"
    monkeypatch.chdir(configs)
    results = evalkit.run("desed.yaml")
    got = {(r.system, r.metric, r.class_): r.value for r in results.rows if r.metric.startswith("psds")}
    scenarios = {
        "(dtc_threshold=0.7, gtc_threshold=0.7)": {"dtc_threshold": 0.7, "gtc_threshold": 0.7, "alpha_st": 1.0},
        "(dtc_threshold=0.1, gtc_threshold=0.1, cttc_threshold=0.3, alpha_ct=0.5)": {
            "dtc_threshold": 0.1, "gtc_threshold": 0.1, "cttc_threshold": 0.3, "alpha_ct": 0.5, "alpha_st": 1.0,
        },
    }
    data = configs / "data" / "desed"
    for system in ("baseline", "weak"):
        for tag, settings in scenarios.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected, per_class, *_ = intersection_based.psds(
                    str(data / system), str(data / "reference.tsv"), str(data / "durations.tsv"), max_efpr=100.0, **settings,
                )
            assert got[(system, f"psds{tag}", None)] == pytest.approx(expected, abs=1e-12)
            for c, value in per_class.items():
                assert got[(system, f"psds_per_class{tag}", c)] == pytest.approx(value, abs=1e-12)
    assert len(got) == 2 * 2 * 11


def test_the_psd_roc_is_kept_in_the_json_report_and_drawn(tmp_path):
    from evalkit_reports import plots

    results = run(make(tmp_path, 14, files=8), **SETTINGS[0])
    again = evalkit.Results.from_json(results.to_json())
    (kept,) = again.curves
    (curve,) = results.curves
    assert kept.system == "s" and kept.metric == "psd_roc" and kept.curve.x_label == "effective FP rate per hour"
    np.testing.assert_array_equal(kept.curve.x, curve.curve.x)
    np.testing.assert_array_equal(kept.curve.y, curve.curve.y)
    drawn = [p for p in plots.gallery(results).plots if p.kind == "curve"]
    assert [p.name for p in drawn] == ["curve-psd_roc"]
    assert plots.image(drawn[0], "png").startswith(b"\x89PNG")


def test_bootstrap_intervals_and_paired_tests_resample_files(tmp_path):
    """Files are resampled with their score series (a file drawn twice counts twice); a system
    against itself differs by 0 with p = 1."""
    root = make(tmp_path, 15, files=10)
    results = evalkit.run({
        "name": "b", "metrics": [{"name": "psds", **SETTINGS[1]}],
        "data": {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "scores"), "t": str(root / "scores")}},
        "statistics": {"bootstrap": {"resamples": 30, "seed": 1}, "test": {"baseline": "s", "resamples": 30}},
    })
    (row, _) = [r for r in results.rows if r.metric == "psds"]
    assert row.ci_low < row.value < row.ci_high
    (comparison,) = [c for c in results.comparisons if c.metric == "psds"]
    assert comparison.difference == 0 and comparison.p_value == 1  # one computation twice: exactly 0


@pytest.mark.parametrize(("text", "message"), [
    ("file\tseconds\nclip000.wav\t10\n", r"durations.tsv:1: columns file, seconds; a durations table has the columns "
     "filename and duration"),
    ("filename\tduration\nclip000.wav\t-1\n", r"durations.tsv:2: duration '-1' of 'clip000.wav' is not a positive "
     "number of seconds"),
    ("filename\tduration\nclip000.wav\tlong\n", r"durations.tsv:2: duration 'long' of 'clip000.wav' is not a positive number"),
    ("filename\tduration\nclip000.wav\t10\nclip000.wav\t9\n", r"durations.tsv:3: 'clip000.wav' is listed twice"),
    ("filename\tduration\nclip000.wav\t10\t3\n", r"durations.tsv is not a table of filename and duration"),
])
def test_a_bad_durations_table_is_named_with_its_line(tmp_path, text, message):
    root = make(tmp_path, 16, files=3)
    (root / "durations.tsv").write_text(text)
    with pytest.raises(DataError, match=message):  # when the plan is made: `evalkit validate` says it too
        ours(root, durations=str(root / "durations.tsv"), **SETTINGS[0])


def test_a_staircase_holds_the_last_point_given_at_each_x():
    """Several points at one x (a vertical step of a ROC): the last given holds, whatever sort
    numpy picks for the CPU (its default one reordered the ties under
    NPY_DISABLE_CPU_FEATURES=X86_V3 and gave 0.4997)."""
    x = np.repeat(np.arange(50.0), 3)  # three points at each x = 0 … 49, y rising
    y = np.arange(150.0) / 150
    expected = sum((3 * k + 2) / 150 for k in range(50)) / 50  # each x holds its third y for a width of 1
    assert staircase_area(y, x, 50.0) == pytest.approx(expected, rel=1e-12)  # a sum of 50 terms
