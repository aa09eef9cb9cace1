"""Per-sample values (``per_sample: true``): what ``samples`` averaging sums, kept per sample.

A DCASE user looks at the worst files, which a mean over files hides. The engine hands each
chunk's cardinality table, as it fills it, to a :class:`Collector` (one pass: nothing is filled
again), which sums each sample's cells over its classes: its counts
(:data:`evalkit.results.COUNTS`) and each set metric of those sums, the very terms the
``samples`` average adds up (:func:`evalkit.table.per_sample_ratios`), so their mean over the
samples is that average.

They grow with samples x quantities, not with the classes, so every engine keeps them: each
partition's values are a :class:`Part`, and a tally's parts are concatenated in the partitions'
order (a streamed run's chunks, a Dask tree's neighbours). A partitioned run of data with ids
lists the samples sorted by id (a streamed run's files are sorted so; a Dask run groups them by
a hash of the id), so its table does not depend on the partitioning. Each partition also keeps
the events of its own worst samples (:func:`timelines`): the worst of a run are among them, so a
streamed or Dask run draws them without holding its data.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evalkit.axes import Axes
from evalkit.items import Intervals, ItemSets
from evalkit.protocols import optional
from evalkit.results import COUNTS, ERROR_COUNTS, Event, SampleValues, Timeline, sample_quantities, worst_samples
from evalkit.table import CardinalityTable, metric_key, per_sample_ratios

#: A block's labels: system, representation, similarity, T-norm, quantity, sweep, sweep value
#: (the fields of :class:`~evalkit.results.SampleValues` around its samples and values).
Label = tuple[str, str | None, str | None, str | None, str, str | None, float | None]


@dataclass(frozen=True)
class Part:
    """One partition's per-sample values: its samples' names (``ids``: they are sample ids, not
    rows) and each block's values on them, blocks in the order the results list them."""

    samples: tuple[str, ...]
    ids: bool
    values: dict[Label, np.ndarray]


class Collector:
    """The per-sample values of one sweep step's reduction, from the tables the engine fills
    (``reduce(..., tables_to=collector)``), a chunk at a time in the chunks' order."""

    def __init__(self, axes: Axes) -> None:
        self.axes = axes
        self.metrics = [m.obj for m in axes.set_metrics]
        self.errors = any(optional(m, "substitutions") for m in self.metrics)
        self.columns: dict[tuple[int, int], dict[str, list[np.ndarray]]] = {}

    def __call__(self, combination: int, prediction: int, table: CardinalityTable) -> None:
        columns = self.columns.setdefault((combination, prediction), {})
        for key, values in _of_table(table, self.metrics, self.axes.zero_division, self.errors).items():
            columns.setdefault(key, []).append(values)

    def values(self, systems: Sequence[str], sweep: str | None, sweep_value: float | None) -> dict[Label, np.ndarray]:
        """Each block's values, ``systems`` naming the predictions in their order: for each
        combination and system, the counts and then the set metrics."""
        metrics = self.axes.set_metrics
        names = sample_quantities([m.label for m in metrics], self.errors)
        keys = [*names[: len(names) - len(metrics)], *(metric_key(m.obj) for m in metrics)]  # as _of_table names them
        out: dict[Label, np.ndarray] = {}
        for c, (rep, tnorm, similarity) in enumerate(self.axes.set_combinations()):
            similar, t = similarity.label if similarity else None, tnorm.label if tnorm else None
            for p, system in enumerate(systems):
                columns = self.columns[c, p]
                for name, key in zip(names, keys):
                    out[system, rep.label, similar, t, name, sweep, sweep_value] = np.concatenate(columns[key])
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
        table = replace(table, substitutions=substitutions)  # the error rates read these
    for key, (values, defined) in per_sample_ratios(table, metrics, zero_division).items():
        out[key] = np.where(defined > 0, values, np.nan)
    return out


def sample_blocks(parts: Sequence[Part], by_id: bool) -> list[SampleValues]:
    """The parts as the results' blocks, one per label, their samples in the parts' order, or,
    with ``by_id`` and sample ids, sorted by id (stably: the order of the text, as a streamed
    run's files are sorted)."""
    if not parts:
        return []
    samples = tuple(s for part in parts for s in part.samples)  # one tuple, shared by every block
    order = None
    if by_id and all(part.ids for part in parts):
        order = np.array(sorted(range(len(samples)), key=samples.__getitem__), dtype=np.intp)
        samples = tuple(samples[i] for i in order)
    out = []
    for label in parts[0].values:
        values = np.concatenate([part.values[label] for part in parts])
        system, representation, similarity, tnorm, metric, sweep, sweep_value = label
        out.append(SampleValues(system, representation, similarity, tnorm, metric, samples,
                                tuple((values if order is None else values[order]).tolist()), sweep, sweep_value))
    return out


def timelines(
    parts: Sequence[Part], by_id: bool, lower_is_better: Collection[str], reference: Any, systems: dict[str, list[Any]],
    first_row: int = 0,
) -> list[Timeline]:
    """The events of each system's worst samples (:func:`evalkit.results.worst_samples`) in a
    partition (``reference`` and ``systems``: its aligned data; ``parts``: its values), ranked
    in the order :func:`sample_blocks` gives the run's: none unless both sides are event lists
    (intervals)."""
    out: list[Timeline] = []
    if _events(reference, 0) is None:
        return out
    rows = {name: i for i, name in enumerate(reference.ids)} if reference.ids is not None else None
    for system, (_, worst) in worst_samples(sample_blocks(parts, by_id), lower_is_better).items():
        prediction = systems[system][0]
        if _events(prediction, 0) is None:  # a score folder, say: the other systems keep theirs
            continue
        for sample, _ in worst:
            row = rows[sample] if rows is not None else int(sample) - first_row
            out.append(Timeline(system, sample, *(_events(side, row) or () for side in (reference, prediction))))
    return out


def worst_timelines(
    candidates: Sequence[Timeline], blocks: Sequence[SampleValues], lower_is_better: Collection[str],
) -> list[Timeline]:
    """The timelines of the run's worst samples among each partition's (``candidates``): a
    sample among a run's worst is among its partition's worst, ranked alike."""
    kept = {(t.system, t.sample): t for t in candidates}
    return [kept[system, sample] for system, (_, worst) in worst_samples(blocks, lower_is_better).items()
            for sample, _ in worst if (system, sample) in kept]


def _events(data: Any, row: int) -> tuple[Event, ...] | None:
    """A sample's events as (class, onset, offset), or None for data that holds no intervals."""
    if not isinstance(data, ItemSets) or not isinstance(data.samples, Intervals) or not len(data):
        return None
    classes = data.samples.take(np.array([row]))[0]
    return tuple((name, onset, offset) for name, pairs in zip(data.classes, classes) for onset, offset in pairs)
