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


@pytest.mark.parametrize("engine", [{}, {"data": {"stream": True}}, {"engine": {"name": "dask"}}])
def test_validate_says_how_many_values_the_run_keeps_and_a_run_too_large_is_refused_at_the_key(tmp_path, monkeypatch, engine):
    """On every engine: a streamed or Dask run keeps its per-sample values as an in-memory run does."""
    (tmp_path / "r.csv").write_text("id,a,b\n" + "".join(f"x{i},1,0\n" for i in range(40)), encoding="utf-8")
    config = {"data": {"reference": "r.csv", "systems": {"s": "r.csv", "t": "r.csv"}, **engine.get("data", {})},
              "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"],
              "metrics": ["f1", "error_rate"], "per_sample": True, **({"engine": engine["engine"]} if "engine" in engine else {})}
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


# ------------------------------------------------------------------ streamed and Dask runs


EVENT_SETTINGS = {"representation": [{"name": "segments", "resolution": 1.0}, {"name": "event_based", "t_collar": 0.2}],
                  "averaging": ["micro", "samples"], "metrics": ["f1", "error_rate"], "per_sample": True}


def event_section(tmp_path) -> dict:
    """Reference and system event lists of 12 files, listed in file order (as a stream needs), a
    file only the system lists (missing: empty: last, where an in-memory run adds it too) and one
    only the reference lists."""
    reference, system = event_lists(11, files=12)
    reference = [r for r in reference if r["filename"] != "f11.wav"]
    system = [r for r in system if r["filename"] != "f08.wav"]
    return {"reference": write(tmp_path / "ref.tsv", reference), "systems": {"s": write(tmp_path / "sys.tsv", system)},
            "missing": "empty"}


@pytest.mark.parametrize("item_rows", [4_096, 5, 1])
def test_a_streamed_run_of_event_lists_keeps_each_files_values_and_the_worst_files_events(tmp_path, monkeypatch, item_rows):
    """Files read ``item_rows`` at a time: one chunk (the in-memory run's), or many."""
    from evalkit import streaming

    monkeypatch.setattr(streaming, "ITEM_ROWS", item_rows)
    section = event_section(tmp_path)
    local = evalkit.run({"data": section, **EVENT_SETTINGS})
    streamed = evalkit.run({"data": {**section, "stream": True}, **EVENT_SETTINGS})
    assert streamed.notes[-1].startswith(f"streamed: 11 samples read {item_rows:,} rows at a time")  # the reference's
    # Counts of segments and of events are whole numbers and every value a ratio of them: the
    # same numbers bit for bit, in the same order (by id: the files are sorted).
    assert streamed.per_sample().equals(local.per_sample())
    assert list(streamed.per_sample()["sample"].unique()) == [f"f{i:02d}.wav" for i in range(12)]
    assert len(local.per_sample()) == 12 * 2 * (len(COUNTS) + len(ERROR_COUNTS) + 2)
    # The worst files, drawn from each chunk's worst, are the in-memory run's, events and all.
    assert streamed.timelines == local.timelines and len(local.timelines) == 5
    if item_rows == 1:  # and the HTML report's timeline figure is the in-memory run's
        from evalkit_reports import plots

        figures = [[(p.name, p.alt) for p in plots.gallery(r).plots if p.kind == "timeline"] for r in (streamed, local)]
        assert figures[0] == figures[1] and [name for name, _ in figures[0]] == ["timeline-s"]
    table = streamed.per_sample()
    for row in (r for r in streamed.rows if r.averaging == "samples"):
        mine = table[(table.representation == row.representation) & (table.metric == row.metric)]["value"]
        assert mine.mean() == pytest.approx(row.value, rel=1e-12), row  # the same 12 terms, summed in another order


def matrices(tmp_path, n: int = 1_000, shuffled: bool = False) -> dict:
    """Membership matrices with ids, sorted (a stream's order) or not; some rows empty on both sides."""
    rng = np.random.default_rng(8)
    ids = [f"clip{i:05d}" for i in (rng.permutation(n) if shuffled else range(n))]
    reference = (rng.random((n, 4)) < 0.4) * rng.random((n, 4)).round(2)
    prediction = rng.random((n, 4)).round(3) * (rng.random((n, 1)) < 0.9)
    paths = {}
    for name, values in (("ref", reference), ("sys", prediction)):
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_text("id,a,b,c,d\n" + "".join(f"{i},{','.join(map(str, row))}\n" for i, row in zip(ids, values)),
                               encoding="utf-8")
    return {"reference": str(paths["ref"]), "systems": {"s": str(paths["sys"])}}


MATRIX_SETTINGS = {"representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"], "averaging": ["samples"],
                   "metrics": ["precision", "f1", "jaccard"], "per_sample": True}


def test_a_streamed_run_of_membership_matrices_keeps_each_samples_values_bit_for_bit(tmp_path, monkeypatch):
    """Chunks of 256 rows in memory and in the stream: the same chunks, so the same sums."""
    from evalkit import table

    monkeypatch.setattr(table, "MAX_CHUNK_ROWS", 256)
    section = matrices(tmp_path)
    local = evalkit.run({"data": section, **MATRIX_SETTINGS})
    streamed = evalkit.run({"data": {**section, "stream": True}, **MATRIX_SETTINGS})
    assert streamed.notes[-1].startswith("streamed: 1,000 samples read 256 rows at a time")
    assert streamed.per_sample().equals(local.per_sample())
    assert streamed.timelines == local.timelines == []  # no events to draw


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as local:
        yield local.scheduler_address


def dask_run(cluster, config: dict, partition_rows: int) -> Results:
    return evalkit.run({**config, "engine": {"name": "dask", "address": cluster, "partition_rows": partition_rows}})


@pytest.mark.slow
def test_a_dask_run_keeps_each_files_values_whatever_its_partitions(cluster, tmp_path):
    """Event lists grouped by a hash of the file name (2 or 5 groups), and membership matrices
    in blocks, grouped by id or matched by position: each partition's values travel with its
    sums and are concatenated in the tree's order, then sorted by id."""
    section = event_section(tmp_path)
    local = evalkit.run({"data": section, **EVENT_SETTINGS})
    for rows in (6, 3):
        dask = dask_run(cluster, {"data": section, **EVENT_SETTINGS}, rows)
        # The file only the system lists is in a group of its own at 3 and 6 rows: its sample
        # counts (it was dropped, with its false alarms, before the fix of Partial.__add__).
        assert dask.notes[0] == local.notes[0] == "1 sample(s) that only systems list are empty in the reference (missing: empty)"
        for got, want in zip(dask.rows, local.rows, strict=True):
            assert got.measure == want.measure and got.value == pytest.approx(want.value, rel=1e-12)  # summed in a tree
        # Whole-number counts and their ratios: bit for bit, in id order.
        assert dask.per_sample().equals(local.per_sample()), rows
        assert dask.timelines == local.timelines and len(dask.timelines) == 5
    matrix = matrices(tmp_path, 600, shuffled=True)
    local = evalkit.run({"data": matrix, **MATRIX_SETTINGS}).per_sample()
    partitioned = [dask_run(cluster, {"data": matrix, **MATRIX_SETTINGS}, rows).per_sample() for rows in (600, 77)]
    assert partitioned[0].equals(partitioned[1])  # the partitioning changes nothing
    got = partitioned[0]
    assert list(got["sample"].unique()) == sorted(local["sample"].unique())  # by id, where the file is not
    got, local = (table.sort_values(list(SAMPLE_COLUMNS[1:-1]) + ["sample"], kind="stable", ignore_index=True)
                  for table in (got, local))  # each block by id
    assert got.drop(columns="value").equals(local.drop(columns="value"))
    # A sample's sum over its classes is a BLAS product, which the workers run on one thread and
    # this process on several: its rounding may differ in the last bits.
    np.testing.assert_allclose(got["value"], local["value"], rtol=1e-12, atol=0)
    rows_only = {"reference": [[float(v) for v in r] for r in np.eye(4)[[0, 1, 2, 3, 0]]],
                 "systems": {"s": [[0.5, 0.0, 0.0, 1.0]] * 5}}
    in_memory = evalkit.run({"data": rows_only, **MATRIX_SETTINGS}).per_sample()
    by_position = dask_run(cluster, {"data": rows_only, **MATRIX_SETTINGS}, 2).per_sample()
    assert list(by_position["sample"].unique()) == ["0", "1", "2", "3", "4"]  # without ids: rows, in order
    assert by_position.equals(in_memory)  # exact values: 0, 0.5, 1 and their ratios
