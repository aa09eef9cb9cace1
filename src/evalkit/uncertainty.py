"""Uncertainty of a run's values, from their replicates: bootstrap intervals over samples,
jackknife intervals across a system's runs, paired tests between systems, and the agreement of
system rankings.

The replicates themselves are reduced with everything else (:func:`evalkit.engine.reduce`, one
pass over the rows); what is here turns values and replicate values into intervals, p-values and
rank correlations. The numerical methods are in :mod:`evalkit.stats`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit import stats
from evalkit.engine import Values, stack
from evalkit.measures import Measure
from evalkit.results import Agreement, Comparison, Row
from evalkit.settings import Test


def percentile_bounds(replicates: Values, level: float) -> tuple[Values, Values]:
    """(low, high) percentile bounds of every measure's replicates."""
    bounds = {m: stats.percentile_interval(r, level) for m, r in replicates.items()}
    return {m: float(b[0]) for m, b in bounds.items()}, {m: float(b[1]) for m, b in bounds.items()}


def interval_bounds(values: Values, replicates: Values, jackknife: Values | None, level: float) -> tuple[Values, Values]:
    """(low, high) bootstrap bounds of every value from its replicates: percentile, or BCa
    where the ``jackknife`` replicates (for the acceleration) are given."""
    if jackknife is None:
        return percentile_bounds(replicates, level)
    bounds = {
        m: stats.bca_interval(r, np.asarray(values[m], dtype=np.float64), jackknife[m], level)
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


def compared(
    system: str, baseline: str, base: Values, other: Values, base_replicates: Values, other_replicates: Values,
    swapped: tuple[Values, Values] | None, test: Test, level: float,
) -> list[Comparison]:
    """``system`` against ``baseline`` on the same samples, for every single-number measure,
    from both systems' values and their replicates on the same resamples.

    Permutation (``swapped`` given): under "no difference" the two systems' outputs for a
    sample are exchangeable, so each replicate swaps them on a random subset of samples;
    ``swapped`` holds each replicate's values of the baseline's side and the system's side.
    Bootstrap: the p-value tests whether the difference's distribution excludes 0.

    Each comparison carries the percentile interval (at ``level``) of the difference over the
    paired resamples: the bootstrap test's own, or, for a permutation test (whose replicates are
    centred on 0 by design, so say nothing about the difference's spread), resamples drawn for
    the interval alone.
    """
    observed = {m: other[m] - base[m] for m in base if m.single and m in other}
    comparisons = []
    for m, difference in observed.items():
        differences = other_replicates[m] - base_replicates[m]
        if swapped is not None:
            as_baseline, as_system = swapped
            p = float(stats.p_value(np.asarray(difference), as_system[m] - as_baseline[m]))
        else:
            p = float(stats.paired_bootstrap_p_value(differences, np.asarray(difference)))
        low, high = stats.percentile_interval(differences, level)
        comparisons.append(
            Comparison.of(system, baseline, m, difference, p, test.method, test.resamples, float(low), float(high))
        )
    return comparisons


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
    measures = list(complete)
    return [
        Agreement(measures[a], measures[b], *tau_of(orders[measures[a]], orders[measures[b]]), len(systems))
        for a, b in _comparable_pairs(measures)
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


def _comparable_pairs(measures: Sequence[Measure]) -> list[tuple[int, int]]:
    """The (i, j), i < j, of the :func:`comparable` measures, in the order of all pairs: those
    differing in part k alone share everything else, so they meet in a bucket keyed by the
    other parts (linear in the measures, where testing all pairs is quadratic)."""
    keys = [tuple(getattr(m, part) for part in _COMPARED) for m in measures]
    data = [i for i, m in enumerate(measures) if m.kind == "data"]
    pairs = {(min(i, d), max(i, d)) for d in data for i in range(len(measures)) if i != d}
    for k in range(len(_COMPARED)):
        buckets: dict[tuple[Any, ...], list[int]] = {}
        for i, key in enumerate(keys):
            buckets.setdefault(key[:k] + key[k + 1 :], []).append(i)
        for members in buckets.values():
            pairs.update((a, b) for a, b in itertools.combinations(members, 2) if keys[a][k] != keys[b][k])
    return sorted(pairs)


def comparable(a: Measure, b: Measure) -> bool:
    """Measures that differ in one respect, or of which one is a data metric."""
    if a.kind == "data" or b.kind == "data":
        return True
    return sum(getattr(a, k) != getattr(b, k) for k in _COMPARED) == 1
