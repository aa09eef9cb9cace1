"""``segments`` with a ``resolution`` is sed_eval's segment-based grid: on seeded event lists,
overall (micro) and class-wise precision, recall and F equal
``sed_eval.sound_event.SegmentBasedMetrics`` at 1 s, 0.1 s and 0.01 s, to 1e-9.

sed_eval evaluates file by file and sums the counts: each file's grid runs to the later of the
two sides' last offsets, and an event covers segments floor(onset / r) to ceil(offset / r) − 1.
sed_eval leaves a class's precision undefined (NaN) when the system never outputs it, where
evalkit's F is 0; the data here gives every class output on both sides, so every value is
defined on both.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import evalkit

with warnings.catch_warnings():  # dcase_util imports pkg_resources, which warns of its removal
    warnings.simplefilter("ignore")
    import sed_eval

LABELS = ["alarm", "cat", "dog", "speech"]


def event_lists(seed: int, files: int = 12) -> tuple[list[dict], list[dict]]:
    """Reference and system events: times to the millisecond (some on exact grid points, some
    overlapping within a class, some of zero length), every label on both sides."""
    rng = np.random.default_rng(seed)

    def events(shift: float) -> list[dict]:
        rows = []
        for f in range(files):
            for label in LABELS:
                for _ in range(rng.integers(1, 4)):
                    onset = float(rng.choice([rng.integers(0, 20) * 0.5, round(rng.random() * 20, 3)]))
                    length = float(rng.choice([0.0, 1.0, round(rng.random() * 4, 3)]))
                    onset = max(round(onset + shift * rng.standard_normal(), 3), 0.0)
                    rows.append({"filename": f"f{f:02d}.wav", "event_label": label, "onset": onset,
                                 "offset": round(onset + length, 3)})
        return rows

    return events(0.0), events(0.4)


def write(path, rows) -> str:
    path.write_text("filename\tonset\toffset\tevent_label\n" + "".join(
        f"{r['filename']}\t{r['onset']}\t{r['offset']}\t{r['event_label']}\n" for r in rows), encoding="utf-8")
    return str(path)


def assert_f_measures(got: dict, expected) -> None:
    """Overall (micro) and class-wise (none) P, R and F equal the peer's."""
    overall = expected.overall_f_measure()
    for metric, key in (("precision", "precision"), ("recall", "recall"), ("f1", "f_measure")):
        assert got[("micro", metric, None)] == pytest.approx(overall[key], rel=1e-9, abs=1e-12), metric
        for label in LABELS:
            assert got[("none", metric, label)] == pytest.approx(
                expected.class_wise_f_measure(label)[key], rel=1e-9, abs=1e-12), (metric, label)


def evaluated(metrics, reference: list[dict], system: list[dict]):
    """sed_eval's metrics after evaluating file by file, as sed_eval is used."""
    for name in sorted({r["filename"] for r in reference}):
        metrics.evaluate([r for r in reference if r["filename"] == name], [r for r in system if r["filename"] == name])
    return metrics


def peer(reference: list[dict], system: list[dict], resolution: float):
    return evaluated(sed_eval.sound_event.SegmentBasedMetrics(event_label_list=LABELS, time_resolution=resolution),
                     reference, system)


@pytest.mark.parametrize("resolution", [1.0, 0.1, 0.01])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_segment_based_precision_recall_and_f_equal_sed_eval(tmp_path, resolution, seed):
    reference, system = event_lists(seed)
    results = evalkit.run({
        "name": "sed", "data": {"reference": write(tmp_path / "ref.tsv", reference),
                                "systems": {"s": write(tmp_path / "sys.tsv", system)}},
        "representation": {"name": "segments", "resolution": resolution},
        "averaging": ["micro", "none"], "metrics": ["precision", "recall", "f1"],
    })
    got = {(r.averaging, r.metric, r.class_): r.value for r in results.rows}
    expected = peer(reference, system, resolution)
    assert_f_measures(got, expected)


def test_counts_are_segments_on_the_grid(tmp_path):
    """An event from 0.5 s to 1.5 s covers segments 0 and 1 at 1 s; from 1.0 to 1.0, none; from
    1.5 to 1.5, segment 1 (sed_eval's floor and ceil)."""
    reference = [{"filename": "a.wav", "event_label": "dog", "onset": 0.5, "offset": 1.5},
                 {"filename": "a.wav", "event_label": "dog", "onset": 3.0, "offset": 3.0},
                 {"filename": "a.wav", "event_label": "cat", "onset": 1.5, "offset": 1.5}]
    system = [{"filename": "a.wav", "event_label": "dog", "onset": 1.2, "offset": 1.3},
              {"filename": "a.wav", "event_label": "cat", "onset": 1.0, "offset": 2.0}]
    results = evalkit.run({
        "name": "grid", "data": {"reference": write(tmp_path / "ref.tsv", reference),
                                 "systems": {"s": write(tmp_path / "sys.tsv", system)}},
        "representation": {"name": "segments", "resolution": 1.0}, "averaging": "none",
        "metrics": ["card_ref", "card_pred", "card_inter"],
    })
    got = {(r.metric, r.class_): r.value for r in results.rows}
    assert (got[("card_ref", "dog")], got[("card_pred", "dog")], got[("card_inter", "dog")]) == (2, 1, 1)
    assert (got[("card_ref", "cat")], got[("card_pred", "cat")], got[("card_inter", "cat")]) == (1, 1, 1)


def test_macro_with_undefined_skip_is_sed_evals_class_wise_average(tmp_path):
    """A class the system never outputs has no precision (nor F) in sed_eval, and its class-wise
    average leaves it out; `macro` with `undefined: skip` does the same, where the default macro
    counts it as 0 (the DCASE task 4B baseline's rule)."""
    reference, system = event_lists(3)
    system = [r for r in system if r["event_label"] != "cat"]  # never predicted: P and F undefined
    reference = [r for r in reference if r["event_label"] != "speech"]  # never in the reference: R and F undefined
    results = evalkit.run({
        "name": "macro", "data": {  # every label a class on both sides, as sed_eval's event_label_list
            "reference": {"path": write(tmp_path / "ref.tsv", reference), "loader": {"name": "events", "labels": LABELS}},
            "systems": {"s": {"path": write(tmp_path / "sys.tsv", system), "loader": {"name": "events", "labels": LABELS}}},
        },
        "representation": {"name": "segments", "resolution": 1.0},
        "averaging": [{"name": "macro", "undefined": "skip"}, "macro"], "metrics": ["precision", "recall", "f1"],
    })
    got = {(r.averaging, r.metric): r.value for r in results.rows}
    expected = peer(reference, system, 1.0)
    average = expected.results_class_wise_average_metrics()["f_measure"]
    skip = next(a for a, _ in got if a != "macro")
    for metric, key in (("precision", "precision"), ("recall", "recall"), ("f1", "f_measure")):
        assert got[(skip, metric)] == pytest.approx(average[key], rel=1e-9), metric
    by_class = [expected.class_wise_f_measure(label)["f_measure"] for label in LABELS]
    assert sum(np.isnan(by_class)) == 2  # cat and speech
    assert got[("macro", "f1")] == pytest.approx(np.nansum(by_class) / len(LABELS), rel=1e-9)


@pytest.mark.parametrize("resolution", [1.0, 0.1, 0.01])
@pytest.mark.parametrize("seed", [0, 4])
def test_segment_based_error_rates_equal_sed_eval(tmp_path, resolution, seed):
    """Overall ER, S, D and I count substitutions per segment across classes (sed_eval's
    overall_error_rate); class-wise ER, D and I have none, and no substitution rate is reported per
    class (class_wise_error_rate has none)."""
    reference, system = event_lists(seed)
    results = evalkit.run({
        "name": "er", "data": {"reference": write(tmp_path / "ref.tsv", reference),
                               "systems": {"s": write(tmp_path / "sys.tsv", system)}},
        "representation": {"name": "segments", "resolution": resolution}, "averaging": ["micro", "none"],
        "metrics": ["error_rate", "substitution_rate", "deletion_rate", "insertion_rate"],
    })
    got = {(r.averaging, r.metric, r.class_): r.value for r in results.rows}
    expected = peer(reference, system, resolution)
    overall = expected.overall_error_rate()
    assert overall["substitution_rate"] > 0  # the data has substitutions to count
    for metric in ("error_rate", "substitution_rate", "deletion_rate", "insertion_rate"):
        assert got[("micro", metric, None)] == pytest.approx(overall[metric], rel=1e-9, abs=1e-12), metric
    for label in LABELS:
        class_wise = expected.class_wise_error_rate(label)
        for metric in ("error_rate", "deletion_rate", "insertion_rate"):
            assert got[("none", metric, label)] == pytest.approx(class_wise[metric], rel=1e-9, abs=1e-12), (metric, label)
        assert ("none", "substitution_rate", label) not in got  # sed_eval's class-wise rates have none


def event_peer(reference: list[dict], system: list[dict], **options):
    return evaluated(sed_eval.sound_event.EventBasedMetrics(event_label_list=LABELS, **options), reference, system)


@pytest.mark.parametrize("options", [
    {"t_collar": 0.2, "percentage_of_length": 0.5},
    {"t_collar": 0.5, "percentage_of_length": 0.2, "evaluate_offset": False},
    {"t_collar": 1.0, "percentage_of_length": 0.0},
])
@pytest.mark.parametrize("seed", [0, 5])
def test_event_based_counts_equal_sed_eval(tmp_path, options, seed):
    """Event-based P, R, F (overall and per class) and the class-wise error rates equal
    sed_eval's EventBasedMetrics: events matched one to one when labels agree and onsets (and
    offsets) are within the collars, overlapping events counted as listed."""
    reference, system = event_lists(seed)
    results = evalkit.run({
        "name": "events", "data": {"reference": write(tmp_path / "ref.tsv", reference),
                                   "systems": {"s": write(tmp_path / "sys.tsv", system)}},
        "representation": {"name": "event_based", **options}, "averaging": ["micro", "none"],
        "metrics": ["precision", "recall", "f1", "error_rate", "deletion_rate", "insertion_rate"],
    })
    got = {(r.averaging, r.metric, r.class_): r.value for r in results.rows}
    expected = event_peer(reference, system, **options)
    assert expected.overall["Ntp"] > 0
    assert_f_measures(got, expected)
    for label in LABELS:
        class_wise = expected.class_wise_error_rate(label)
        for metric in ("error_rate", "deletion_rate", "insertion_rate"):
            assert got[("none", metric, label)] == pytest.approx(class_wise[metric], rel=1e-9, abs=1e-12), (metric, label)
    overall_er = expected.overall_error_rate()
    assert got[("micro", "error_rate", None)] == pytest.approx(overall_er["error_rate"], rel=1e-9, abs=1e-12)


def test_the_bundled_sound_events_config_equals_sed_eval(monkeypatch):
    """configs/sound_events.yaml on the bundled event lists: every micro value equals sed_eval's
    overall one (segment-based at 1 s; event-based with and without offsets)."""
    from pathlib import Path

    configs = Path(__file__).resolve().parent.parent / "configs"
    monkeypatch.chdir(configs)
    results = evalkit.run(configs / "sound_events.yaml")
    got = {(r.system, r.representation, r.metric): r.value for r in results.rows if r.averaging == "micro"}

    def read(name: str) -> list[dict]:  # rows of four fields; a header (onset not a number) skipped
        lines = (configs / "data" / "events" / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
        rows = [line.split("\t") for line in lines if line.count("\t") == 3]
        return [{"filename": f, "onset": float(a), "offset": float(b), "event_label": c}
                for f, a, b, c in rows if a.replace(".", "", 1).isdigit()]

    reference = read("reference")
    labels = sorted({r["event_label"] for r in reference})
    peers = {
        "segments(resolution=1.0)": lambda: sed_eval.sound_event.SegmentBasedMetrics(labels, time_resolution=1.0),
        "event_based(t_collar=0.2, percentage_of_length=0.5)":
            lambda: sed_eval.sound_event.EventBasedMetrics(labels, t_collar=0.2, percentage_of_length=0.5),
        "event_based(t_collar=0.2, evaluate_offset=False)":
            lambda: sed_eval.sound_event.EventBasedMetrics(labels, t_collar=0.2, evaluate_offset=False),
    }
    for system in ("good", "poor"):
        estimated = read(system)
        for representation, make in peers.items():
            expected = evaluated(make(), reference, estimated)
            f, er = expected.overall_f_measure(), expected.overall_error_rate()
            for metric, value in (("precision", f["precision"]), ("recall", f["recall"]), ("f1", f["f_measure"]),
                                  ("error_rate", er["error_rate"]), ("substitution_rate", er["substitution_rate"]),
                                  ("deletion_rate", er["deletion_rate"]), ("insertion_rate", er["insertion_rate"])):
                assert got[(system, representation, metric)] == pytest.approx(value, rel=1e-9, abs=1e-12), \
                    (system, representation, metric)


@pytest.mark.parametrize("kind", ["segment", "event"])
def test_class_wise_average_error_rates_equal_sed_eval_with_no_substitution_rate(tmp_path, kind):
    """sed_eval's class-wise average (``results_class_wise_average_metrics()["error_rate"]``) is the
    mean of the classes' ER, D and I, and has no substitution rate: `macro` with `undefined: skip`
    gives the same three, and no substitution_rate row (the default macro neither), while micro has
    one. (A class never in the reference is left out here: sed_eval divides its I by machine eps,
    an ER of about 1e16 that its mean then carries; evalkit's skip leaves the undefined rate out.)"""
    reference, system = event_lists(1)
    system = [r for r in system if r["event_label"] != "cat"]  # never predicted: ER 1 (all deleted), in both
    representation = ({"name": "segments", "resolution": 1.0} if kind == "segment"
                      else {"name": "event_based", "t_collar": 0.2, "percentage_of_length": 0.5})
    labelled = {"name": "events", "labels": LABELS}
    results = evalkit.run({
        "name": "class-wise", "data": {"reference": {"path": write(tmp_path / "ref.tsv", reference), "loader": labelled},
                                       "systems": {"s": {"path": write(tmp_path / "sys.tsv", system), "loader": labelled}}},
        "representation": representation, "averaging": ["micro", {"name": "macro", "undefined": "skip"}, "macro"],
        "metrics": ["error_rate", "substitution_rate", "deletion_rate", "insertion_rate"],
    })
    got = {(r.averaging, r.metric): r.value for r in results.rows if r.class_ is None}
    expected = (peer(reference, system, 1.0) if kind == "segment"
                else event_peer(reference, system, t_collar=0.2, percentage_of_length=0.5))
    average = expected.results_class_wise_average_metrics()["error_rate"]
    assert set(average) == {"error_rate", "deletion_rate", "insertion_rate"}  # the peer's: no substitution rate
    skip = "macro(undefined=skip)"
    for metric in ("error_rate", "deletion_rate", "insertion_rate"):
        assert got[(skip, metric)] == pytest.approx(average[metric], rel=1e-9), metric
    assert {a for a, m in got if m == "substitution_rate"} == {"micro"}
