"""The statistics and sweep sections of a run: bootstrap intervals (checked against an
independent resampling), jackknife across runs, paired tests, rank agreement, sweeps,
provenance and reproducibility."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

import evalkit
from evalkit import stats
from evalkit.errors import ConfigError, DataError

RNG = np.random.default_rng(11)
REF = RNG.random((120, 4))
GOOD = np.clip(REF + RNG.normal(0, 0.15, REF.shape), 0, 1)
BAD = np.clip(REF + RNG.normal(0, 0.45, REF.shape), 0, 1)


def run(**config):
    config.setdefault("data", {"reference": REF, "systems": {"good": GOOD, "bad": BAD}})
    return evalkit.run(config, write_reports=False)


def value(results, **where):
    (row,) = [r for r in results.rows if all(getattr(r, k) == v for k, v in where.items())]
    return row


# ------------------------------------------------------------------------ bootstrap intervals


def independent_replicates(reference, prediction, resamples, seed, statistic, keyed=True):
    """The bootstrap replicates of ``statistic`` computed here from resampled rows, with the
    same resample counts evalkit draws: keyed Poisson counts of the rows' positions (the data
    has no ids), or with ``keyed=False`` multinomial counts (stats.bootstrap_weights)."""
    if keyed:
        weights = stats.poisson_weights(stats.sample_keys(None, len(reference)), resamples, seed)
    else:
        weights = stats.bootstrap_weights(len(reference), resamples, np.random.default_rng(seed))
    out = []
    for w in weights:
        rows = np.repeat(np.arange(len(w)), w)
        out.append(statistic(reference[rows], prediction[rows]))
    return np.array(out)


def micro_f1(r, p):
    return 2 * np.minimum(r, p).sum() / (r.sum() + p.sum())


def samples_precision(r, p):
    return np.mean(np.minimum(r, p).sum(axis=1) / p.sum(axis=1))


def macro_recall_per_class(r, p):
    return np.minimum(r, p).sum(axis=0) / r.sum(axis=0)


@pytest.mark.parametrize("keyed", [True, False])
@pytest.mark.parametrize(
    ("averaging", "metric", "statistic"),
    [("micro", "f1", micro_f1), ("samples", "precision", samples_precision)],
)
def test_percentile_intervals_equal_an_independent_bootstrap(averaging, metric, statistic, keyed):
    results = run(
        averaging=averaging, metrics=[metric],
        statistics={"bootstrap": {"resamples": 400, "seed": 5, "method": "percentile", "keyed": keyed}},
    )
    row = value(results, system="good", averaging=averaging, metric=metric)
    replicates = independent_replicates(REF, GOOD, 400, 5, statistic, keyed)
    assert row.value == pytest.approx(statistic(REF, GOOD), abs=1e-12)
    assert (row.ci_low, row.ci_high) == pytest.approx(tuple(np.percentile(replicates, [2.5, 97.5])), abs=1e-12)
    assert row.ci_low < row.value < row.ci_high


def test_per_class_values_get_intervals_too():
    results = run(
        averaging="none", metrics=["recall"], statistics={"bootstrap": {"resamples": 300, "seed": 3, "method": "percentile"}}
    )
    rows = [r for r in results.rows if r.system == "good"]
    replicates = independent_replicates(REF, GOOD, 300, 3, macro_recall_per_class)
    low, high = np.percentile(replicates, [2.5, 97.5], axis=0)
    np.testing.assert_allclose([r.ci_low for r in rows], low, rtol=0, atol=1e-12)
    np.testing.assert_allclose([r.ci_high for r in rows], high, rtol=0, atol=1e-12)


def test_data_metrics_are_resampled_like_set_metrics():
    results = run(metrics=["kld"], statistics={"bootstrap": {"resamples": 200, "seed": 8, "method": "percentile"}})
    row = value(results, system="bad", metric="kld")

    def kld(r, p):
        y, q = np.clip(r, 1e-7, 1 - 1e-7), np.clip(p, 1e-7, 1 - 1e-7)
        return np.mean(y * np.log(y / q) + (1 - y) * np.log((1 - y) / (1 - q)))

    replicates = independent_replicates(REF, BAD, 200, 8, kld)
    assert (row.ci_low, row.ci_high) == pytest.approx(tuple(np.percentile(replicates, [2.5, 97.5])), rel=1e-12)


def test_bca_intervals_are_reproducible_and_contain_the_estimate():
    config = {"averaging": ["micro", "macro"], "statistics": {"bootstrap": {"resamples": 500, "method": "bca", "seed": 1}}}
    first, second = run(**config), run(**config)
    assert first.rows == second.rows
    for r in first.rows:
        assert r.ci_low <= r.value <= r.ci_high and r.ci_low < r.ci_high
    narrow = run(averaging="micro", statistics={"level": 0.5, "bootstrap": {"resamples": 500, "method": "bca", "seed": 1}})
    wide = value(first, system="good", averaging="micro", metric="f1")
    half = value(narrow, system="good", averaging="micro", metric="f1")
    assert wide.ci_low < half.ci_low < half.ci_high < wide.ci_high


def independent_bca(reference, prediction, keys, groups):
    """BCa bounds of micro F1 computed here: Poisson counts of ``keys`` (seed 5, 400 resamples)
    and the jackknife leaving out each of ``groups`` (index arrays) in turn."""
    weights = stats.poisson_weights(keys, 400, 5)
    replicates = [micro_f1(np.repeat(reference, w, axis=0), np.repeat(prediction, w, axis=0)) for w in weights]
    jackknife = [micro_f1(np.delete(reference, g, axis=0), np.delete(prediction, g, axis=0)) for g in groups]
    return stats.bca_interval(np.array(replicates), micro_f1(reference, prediction), np.array(jackknife), 0.95)


@pytest.mark.parametrize("n", [40, 120])
def test_keyed_bca_without_ids_equals_an_independent_bca_over_strided_groups(n):
    """Without ids a sample's key is its position: its Poisson counts are drawn from it, and its
    jackknife group is its position modulo 100, the strided groups of stats.jackknife_groups
    (leave-one-out under 100 samples: the groups no sample fell in are left out)."""
    ref, good = REF[:n], GOOD[:n]
    results = run(data={"reference": ref, "systems": {"good": good}}, averaging="micro", metrics=["f1"],
                  statistics={"bootstrap": {"resamples": 400, "seed": 5}})
    (row,) = results.rows
    low, high = independent_bca(ref, good, stats.sample_keys(None, n), stats.jackknife_groups(n))
    assert (row.ci_low, row.ci_high) == pytest.approx((float(low), float(high)), abs=1e-12)


def test_keyed_bca_with_ids_groups_samples_by_a_hash_of_their_id():
    """With ids the jackknife groups are the ids' keys modulo 100: with 120 samples some groups
    are empty (left out) and others hold several samples; the bounds equal a BCa computed here
    over exactly those groups, and the run's row order does not matter."""
    ids = np.array([f"clip{i:03d}" for i in range(len(REF))])
    keys = stats.sample_keys(ids, len(ids))
    group = keys % np.uint64(stats.JACKKNIFE_GROUPS)
    groups = [np.flatnonzero(group == j) for j in np.unique(group)]
    assert len(groups) < stats.JACKKNIFE_GROUPS and max(map(len, groups)) > 1  # the case this test is about
    low, high = independent_bca(REF, GOOD, keys, groups)
    order = np.random.default_rng(3).permutation(len(ids))
    for rows in (np.arange(len(ids)), order):
        data = {"reference": {"values": REF[rows].tolist(), "classes": list("abcd"), "ids": ids[rows].tolist()},
                "systems": {"good": {"values": GOOD[rows].tolist(), "classes": list("abcd"), "ids": ids[rows].tolist()}}}
        (row,) = run(data=data, averaging="micro", metrics=["f1"], statistics={"bootstrap": {"resamples": 400, "seed": 5}}).rows
        assert (row.ci_low, row.ci_high) == pytest.approx((float(low), float(high)), abs=1e-12)


def test_draws_over_all_samples_are_refused_by_a_partitioned_run_at_their_key():
    config = {"data": {"reference": REF, "systems": {"good": GOOD}, "stream": True},
              "statistics": {"bootstrap": {"keyed": False}}}
    with pytest.raises(ConfigError, match=r"^statistics\.bootstrap\.keyed: a streamed run reduces its data in parts, "
                                          r"so its draws are keyed by sample id; leave out `keyed: false`$"):
        evalkit.api.plan(config, writes=False)
    config = {"data": {"reference": REF, "systems": {"good": GOOD}},
              "statistics": {"bootstrap": {"method": "poisson", "keyed": False}}}
    with pytest.raises(ConfigError, match=r"^statistics\.bootstrap\.keyed: `method: poisson` draws keyed Poisson "
                                          r"counts; for multinomial resamples write `method: percentile` with "
                                          r"`keyed: false`$"):
        run(**config)


@pytest.mark.slow
@pytest.mark.parametrize("keyed", [True, False])
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_interval_covers_the_population_value_95_percent_of_the_time(method, keyed):
    """Cells: the prediction is positive with probability 0.5 and, where it is, the reference
    is positive with probability p = 0.7; the population micro precision is exactly p. Over 600
    repetitions of 200 cells (seeded), the 95% interval of 1,000 resamples covers p in 93–97%
    of them, through the whole run (configuration, engine, replicate summaries)."""
    rng = np.random.default_rng(2024)
    covered = 0
    repetitions = 600
    for _ in range(repetitions):
        pred = (rng.random((200, 1)) < 0.5).astype(float)
        ref = pred * (rng.random((200, 1)) < 0.7) + (1 - pred) * (rng.random((200, 1)) < 0.5)
        results = evalkit.run(
            {"data": {"reference": ref, "systems": {"s": pred}}, "representation": "crisp", "averaging": "micro",
             "metrics": ["precision"],
             "statistics": {"bootstrap": {"resamples": 1000, "method": method, "seed": int(rng.integers(1 << 31)),
                                          "keyed": keyed}}},
            write_reports=False,
        )
        (row,) = results.rows
        covered += row.ci_low <= 0.7 <= row.ci_high
    assert 0.93 <= covered / repetitions <= 0.97, f"coverage {covered / repetitions:.3f}"


# -------------------------------------------------------------------------- repeated runs


def test_several_runs_give_the_jackknife_mean_and_interval():
    runs = [np.clip(REF + RNG.normal(0, 0.2, REF.shape), 0, 1) for _ in range(5)]
    results = run(data={"reference": REF, "systems": {"model": {"runs": runs}}}, averaging="micro", metrics=["f1"])
    row = value(results, system="model")
    per_run = np.array([micro_f1(REF, p) for p in runs])
    # The jackknife estimate of a mean is the mean; its standard error is s / sqrt(k); the
    # interval uses Student's t with k - 1 degrees of freedom.
    half = scipy_stats.t.ppf(0.975, 4) * per_run.std(ddof=1) / np.sqrt(5)
    assert row.value == pytest.approx(per_run.mean(), abs=1e-12)
    assert (row.ci_low, row.ci_high) == pytest.approx((per_run.mean() - half, per_run.mean() + half), abs=1e-12)
    assert "model: the mean of 5 runs, with its jackknife 95% interval across runs" in results.notes


# ------------------------------------------------------------------------------ paired tests


def test_permutation_test_finds_a_clear_difference_and_reports_the_baseline():
    results = run(averaging="micro", metrics=["f1"], statistics={"test": {"resamples": 500, "seed": 4}})
    (comparison,) = results.comparisons
    assert (comparison.system, comparison.baseline, comparison.method) == ("bad", "good", "permutation")
    good, bad = value(results, system="good"), value(results, system="bad")
    assert comparison.difference == pytest.approx(bad.value - good.value, abs=1e-12)
    assert comparison.p_value == pytest.approx(1 / 501)  # no permutation reaches the observed gap


@pytest.mark.slow
def test_permutation_p_values_are_uniform_for_exchangeable_systems():
    """Two systems that are the same noisy process (exchangeable per sample): over 300 seeded
    repetitions the p-values are close to uniform (KS test) and about 5% fall below 0.05."""
    rng = np.random.default_rng(99)
    p_values = []
    for _ in range(300):
        ref = rng.random((40, 3))
        a, b = (np.clip(ref + rng.normal(0, 0.3, ref.shape), 0, 1) for _ in range(2))
        results = evalkit.run(
            {"data": {"reference": ref, "systems": {"a": a, "b": b}}, "averaging": "micro", "metrics": ["f1"],
             "statistics": {"test": {"resamples": 199, "seed": int(rng.integers(1 << 31))}}},
            write_reports=False,
        )
        p_values.append(results.comparisons[0].p_value)
    p_values = np.array(p_values)
    assert scipy_stats.kstest(p_values, "uniform").pvalue > 0.01
    assert 0.02 <= (p_values <= 0.05).mean() <= 0.09


def paired_interval(first, second, resamples, rng, level=0.95, seed=None):
    """The percentile interval of micro F1(second) - micro F1(first) over paired bootstrap
    resamples drawn here (both systems on the same resampled rows): multinomial from ``rng``,
    or keyed Poisson counts of the rows' positions from ``seed``."""
    if seed is not None:
        weights = stats.poisson_weights(stats.sample_keys(None, len(REF)), resamples, seed)
    else:
        weights = stats.bootstrap_weights(len(REF), resamples, rng)
    differences = []
    for w in weights:
        rows = np.repeat(np.arange(len(w)), w)
        differences.append(micro_f1(REF[rows], second[rows]) - micro_f1(REF[rows], first[rows]))
    return np.quantile(differences, [(1 - level) / 2, (1 + level) / 2])


@pytest.mark.parametrize("keyed", [True, False])
@pytest.mark.parametrize("method", ["permutation", "bootstrap"])
def test_a_paired_test_gives_the_differences_percentile_interval_over_paired_resamples(method: str, keyed: bool):
    statistics = {"level": 0.9, "test": {"method": method, "resamples": 300, "seed": 4, "keyed": keyed}}
    results = run(averaging="micro", metrics=["f1"], statistics=statistics)
    (comparison,) = results.comparisons
    rng = np.random.default_rng(4)
    if method == "permutation" and not keyed:  # the permutations are drawn first, from the same generator
        rng.integers(0, 2, size=(300, len(REF)), dtype=bool)
    low, high = paired_interval(GOOD, BAD, 300, rng, level=0.9, seed=4 if keyed else None)
    assert (comparison.ci_low, comparison.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert comparison.ci_low < comparison.difference < comparison.ci_high < 0  # bad is clearly worse
    assert comparison.p_value == pytest.approx(1 / 301) and comparison.p_at_floor  # no resample reaches the gap


@pytest.mark.parametrize("keyed", [True, False])
def test_permutation_p_values_and_nulls_equal_swaps_made_here(keyed: bool):
    """Two systems close enough that the p-value is not at its floor, tested against a third as
    baseline with one set of swaps shared by both pairs (one product per pair reduces both sides
    of a permutation): each p-value equals (1 + #{|null| >= |observed|}) / (1 + R) over the
    nulls computed here from the same swaps (keyed: coins of the rows' positions; not keyed: the
    generator's first draws)."""
    rng = np.random.default_rng(21)
    near = np.clip(GOOD + rng.normal(0, 0.05, GOOD.shape), 0, 1)
    systems = {"base": GOOD, "near": near, "bad": BAD}
    results = run(data={"reference": REF, "systems": systems}, averaging="micro", metrics=["f1"],
                  statistics={"test": {"method": "permutation", "resamples": 199, "seed": 9, "baseline": "base",
                                       "keyed": keyed}})
    masks = (stats.keyed_masks(stats.sample_keys(None, len(REF)), 199, 9) if keyed
             else stats.permutation_masks(len(REF), 199, np.random.default_rng(9)))
    for name in ("near", "bad"):
        (comparison,) = [c for c in results.comparisons if c.system == name]
        other = systems[name]
        observed = micro_f1(REF, other) - micro_f1(REF, GOOD)
        null = np.array([micro_f1(REF, np.where(m[:, None], GOOD, other)) - micro_f1(REF, np.where(m[:, None], other, GOOD))
                         for m in masks])
        assert comparison.difference == pytest.approx(observed, rel=1e-12)
        assert comparison.p_value == stats.p_value(observed, null)  # a count of resamples: exact
    assert [c for c in results.comparisons if c.system == "near"][0].p_value > 2 / 200  # not at the floor


def test_identical_systems_differ_by_exactly_zero():
    results = run(data={"reference": REF, "systems": {"a": GOOD, "b": GOOD.copy()}}, averaging="micro",
                  metrics=["f1"], statistics={"test": {"resamples": 50}})
    (comparison,) = results.comparisons
    # one computation on equal arrays for both: every difference is exactly 0
    assert (comparison.difference, comparison.ci_low, comparison.ci_high, comparison.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert not comparison.p_at_floor


def test_results_written_before_comparisons_had_intervals_read_back_without_one():
    results = run(averaging="micro", metrics=["f1"], statistics={"test": {"resamples": 50}})
    document = json.loads(results.to_json())
    for record in document["comparisons"]:
        del record["ci_low"], record["ci_high"]
    del document["lower_is_better"]
    (comparison,) = evalkit.Results.from_json(json.dumps(document)).comparisons
    assert (comparison.ci_low, comparison.ci_high) == (None, None)
    assert comparison.difference == results.comparisons[0].difference


def test_bootstrap_test_and_baseline_choice():
    results = run(
        averaging="macro", metrics=["precision"],
        statistics={"test": {"method": "bootstrap", "resamples": 300, "baseline": "bad"}},
    )
    (comparison,) = results.comparisons
    assert (comparison.system, comparison.baseline, comparison.method) == ("good", "bad", "bootstrap")
    assert comparison.difference > 0 and comparison.p_value < 0.01
    with pytest.raises(ConfigError, match=r"^statistics.test.baseline: no system 'god'; did you mean 'good'\?"):
        run(statistics={"test": {"baseline": "god"}})


# -------------------------------------------------------------------------------- agreement


def test_rank_agreement_orients_kld_against_f1():
    systems = {
        name: np.clip(REF + RNG.normal(0, noise, REF.shape), 0, 1) for name, noise in (("a", 0.05), ("b", 0.2), ("c", 0.5))
    }
    results = run(data={"reference": REF, "systems": systems}, averaging="micro", metrics=["f1", "kld"],
                  statistics={"agreement": True})
    (agreement,) = results.agreement
    assert (agreement.measure_a.label(), agreement.measure_b.label(), agreement.n_systems) == (
        "fuzzy · minimum · micro · f1", "kld", 3
    )
    assert agreement.tau == pytest.approx(1.0)  # lower KLD ranks like higher F
    two = run(statistics={"agreement": True})
    assert two.agreement == [] and "rank agreement needs at least 3 systems; this run has 2" in two.notes


# ----------------------------------------------------------------------------------- sweeps


def test_figure1_sweep_peaks_at_one_for_no_offset(root: Path):
    results = evalkit.run(root / "configs" / "figure1.yaml", write_reports=False)
    soft = {r.sweep_value: r.value for r in results.rows if (r.representation, r.tnorm) == ("fuzzy", "minimum")}
    hard = {r.sweep_value: r.value for r in results.rows if r.representation == "crisp"}
    assert len(soft) == 101 and {r.sweep for r in results.rows} == {"offset"}
    # ε = 0: the prediction is the reference, min(x, x) = x, so 2S / (S + S) = 1 exactly
    assert max(soft.values()) == soft[0.0] == 1.0 and all(v < 1 for e, v in soft.items() if e != 0.0)
    # Closed form for ε >= 0: min sums to 1.0, the sides to 1.0 and 1.0 + ε: F = 2 / (2 + ε).
    assert all(soft[e] == pytest.approx(2 / (2 + e)) for e in soft if e >= 0)
    # Hard F: the second point is a negative until 0.2 + ε > 0.5; then a false positive (F = 2/3).
    assert all(hard[e] == 1.0 for e in hard if e <= 0.3) and all(hard[e] == pytest.approx(2 / 3) for e in hard if e > 0.3)
    assert all(soft[e] > hard[e] for e in soft if e > 0.3)


def test_a_parameter_sweep_keeps_the_component_label():
    results = run(tnorm=[{"name": "hamacher", "p": 1.0}, "minimum"], averaging="micro", metrics=["f1"],
                  sweep={"vary": "tnorm.p", "values": [0.0, 1.0, 5.0]})  # 1.0: the value as written too
    hamacher = [r for r in results.rows if r.tnorm == "hamacher" and r.system == "good"]  # p is the sweep value
    minimum = [r for r in results.rows if r.tnorm == "minimum" and r.system == "good"]
    assert [r.sweep_value for r in hamacher] == [0.0, 1.0, 5.0] and len({r.value for r in hamacher}) == 3
    assert len({r.value for r in minimum}) == 1  # no parameter p: unchanged
    product = value(run(tnorm="product", averaging="micro", metrics=["f1"]), system="good")
    assert hamacher[1].value == pytest.approx(product.value, abs=1e-12)  # Hamacher p = 1 is the product


@pytest.mark.parametrize(
    ("sweep", "problem"),
    [
        ({"vary": "tnorm.q", "values": [1]}, r"sweep.vary: no tnorm of this config has a parameter 'q' \(minimum\)"),
        ({"vary": "speed", "values": [1]}, r"sweep.vary: must be offset or FIELD.PARAMETER"),
    ],
)
def test_sweep_mistakes_are_explained(sweep, problem):
    with pytest.raises(ConfigError, match=problem):
        run(sweep=sweep)


def test_offset_samples_must_be_in_the_data():
    """Which samples exist is known only from the data: a data error, after the plan."""
    with pytest.raises(DataError, match=r"sweep.samples: no sample 'x' in the data; .* \(data without ids has none"):
        run(sweep={"vary": "offset", "values": [0.1], "samples": ["x"]})


# ------------------------------------------------------------------ provenance and reproducibility


#: The one part of an HTML report that differs between runs: when it was made.
CREATED = re.compile(rb'<time class="created"[^>]*>[^<]*</time>')


@pytest.mark.slow
def test_reports_are_reproducible_and_record_their_inputs(root: Path, tmp_path: Path):
    config = tmp_path / "run.yaml"
    (tmp_path / "data").symlink_to(root / "configs" / "data")
    text = (root / "configs" / "tnorms.yaml").read_text().replace("../results/tnorms", "out/tnorms")
    text = text.replace("resamples: 1000", "resamples: 200")
    config.write_text(text)
    documents, written = [], []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-m", "evalkit", "run", str(config), "--format", "json"],
                             capture_output=True, text=True, check=True).stdout
        documents.append(json.loads(out))
        written.append({p.name: CREATED.sub(b"", p.read_bytes()) for p in (tmp_path / "out").iterdir() if p.suffix != ".json"})
    assert written[0] == written[1] and {".html", ".md", ".csv"} <= {Path(name).suffix for name in written[0]}
    first, second = documents
    assert first["provenance"].pop("created") != "" and second["provenance"].pop("created")
    assert first == second
    files = {f["path"]: f for f in first["provenance"]["data"]}
    reference = root / "configs" / "data" / "quickstart" / "reference.csv"
    assert files["data/quickstart/reference.csv"]["sha256"] == hashlib.sha256(reference.read_bytes()).hexdigest()
    assert first["provenance"]["config_text"] == text


def test_a_swept_parameter_leaves_the_label_as_written():
    results = run(tnorm=[{"name": "yager", "p": 3.0}, {"name": "hamacher", "p": 0.5}], averaging="micro",
                  metrics=["f1"], sweep={"vary": "tnorm.p", "values": [0.5, 2.0]})
    assert {r.tnorm for r in results.rows} == {"yager", "hamacher"}


def test_systems_equal_up_to_rounding_tie_in_a_ranking():
    """0.1 + 0.2 and 0.3 differ in the last bit; a ranking treats them as the tie they are in real
    arithmetic (another CPU's sums may round the other way), and keeps real differences."""
    from evalkit.uncertainty import _order

    assert _order(np.array([0.3, 0.1 + 0.2, np.nan, 0.1, 0.3 + 1e-6])) == (1, 1, -1, 0, 2)
    assert _order(np.array([np.nan])) == (-1,)


def test_agreement_compares_measures_that_differ_in_one_respect():
    systems = {name: np.clip(REF + RNG.normal(0, noise, REF.shape), 0, 1) for name, noise in (("a", 0.1), ("b", 0.3), ("c", 0.2))}
    results = run(data={"reference": REF, "systems": systems}, tnorm=["minimum", "product"], averaging=["micro", "macro"],
                  metrics=["precision", "kld"], statistics={"agreement": True})
    pairs = {(a.measure_a.label(), a.measure_b.label()) for a in results.agreement}
    # 4 set measures: 4 pairs differ in one respect (T-norm or averaging), 2 in both; kld meets all 4.
    assert len(pairs) == 4 + 4
    assert ("fuzzy · minimum · micro · precision", "fuzzy · product · micro · precision") in pairs
    assert ("fuzzy · minimum · micro · precision", "fuzzy · product · macro · precision") not in pairs
    assert sum("kld" in pair for pair in pairs) == 4


def test_runs_mistakes_are_explained():
    with pytest.raises(
        ConfigError, match=r"statistics.test.baseline: 'good' has several runs; paired tests need one run per system"
    ):
        run(data={"reference": REF, "systems": {"good": {"runs": [GOOD, BAD]}, "bad": BAD}},
            statistics={"test": {"baseline": "good"}})
    single = run(data={"reference": REF, "systems": {"good": {"runs": [GOOD]}}}, averaging="micro", metrics=["f1"])
    assert value(single, system="good").value == pytest.approx(micro_f1(REF, GOOD)) and single.notes == []
    with pytest.raises(ConfigError, match=r"sweep.vary: offset adds to membership values; this run reads item lists"):
        evalkit.run({"data": {"reference": [["x"]], "systems": {"a": [["y"]]}}, "representation": "soft_cardinality",
                     "similarity": "levenshtein", "sweep": {"vary": "offset", "values": [0.1]}}, write_reports=False)


def test_poisson_intervals_do_not_depend_on_the_row_order(tmp_path):
    """Each sample's Poisson counts come from its id, so shuffled files (matched by id) give the
    same intervals (up to the order of the sums, 1e-12), where multinomial resamples
    (`keyed: false`) change; they hold the estimate and are about as wide as the multinomial
    ones."""
    ids = [f"s{i:03d}" for i in range(len(REF))]
    classes = ["a", "b", "c", "d"]

    def files(order, name):
        for role, values in (("ref", REF), ("sys", GOOD)):
            frame = pd.DataFrame(values[order], columns=classes, index=np.array(ids)[order]).rename_axis("id")
            frame.to_csv(tmp_path / f"{name}_{role}.csv")
        return {"reference": str(tmp_path / f"{name}_ref.csv"), "systems": {"good": str(tmp_path / f"{name}_sys.csv")}}

    def intervals(data, keyed):
        results = evalkit.run({
            "name": "poisson", "data": data, "averaging": ["micro", "macro", "samples"], "metrics": ["precision", "f1", "kld"],
            "statistics": {"bootstrap": {"resamples": 300, "method": "percentile", "keyed": keyed}},
        })
        return {(r.averaging, r.metric): (r.value, r.ci_low, r.ci_high) for r in results.rows}

    shuffled = np.random.default_rng(0).permutation(len(REF))
    poisson = intervals(files(np.arange(len(REF)), "sorted"), True)
    again = intervals(files(shuffled, "shuffled"), True)
    for key, bounds in poisson.items():
        assert again[key] == pytest.approx(bounds, rel=1e-12), key
    multinomial = intervals(files(np.arange(len(REF)), "sorted"), False)
    reordered = intervals(files(shuffled, "shuffled"), False)
    assert any(reordered[k][1] != pytest.approx(v[1], rel=1e-6) for k, v in multinomial.items())
    for key, (estimate, low, high) in poisson.items():
        assert low <= estimate <= high, key
        m_low, m_high = multinomial[key][1:]
        assert abs((high - low) - (m_high - m_low)) < 0.5 * (m_high - m_low), key  # widths alike


def test_agreement_computed_once_per_pair_of_orders_equals_each_pair_computed_alone():
    """rank_agreement computes τ once for each pair of system orders that occurs; every pair of
    measures still gets exactly what kendall_tau gives on its values (ties and undefined values
    included), bit for bit."""
    from evalkit.measures import Measure
    from evalkit.results import Row
    from evalkit.uncertainty import comparable, rank_agreement

    rng = np.random.default_rng(7)
    systems = [f"s{i}" for i in range(6)]
    rows = []
    for metric in ("precision", "recall", "f1", "kld"):
        for tnorm in ("minimum", "product", "lukasiewicz"):
            values = rng.choice([0.1, 0.5, 0.5, 0.9, np.nan], size=len(systems)) if metric != "kld" else rng.random(len(systems))
            measure = Measure("set", metric, "fuzzy", None, tnorm, "micro")
            rows += [Row.of(s, measure, float(v)) for s, v in zip(systems, values)]
    found = rank_agreement(rows, {"kld"})
    by_measure: dict = {}
    for r in rows:
        by_measure.setdefault(r.measure, []).append(-r.value if r.metric == "kld" else r.value)
    expected = [
        (a, b, *stats.kendall_tau(np.array(va), np.array(vb)))
        for (a, va), (b, vb) in itertools.combinations(by_measure.items(), 2) if comparable(a, b)
    ]
    got = [(g.measure_a, g.measure_b, g.tau, g.p_value) for g in found]
    assert len(got) == len(expected) > 20
    for (a, b, tau, p), (ea, eb, etau, ep) in zip(got, expected):
        assert (a, b) == (ea, eb)
        # τ and p are functions of the pair counts of the same ranks: the same operations
        assert (tau, p) == (etau, ep) or (np.isnan(tau) and np.isnan(etau) and np.isnan(p) and np.isnan(ep))


def test_the_comparable_pairs_found_by_buckets_are_those_of_all_pairs_in_their_order():
    """rank_agreement finds the pairs of measures that differ in one respect (or include a data
    metric) by bucketing, not by testing all pairs: the same pairs, in the same order."""
    from evalkit.measures import Measure
    from evalkit.uncertainty import _comparable_pairs, comparable

    measures = [Measure("set", metric, rep, None, tnorm, averaging)
                for metric in ("precision", "f1") for rep in ("fuzzy", "crisp") for tnorm in ("minimum", "product", None)
                for averaging in ("micro", "macro")]
    measures += [Measure("data", "kld"), Measure("data", "map")]
    order = np.random.default_rng(3).permutation(len(measures))
    measures = [measures[i] for i in order]
    brute = [(a, b) for a, b in itertools.combinations(range(len(measures)), 2) if comparable(measures[a], measures[b])]
    assert _comparable_pairs(measures) == brute and len(brute) > 50

