"""Per-file results (issue 26, item 3): with ``per_sample: true`` each sample's counts and set
metrics, per system and combination, equal the peers' on that sample alone (sed_eval on one file,
scikit-learn on one row); counts add up to the micro counts exactly, and the mean over samples is
the ``samples`` average."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from in_process import evalkit_cli
from sklearn.metrics import f1_score, precision_score, recall_score
from test_sed_eval_parity import LABELS, event_lists, write

import evalkit
from evalkit import budget
from evalkit.api import plan
from evalkit.errors import ConfigError
from evalkit.results import COUNTS, ERROR_COUNTS, SAMPLE_COLUMNS, Results

with warnings.catch_warnings():  # dcase_util imports pkg_resources, which warns of its removal
    warnings.simplefilter("ignore")
    import sed_eval


def events_run(tmp_path, representation, metrics, **extra) -> tuple[Results, list[dict], list[dict]]:
    reference, system = event_lists(7, files=6)
    results = evalkit.run({
        "name": "files", "data": {"reference": write(tmp_path / "ref.tsv", reference),
                                  "systems": {"s": write(tmp_path / "sys.tsv", system)}},
        "representation": representation, "averaging": ["micro", "samples"], "metrics": metrics, "per_sample": True,
        **extra,
    })
    return results, reference, system


def by_file(results: Results, representation: str | None = None) -> dict[str, dict[str, float]]:
    """{metric: {sample: value}} of the one system (and one representation, when named)."""
    table = results.per_sample()
    if representation is not None:
        table = table[table.representation == representation]
    return {metric: dict(zip(part["sample"], part["value"])) for metric, part in table.groupby("metric", sort=False)}


def alone(metrics, reference: list[dict], system: list[dict], name: str):
    """sed_eval's metrics of one file evaluated alone."""
    metrics.evaluate([r for r in reference if r["filename"] == name], [r for r in system if r["filename"] == name])
    return metrics


@pytest.mark.parametrize("resolution", [1.0, 0.1])
def test_segment_based_counts_and_values_of_each_file_are_sed_evals_of_that_file(tmp_path, resolution):
    metrics = ["precision", "recall", "f1", "error_rate"]
    results, reference, system = events_run(tmp_path, {"name": "segments", "resolution": resolution}, metrics)
    got = by_file(results)
    files = sorted({r["filename"] for r in reference})
    assert set(got) == {*COUNTS, *ERROR_COUNTS, *metrics} and all(sorted(v) == files for v in got.values())
    for name in files:
        peer = alone(sed_eval.sound_event.SegmentBasedMetrics(event_label_list=LABELS, time_resolution=resolution),
                     reference, system, name)
        overall = peer.overall
        # Counts of segments: whole numbers, summed exactly.
        for ours, theirs in (("n_ref", "Nref"), ("n_sys", "Nsys"), ("tp", "Ntp"), ("fn", "Nfn"), ("fp", "Nfp"),
                             ("substitutions", "S"), ("deletions", "D"), ("insertions", "I")):
            assert got[ours][name] == overall[theirs], (name, ours)
        f_measure, error = peer.overall_f_measure(), peer.overall_error_rate()
        for ours, theirs in (("precision", f_measure["precision"]), ("recall", f_measure["recall"]),
                             ("f1", f_measure["f_measure"]), ("error_rate", error["error_rate"])):
            assert got[ours][name] == pytest.approx(theirs, rel=1e-12), (name, ours)  # one ratio, rounded once each


def test_event_based_counts_of_each_file_are_sed_evals_of_that_file(tmp_path):
    options = {"t_collar": 0.2, "percentage_of_length": 0.5}
    results, reference, system = events_run(tmp_path, {"name": "event_based", **options}, ["f1", "error_rate"])
    got = by_file(results)
    for name in sorted({r["filename"] for r in reference}):
        overall = alone(sed_eval.sound_event.EventBasedMetrics(event_label_list=LABELS, **options),
                        reference, system, name).overall
        # sed_eval's Nfn and Nfp are the misses and false alarms left after its substitutions.
        assert (got["n_ref"][name], got["n_sys"][name], got["tp"][name]) == (overall["Nref"], overall["Nsys"], overall["Ntp"])
        assert got["substitutions"][name] == overall["Nsubs"], name
        assert (got["deletions"][name], got["insertions"][name]) == (overall["Nfn"], overall["Nfp"]), name


def test_counts_add_up_to_the_micro_counts_and_values_average_to_the_samples_average(tmp_path):
    metrics = ["precision", "recall", "f1", "error_rate", "card_ref", "card_pred", "card_inter"]
    results, _, _ = events_run(tmp_path, [{"name": "segments", "resolution": 1.0}, "segments"], metrics)
    for representation in ("segments(resolution=1.0)", "segments"):
        got = by_file(results, representation)
        rows = {(r.averaging, r.metric): r.value for r in results.rows if r.representation == representation}
        for count, metric in (("n_ref", "card_ref"), ("n_sys", "card_pred"), ("tp", "card_inter")):
            total = sum(got[count].values())
            if representation == "segments(resolution=1.0)":  # whole numbers of segments: every sum is exact
                assert total == rows[("micro", metric)]
            else:  # lengths in seconds, summed in another order (by file, not by class)
                assert total == pytest.approx(rows[("micro", metric)], rel=1e-12)
        for metric in ("precision", "recall", "f1", "error_rate"):
            values = list(got[metric].values())
            # The same per-file terms the samples average adds, added in another order.
            assert np.mean(values) == pytest.approx(rows[("samples", metric)], rel=1e-12), (representation, metric)


def test_crisp_values_of_each_sample_are_scikit_learns_on_that_row():
    rng = np.random.default_rng(3)
    reference, prediction = rng.random((40, 5)) < 0.4, rng.random((40, 5)) < 0.4
    reference[0], prediction[1] = False, False  # a sample without labels, one without predictions: 0/0
    results = evalkit.run({
        "data": {"reference": reference.astype(float).tolist(), "systems": {"s": prediction.astype(float).tolist()}},
        "representation": "crisp", "averaging": "samples", "metrics": ["precision", "recall", "f1"], "per_sample": True,
    })
    got = by_file(results)
    assert list(got["f1"]) == [str(i) for i in range(40)]  # samples without ids: named by their row
    for i in range(40):
        for metric, peer in (("precision", precision_score), ("recall", recall_score), ("f1", f1_score)):
            expected = peer(reference[i : i + 1], prediction[i : i + 1], average="samples", zero_division=0)
            assert got[metric][str(i)] == pytest.approx(expected, rel=1e-12), (i, metric)
        assert got["tp"][str(i)] == np.sum(reference[i] & prediction[i])  # counts: exact
    samples = {r.metric: r.value for r in results.rows}
    assert np.mean(list(got["f1"].values())) == pytest.approx(samples["f1"], rel=1e-12)


def test_an_undefined_value_is_nan_and_left_out_of_the_mean_as_samples_leaves_it_out():
    results = evalkit.run({
        "data": {"reference": [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]], "systems": {"s": [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]}},
        "representation": "crisp", "averaging": "samples", "metrics": ["precision"], "zero_division": "nan",
        "per_sample": True,
    })
    values = by_file(results)["precision"]
    assert math.isnan(values["0"]) and (values["1"], values["2"]) == (1.0, 1.0)
    assert results.rows[0].value == 1.0  # the mean of the defined values, as scikit-learn's nan convention


def test_the_table_is_tidy_with_the_runs_labels_and_typed_columns():
    results = evalkit.run({
        "data": {"reference": {"ids": ["a", "b"], "values": [[1.0, 0.0], [0.5, 0.5]]},
                 "systems": {"x": {"ids": ["a", "b"], "values": [[0.8, 0.1], [0.5, 0.2]]}}},
        "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"], "averaging": "micro",
        "metrics": ["f1"], "per_sample": True,
    })
    table = results.per_sample()
    assert list(table.columns) == list(SAMPLE_COLUMNS)
    assert table["value"].dtype == np.float64 and table["sweep_value"].dtype == np.float64
    combos = table[["representation", "tnorm"]].drop_duplicates().fillna("—").values.tolist()
    assert combos == [["fuzzy", "minimum"], ["fuzzy", "product"], ["crisp", "—"]]  # crisp uses no T-norm: NaN
    assert len(table) == 3 * 2 * (len(COUNTS) + 1)  # combinations x samples x (counts and f1)
    assert set(table["sample"]) == {"a", "b"} and table["similarity"].isna().all()
    assert f"  per-sample values: {len(table):,} (per_sample())" in repr(results).splitlines()


def test_results_without_per_sample_values_say_how_to_get_them():
    results = evalkit.run({"data": {"reference": [[1.0]], "systems": {"s": [[1.0]]}}})
    assert results.sample_values == []
    with pytest.raises(ConfigError, match=r"per_sample: true"):
        results.per_sample()


@pytest.mark.parametrize(("change", "message"), [
    ({"data": {"stream": True}}, r"a streamed run holds bounded sums.*leave out `per_sample: true`"),
    ({"engine": {"name": "dask"}}, r"a Dask run holds bounded sums, while per-sample values grow with the samples"),
    ({"metrics": ["kld"]}, r"per-sample values are those of set metrics .* this run has none \(kld read the data as a whole\)"),
    ({"data": {"systems": {"s": {"runs": ["b.csv", "b.csv"]}}}}, r"system 's' has 2 runs"),
])
def test_runs_that_cannot_keep_them_are_refused_at_the_key(tmp_path, change, message):
    (tmp_path / "r.csv").write_text("id,a\nx,1\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("id,a\nx,1\n", encoding="utf-8")
    config = {"data": {"reference": "r.csv", "systems": {"s": "b.csv"}}, "per_sample": True}
    for key, value in change.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    path = tmp_path / "run.yaml"
    text = yaml.safe_dump(config)
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("per_sample: true") + 1
    with pytest.raises(ConfigError, match=f"run.yaml:{line}:13: {message}"):  # the key's line and column
        plan(path)


def test_they_read_back_from_json():
    results = evalkit.run({
        "data": {"reference": {"ids": ["a", "b"], "values": [[0.0, 0.0], [0.5, 0.5]]},
                 "systems": {"x": {"ids": ["a", "b"], "values": [[0.0, 0.0], [0.5, 0.2]]}}},
        "averaging": "samples", "metrics": ["precision", "error_rate"], "zero_division": "nan", "per_sample": True,
    })
    loaded = Results.from_json(results.to_json())
    assert loaded.to_json() == results.to_json()
    assert loaded.per_sample().equals(results.per_sample())  # NaN where undefined, on both sides


def test_validate_says_how_many_values_the_run_keeps_and_a_run_too_large_is_refused_at_the_key(tmp_path, monkeypatch):
    (tmp_path / "r.csv").write_text("id,a,b\n" + "".join(f"x{i},1,0\n" for i in range(40)), encoding="utf-8")
    config = {"data": {"reference": "r.csv", "systems": {"s": "r.csv", "t": "r.csv"}},
              "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"],
              "metrics": ["f1", "error_rate"], "per_sample": True}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    done = evalkit_cli("validate", path, check=True)
    # 41 lines (an upper bound on the samples, as the plan counts them) x 2 systems x 3 combinations
    # (fuzzy with two T-norms, crisp) x (5 counts, 3 error counts, 2 metrics)
    values = 41 * 2 * 3 * (len(COUNTS) + len(ERROR_COUNTS) + 2)
    assert f"per_sample: {values:,} per-sample values (at most 41 samples x 2 systems x 3 combinations" in done.stdout
    line = yaml.safe_dump(config).splitlines().index("per_sample: true") + 1
    monkeypatch.setattr(budget, "available_memory", lambda: values * budget.SAMPLE_VALUE_BYTES - 1)  # a machine 1 byte short
    with pytest.raises(ConfigError, match=rf"run.yaml:{line}:13: this run would need about .* per-sample values.*"
                                          r"lower the samples, or leave out `per_sample: true`"):
        plan(path)


def test_the_worst_samples_are_ranked_by_the_first_metric_and_keep_their_events(tmp_path):
    reference = [("a.wav", 0.0, 2.0, "dog"), ("a.wav", 3.0, 4.0, "cat"), ("b.wav", 1.0, 2.0, "dog"),
                 ("c.wav", 0.5, 1.5, "cat"), ("d.wav", 0.0, 1.0, "dog")]
    system = [("a.wav", 0.0, 1.0, "dog"), ("b.wav", 1.0, 2.0, "dog"), ("c.wav", 0.0, 3.0, "dog"), ("e.wav", 0.0, 0.0, "dog")]

    def tsv(name, rows):
        (tmp_path / name).write_text("filename\tonset\toffset\tevent_label\n"
                                     + "".join(f"{f}\t{a}\t{b}\t{c}\n" for f, a, b, c in rows), encoding="utf-8")
        return str(tmp_path / name)

    for metrics in (["f1", "error_rate"], ["error_rate", "f1"]):
        results = evalkit.run({
            "data": {"reference": tsv("ref.tsv", reference), "systems": {"s": tsv("sys.tsv", system)}, "missing": "empty"},
            "representation": "segments", "averaging": "micro", "metrics": metrics, "per_sample": True,
        })
        table = results.per_sample()
        ranked = table[table.metric == metrics[0]].set_index("sample")["value"]
        counts = table[table.metric.isin(["n_ref", "n_sys"])].groupby("sample")["value"].sum()
        ranked = ranked[counts[ranked.index] > 0]  # e.wav: a zero-length event, nothing on either side
        ranked = ranked.sort_values(ascending=metrics[0] == "f1", kind="stable")  # an error rate: highest first
        (block, worst), = results.worst_samples().values()
        assert block.metric == metrics[0] and [s for s, _ in worst] == list(ranked.index[:5])
        assert [v for _, v in worst] == list(ranked.values[:5])
        assert "e.wav" not in ranked.index and len(worst) == 4
        # Each worst file's events, as the event lists give them (one event per class here: nothing merged).
        for timeline, (sample, _) in zip(results.timelines, worst, strict=True):
            assert timeline.sample == sample and timeline.system == "s"
            for side, rows in ((timeline.reference, reference), (timeline.prediction, system)):
                assert sorted(side) == sorted((c, a, b) for f, a, b, c in rows if f == sample)
        assert Results.from_json(results.to_json()).timelines == results.timelines
        for part, data in results.to_parquet().items():
            (tmp_path / f"r{part}.parquet").write_bytes(data)
        assert Results.from_parquet(tmp_path / "r.parquet").timelines == results.timelines


def test_data_without_intervals_has_worst_samples_but_no_timelines():
    results = evalkit.run({
        "data": {"reference": [[1.0, 0.0], [0.0, 1.0]], "systems": {"s": [[1.0, 0.0], [1.0, 0.0]]}},
        "representation": "crisp", "averaging": "micro", "metrics": ["f1"], "per_sample": True,
    })
    (_, worst), = results.worst_samples().values()
    assert worst == [("1", 0.0), ("0", 1.0)] and results.timelines == []


def test_each_sweep_value_has_its_values_and_weights_make_the_samples_average_their_weighted_mean():
    rng = np.random.default_rng(5)
    reference, prediction = rng.random((30, 4)).round(2), rng.random((30, 4)).round(2)
    weights = rng.integers(1, 5, 30).astype(float)
    results = evalkit.run({
        "data": {"reference": reference.tolist(), "systems": {"s": prediction.tolist()}, "weights": weights.tolist()},
        "representation": "fuzzy", "averaging": "samples", "metrics": ["f1"], "per_sample": True,
        "sweep": {"vary": "offset", "values": [-0.1, 0.0, 0.2]},
    })
    table = results.per_sample()
    f1 = table[table.metric == "f1"]
    assert sorted(f1.sweep_value.unique()) == [-0.1, 0.0, 0.2] and set(f1.sweep) == {"offset"}
    for row in results.rows:
        values = f1[f1.sweep_value == row.sweep_value].value.to_numpy()
        # A weight of k counts a sample k times: the samples average is the weighted mean (sums of 30 terms).
        assert row.value == pytest.approx(weights @ values / weights.sum(), rel=1e-12), row.sweep_value


def test_a_system_without_events_leaves_the_other_systems_timelines():
    """A score folder beside an event list: the event list's worst files keep their timelines."""
    desed = Path(__file__).resolve().parent.parent / "configs" / "data" / "desed"

    def timelined(systems: dict) -> set:
        results = evalkit.run({"name": "t", "data": {"reference": str(desed / "reference.tsv"), "systems": systems},
                               "representation": {"name": "segments", "resolution": 1.0, "threshold": 0.5},
                               "averaging": "samples", "metrics": ["f1"], "per_sample": True})
        return {t.system for t in results.timelines}

    events = str(desed / "reference.tsv")
    assert timelined({"ev": events}) == {"ev"}
    assert timelined({"ev": events, "sc": str(desed / "baseline")}) == {"ev"}
