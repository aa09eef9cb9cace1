"""Uncertainty of a run's values: bootstrap intervals over samples, jackknife intervals across a
system's runs, paired tests between systems, and the agreement of system rankings.

All of them recompute a system's values on reweighted samples: set metrics from replicate
summaries (:meth:`evalkit.table.Summary.replicates`, one matrix product per column for all
replicates), data metrics by running them on the resampled rows. The averagings and metrics are
the run's own components, so every scheme gets intervals and tests without knowing about them.
The numerical methods are in :mod:`evalkit.stats`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evalkit import stats
from evalkit.axes import Axes
from evalkit.config import StatisticsConfig
from evalkit.engine import Scores, Values, data_values, set_values
from evalkit.measures import Measure
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.results import Agreement, Comparison, Row
from evalkit.table import CardinalityTable, Summary, concatenate


@dataclass(frozen=True)
class Sample:
    """One system's aligned data, as the engine reads it, with the classes of its columns."""

    reference: Any
    prediction: Any
    classes: Sequence[str]
    weights: np.ndarray | None = None  # one per sample: sample i counts weights[i] times
    ids: Sequence[str] | None = None  # the samples' ids, which seed their Poisson resampling

    def __len__(self) -> int:
        return len(self.reference)


def stack(replicates: Sequence[Values]) -> Values:
    """Replicate values stacked along a new first axis, measure by measure."""
    return {m: np.array([values[m] for values in replicates], dtype=np.float64) for m in replicates[0]}


# ------------------------------------------------------------------------------- replicate values


def take(data: Any, rows: np.ndarray) -> Any:
    """These rows of a membership array or of item sets."""
    return data[rows] if isinstance(data, np.ndarray) else data.take(rows)


def replicate_values(
    axes: Axes, tables: dict[Any, CardinalityTable], weights: np.ndarray, sample: Sample,
    progress: Progress | None = None,
) -> Values:
    """The values of every replicate, stacked along a first axis: in replicate b, sample i
    counts ``weights[b, i]`` times.

    ``tables`` and ``sample`` may hold more rows than one system's samples (two systems stacked,
    for a permutation test); weights then choose among them. Set metrics come from one batch of
    replicate summaries per combination, reduced in one call by averagings that declare
    ``batched = True`` (all built-ins) and replicate by replicate otherwise; data metrics are
    recomputed on each replicate's rows.
    """
    values: Values = {}
    for combination in axes.set_combinations():
        batch = Summary.replicates(
            tables[combination], weights, axes.sample_metrics, axes.zero_division, sample_weights=sample.weights,
        )
        values.update(batch_values(axes, combination, batch, sample.classes, len(weights)))
    if axes.data_metrics:
        per_replicate = []
        for row_weights in weights:
            rows = np.repeat(np.arange(len(row_weights)), np.round(row_weights).astype(np.int64))
            per_replicate.append(data_values(
                axes, take(sample.reference, rows), take(sample.prediction, rows), sample.classes,
                weights=None if sample.weights is None else sample.weights[rows],
            ))
            if progress:
                progress.advance(1)
        values.update(stack(per_replicate))
    elif progress:
        progress.advance(len(weights))
    return values


def batch_values(axes: Axes, combination: Any, batch: Summary, classes: Sequence[str], n_replicates: int) -> Values:
    """Every set-metric value of a batch of replicate summaries, stacked along a first axis:
    in one call for averagings that declare ``batched = True`` (all built-ins), replicate by
    replicate otherwise."""
    if all(optional(avg.obj, "batched") for avg in axes.averagings):
        return set_values(combination, batch, axes, classes, batch=True)
    return stack([set_values(combination, batch.replicate(b), axes, classes) for b in range(n_replicates)])


def percentile_bounds(replicates: Values, level: float) -> tuple[Values, Values]:
    """(low, high) percentile bounds of every measure's replicates."""
    bounds = {m: stats.percentile_interval(r, level) for m, r in replicates.items()}
    return {m: float(b[0]) for m, b in bounds.items()}, {m: float(b[1]) for m, b in bounds.items()}


def bootstrap_bounds(
    scores: Scores, axes: Axes, sample: Sample, config: StatisticsConfig, progress: Progress | None = None,
) -> tuple[Values, Values]:
    """(low, high) bootstrap bounds of every value, resampling the samples."""
    boot = config.bootstrap
    assert boot is not None, "bootstrap bounds are asked for only when the config has them"
    n = len(sample)
    if boot.method == "poisson":
        weights = stats.poisson_weights(stats.sample_keys(sample.ids, n), boot.resamples, boot.seed)
    else:
        weights = stats.bootstrap_weights(n, boot.resamples, np.random.default_rng(boot.seed))
    replicates = replicate_values(axes, scores.tables, weights, sample, progress)
    if boot.method in ("percentile", "poisson"):
        return percentile_bounds(replicates, config.level)
    jackknife = replicate_values(axes, scores.tables, stats.jackknife_weights(n), sample)
    bounds = {
        m: stats.bca_interval(r, np.asarray(scores.values[m], dtype=np.float64), jackknife[m], config.level)
        for m, r in replicates.items()
    }
    return {m: float(b[0]) for m, b in bounds.items()}, {m: float(b[1]) for m, b in bounds.items()}


def jackknife_across_runs(runs: Sequence[Values], level: float) -> tuple[Values, Values, Values]:
    """(mean, low, high) of every value across a system's runs (Harju & Mesaros report the
    jackknife mean and its 95% interval over ten runs)."""
    intervals = {m: stats.jackknife_interval(v, level) for m, v in stack(runs).items()}
    mean, low, high = ({m: float(i[which]) for m, i in intervals.items()} for which in range(3))
    return mean, low, high


def rows_of(system: str, values: Values, low: Values | None = None, high: Values | None = None) -> list[Row]:
    """The tidy rows of one system's values, with their interval when one was computed."""
    return [
        Row.of(system, m, v, None if low is None else low[m], None if high is None else high[m])
        for m, v in values.items()
    ]


# ---------------------------------------------------------------------------------- paired tests


def paired_tests(
    system: str, baseline: str, scores: dict[str, Scores], samples: dict[str, Sample], axes: Axes,
    config: StatisticsConfig, progress: Progress | None = None,
) -> list[Comparison]:
    """``system`` against ``baseline`` on the same samples, for every single-number measure.

    Permutation: under "no difference" the two systems' outputs for a sample are exchangeable,
    so each replicate swaps them on a random subset of samples (the two tables stacked, and
    weights choosing a row from either). Bootstrap: both systems on the same resamples; the
    p-value tests whether the difference's distribution excludes 0.

    Each comparison carries the percentile interval (at the run's level) of the difference over
    paired bootstrap resamples, both systems on the same resamples: the bootstrap test's own, or,
    for a permutation test (whose replicates are centred on 0 by design, so say nothing about
    the difference's spread), as many more drawn from the same generator.
    """
    test = config.test
    assert test is not None, "paired tests are run only when the config asks for them"
    n = len(samples[baseline])
    rng = np.random.default_rng(test.seed)
    a, s = scores[baseline].values, scores[system].values
    observed = {m: s[m] - a[m] for m in a if m.single and m in s}
    if test.method == "permutation":
        masks = stats.permutation_masks(n, test.resamples, rng).astype(np.float64)
        tables = {k: concatenate([scores[baseline].tables[k], scores[system].tables[k]]) for k in scores[baseline].tables}
        both = Sample(
            _stack_rows(samples[baseline].reference, samples[system].reference),
            _stack_rows(samples[baseline].prediction, samples[system].prediction),
            samples[baseline].classes,
            None if samples[baseline].weights is None else np.concatenate([samples[baseline].weights] * 2),
        )
        as_baseline = replicate_values(axes, tables, np.hstack([1 - masks, masks]), both, progress)
        as_system = replicate_values(axes, tables, np.hstack([masks, 1 - masks]), both, progress)
    weights = stats.bootstrap_weights(n, test.resamples, rng)
    boot_baseline = replicate_values(axes, scores[baseline].tables, weights, samples[baseline], progress)
    boot_system = replicate_values(axes, scores[system].tables, weights, samples[system], progress)
    comparisons = []
    for m, difference in observed.items():
        differences = boot_system[m] - boot_baseline[m]
        if test.method == "permutation":
            p = float(stats.p_value(np.asarray(difference), as_system[m] - as_baseline[m]))
        else:
            p = float(stats.paired_bootstrap_p_value(differences, np.asarray(difference)))
        low, high = stats.percentile_interval(differences, config.level)
        comparisons.append(
            Comparison.of(system, baseline, m, difference, p, test.method, test.resamples, float(low), float(high))
        )
    return comparisons


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
    by_measure: dict[Measure, dict[str, float]] = {}
    for r in rows:
        if r.measure.single:
            sign = -1.0 if r.metric in lower_is_better else 1.0
            by_measure.setdefault(r.measure, {})[r.system] = sign * r.value
    complete = {m: v for m, v in by_measure.items() if len(v) == len(systems)}
    orders = {m: _order(np.array([v[s] for s in systems])) for m, v in complete.items()}
    tau_of = functools.lru_cache(maxsize=None)(_tau_of_orders)
    return [
        Agreement(ma, mb, *tau_of(orders[ma], orders[mb]), len(systems))
        for ma, mb in itertools.combinations(complete, 2)
        if comparable(ma, mb)
    ]


def _order(values: np.ndarray) -> tuple[int, ...]:
    """How a measure orders the systems: dense ranks, -1 where undefined. Kendall's τ and its
    p-value depend on nothing else, so measures that order the systems alike (with few systems,
    most do) share one computation: tnorms' 1,152 pairs of measures need 4.
    Systems whose values are equal up to rounding tie, so the order does not depend on the CPU.
    """
    finite = np.isfinite(values)
    ordered = np.sort(values[finite])
    steps = np.diff(ordered) > stats.rounding_tolerance(ordered[:-1])
    dense = np.concatenate([[0], np.cumsum(steps)])
    ranks = np.full(len(values), -1)
    ranks[finite] = dense[np.searchsorted(ordered, values[finite])]
    return tuple(ranks.tolist())


def _tau_of_orders(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[float, float]:
    undefined = np.array(x) < 0, np.array(y) < 0
    return stats.kendall_tau(np.where(undefined[0], np.nan, x), np.where(undefined[1], np.nan, y))


#: The parts in which two measures may differ to be compared by rank agreement.
_COMPARED = ("representation", "similarity", "tnorm", "averaging", "metric", "class_", "level", "sweep", "sweep_value")


def comparable(a: Measure, b: Measure) -> bool:
    """Measures that differ in one respect, or of which one is a data metric."""
    if a.kind == "data" or b.kind == "data":
        return True
    return sum(getattr(a, k) != getattr(b, k) for k in _COMPARED) == 1
