"""Per-sample values (``per_sample: true``): what ``samples`` averaging sums, kept per sample.

A DCASE user looks at the worst files, which a mean over files hides. For each combination of
the components, each system's cardinality table of a partition is filled again, a chunk of rows
at a time as the engine fills it, and each sample's cells are summed over its classes: its
counts (:data:`evalkit.results.COUNTS`) and each set metric of those sums, the very terms the
``samples`` average adds up (:func:`evalkit.table.per_sample_ratios`), so their mean over the samples
is that average. Filling the tables again costs what the scoring of the set metrics costs once
more; the run asks for it only with the switch.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from evalkit.axes import Axes
from evalkit.engine import chunks, row_width
from evalkit.items import Intervals, ItemSets
from evalkit.protocols import optional
from evalkit.results import COUNTS, ERROR_COUNTS, Event, SampleValues, Timeline, sample_quantities, worst_samples
from evalkit.table import CardinalityTable, chunk_rows, metric_key, per_sample_ratios


def sample_values(
    axes: Axes, reference: Any, predictions: dict[str, Any], samples: Sequence[str], sweep: str | None,
    sweep_value: float | None,
) -> list[SampleValues]:
    """Every per-sample quantity of a partition at one sweep step: ``reference`` and each
    system's ``predictions`` are aligned rows as the engine takes them (one run a system: the
    plan refuses several), ``samples`` their names. For each combination and system, the
    counts and then the set metrics, each on every sample."""
    n, width, samples = len(reference), row_width(reference), tuple(samples)  # one tuple, shared by every quantity
    metrics = axes.set_metrics
    errors = any(optional(m.obj, "substitutions") for m in metrics)
    names = sample_quantities([m.label for m in metrics], errors)
    keys = [*names[: len(names) - len(metrics)], *(metric_key(m.obj) for m in metrics)]  # as _of_table names them
    out = []
    for rep, tnorm, similarity in axes.set_combinations():
        labels = (rep.label, similarity.label if similarity else None, tnorm.label if tnorm else None)
        for system, prediction in predictions.items():
            columns: dict[str, list[np.ndarray]] = {key: [] for key in keys}
            rows = chunk_rows(width)
            for start in chunks(n, rows, None):
                part = slice(start, start + rows)
                table = rep.obj.cardinalities(
                    reference[part], prediction[part], tnorm=tnorm and tnorm.obj, similarity=similarity and similarity.obj,
                )
                table.check((len(reference[part]), width), rep.who)
                for key, values in _of_table(table, [m.obj for m in metrics], axes.zero_division, errors).items():
                    columns[key].append(values)
            out += [SampleValues(system, *labels, name, samples, tuple(np.concatenate(columns[key]).tolist()),
                                 sweep, sweep_value) for name, key in zip(names, keys)]
    return out


def _of_table(table: CardinalityTable, metrics: list[Any], zero_division: float, errors: bool) -> dict[str, np.ndarray]:
    """A chunk's per-sample counts and metrics (by :func:`metric_key`), NaN where undefined."""
    ones = np.ones(table.ref.shape[1])
    ref, pred, inter = (c.astype(np.float64, copy=False) @ ones for c in (table.ref, table.pred, table.inter))
    fn, fp = np.maximum(ref - inter, 0), np.maximum(pred - inter, 0)  # rounding may leave -1e-17
    out = dict(zip(COUNTS, (ref, pred, inter, fn, fp)))
    if errors:
        given = table.per_sample_substitutions()
        substitutions = np.minimum(ref - inter, pred - inter) if given is None else given  # as the error rates take it
        out.update(zip(ERROR_COUNTS, (substitutions, fn - substitutions, fp - substitutions)))
        table = replace(table, substitutions=substitutions)  # computed once: the error rates read them too
    for key, (values, defined) in per_sample_ratios(table, metrics, zero_division).items():
        out[key] = np.where(defined > 0, values, np.nan)
    return out


def timelines(
    blocks: Sequence[SampleValues], lower_is_better: Collection[str], reference: Any, systems: dict[str, list[Any]],
    first_row: int = 0,
) -> list[Timeline]:
    """The events of each system's worst samples (:func:`evalkit.results.worst_samples`), from
    the aligned data of a run held whole: none unless both sides are event lists (intervals)."""
    out: list[Timeline] = []
    if _events(reference, 0) is None:
        return out
    rows = {name: i for i, name in enumerate(reference.ids)} if reference.ids is not None else None
    for system, (_, worst) in worst_samples(blocks, lower_is_better).items():
        prediction = systems[system][0]
        if _events(prediction, 0) is None:  # a score folder, say: the other systems keep theirs
            continue
        for sample, _ in worst:
            row = rows[sample] if rows is not None else int(sample) - first_row
            out.append(Timeline(system, sample, *(_events(side, row) or () for side in (reference, prediction))))
    return out


def _events(data: Any, row: int) -> tuple[Event, ...] | None:
    """A sample's events as (class, onset, offset), or None for data that holds no intervals."""
    if not isinstance(data, ItemSets) or not isinstance(data.samples, Intervals) or not len(data):
        return None
    classes = data.samples.take(np.array([row]))[0]
    return tuple((name, onset, offset) for name, pairs in zip(data.classes, classes) for onset, offset in pairs)
