"""``segment_based`` and ``intersection_based`` are sed_scores_eval's ``segment_based`` (best F
with class-wise thresholds, AUROC, average precision, F at a threshold) and
``intersection_based`` (F at a threshold, best F) straight from score folders and event lists:
equal to the peer on seeded score files with ties (``test_psds.make``), on the bundled DESED
folders and on hypothesis-generated small folders; their states are per-class per-score counts
that add up across files, so a streamed run gives the in-memory numbers."""

from __future__ import annotations

import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from run_depth import examples
from test_psds import CLASSES, SETTINGS, make

import evalkit
from evalkit.errors import DataError

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sed_scores_eval import intersection_based, segment_based
    from sed_scores_eval.base_modules.io import write_sed_scores

DESED = Path(__file__).resolve().parent.parent / "configs" / "data" / "desed"
#: Sums of a few hundred counts' ratios, in the peer's order and ours: equal to rounding.
CLOSE = {"rel": 1e-12, "abs": 1e-15, "nan_ok": True}  # NaN: an AUROC without negatives, in both


def ours(reference: Path, scores: Path, *metrics: dict, classes: list[str] | None = None, **data) -> dict:
    ref: object = str(reference) if classes is None else {"path": str(reference), "loader": {"name": "events", "labels": classes}}
    data = {"reference": ref, "systems": {"s": str(scores)}, **data}
    results = evalkit.run({"name": "f", "metrics": list(metrics), "data": data})
    return {(r.metric, r.class_): r.value for r in results.rows}


def peer(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def check_segment_based(got: dict, scores: Path, gt: Path, durations: Path | None, classes, segment_length: float,
                        threshold: float, max_fpr: float | None) -> None:
    args = (str(scores), str(gt), None if durations is None else str(durations))
    f, _, _, thresholds, _ = peer(segment_based.best_fscore, *args, segment_length=segment_length)
    auroc = stable_auroc(peer(segment_based.roc_curve, *args, segment_length=segment_length), max_fpr)
    ap, _ = peer(segment_based.average_precision, *args, segment_length=segment_length)
    at, *_ = peer(segment_based.fscore, *args, threshold, segment_length=segment_length)
    assert got["segment_best_fscore", None] == pytest.approx(f["macro_average"], **CLOSE)
    assert got["segment_best_fscore_micro", None] == pytest.approx(f["micro_average"], **CLOSE)
    assert got["segment_fscore", None] == pytest.approx(at["macro_average"], **CLOSE)
    assert got["segment_fscore_micro", None] == pytest.approx(at["micro_average"], **CLOSE)
    defined = [auroc[c] for c in classes if not np.isnan(auroc[c])]  # a class without negatives has no ROC: left out
    assert got["segment_auroc", None] == pytest.approx(np.mean(defined) if defined else np.nan, **CLOSE)
    assert got["segment_ap", None] == pytest.approx(ap["mean"], **CLOSE)
    for c in classes:
        assert got["segment_best_fscore_per_class", c] == pytest.approx(f[c], **CLOSE)
        assert got["segment_best_fscore_threshold", c] == pytest.approx(thresholds[c], **CLOSE)  # a mean of two scores
        assert got["segment_fscore_per_class", c] == pytest.approx(at[c], **CLOSE)
        assert got["segment_auroc_per_class", c] == pytest.approx(auroc[c], **CLOSE)
        assert got["segment_ap_per_class", c] == pytest.approx(ap[c], **CLOSE)


def stable_auroc(curves: dict, max_fpr: float | None) -> dict:
    """Each class's area under the peer's ROC curve (its points ordered by FPR, then TPR) as its
    ``auroc`` takes it: ``staircase_auc``, whose ``np.argsort`` of the FPRs is numpy's default,
    unstable sort, so the TPR held past a tied FPR depends on the CPU's sort (on the bundled
    DESED folders 0.95326 with AVX2, 0.95234 with NPY_DISABLE_CPU_FEATURES=X86_V3). Here the
    points stay in the peer's order, the AVX2 result: the highest TPR at an FPR holds."""
    areas = {}
    for c, (tpr, fpr, *_) in curves.items():
        if max_fpr is None:
            areas[c] = float(np.sum(tpr[:-1] * np.diff(fpr)))
        else:
            inside = int(np.searchsorted(fpr, max_fpr, side="right"))
            areas[c] = float(np.sum(tpr[:inside] * np.diff(np.r_[fpr[:inside], max_fpr])) / max_fpr)
    return areas


def check_intersection_based(got: dict, scores: Path, gt: Path, classes, dtc: float, gtc: float, threshold: float) -> None:
    """Equal F and best thresholds (each a mean of two scores: to rounding), also where two
    files' count changes cancel at a score the peer keeps."""
    criteria = {"dtc_threshold": dtc, "gtc_threshold": gtc}
    f, _, _, thresholds, _ = peer(intersection_based.best_fscore, str(scores), str(gt), **criteria)
    at, *_ = peer(intersection_based.fscore, str(scores), str(gt), threshold, **criteria)
    assert got["intersection_best_fscore", None] == pytest.approx(f["macro_average"], **CLOSE)
    assert got["intersection_best_fscore_micro", None] == pytest.approx(f["micro_average"], **CLOSE)
    assert got["intersection_fscore", None] == pytest.approx(at["macro_average"], **CLOSE)
    assert got["intersection_fscore_micro", None] == pytest.approx(at["micro_average"], **CLOSE)
    for c in classes:
        assert got["intersection_best_fscore_per_class", c] == pytest.approx(f[c], **CLOSE)
        assert got["intersection_fscore_per_class", c] == pytest.approx(at[c], **CLOSE)
        assert got["intersection_best_fscore_threshold", c] == pytest.approx(thresholds[c], **CLOSE)


SEGMENT_SETTINGS = [
    {"segment_length": 1.0, "threshold": 0.5, "max_fpr": None},
    {"segment_length": 0.5, "threshold": 0.3, "max_fpr": 0.1},
    {"segment_length": 2.0, "threshold": 0.7, "max_fpr": 0.5},
]


@pytest.mark.parametrize("setting", SEGMENT_SETTINGS)
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("with_durations", [True, False])
def test_segment_based_equals_sed_scores_eval(tmp_path, setting, seed, with_durations):
    """Scores of one decimal (many ties); without durations a file lasts to the later of its last
    frame and its last reference offset, as in the peer."""
    root = make(tmp_path, seed)
    durations = root / "durations.tsv" if with_durations else None
    metric = {"name": "segment_based", **setting, **({"durations": str(durations)} if durations else {})}
    got = ours(root / "gt.tsv", root / "scores", metric)
    check_segment_based(got, root / "scores", root / "gt.tsv", durations, CLASSES, **setting)
    assert 0 < got["segment_best_fscore", None] < 1


@pytest.mark.parametrize(("dtc", "gtc", "threshold"), [(0.7, 0.7, 0.5), (0.1, 0.1, 0.3), (0.5, 0.0, 0.8), (1.0, 1.0, 0.2)])
@pytest.mark.parametrize("seed", [0, 1])
def test_intersection_based_equals_sed_scores_eval(tmp_path, dtc, gtc, threshold, seed):
    root = make(tmp_path, seed)
    metric = {"name": "intersection_based", "dtc_threshold": dtc, "gtc_threshold": gtc, "threshold": threshold}
    got = ours(root / "gt.tsv", root / "scores", metric)
    check_intersection_based(got, root / "scores", root / "gt.tsv", CLASSES, dtc, gtc, threshold)


@pytest.mark.parametrize("system", ["baseline", "weak"])
def test_both_equal_sed_scores_eval_on_the_bundled_desed_folders(system):
    """The DESED-style folders of configs/desed.yaml (10 classes, scores of three decimals)."""
    classes = list(pd.read_csv(next((DESED / system).iterdir()), sep="\t", nrows=0).columns[2:])
    got = ours(
        DESED / "reference.tsv", DESED / system,
        {"name": "segment_based", "threshold": 0.5, "durations": str(DESED / "durations.tsv")},
        {"name": "intersection_based", "dtc_threshold": 0.7, "gtc_threshold": 0.7, "threshold": 0.5},
    )
    check_segment_based(got, DESED / system, DESED / "reference.tsv", DESED / "durations.tsv", classes, 1.0, 0.5, None)
    check_intersection_based(got, DESED / system, DESED / "reference.tsv", classes, 0.7, 0.7, 0.5)


@st.composite
def folders(draw):
    """A few files of 2 to 25 frames (hops of 0.1 or 0.25 s), scores from five values (ties), and
    reference events on a 0.1 s grid, some past their file's end."""
    hop = draw(st.sampled_from([0.1, 0.25]))
    n_files = draw(st.integers(1, 4))
    files = []
    for i in range(n_files):
        frames = draw(st.integers(2, 25))  # the peer fails on a file of one frame (an empty argmax)
        scores = draw(st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=2, max_size=2),
                               min_size=frames, max_size=frames))
        events = draw(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 20), st.sampled_from(["a", "b"])), max_size=3))
        files.append((f"f{i}", hop, np.array(scores), events))
    events = [(name, start / 10, (start + length) / 10, label) for name, _, _, evs in files for start, length, label in evs]
    events += [("f0", 0.0, 0.1, "a"), ("f0", 0.0, 0.1, "b")]  # the peer needs a positive segment of every class
    scores = np.vstack([scores for _, _, scores, _ in files])
    assume((scores.max(axis=0) > scores.min(axis=0)).all())  # the peer fails on a class of one score (an empty argmax)
    return files, events


def write(root: Path, files, events) -> None:
    (root / "scores").mkdir()
    for name, hop, scores, _ in files:
        times = np.round(np.arange(len(scores) + 1) * hop, 6)
        write_sed_scores(scores, root / "scores" / f"{name}.tsv", timestamps=times, event_classes=["a", "b"])
    frame = pd.DataFrame(events, columns=["filename", "onset", "offset", "event_label"])
    frame["filename"] += ".wav"
    merged = []  # one class's events of a file that overlap or touch are one event (the peer and psds refuse them)
    for (name, label), group in frame.sort_values("onset").groupby(["filename", "event_label"]):
        for onset, offset in group[["onset", "offset"]].itertuples(index=False):
            if merged and merged[-1][0] == name and merged[-1][3] == label and onset <= merged[-1][2]:
                merged[-1][2] = max(merged[-1][2], offset)
            else:
                merged.append([name, onset, offset, label])
    listed = {row[0] for row in merged}
    merged += [[f"{name}.wav", None, None, None] for name, *_ in files if f"{name}.wav" not in listed]
    pd.DataFrame(merged, columns=frame.columns).to_csv(root / "gt.tsv", sep="\t", index=False)
    durations = [(f"{name}.wav", round(len(scores) * hop + extra, 6)) for (name, hop, scores, _), extra
                 in zip(files, [0.0, 0.35, 1.0, 0.05])]
    pd.DataFrame(durations, columns=["filename", "duration"]).to_csv(root / "durations.tsv", sep="\t", index=False)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(folders(), st.sampled_from([0.5, 1.0]), st.sampled_from([(0.5, 0.5), (0.2, 0.8), (1.0, 0.0)]))
def test_small_folders_equal_sed_scores_eval(data, segment_length, criteria):
    files, events = data
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write(root, files, events)
        got = ours(
            root / "gt.tsv", root / "scores",
            {"name": "segment_based", "segment_length": segment_length, "threshold": 0.5,
             "durations": str(root / "durations.tsv")},
            {"name": "intersection_based", "dtc_threshold": criteria[0], "gtc_threshold": criteria[1], "threshold": 0.5},
            classes=["a", "b"],
        )
        check_segment_based(got, root / "scores", root / "gt.tsv", root / "durations.tsv", "ab", segment_length, 0.5, None)
        check_intersection_based(got, root / "scores", root / "gt.tsv", "ab", *criteria, 0.5)


def test_a_streamed_run_gives_the_in_memory_numbers(tmp_path, monkeypatch):
    """Streamed 5 files at a time: the per-class per-score counts of the chunks add up to the
    whole's (whole numbers: the same counts), so every value is the in-memory one."""
    import evalkit.budget
    import evalkit_segments.score_files

    root = make(tmp_path, 3, files=17)
    monkeypatch.setattr(evalkit_segments.score_files, "STREAM_FILES", 3)
    monkeypatch.setattr(evalkit.budget, "FOLDER_ROWS", 5)
    metrics = ({"name": "segment_based", "threshold": 0.5, "durations": str(root / "durations.tsv")},
               {"name": "intersection_based", "dtc_threshold": 0.5, "gtc_threshold": 0.5, "threshold": 0.5})
    memory = ours(root / "gt.tsv", root / "scores", *metrics)
    streamed = ours(root / "gt.tsv", root / "scores", *metrics, stream=True)
    assert streamed.keys() == memory.keys() and len(memory) > 20
    for key, value in memory.items():  # the same counts, read in the same order: the same computation
        assert streamed[key] == value or (np.isnan(value) and np.isnan(streamed[key])), key


def test_a_class_without_reference_events_is_nan_and_left_out_of_the_means(tmp_path):
    """No positive segment, no reference event: no recall, NaN (the peer refuses such data); the
    means are those of the other classes."""
    root = make(tmp_path, 4, files=10)
    gt = pd.read_csv(root / "gt.tsv", sep="\t")
    gt.loc[gt.event_label == "speech", ["onset", "offset", "event_label"]] = None
    gt.drop_duplicates().to_csv(root / "gt.tsv", sep="\t", index=False)
    got = ours(root / "gt.tsv", root / "scores", {"name": "segment_based", "threshold": 0.5},
               {"name": "intersection_based", "dtc_threshold": 0.5, "gtc_threshold": 0.5}, classes=list(CLASSES))
    for name in ("segment_best_fscore", "segment_fscore", "segment_auroc", "segment_ap", "intersection_best_fscore"):
        per_class = [got[f"{name}_per_class", c] for c in CLASSES]
        assert np.isnan(per_class[2]) and not np.isnan(per_class[:2]).any()
        assert got[name, None] == pytest.approx(np.mean(per_class[:2]), rel=1e-15)  # a mean of two numbers


@pytest.mark.parametrize("metric", [{"name": "segment_based"}, {"name": "intersection_based", "dtc_threshold": 0.5,
                                                                 "gtc_threshold": 0.5}])
def test_an_event_list_system_needs_scores(tmp_path, metric):
    root = make(tmp_path, 9, files=3)
    with pytest.raises(DataError, match=f"{metric['name']} reads a system's scores over time"):
        ours(root / "gt.tsv", root / "gt.tsv", metric)


@pytest.mark.parametrize(("setting", "folds"), [
    (0, {}),  # DCASE scenario 1, sed_scores_eval's defaults: 20 repetitions of 5 folds, a 90 % interval
    (1, {"n_folds": 3, "n_iterations": 4, "confidence": 0.8}),  # scenario 2's cross-triggers
])
def test_bootstrapped_psds_equals_sed_scores_eval(tmp_path, setting, folds):
    """sed_scores_eval's bootstrapped_psds draws no random resamples of its own to match only
    in distribution: its subsets are fixed by the sorted file names and RandomState(i), so the
    mean and interval, overall and per class, are its own."""
    from sed_scores_eval.base_modules.bootstrap import confidence_interval
    root = make(tmp_path, 11)
    durations = str(root / "durations.tsv")
    metric = {"name": "psds", **SETTINGS[setting], "durations": durations, "bootstrapped": folds}
    got = ours(root / "gt.tsv", root / "scores", metric)
    values, per_class, *_ = peer(intersection_based.bootstrapped_psds, str(root / "scores"), str(root / "gt.tsv"),
                                 durations, **SETTINGS[setting], **{k: v for k, v in folds.items() if k != "confidence"})
    level = folds.get("confidence", 0.9)
    expected = confidence_interval(values, level)
    assert len(values) == folds.get("n_folds", 5) * folds.get("n_iterations", 20)
    for name, value in zip(("mean", "low", "high"), expected):
        assert got[f"bootstrapped_psds_{name}", None] == pytest.approx(value, **CLOSE)
    for c in CLASSES:  # class by class: the peer's dict form always takes 0.9 (it does not pass `confidence` on)
        mean, low, high = confidence_interval([values[c] for values in per_class], level)
        for name, value in (("mean", mean), ("low", low), ("high", high)):
            assert got[f"bootstrapped_psds_{name}_per_class", c] == pytest.approx(value, **CLOSE)
    assert expected[1] < got["psds", None] < expected[2]  # the subsets' values spread around the whole's


def test_bootstrapped_psds_streams(tmp_path, monkeypatch):
    """Each file's counts are the state: chunks of 5 files add up to the in-memory file list."""
    import evalkit.budget

    monkeypatch.setattr(evalkit.budget, "FOLDER_ROWS", 5)
    root = make(tmp_path, 12, files=13)
    metric = {"name": "psds", **SETTINGS[0], "bootstrapped": {"n_iterations": 3}}
    memory = ours(root / "gt.tsv", root / "scores", metric)
    streamed = ours(root / "gt.tsv", root / "scores", metric, stream=True)
    assert streamed.keys() == memory.keys()
    for key, value in memory.items():  # the audio durations are summed in another order
        assert streamed[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key


@pytest.mark.parametrize(("criteria", "kept"), [
    ({}, 1.6), ({"cttc_threshold": 0.3, "alpha_ct": 0.5}, 5.6),
])
def test_the_plan_counts_the_per_file_counts_bootstrapped_keeps(tmp_path, monkeypatch, criteria, kept):
    """Streamed, a chunk of files is held, but bootstrapped's per-file counts of every file are
    kept to the end: the plan adds them (per byte of the folder's text, measured: 1.54 and 5.54
    on 200 DESED-like files); segment_based and intersection_based keep nothing per file."""
    import evalkit.budget
    from evalkit import budget
    from evalkit.api import plan

    monkeypatch.setattr(evalkit.budget, "FOLDER_ROWS", 5)
    root = make(tmp_path, 13, files=12)
    sizes = sorted((f.stat().st_size for f in (root / "scores").iterdir()), reverse=True)
    config = {"name": "p", "data": {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "scores")}, "stream": True},
              "metrics": [{"name": "psds", "dtc_threshold": 0.7, "gtc_threshold": 0.7, **criteria, "bootstrapped": {}},
                          {"name": "segment_based"}, {"name": "intersection_based", "dtc_threshold": 0.5, "gtc_threshold": 0.5}]}
    (need,) = plan(config, writes=False).needs
    assert need.bytes == int(sum(sizes[:5]) * budget.CHUNK_BYTES + sum(sizes) * kept)
    assert "the per-file states the metrics keep of all its 12 files" in need.what
    config["metrics"] = config["metrics"][1:]
    (need,) = plan(config, writes=False).needs
    assert need.bytes == sum(sizes[:5]) * budget.CHUNK_BYTES


@pytest.mark.parametrize("metrics", [["best_fscore"], ["auroc", "map"]])
def test_a_matrix_metric_given_a_score_folder_names_the_metrics_that_read_it_at_validate(tmp_path, metrics):
    """best_fscore, auroc and map read membership matrices: given a score folder and an event
    list, `validate` said ok and the run failed on "'Vacuum_cleaner' in column 'event_label' is
    not a number"; now the plan refuses it at the system's line, naming the metrics that read it."""
    from evalkit.api import plan
    from evalkit.errors import ConfigError

    root = make(tmp_path, 14, files=3)
    config = tmp_path / "run.yaml"
    config.write_text(f"name: m\ndata:\n  reference: {root / 'gt.tsv'}\n  systems:\n    s: {root / 'scores'}\n"
                      f"  classes: [{', '.join(CLASSES)}]\nmetrics: [{', '.join(metrics)}]\n")
    with pytest.raises(ConfigError) as refused:
        plan(config, writes=False)
    message = str(refused.value)
    assert message.startswith(
        f"{config}:5:8: {root / 'scores'} is item data for the sed_scores loader (a folder of score files), but "
        f"{', '.join(metrics)} {'reads' if len(metrics) == 1 else 'read'} membership matrices; score files against an "
        "event list are read by the data metrics "
    )
    listed = message.split("data metrics ")[1].split(" (")[0].split(", ")  # every item-reading metric registered
    assert {"intersection_based", "psds", "segment_based"} <= set(listed)


@pytest.mark.slow
def test_a_dask_run_gives_the_in_memory_numbers(tmp_path):
    """On a real LocalCluster (two worker processes on loopback), blocks of 4 files: the workers'
    counts, and bootstrapped's per-file counts, merge to the in-memory values."""
    from distributed import LocalCluster

    root = make(tmp_path, 15, files=13)
    metrics = ({"name": "segment_based", "threshold": 0.5, "durations": str(root / "durations.tsv")},
               {"name": "intersection_based", "dtc_threshold": 0.5, "gtc_threshold": 0.5, "threshold": 0.5},
               {"name": "psds", **SETTINGS[0], "bootstrapped": {"n_iterations": 2}})
    memory = ours(root / "gt.tsv", root / "scores", *metrics)
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as cluster:
        data = {"reference": str(root / "gt.tsv"), "systems": {"s": str(root / "scores")}}
        engine = {"name": "dask", "address": cluster.scheduler_address, "partition_rows": 4}
        config = {"name": "f", "metrics": list(metrics), "data": data, "engine": engine}
        dask = {(r.metric, r.class_): r.value for r in evalkit.run(config).rows}
    assert dask.keys() == memory.keys()
    for key, value in memory.items():  # the audio durations are summed in another order
        assert dask[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key


def test_a_threshold_per_class_equals_sed_scores_eval_with_a_dict(tmp_path):
    """`threshold: {class: value}` (a development set's best thresholds, say) is the peer's
    fscore with a dict of thresholds."""
    root = make(tmp_path, 16)
    thresholds = {"alarm": 0.25, "dog": 0.55, "speech": 0.7}
    got = ours(root / "gt.tsv", root / "scores",
               {"name": "segment_based", "threshold": thresholds, "durations": str(root / "durations.tsv")},
               {"name": "intersection_based", "dtc_threshold": 0.5, "gtc_threshold": 0.5, "threshold": thresholds})
    segment, *_ = peer(segment_based.fscore, str(root / "scores"), str(root / "gt.tsv"), str(root / "durations.tsv"),
                       thresholds, segment_length=1.0)
    intersection, *_ = peer(intersection_based.fscore, str(root / "scores"), str(root / "gt.tsv"), thresholds,
                            dtc_threshold=0.5, gtc_threshold=0.5)
    for name, expected in (("segment_fscore", segment), ("intersection_fscore", intersection)):
        assert got[name, None] == pytest.approx(expected["macro_average"], **CLOSE)
        assert got[f"{name}_micro", None] == pytest.approx(expected["micro_average"], **CLOSE)
        for c in CLASSES:
            assert got[f"{name}_per_class", c] == pytest.approx(expected[c], **CLOSE)


@pytest.mark.parametrize(("thresholds", "message"), [
    ({"alarm": 0.5, "dog": 0.5, "speech": 0.5, "cat": 0.5}, "segment_based threshold: no class 'cat' (classes: alarm, dog, "
     "speech); give every class its threshold, or one number for all"),
    ({"alarm": 0.5, "dog": 0.5}, "segment_based threshold: class 'speech' has no threshold; give every class"),
])
def test_a_threshold_per_class_names_every_class(tmp_path, thresholds, message):
    root = make(tmp_path, 17, files=3)
    with pytest.raises(DataError, match=re.escape(message)):
        ours(root / "gt.tsv", root / "scores", {"name": "segment_based", "threshold": thresholds}, classes=list(CLASSES))


def test_at_a_threshold_the_detections_of_a_class_without_reference_events_are_false_positives_of_the_micro_f(tmp_path):
    """A class without reference events has no F, but what it detects is falsely detected: the
    micro F at a threshold counts it, as the collar-based micro F does: setting its scores to 0
    (nothing detected) raises the micro F of each of the three."""
    root = make(tmp_path, 4, files=10)
    gt = pd.read_csv(root / "gt.tsv", sep="\t")
    gt.loc[gt.event_label == "speech", ["onset", "offset", "event_label"]] = None
    gt.drop_duplicates().to_csv(root / "gt.tsv", sep="\t", index=False)
    metrics = ({"name": "segment_based", "threshold": 0.5},
               {"name": "intersection_based", "dtc_threshold": 0.5, "gtc_threshold": 0.5, "threshold": 0.5},
               {"name": "collar_fscore", "onset_collar": 1.5, "offset_collar": 3.0, "threshold": 0.5})
    names = ("segment_fscore_micro", "intersection_fscore_micro", "collar_fscore_micro")
    detected = ours(root / "gt.tsv", root / "scores", *metrics, classes=list(CLASSES))
    for file in (root / "scores").iterdir():
        scores = pd.read_csv(file, sep="\t")
        scores["speech"] = 0.0
        scores.to_csv(file, sep="\t", index=False)
    never = ours(root / "gt.tsv", root / "scores", *metrics, classes=list(CLASSES))
    for name in names:
        assert detected[name, None] < never[name, None], name  # speech's false positives lower it


def test_intersection_best_threshold_where_two_files_cancel(tmp_path):
    """At 0.6 one file's false positives rise by one (a peak of 0.6 becomes a detection) and
    another's fall by one (its two peaks merge), so the summed counts do not change there; the
    peer keeps 0.6 as a point, so its best threshold (class a at 0.7, where F is best, and equal
    down to 0.6) is centred between 0.7 and 0.6. Dropping the point would put it at -inf."""
    thresholds = constructed_intersection(
        tmp_path, {"x1": [0.0, 0.6, 0.0, 0.0], "x2": [0.8, 0.6, 0.9, 0.0], "x3": [0.7, 0.7]}, 0.5)
    assert thresholds["a"] == pytest.approx((0.7 + 0.6) / 2, rel=1e-15)  # the constructed case: the peer keeps 0.6


def constructed_intersection(root: Path, scores: dict[str, list[float]], criterion: float) -> dict:
    """Score files of class a (b all 0) at a 0.5 s hop, against one event of each class in x3
    (the other files without events): intersection_based with both criteria at ``criterion``
    and F at 0.5 equal to the peer's (:func:`check_intersection_based`); the peer's best
    thresholds."""
    (root / "scores").mkdir()
    for name, column in scores.items():
        write_sed_scores(np.c_[column, np.zeros(len(column))], root / "scores" / f"{name}.tsv",
                         timestamps=np.arange(len(column) + 1) * 0.5, event_classes=["a", "b"])
    empty = "".join(f"{name}.wav\t\t\t\n" for name in scores if name != "x3")
    (root / "gt.tsv").write_text(f"filename\tonset\toffset\tevent_label\n{empty}x3.wav\t0.0\t1.0\ta\nx3.wav\t0.0\t1.0\tb\n")
    got = ours(root / "gt.tsv", root / "scores",
               {"name": "intersection_based", "dtc_threshold": criterion, "gtc_threshold": criterion, "threshold": 0.5})
    _, _, _, thresholds, _ = peer(intersection_based.best_fscore, str(root / "scores"), str(root / "gt.tsv"),
                                  dtc_threshold=criterion, gtc_threshold=criterion)
    check_intersection_based(got, root / "scores", root / "gt.tsv", "ab", criterion, criterion, 0.5)
    return thresholds


def check_error_rates(got: dict, prefix: str, at_threshold: tuple, best: tuple, classes) -> None:
    """Error, insertion and deletion rates at the threshold and at each class's lowest error rate,
    and those thresholds, equal the peer's (ratios of counts; thresholds means of two scores)."""
    for kind, (er, ir, dr, *_) in (("", at_threshold), ("_best", best)):
        for name, peer_rates in (("error_rate", er), ("insertion_rate", ir), ("deletion_rate", dr)):
            assert got[f"{prefix}{kind}_{name}", None] == pytest.approx(peer_rates["macro_average"], **CLOSE)
            for c in classes:
                assert got[f"{prefix}{kind}_{name}_per_class", c] == pytest.approx(peer_rates[c], **CLOSE)
    for c in classes:
        assert got[f"{prefix}_best_error_rate_threshold", c] == pytest.approx(best[3][c], **CLOSE)


def intersection_rates_at(scores: Path, gt: Path, threshold: float, **criteria) -> tuple[dict, dict, dict]:
    """The peer's intersection-based rates at a threshold, from its counts there (its own
    ``intersection_based.error_rate`` fails in sed_scores_eval 0.0.4: it indexes the cross-trigger
    dict of its statistics as an array, KeyError): (FP + n_ref - TP) / n_ref, FP / n_ref,
    (n_ref - TP) / n_ref, and their means over classes."""
    *_, stats = peer(intersection_based.fscore, str(scores), str(gt), threshold, **criteria)
    rates: tuple[dict, dict, dict] = ({}, {}, {})
    for c, counts in stats.items():
        tp, fp, n_ref = counts["tps"], counts["fps"], counts["n_ref"]
        for rate, value in zip(rates, ((fp + n_ref - tp) / n_ref, fp / n_ref, (n_ref - tp) / n_ref)):
            rate[c] = value
    for rate in rates:
        rate["macro_average"] = np.mean(list(rate.values()))
    return rates


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("with_durations", [True, False])
def test_segment_error_rates_equal_sed_scores_eval(tmp_path, seed, with_durations):
    root = make(tmp_path, seed)
    durations = str(root / "durations.tsv") if with_durations else None
    metric = {"name": "segment_error_rate", "threshold": 0.5, **({"durations": durations} if durations else {})}
    got = ours(root / "gt.tsv", root / "scores", metric)
    args = (str(root / "scores"), str(root / "gt.tsv"), durations)
    check_error_rates(got, "segment", peer(segment_based.error_rate, *args, 0.5),
                      peer(segment_based.best_error_rate, *args), CLASSES)


@pytest.mark.parametrize(("dtc", "gtc"), [(0.7, 0.7), (0.1, 0.1), (0.5, 0.0)])
@pytest.mark.parametrize("seed", [0, 1])
def test_intersection_error_rates_equal_sed_scores_eval(tmp_path, seed, dtc, gtc):
    root = make(tmp_path, seed)
    got = ours(root / "gt.tsv", root / "scores",
               {"name": "intersection_error_rate", "dtc_threshold": dtc, "gtc_threshold": gtc, "threshold": 0.3})
    args, criteria = (str(root / "scores"), str(root / "gt.tsv")), {"dtc_threshold": dtc, "gtc_threshold": gtc}
    check_error_rates(got, "intersection", intersection_rates_at(root / "scores", root / "gt.tsv", 0.3, **criteria),
                      peer(intersection_based.best_error_rate, *args, **criteria), CLASSES)


def test_error_rates_on_the_bundled_desed_folders_streamed_and_not():
    """The DESED-style folders, in memory and streamed (the counts merge by +: the same rates)."""
    classes = list(pd.read_csv(next((DESED / "baseline").iterdir()), sep="\t", nrows=0).columns[2:])
    metrics = ({"name": "segment_error_rate", "threshold": 0.5, "durations": str(DESED / "durations.tsv")},
               {"name": "intersection_error_rate", "dtc_threshold": 0.7, "gtc_threshold": 0.7, "threshold": 0.5})
    got = ours(DESED / "reference.tsv", DESED / "baseline", *metrics)
    args = (str(DESED / "baseline"), str(DESED / "reference.tsv"))
    check_error_rates(got, "segment", peer(segment_based.error_rate, *args, str(DESED / "durations.tsv"), 0.5),
                      peer(segment_based.best_error_rate, *args, str(DESED / "durations.tsv")), classes)
    criteria = {"dtc_threshold": 0.7, "gtc_threshold": 0.7}
    check_error_rates(got, "intersection", intersection_rates_at(DESED / "baseline", DESED / "reference.tsv", 0.5, **criteria),
                      peer(intersection_based.best_error_rate, *args, **criteria), classes)
    streamed = ours(DESED / "reference.tsv", DESED / "baseline", *metrics, stream=True)
    assert streamed.keys() == got.keys()
    for key, value in got.items():  # the same counts; the class means summed in the same order
        assert streamed[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key


@pytest.mark.parametrize(("floor", "value"), [("min_precision", 0.6), ("min_recall", 0.5), ("min_recall", 1.0)])
def test_best_fscore_under_a_floor_equals_sed_scores_eval(tmp_path, floor, value):
    """segment_based and intersection_based with min_precision / min_recall: the peer's best F,
    micro F and thresholds (+inf where no threshold reaches the floor: F 0 there, as the peer)."""
    root = make(tmp_path, 2)
    args = (str(root / "scores"), str(root / "gt.tsv"))
    criteria = {"dtc_threshold": 0.5, "gtc_threshold": 0.5}
    got = ours(root / "gt.tsv", root / "scores",
               {"name": "segment_based", "durations": str(root / "durations.tsv"), floor: value},
               {"name": "intersection_based", **criteria, floor: value})
    for prefix, (f, *_, thresholds, _) in (
        ("segment", peer(segment_based.best_fscore, *args, str(root / "durations.tsv"), **{floor: value})),
        ("intersection", peer(intersection_based.best_fscore, *args, **criteria, **{floor: value})),
    ):
        assert got[f"{prefix}_best_fscore", None] == pytest.approx(f["macro_average"], **CLOSE)
        assert got[f"{prefix}_best_fscore_micro", None] == pytest.approx(f["micro_average"], **CLOSE)
        for c in CLASSES:
            assert got[f"{prefix}_best_fscore_per_class", c] == pytest.approx(f[c], **CLOSE)
            assert got[f"{prefix}_best_fscore_threshold", c] == pytest.approx(thresholds[c], **CLOSE)
        if value == 1.0:
            assert np.isinf([thresholds[c] for c in CLASSES]).any()  # the case is exercised


def test_best_thresholds_of_minus_inf_run_again_as_given_thresholds(tmp_path):
    """A development set's best thresholds, -inf included (a class best left all detected), are
    given back as `threshold:`: the F there is the best F (the same counts), for segment_based
    and intersection_based; the peer's fscore at them agrees."""
    root = make(tmp_path, 4, files=6)
    durations = str(root / "durations.tsv")
    criteria = {"dtc_threshold": 0.1, "gtc_threshold": 0.1}
    best = ours(root / "gt.tsv", root / "scores", {"name": "segment_based", "durations": durations},
                {"name": "intersection_based", **criteria})
    for prefix, metric in (("segment", {"name": "segment_based", "durations": durations}),
                           ("intersection", {"name": "intersection_based", **criteria})):
        thresholds = {c: best[f"{prefix}_best_fscore_threshold", c] for c in CLASSES}
        got = ours(root / "gt.tsv", root / "scores", {**metric, "threshold": thresholds})
        for c in CLASSES:
            assert got[f"{prefix}_fscore_per_class", c] == got[f"{prefix}_best_fscore_per_class", c]  # the same point
    assert -np.inf in {best["segment_best_fscore_threshold", c] for c in CLASSES} | {
        best["intersection_best_fscore_threshold", c] for c in CLASSES}  # the case is exercised
    at, *_ = peer(segment_based.fscore, str(root / "scores"), str(root / "gt.tsv"), durations,
                  {c: best["segment_best_fscore_threshold", c] for c in CLASSES}, segment_length=1.0)
    for c in CLASSES:
        assert at[c] == pytest.approx(best["segment_best_fscore_per_class", c], **CLOSE)
    with pytest.raises(evalkit.errors.ConfigError, match=r"a threshold is a number \(-inf and inf included\), not nan"):
        ours(root / "gt.tsv", root / "scores", {"name": "segment_based", "threshold": float("nan")})


def test_intersection_best_threshold_where_frames_of_a_file_without_events_cancel(tmp_path):
    """In x1 (no reference event of a) one frame of 0.5 ends a detection and another starts one,
    so x1's count of false positives does not change at 0.5; the peer takes such a file's
    changes frame by frame (its fast path for files without events) and keeps 0.5, so its best
    threshold, at 0.6 where x3's event is found, is centred between 0.6 and 0.5, not 0.1."""
    thresholds = constructed_intersection(
        tmp_path, {"x1": [0.95, 0.5, 0.97, 0.05, 0.5, 0.02], "x3": [0.6, 0.6, 0.1, 0.1]}, 0.7)
    assert thresholds["a"] == pytest.approx((0.6 + 0.5) / 2, rel=1e-15)  # the constructed case: the peer keeps 0.5
