"""The collar-based metrics of score folders equal sed_scores_eval's ``collar_based`` ones:
``fscore`` and ``error_rate`` at a threshold (one, or one per class), ``best_fscore`` (with
``min_precision`` / ``min_recall``, and its PR curves) and ``best_error_rate``, on seeded score
files with ties around the bundled DESED ground truth and the PSDS tests' folders, and on small
hypothesis cases. Their state is per-threshold counts that add up over files, so a streamed run
equals the in-memory one."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from run_depth import examples
from test_psds import CLASSES, make

import evalkit
from evalkit.errors import DataError

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sed_scores_eval import collar_based
    from sed_scores_eval.base_modules.io import write_sed_scores

DESED = Path(__file__).resolve().parent.parent / "configs" / "data" / "desed"
COLLARS = [
    {"onset_collar": 0.2, "offset_collar": 0.2, "offset_collar_rate": 0.2},  # DCASE's
    {"onset_collar": 0.5, "offset_collar": 1.0, "offset_collar_rate": 0.0, "time_decimals": 3},
    {"onset_collar": 1.0, "offset_collar": 0.1, "offset_collar_rate": 0.5},
]


def peer(function, root: Path, gt: Path, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(collar_based, function)(str(root), str(gt), **params)


def ours(root: Path, gt: Path, *metrics: dict, stream: bool = False) -> evalkit.Results:
    data = {"reference": str(gt), "systems": {"s": str(root)}, **({"stream": True} if stream else {})}
    return evalkit.run({"name": "collar", "metrics": list(metrics), "data": data})


def values(results: evalkit.Results) -> dict:
    return {(r.metric, r.class_): r.value for r in results.rows}


def desed_like(root: Path, seed: int, files: int = 30) -> tuple[Path, Path]:
    """Score files for the first ``files`` clips of the bundled DESED reference: around each
    reference event the scores rise (with noise, rounded to 0.05 so that scores tie within and
    across files), elsewhere noise; a 0.064 s hop as DESED's baseline writes."""
    rng = np.random.default_rng(seed)
    gt = pd.read_csv(DESED / "reference.tsv", sep="\t")
    names = list(dict.fromkeys(gt.filename))[:files]
    gt = gt[gt.filename.isin(names)]
    classes = sorted(gt.event_label.dropna().unique())
    (root / "scores").mkdir(parents=True)
    for name in names:
        times = np.round(np.arange(157) * 0.064, 6)
        mid = (times[:-1] + times[1:]) / 2
        scores = rng.random((len(mid), len(classes))) * 0.5
        for _, event in gt[gt.filename == name].dropna().iterrows():
            c = classes.index(event.event_label)
            inside = (mid > event.onset + rng.normal(0, 0.15)) & (mid < event.offset + rng.normal(0, 0.15))
            scores[inside, c] += 0.3 + 0.4 * rng.random()
        write_sed_scores(np.round(np.clip(scores, 0, 1) * 20) / 20, root / "scores" / name.replace(".wav", ".tsv"),
                         timestamps=times, event_classes=classes)
    gt.to_csv(root / "gt.tsv", sep="\t", index=False)
    return root / "scores", root / "gt.tsv"


def folders(tmp_path: Path, kind: str, seed: int) -> tuple[Path, Path]:
    if kind == "desed":
        return desed_like(tmp_path, seed)
    root = make(tmp_path, seed)
    return root / "scores", root / "gt.tsv"


def assert_per_class(got: dict, metric: str, expected: dict, classes) -> None:
    for c in classes:
        assert got[(metric, c)] == pytest.approx(expected[c], rel=1e-12, abs=1e-15), (metric, c)


@pytest.mark.parametrize("collars", COLLARS)
@pytest.mark.parametrize(("kind", "seed"), [("desed", 0), ("desed", 1), ("psds", 2)])
def test_fscore_and_best_fscore_equal_sed_scores_eval(tmp_path, kind, seed, collars):
    scores, gt = folders(tmp_path, kind, seed)
    best = peer("best_fscore", scores, gt, **collars)
    f, p, r, thresholds, _ = best
    classes = [c for c in f if not c.endswith("_average")]
    per_class_threshold = {c: float(t) for c, t in thresholds.items()}
    at = peer("fscore", scores, gt, threshold=0.5, **collars)
    at_best = peer("fscore", scores, gt, threshold=per_class_threshold, **collars)
    results = ours(scores, gt, {"name": "collar_best_fscore", **collars},
                   {"name": "collar_fscore", "threshold": 0.5, **collars})
    got = values(results)
    assert got[("collar_best_fscore", None)] == pytest.approx(f["macro_average"], rel=1e-12)
    assert got[("collar_best_fscore_micro", None)] == pytest.approx(f["micro_average"], rel=1e-12)
    assert_per_class(got, "collar_best_fscore_per_class", f, classes)
    for c in classes:  # thresholds are means of two scores read from the files: exact
        assert got[("collar_best_fscore_threshold", c)] == thresholds[c], c
    for name, expected in zip(("fscore", "precision", "recall"), at[:3]):
        assert got[(f"collar_{name}", None)] == pytest.approx(expected["macro_average"], rel=1e-12), name
        assert got[(f"collar_{name}_micro", None)] == pytest.approx(expected["micro_average"], rel=1e-12), name
        assert_per_class(got, f"collar_{name}_per_class", expected, classes)
    # at the best thresholds, the F at a threshold is the best F (a threshold per class)
    again = values(ours(scores, gt, {"name": "collar_fscore", "threshold": per_class_threshold, **collars}))
    assert again[("collar_fscore", None)] == pytest.approx(at_best[0]["macro_average"], rel=1e-12)
    assert again[("collar_fscore_micro", None)] == pytest.approx(at_best[0]["micro_average"], rel=1e-12)
    curves = {c.class_: c.curve for c in results.curves if c.metric == "collar_pr_curve"}
    pr = peer("precision_recall_curve", scores, gt, **collars)
    for c in classes:  # precisions are ratios of whole numbers: the same division
        np.testing.assert_array_equal(curves[c].x, pr[c][1])
        np.testing.assert_array_equal(curves[c].y, pr[c][0])
    assert 0 < f["macro_average"] < 1 and 0 < at[0]["macro_average"] < 1  # the data tests something


@pytest.mark.parametrize(("floor", "value"), [("min_precision", 0.8), ("min_recall", 0.7), ("min_recall", 1.0)])
def test_best_fscore_under_a_floor_equals_sed_scores_eval(tmp_path, floor, value):
    scores, gt = desed_like(tmp_path, 3)
    collars = COLLARS[0]
    f, p, r, thresholds, _ = peer("best_fscore", scores, gt, **collars, **{floor: value})
    got = values(ours(scores, gt, {"name": "collar_best_fscore", **collars, floor: value}))
    classes = [c for c in f if not c.endswith("_average")]
    assert got[("collar_best_fscore", None)] == pytest.approx(f["macro_average"], rel=1e-12)
    assert got[("collar_best_fscore_micro", None)] == pytest.approx(f["micro_average"], rel=1e-12)
    assert_per_class(got, "collar_best_fscore_per_class", f, classes)
    for c in classes:
        assert got[("collar_best_fscore_threshold", c)] == thresholds[c], c
    if value == 1.0:  # no threshold finds every event: F 0 at +inf, as the peer gives it
        assert np.isinf([thresholds[c] for c in classes]).any()


@pytest.mark.parametrize("collars", COLLARS)
@pytest.mark.parametrize(("kind", "seed"), [("desed", 4), ("psds", 5)])
def test_error_rate_and_best_error_rate_equal_sed_scores_eval(tmp_path, kind, seed, collars):
    scores, gt = folders(tmp_path, kind, seed)
    er, ir, dr, thresholds, _ = peer("best_error_rate", scores, gt, **collars)
    at = peer("error_rate", scores, gt, threshold=0.55, **collars)
    got = values(ours(scores, gt, {"name": "collar_best_error_rate", **collars},
                      {"name": "collar_error_rate", "threshold": 0.55, **collars}))
    classes = [c for c in er if not c.endswith("_average")]
    for name, best, expected in zip(("error_rate", "insertion_rate", "deletion_rate"), (er, ir, dr), at[:3]):
        assert got[(f"collar_best_{name}", None)] == pytest.approx(best["macro_average"], rel=1e-12), name
        assert_per_class(got, f"collar_best_{name}_per_class", best, classes)
        assert got[(f"collar_{name}", None)] == pytest.approx(expected["macro_average"], rel=1e-12), name
        assert_per_class(got, f"collar_{name}_per_class", expected, classes)
    for c in classes:
        assert got[("collar_best_error_rate_threshold", c)] == thresholds[c], c
    assert 0 < er["macro_average"] < at[0]["macro_average"]  # the best is better than 0.55's


@st.composite
def small_cases(draw):
    """1-3 files of 3-12 frames (0.1 s) scoring two classes from five values (ties everywhere),
    events on the 0.1 s grid (some overlapping, every class with one), and collars."""
    files = []
    for i in range(draw(st.integers(1, 3))):
        frames = draw(st.integers(3, 12))
        scores = draw(st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=2, max_size=2),
                               min_size=frames, max_size=frames))
        events = draw(st.lists(st.tuples(st.integers(0, frames - 1), st.integers(1, 6), st.sampled_from("ab")),
                               max_size=4))
        kept: list[tuple[float, float, str]] = []  # the peer refuses events of a class that overlap or touch
        for on, n, c in sorted(events):
            if all(k[2] != c or k[1] < on / 10 for k in kept):
                kept.append((on / 10, min(on + n, frames) / 10, c))
        files.append((f"f{i}", np.array(scores), kept))
    for c in "ab":  # every class has a reference event (the peer has no recall without one)
        if not any(e[2] == c for _, _, events in files for e in events):
            files[0][2].append((0.0, 0.2, c))
    collars = {"onset_collar": draw(st.sampled_from([0.0, 0.1, 0.2])), "offset_collar": draw(st.sampled_from([0.0, 0.1, 0.3])),
               "offset_collar_rate": draw(st.sampled_from([0.0, 0.5]))}
    return files, collars


@settings(max_examples=examples(60), deadline=None)
@given(case=small_cases(), threshold=st.sampled_from([0.0, 0.3, 0.5, 0.75]))
def test_every_collar_metric_equals_sed_scores_eval_on_small_cases(tmp_path_factory, case, threshold):
    files, collars = case
    root = tmp_path_factory.mktemp("case")
    (root / "scores").mkdir()
    rows = []
    for name, scores, events in files:
        times = np.round(np.arange(len(scores) + 1) * 0.1, 6)
        write_sed_scores(scores, root / "scores" / f"{name}.tsv", timestamps=times, event_classes=["a", "b"])
        rows += [(f"{name}.wav", *e) for e in events] or [(f"{name}.wav", None, None, None)]
    pd.DataFrame(rows, columns=["filename", "onset", "offset", "event_label"]).to_csv(root / "gt.tsv", sep="\t", index=False)
    scores, gt = root / "scores", root / "gt.tsv"
    got = values(ours(scores, gt, *({"name": name, **collars} for name in ("collar_best_fscore", "collar_best_error_rate")),
                      *({"name": name, "threshold": threshold, **collars} for name in ("collar_fscore", "collar_error_rate"))))
    f, _, _, f_thresholds, _ = peer("best_fscore", scores, gt, **collars)
    er, _, _, er_thresholds, _ = peer("best_error_rate", scores, gt, **collars)
    at_f = peer("fscore", scores, gt, threshold=threshold, **collars)[0]
    at_er = peer("error_rate", scores, gt, threshold=threshold, **collars)[0]
    for metric, expected in [("collar_best_fscore", f), ("collar_best_error_rate", er), ("collar_fscore", at_f),
                             ("collar_error_rate", at_er)]:
        assert got[(metric, None)] == pytest.approx(expected["macro_average"], rel=1e-12, abs=1e-15), metric
        assert_per_class(got, f"{metric}_per_class", expected, "ab")
    assert got[("collar_fscore_micro", None)] == pytest.approx(at_f["micro_average"], rel=1e-12, abs=1e-15)
    assert got[("collar_best_fscore_micro", None)] == pytest.approx(f["micro_average"], rel=1e-12, abs=1e-15)
    for c in "ab":
        assert got[("collar_best_fscore_threshold", c)] == f_thresholds[c]
        assert got[("collar_best_error_rate_threshold", c)] == er_thresholds[c]


ALL_FOUR = [
    {"name": "collar_fscore", "threshold": 0.5, **COLLARS[0]}, {"name": "collar_best_fscore", **COLLARS[0]},
    {"name": "collar_error_rate", "threshold": 0.5, **COLLARS[0]}, {"name": "collar_best_error_rate", **COLLARS[0]},
]


def test_a_streamed_run_gives_the_in_memory_numbers(tmp_path, monkeypatch):
    """Streamed, the folder is parsed 3 files at a time and reduced 5 at a time: every value
    and threshold equals the in-memory run's exactly (the state is whole counts, summed)."""
    import evalkit.budget
    import evalkit_segments.score_files

    scores, gt = desed_like(tmp_path, 6)
    monkeypatch.setattr(evalkit_segments.score_files, "STREAM_FILES", 3)
    monkeypatch.setattr(evalkit.budget, "FOLDER_ROWS", 5)
    memory, streamed = ours(scores, gt, *ALL_FOUR), ours(scores, gt, *ALL_FOUR, stream=True)
    assert any("streamed: 12 samples read 5 rows at a time" in note for note in streamed.notes)
    assert values(streamed) == values(memory) and len(values(memory)) > 40
    for mine, theirs in zip(streamed.curves, memory.curves, strict=True):
        np.testing.assert_array_equal(mine.curve.y, theirs.curve.y)


def test_the_counts_of_parts_add_up_to_the_counts_of_the_whole(tmp_path, monkeypatch):
    """Files split anywhere give the whole's counts exactly (whole numbers), on the union of
    their scores; so do matchings made one cell at a time."""
    import evalkit_segments.collar_scores
    from evalkit_segments.collar_scores import CollarParams, counts
    from evalkit_segments.loaders import EventListLoader
    from evalkit_segments.score_files import ScoreFiles

    root = make(tmp_path, 9)
    reference = EventListLoader(EventListLoader.Params(labels=list(CLASSES))).load(root / "gt.tsv", "reference")
    series = ScoreFiles(ScoreFiles.Params()).load(root / "scores", "prediction")
    params = CollarParams(**COLLARS[0])
    whole = counts(series.samples, reference, params)
    merged = counts(series[:7].samples, reference[:7], params) + counts(series[7:].samples, reference[7:], params)
    monkeypatch.setattr(evalkit_segments.collar_scores, "MATCH_ROWS", 1)
    alone = counts(series.samples, reference, params)
    for field in ("klass", "score", "change", "n_ref"):
        np.testing.assert_array_equal(getattr(merged, field), getattr(whole, field))
        np.testing.assert_array_equal(getattr(alone, field), getattr(whole, field))


def test_a_score_where_the_changes_of_two_files_cancel_is_a_point_of_the_curve(tmp_path):
    """f0's event is found at 0.9; at 0.95 f2 adds two false detections; at 0.85 f1 adds one
    and f2's two merge into one: no count changes there, but it is a point of the peer's curve,
    so the best threshold is centred between 0.9 and 0.85 (0.875), not 0.9 and f0's 0.2."""
    (tmp_path / "scores").mkdir()
    for name, scores in [("f0", [0.9, 0.9, 0.2, 0.2]), ("f1", [0.85, 0.85]), ("f2", [0.95, 0.85, 0.95])]:
        times = np.round(np.arange(len(scores) + 1) * 0.1, 6)
        two = np.c_[scores, np.zeros(len(scores))]  # a second class, b (the peer fails on a single column)
        write_sed_scores(two, tmp_path / "scores" / f"{name}.tsv", timestamps=times, event_classes=["a", "b"])
    (tmp_path / "gt.tsv").write_text("filename\tonset\toffset\tevent_label\nf0.wav\t0.0\t0.2\ta\n"
                                     "f0.wav\t0.0\t0.1\tb\nf1.wav\nf2.wav\n")
    collars = COLLARS[0]
    got = values(ours(tmp_path / "scores", tmp_path / "gt.tsv", {"name": "collar_best_fscore", **collars}))
    *_, thresholds, _ = peer("best_fscore", tmp_path / "scores", tmp_path / "gt.tsv", **collars)
    assert got[("collar_best_fscore_threshold", "a")] == thresholds["a"] == (0.9 + 0.85) / 2


def test_an_event_list_system_is_refused_with_what_to_use(tmp_path):
    root = make(tmp_path, 10, files=3)
    with pytest.raises(DataError, match="collar_best_fscore reads a system's scores over time .* use the "
                                        "representation event_based"):
        ours(root / "gt.tsv", root / "gt.tsv", ALL_FOUR[1])


def test_a_threshold_per_class_must_name_every_class(tmp_path):
    root = make(tmp_path, 11, files=3)
    with pytest.raises(DataError, match=r"collar_fscore: `threshold` gives a threshold per class, but none for "
                                        r"\['speech'\]; one for \['cat'\], which the data does not have"):
        ours(root / "scores", root / "gt.tsv",
             {"name": "collar_fscore", "threshold": {"alarm": 0.5, "dog": 0.5, "cat": 0.5}, **COLLARS[0]})


def test_the_collars_have_no_default_as_in_the_peer(tmp_path):
    from evalkit.errors import ConfigError

    with pytest.raises(ConfigError, match="onset_collar"):
        ours(tmp_path, tmp_path / "absent.tsv", {"name": "collar_best_fscore", "offset_collar": 0.2})


def test_a_class_without_reference_events_is_undefined_and_left_out(tmp_path):
    """Its recall and error rate are undefined: NaN, and the means are the other classes' (the
    peer refuses such data, so it is compared on the scores without the class)."""
    scores, gt = desed_like(tmp_path, 7)
    table = pd.read_csv(gt, sep="\t")
    classes = sorted(table.event_label.dropna().unique())
    gone = classes[0]
    table.loc[table.event_label == gone, ["onset", "offset", "event_label"]] = None  # its files stay listed
    table.drop_duplicates().to_csv(gt, sep="\t", index=False)
    reference = {"path": str(gt), "loader": {"name": "events", "labels": classes}}
    results = evalkit.run({"name": "c", "data": {"reference": reference, "systems": {"s": str(scores)}},
                           "metrics": [{"name": "collar_best_fscore", **COLLARS[0]},
                                       {"name": "collar_error_rate", "threshold": 0.5, **COLLARS[0]}]})
    got = values(results)
    for metric in ("collar_best_fscore_per_class", "collar_best_fscore_threshold", "collar_error_rate_per_class"):
        assert np.isnan(got[(metric, gone)]), metric
    for file in scores.iterdir():
        pd.read_csv(file, sep="\t").drop(columns=gone).to_csv(file, sep="\t", index=False)
    f = peer("best_fscore", scores, gt, **COLLARS[0])[0]
    er = peer("error_rate", scores, gt, threshold=0.5, **COLLARS[0])[0]
    assert got[("collar_best_fscore", None)] == pytest.approx(f["macro_average"], rel=1e-12)
    assert got[("collar_best_fscore_micro", None)] == pytest.approx(f["micro_average"], rel=1e-12)
    assert got[("collar_error_rate", None)] == pytest.approx(er["macro_average"], rel=1e-12)


def test_the_pr_curves_are_kept_in_the_json_report_and_drawn(tmp_path):
    from evalkit_reports import plots

    scores, gt = desed_like(tmp_path, 8)
    results = ours(scores, gt, ALL_FOUR[1])
    again = evalkit.Results.from_json(results.to_json())
    assert len(again.curves) == len(results.curves) == 10  # one per class
    for kept, curve in zip(again.curves, results.curves, strict=True):
        assert (kept.metric, kept.class_, kept.curve.x_label) == ("collar_pr_curve", curve.class_, "recall")
        np.testing.assert_array_equal(kept.curve.x, curve.curve.x)  # read back: the same numbers
        np.testing.assert_array_equal(kept.curve.y, curve.curve.y)
    drawn = [p for p in plots.gallery(results).plots if p.kind == "curve"]
    assert [p.name for p in drawn] == ["curve-collar_pr_curve"]
    assert plots.image(drawn[0], "png").startswith(b"\x89PNG")


@pytest.mark.parametrize("threshold", [float("nan"), {"alarm": 0.5, "dog": float("nan"), "speech": 0.5}])
def test_a_threshold_of_nan_is_refused_before_any_data_is_read(tmp_path, threshold):
    from evalkit.errors import ConfigError

    with pytest.raises(ConfigError, match="a threshold is a number .-inf and inf included., not nan"):
        ours(tmp_path, tmp_path / "absent.tsv", {"name": "collar_fscore", "threshold": threshold, **COLLARS[0]})


def test_thresholds_of_minus_and_plus_inf_detect_every_frame_and_none(tmp_path):
    """-inf is the lowest point of each class's curve (every frame detected), inf its last
    (nothing detected): the peer's F and error rate there."""
    scores, gt = desed_like(tmp_path, 9)
    for threshold in (-np.inf, np.inf):
        got = values(ours(scores, gt, {"name": "collar_fscore", "threshold": threshold, **COLLARS[0]},
                          {"name": "collar_error_rate", "threshold": threshold, **COLLARS[0]}))
        f = peer("fscore", scores, gt, threshold=threshold, **COLLARS[0])[0]
        er = peer("error_rate", scores, gt, threshold=threshold, **COLLARS[0])[0]
        assert got[("collar_fscore", None)] == pytest.approx(f["macro_average"], rel=1e-12, abs=1e-15)
        assert got[("collar_error_rate", None)] == pytest.approx(er["macro_average"], rel=1e-12)
    assert got[("collar_fscore", None)] == 0 and got[("collar_error_rate", None)] == 1  # nothing detected: all deleted


def test_bootstrap_intervals_and_paired_tests_resample_files(tmp_path):
    """Files are resampled with their score series; a system against itself differs by 0 with p = 1."""
    root = make(tmp_path, 12, files=10)
    results = evalkit.run({
        "name": "b", "metrics": [ALL_FOUR[1]],
        "data": {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "scores"), "t": str(root / "scores")}},
        "statistics": {"bootstrap": {"resamples": 20, "seed": 1}, "test": {"baseline": "s", "resamples": 20}},
    })
    (row, _) = [r for r in results.rows if r.metric == "collar_best_fscore"]
    assert row.ci_low < row.value < row.ci_high
    (comparison,) = [c for c in results.comparisons if c.metric == "collar_best_fscore"]
    assert comparison.difference == 0 and comparison.p_value == 1  # one computation twice: exactly 0


def test_an_infinite_threshold_is_kept_in_the_results_config_and_runs_again(tmp_path):
    """The results' config is what ran, as JSON data: a threshold of -inf or inf stays itself
    (the text a config takes), so the config a report records validates and runs again."""
    import json

    import yaml

    from evalkit.results import Results

    root = make(tmp_path, 5, files=4)
    collars = {"onset_collar": 0.2, "offset_collar": 0.2}
    metrics = [{"name": "collar_fscore", **collars, "threshold": -math.inf},
               {"name": "collar_error_rate", **collars, "threshold": {"alarm": math.inf, "dog": 0.5, "speech": -math.inf}}]
    data = {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "scores")}}
    config = {"name": "f", "metrics": metrics, "data": data}
    results = evalkit.run(config)
    assert results.config["metrics"][0]["threshold"] == "-inf"
    assert results.config["metrics"][1]["threshold"] == {"alarm": "inf", "dog": 0.5, "speech": "-inf"}
    text = results.to_json()
    json.loads(text, parse_constant=lambda token: pytest.fail(f"{token} is not JSON"))  # strict JSON
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(Results.from_json(text).config))
    rerun = evalkit.run(again)
    assert [(r.measure, r.value) for r in rerun.rows] == [(r.measure, r.value) for r in results.rows]
