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


def state_of(root: Path, settings: dict, rows: slice = slice(None)):
    """The psds state of the files ``rows`` of a seeded folder, updated directly: the reference
    lists every file, in the score folder's order, with the classes in its order."""
    from evalkit_segments.loaders import EventListLoader
    from evalkit_segments.psds import PSDS, PSDSParams
    from evalkit_segments.score_files import ScoreFiles

    reference = EventListLoader(EventListLoader.Params(labels=list(CLASSES))).load(root / "gt.tsv", "reference")
    prediction = ScoreFiles(ScoreFiles.Params()).load(root / "scores", "prediction")
    assert [i.removesuffix(".wav") for i in reference.ids] == list(prediction.ids)  # aligned, as the engine aligns
    metric = PSDS(PSDSParams(**settings))
    metric.prepare(CLASSES)
    return metric.update(reference[rows], prediction[rows])


@pytest.mark.parametrize("settings", SETTINGS[:3])
@pytest.mark.parametrize("cuts", [(1,), (5, 6, 17), tuple(range(1, 24))])
def test_the_counts_of_parts_add_up_to_the_counts_of_the_whole(tmp_path, settings, cuts):
    """The state is per-threshold counts that merge by +: files split anywhere give the whole's
    counts (whole numbers: exactly), on the sorted union of their scores."""
    root = make(tmp_path, 5)
    whole = state_of(root, settings)
    bounds = [0, *cuts, 24]
    parts = [state_of(root, settings, slice(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]
    merged = parts[0]
    for part in parts[1:]:
        merged = merged + part
    for field in ("klass", "score", "change", "n_ref"):
        np.testing.assert_array_equal(getattr(merged, field), getattr(whole, field))
    np.testing.assert_allclose(merged.t_ref, whole.t_ref, rtol=1e-12)  # sums of lengths, in another order
    assert merged.duration == pytest.approx(whole.duration, rel=1e-12)


def test_the_state_grows_with_the_distinct_scores_not_with_the_files(tmp_path):
    """The same files twice hold the same thresholds: the state keeps its rows, with counts doubled
    (what 50 copies of a folder do to it)."""
    state = state_of(make(tmp_path, 6), SETTINGS[1])
    twice = state + state
    np.testing.assert_array_equal(twice.score, state.score)
    np.testing.assert_array_equal(twice.klass, state.klass)
    np.testing.assert_array_equal(twice.change, 2 * state.change)
    assert len(np.unique(state.score)) <= 11  # scores of one decimal: 0.0 ... 1.0
    assert len(state.score) <= 11 * len(CLASSES)


@pytest.mark.parametrize("settings", SETTINGS[:2])
def test_a_streamed_run_reads_a_few_files_at_a_time_and_gives_the_in_memory_numbers(tmp_path, settings, monkeypatch):
    """Streamed (``data: {stream: true}``), the folder is parsed 3 files at a time and reduced 5
    files at a time, one file's classes in another column order: PSDS, per class, and the
    PSD-ROC equal the in-memory run's."""
    import evalkit.budget
    import evalkit_segments.score_files

    root = make(tmp_path, 7, files=17)
    last = root / "scores" / "clip016.tsv"
    table = pd.read_csv(last, sep="\t")
    table[["onset", "offset", *CLASSES[::-1]]].to_csv(last, sep="\t", index=False)
    monkeypatch.setattr(evalkit_segments.score_files, "STREAM_FILES", 3)
    monkeypatch.setattr(evalkit.budget, "FOLDER_ROWS", 5)
    config = {
        "name": "psds", "metrics": [{"name": "psds", **settings}],
        "data": {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "scores")}},
    }
    memory = evalkit.run(config)
    streamed = evalkit.run({**config, "data": {**config["data"], "stream": True}})
    assert any("streamed: 17 samples read 5 rows at a time" in note for note in streamed.notes)
    want = {(r.metric, r.class_): r.value for r in memory.rows}
    got = {(r.metric, r.class_): r.value for r in streamed.rows}
    assert got.keys() == want.keys()
    for key, value in want.items():  # the audio durations are summed in another order
        assert got[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key
    (curve,) = streamed.curves
    (expected,) = memory.curves
    np.testing.assert_allclose(curve.curve.x, expected.curve.x, rtol=1e-12)
    np.testing.assert_array_equal(curve.curve.y, expected.curve.y)


def test_the_bundled_desed_config_streams_with_the_in_memory_psds(monkeypatch):
    """configs/desed.yaml streamed: both scenarios' PSDS, per class too, equal the in-memory run's."""
    import yaml

    monkeypatch.chdir(Path(__file__).parent.parent / "configs")
    config = yaml.safe_load(Path("desed.yaml").read_text(encoding="utf-8"))
    config.pop("report")

    def psds(config: dict) -> dict:
        return {(r.system, r.metric, r.class_): r.value for r in evalkit.run(config).rows if "psds" in r.metric}

    memory = psds(config)
    streamed = psds({**config, "data": {**config["data"], "stream": True}})
    assert streamed.keys() == memory.keys() and len(memory) > 4
    for key, value in memory.items():  # the audio durations are summed in another order
        assert streamed[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key


def test_a_run_whose_score_folders_would_not_fit_is_refused_at_validate(tmp_path, monkeypatch):
    """The plan counts the score folders' bytes (from the folder listing, no file read): a run
    that would not fit in memory is refused before any data is read, at the system's key, with
    what to lower. A run that reads the folder whole (``keyed: false`` draws take every sample
    at once) needs its every file; in memory otherwise, or streamed, a chunk of files is held, so
    the same folder fits."""
    import evalkit.budget
    from evalkit import budget
    from evalkit.api import plan

    root = make(tmp_path, 8, files=12)
    config = tmp_path / "run.yaml"
    text = (
        "name: big\n"
        "data:\n"
        f"  reference: {root / 'gt.tsv'}\n"
        "  systems:\n"
        f"    s: {root / 'scores'}\n"
        "metrics:\n"
        f"  - {{name: psds, dtc_threshold: 0.7, gtc_threshold: 0.7}}\n"
    )
    config.write_text(text + "statistics: {test: {method: permutation, keyed: false, resamples: 10}}\n")
    sizes = sorted((f.stat().st_size for f in (root / "scores").iterdir()), reverse=True)
    whole = sum(sizes) * budget.FOLDER_BYTES
    monkeypatch.setattr("evalkit.budget.available_memory", lambda: whole - 1)
    with pytest.raises(ConfigError) as refused:
        plan(config, writes=False)
    message = str(refused.value)
    assert message.startswith(f"{config}:5:")  # the line of the system `s`
    assert f"the data of {root / 'scores'} (its 12 files whole: `statistics.test.keyed: false` draws" in message
    assert message.endswith("lower the files evaluated, or leave out `keyed: false` (keyed draws read a chunk of files "
                            "at a time)")
    # A chunk costs CHUNK_BYTES per byte of its text (its work), a whole read FOLDER_BYTES: a chunk
    # of 1 of the 12 files fits where the whole read does not.
    monkeypatch.setattr(evalkit.budget, "FOLDER_ROWS", 1)
    config.write_text(text)  # in memory: a chunk's largest file
    (need,) = plan(config, writes=False).needs
    assert need.bytes == sizes[0] * budget.CHUNK_BYTES
    assert "(1 of its 12 files at a time" in need.what
    config.write_text(text.replace("data:\n", "data:\n  stream: true\n"))  # streamed: the same
    (need,) = plan(config, writes=False).needs
    assert need.bytes == sizes[0] * budget.CHUNK_BYTES
    assert "(1 of its 12 files at a time" in need.what
