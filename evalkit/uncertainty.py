"""Uncertainty of a run's values: bootstrap intervals over samples, jackknife intervals across a
system's runs, paired tests between systems, and the agreement of system rankings.

All of them recompute a system's values on reweighted samples: set metrics from replicate
summaries (:meth:`evalkit.table.Summary.replicates`, one matrix product per column for all
replicates), data metrics by running them on the resampled rows. The averagings and metrics are
the run's own components, so every scheme gets intervals and tests without knowing about them.
The numerical methods are in :mod:`evalkit.stats`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from evalkit import stats
from evalkit.config import StatisticsConfig
from evalkit.engine import Plan, Progress, Values, combination_key, data_values, set_values
from evalkit.results import Agreement, Comparison, Row
from evalkit.table import CardinalityTable, Summary, concatenate

Tables = dict[tuple, CardinalityTable]


# ------------------------------------------------------------------------------- values as trees


def stack(replicates: Sequence[Values]) -> Values:
    """Replicate values stacked along a new first axis, key by key (named data values too)."""

    def leaf(items: list[Any]) -> Any:
        if isinstance(items[0], dict):
            return {name: leaf([item[name] for item in items]) for name in items[0]}
        return np.stack([np.asarray(item, dtype=np.float64) for item in items])

    return {key: leaf([values[key] for values in replicates]) for key in replicates[0]}


def tree_map(fn: Callable[..., Any], *trees: Values) -> Values:
    """``fn`` applied to the matching leaves of several values trees."""

    def leaf(*items: Any) -> Any:
        if isinstance(items[0], dict):
            return {name: leaf(*(item[name] for item in items)) for name in items[0]}
        return fn(*items)

    return {key: leaf(*(tree[key] for tree in trees)) for key in trees[0]}


def with_intervals(rows: list[Row], low: list[Row], high: list[Row]) -> list[Row]:
    """``rows`` with the bounds of the rows made (in the same order) from the bounds' values."""
    return [replace(r, ci_low=lo.value, ci_high=hi.value) for r, lo, hi in zip(rows, low, high, strict=True)]


# ------------------------------------------------------------------------------- replicate values


def take(data: Any, rows: np.ndarray) -> Any:
    """These rows of a membership array or of item sets."""
    return data[rows] if isinstance(data, np.ndarray) else data.take(rows)


def replicate_values(
    plan: Plan, tables: Tables, weights: np.ndarray, reference: Any, prediction: Any,
    progress: Progress | None = None,
) -> Values:
    """The values of every replicate, stacked along a first axis: in replicate b, sample i
    counts ``weights[b, i]`` times.

    ``tables``, ``reference`` and ``prediction`` may hold more rows than one system's samples
    (two systems stacked, for a permutation test); weights then choose among them. Set metrics
    come from one batch of replicate summaries per combination, reduced in one call by
    averagings that declare ``batched = True`` (all built-ins) and replicate by replicate
    otherwise; data metrics are recomputed on each replicate's rows.
    """
    batched = all(getattr(avg.obj, "batched", False) for avg in plan.averagings)
    values: Values = {}
    for combination in plan.set_combinations():
        key = combination_key(combination)
        batch = Summary.replicates(tables[key], weights, plan.sample_metrics, plan.zero_division)
        if batched:
            values.update(set_values(combination, batch, plan))
        else:
            values.update(stack([set_values(combination, batch.replicate(b), plan) for b in range(len(weights))]))
    if plan.data_metrics:
        per_replicate = []
        for row_weights in weights:
            rows = np.repeat(np.arange(len(row_weights)), np.round(row_weights).astype(np.int64))
            per_replicate.append(data_values(plan, take(reference, rows), take(prediction, rows)))
            if progress:
                progress.advance(1)
        values.update(stack(per_replicate))
    elif progress:
        progress.advance(len(weights))
    return values


def bootstrap_bounds(
    values: Values, plan: Plan, tables: Tables, reference: Any, prediction: Any, config: StatisticsConfig,
    progress: Progress | None = None,
) -> tuple[Values, Values]:
    """(low, high) bootstrap bounds of every value, resampling the samples."""
    boot = config.bootstrap
    n = len(reference)
    rng = np.random.default_rng(boot.seed)
    replicates = replicate_values(plan, tables, stats.bootstrap_weights(n, boot.resamples, rng), reference, prediction, progress)
    if boot.method == "percentile":
        bounds = tree_map(lambda r: stats.percentile_interval(r, config.level), replicates)
    else:
        jackknife = replicate_values(plan, tables, stats.jackknife_weights(n), reference, prediction)
        bounds = tree_map(
            lambda r, estimate, jack: stats.bca_interval(r, np.asarray(estimate, dtype=np.float64), jack, config.level),
            replicates, values, jackknife,
        )
    return tree_map(lambda b: _scalar(b[0]), bounds), tree_map(lambda b: _scalar(b[1]), bounds)


def _scalar(value: Any) -> Any:
    return float(value) if np.ndim(value) == 0 else value


def jackknife_across_runs(runs: Sequence[Values], level: float) -> tuple[Values, Values, Values]:
    """(mean, low, high) of every value across a system's runs (Harju & Mesaros report the
    jackknife mean and its 95% interval over ten runs)."""

    stacked = stack(runs)
    mean, low, high = (
        tree_map(lambda s, w=which: _scalar(stats.jackknife_interval(s, level)[w]), stacked) for which in range(3)
    )
    return mean, low, high


# ---------------------------------------------------------------------------------- paired tests


def scalar_measures(values: Values) -> dict[tuple, float]:
    """The single-number values, keyed by (values key, name of a named data value or None)."""
    out = {}
    for key, value in values.items():
        named = value.items() if isinstance(value, dict) else [(None, value)]
        for name, v in named:
            if np.ndim(v) == 0:
                out[(key, name)] = float(v)
    return out


def paired_tests(
    system: str, baseline: str, values: dict[str, Values], tables: dict[str, Tables], reference: Any,
    predictions: dict[str, Any], plan: Plan, config: StatisticsConfig, sweep_value: float | None,
    progress: Progress | None = None,
) -> list[Comparison]:
    """``system`` against ``baseline`` on the same samples, for every single-number measure.

    Permutation: under "no difference" the two systems' outputs for a sample are exchangeable,
    so each replicate swaps them on a random subset of samples (the two tables stacked, and
    weights choosing a row from either). Bootstrap: both systems on the same resamples; the
    p-value tests whether the difference's distribution excludes 0.
    """
    test = config.test
    n = len(reference)
    rng = np.random.default_rng(test.seed)
    a, s = scalar_measures(values[baseline]), scalar_measures(values[system])
    observed = {k: s[k] - a[k] for k in a if k in s}
    if test.method == "permutation":
        masks = stats.permutation_masks(n, test.resamples, rng).astype(np.float64)
        stacked_tables = {k: concatenate([tables[baseline][k], tables[system][k]]) for k in tables[baseline]}
        stacked_ref = _stack_rows(reference, reference)
        stacked_pred = _stack_rows(predictions[baseline], predictions[system])
        as_baseline = replicate_values(plan, stacked_tables, np.hstack([1 - masks, masks]), stacked_ref, stacked_pred, progress)
        as_system = replicate_values(plan, stacked_tables, np.hstack([masks, 1 - masks]), stacked_ref, stacked_pred, progress)
    else:
        weights = stats.bootstrap_weights(n, test.resamples, rng)
        as_baseline = replicate_values(plan, tables[baseline], weights, reference, predictions[baseline], progress)
        as_system = replicate_values(plan, tables[system], weights, reference, predictions[system], progress)
    null = {k: _measure(as_system, k) - _measure(as_baseline, k) for k in observed}
    comparisons = []
    for k, difference in observed.items():
        if test.method == "permutation":
            p = float(stats.p_value(np.asarray(difference), null[k]))
        else:
            p = float(stats.paired_bootstrap_p_value(null[k], np.asarray(difference)))
        (key, name) = k
        labels = key[1:] if key[0] == "set" else (None, None, None, None, name or key[1])
        comparisons.append(Comparison(system, baseline, *labels, difference, p, test.method, test.resamples, sweep_value))
    return comparisons


def _measure(stacked: Values, key: tuple) -> np.ndarray:
    """The replicates of one single-number measure (see :func:`scalar_measures`)."""
    (values_key, name) = key
    value = stacked[values_key]
    return np.asarray(value[name] if name is not None else value, dtype=np.float64)


def _stack_rows(first: Any, second: Any) -> Any:
    if isinstance(first, np.ndarray):
        return np.vstack([first, second])
    return replace(first, samples=first.samples + second.samples, ids=None)


# ------------------------------------------------------------------------------------ agreement


def rank_agreement(rows: Sequence[Row], lower_is_better: set[str]) -> list[Agreement]:
    """Kendall's τ between the system rankings of pairs of single-number measures that every
    system has, each oriented so that higher is better.

    The pairs compared are those that differ in one respect — one T-norm for another, one
    averaging, one metric, one sweep value — and every data metric (KLD, mAP, ...) against every
    other measure: the questions "do the T-norms agree?", "does soft F agree with KLD?". All
    pairs would be quadratic in the grid (10,296 for 12 T-norms x 4 averagings x 3 metrics)
    and mostly answer no question.
    """
    systems = list(dict.fromkeys(r.system for r in rows))
    by_measure: dict[tuple, dict[str, float]] = {}
    for r in rows:
        if r.class_ is None and r.level is None:
            sign = -1.0 if r.metric in lower_is_better else 1.0
            by_measure.setdefault(r.measure, {})[r.system] = sign * r.value
    complete = {m: v for m, v in by_measure.items() if len(v) == len(systems)}
    out = []
    for (ma, va), (mb, vb) in itertools.combinations(complete.items(), 2):
        if not _comparable(ma, mb):
            continue
        x = np.array([va[s] for s in systems])
        y = np.array([vb[s] for s in systems])
        tau, p = stats.kendall_tau(x, y)
        out.append(Agreement(measure_label(ma), measure_label(mb), tau, p, len(systems)))
    return out


def _comparable(a: tuple, b: tuple) -> bool:
    """Measures (Row.measure) that differ in one respect, or of which one is a data metric."""
    rep_a, _, _, avg_a, *_ = a
    rep_b, _, _, avg_b, *_ = b
    if (rep_a is None and avg_a is None) or (rep_b is None and avg_b is None):
        return True
    return sum(x != y for x, y in zip(a, b)) == 1


def measure_label(measure: tuple) -> str:
    """``fuzzy · minimum · micro · f1`` from a Row.measure (parts that apply, in order)."""
    rep, similarity, tnorm, averaging, metric, _, _, sweep, sweep_value = measure
    parts = [p for p in (rep, similarity, tnorm, averaging, metric) if p is not None]
    if sweep is not None:
        parts.append(f"{sweep}={sweep_value:g}")
    return " · ".join(parts)
