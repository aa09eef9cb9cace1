"""The engine: reduce one system's aligned data, chunk by chunk, to every value of the axes.

For every combination of the comparison axes, the representation fills the cardinality table
one chunk of rows at a time and the chunk is at once reduced to a
:class:`~evalkit.table.Summary`; averagings and set metrics then read the merged summary. Data
metrics reduce the same chunks to their own states. Every value is keyed by the
:class:`~evalkit.measures.Measure` it is, one number each (a per-class result is one value per
class).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalkit.axes import Axes, Combination, unweighted
from evalkit.errors import DataError, PluginContractError
from evalkit.items import ItemSets
from evalkit.measures import Curve, CurvePerClass, Measure, PerClass, PerLevel
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.table import CHUNK_ROWS, CardinalityTable, Summary, concatenate

#: Measure -> its value: a number, or (for a batch of replicates) an array with one per replicate.
Values = dict[Measure, Any]


@dataclass
class Scores:
    """What one system scored: its values and, when asked for, each combination's whole
    per-sample cardinality table (the statistics reweight its samples)."""

    values: Values
    tables: dict[Combination, CardinalityTable] = field(default_factory=dict)
    curves: dict[tuple[str, str | None], Curve] = field(default_factory=dict)  # by (name, class)


def score_system(
    label: str, reference: Any, prediction: Any, axes: Axes, classes: Sequence[str],
    progress: Progress | None = None, keep_tables: bool = False, weights: np.ndarray | None = None,
) -> Scores:
    """Every value for one system: each combination of the axes, then the data metrics; with
    ``weights`` (one per sample), each sample counts that many times."""
    if progress:
        progress.start(f"evaluating {label}", axes.work(len(reference)))
    if isinstance(reference, ItemSets):
        check_items(axes, reference, prediction, label)
    scores = Scores({})
    for combination in axes.set_combinations():
        tables: list[CardinalityTable] | None = [] if keep_tables else None
        summary = summarize(combination, reference, prediction, axes, progress, tables, weights)
        if tables is not None:
            scores.tables[combination] = concatenate(tables)
        scores.values.update(set_values(combination, summary, axes, classes))
    if axes.data_metrics:
        for metric in axes.data_metrics:
            prepare = optional(metric.obj, "prepare")
            if prepare is not None:
                prepare(classes)
        scores.values.update(data_values(axes, reference, prediction, classes, progress, weights, scores.curves))
    return scores


def check_items(axes: Axes, reference: ItemSets, prediction: ItemSets, label: str) -> None:
    """Let similarities that check their items (words missing from a vector model) see every
    sample of both sides once, before anything is computed."""
    checks = [c for c in (optional(s.obj, "check") for s in axes.similarities) if c is not None]
    if checks:
        samples = {**reference.by_sample("reference"), **prediction.by_sample(label)}
        for check in checks:
            check(samples)


def set_measure(combination: Combination, averaging: str, metric: str) -> Measure:
    rep, tnorm, similarity = combination
    return Measure(
        "set", metric, representation=rep.label, similarity=similarity.label if similarity else None,
        tnorm=tnorm.label if tnorm else None, averaging=averaging,
    )


def set_values(combination: Combination, summary: Summary, axes: Axes, classes: Sequence[str], batch: bool = False) -> Values:
    """Every averaging of every set metric from one combination's summary. With ``batch``, the
    summary is a batch of replicates and every value gains a leading replicate axis."""
    values: Values = {}
    for avg in axes.averagings:
        for metric in axes.set_metrics:
            value = avg.obj.reduce(summary, metric.obj, axes.zero_division)
            measure = set_measure(combination, avg.label, metric.label)
            if np.ndim(value) > batch:  # one value per class
                values.update({measure.at(class_=c): _number(v) for c, v in zip(classes, np.moveaxis(value, -1, 0))})
            else:
                values[measure] = _number(value)
    return values


def data_values(
    axes: Axes, reference: Any, prediction: Any, classes: Sequence[str], progress: Progress | None = None,
    weights: np.ndarray | None = None, curves: dict[tuple[str, str | None], Curve] | None = None,
) -> Values:
    """Every data metric, in one pass over the data (chunk states merge by ``+``); their curves
    go to ``curves``."""
    states = data_states(axes.data_metrics, reference, prediction, weights, progress)
    values: Values = {}
    for metric, state in zip(axes.data_metrics, states):
        tag = axes.data_tags[metric.label]
        values.update(named_values(metric.label, metric.who, metric.obj.compute(state), classes, tag, curves))
    return values


def data_states(
    metrics: Sequence[Any], reference: Any, prediction: Any, weights: np.ndarray | None = None,
    progress: Progress | None = None,
) -> list[Any]:
    """The state of each data metric over the data, chunk by chunk (chunk states merge by
    ``+``); ``weights`` (one per sample) go to metrics that take them (``weighted``)."""
    refused = unweighted(metrics) if weights is not None else None
    if refused:
        raise DataError(refused)
    states: list[Any] = [None] * len(metrics)
    for s in chunks(len(reference), progress):
        ref, pred = reference[s : s + CHUNK_ROWS], prediction[s : s + CHUNK_ROWS]
        parts = [
            m.obj.update(ref, pred) if weights is None else m.obj.update(ref, pred, weights[s : s + CHUNK_ROWS])
            for m in metrics
        ]
        states = [part if state is None else state + part for state, part in zip(states, parts)]
    return states


def named_values(
    label: str, who: str, result: Any, classes: Sequence[str], tag: str = "",
    curves: dict[tuple[str, str | None], Curve] | None = None,
) -> Values:
    """A data metric's result as measures: one number, or named numbers, per-class values
    (:class:`PerClass`) and per-level values (:class:`PerLevel`); a named number's name is
    followed by ``tag`` (:attr:`evalkit.axes.Axes.data_tags`). Its curves (:class:`Curve`,
    :class:`CurvePerClass`) go to ``curves`` by name and class (resampled and streamed values
    have none)."""
    named = {f"{name}{tag}": value for name, value in result.items()} if isinstance(result, dict) else {label: result}
    values: Values = {}
    for name, value in named.items():
        measure = Measure("data", name)
        if isinstance(value, Curve):
            if curves is not None:
                curves[name, None] = value
        elif isinstance(value, CurvePerClass):
            if len(value.curves) != len(classes):
                raise PluginContractError(f"{who}: {name} has {len(value.curves)} per-class curves for {len(classes)} classes")
            if curves is not None:
                curves.update({(name, c): curve for c, curve in zip(classes, value.curves)})
        elif isinstance(value, PerClass):
            if len(value.values) != len(classes):
                raise PluginContractError(f"{who}: {name} has {len(value.values)} per-class values for {len(classes)} classes")
            values.update({measure.at(class_=c): float(v) for c, v in zip(classes, value.values)})
        elif isinstance(value, PerLevel):
            values.update({measure.at(level=i): float(v) for i, v in enumerate(value.values)})
        elif np.ndim(value) == 0:
            values[measure] = float(value)
        else:
            raise PluginContractError(
                f"{who}: compute() returned an array for {name!r}; wrap it as PerClass(values) or "
                "PerLevel(values) (from evalkit.plugin) to say what its values are"
            )
    return values


def _number(value: Any) -> Any:
    """A float, or a float64 array of replicates."""
    return float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=np.float64)


def summarize(
    combination: Combination, reference: Any, prediction: Any, axes: Axes, progress: Progress | None = None,
    tables: list[CardinalityTable] | None = None, weights: Any = None,
) -> Summary:
    """Fill and reduce the cardinality table chunk by chunk; chunk summaries merge by ``+``.
    With ``tables``, the checked chunk tables are appended to it; with ``weights`` (one per
    sample), each sample counts that many times."""
    rep, tnorm, similarity = combination
    total = None
    n_classes = reference.shape[1] if isinstance(reference, np.ndarray) else len(reference.classes)
    who = rep.who + (f" with {tnorm.who}" if tnorm else "")
    for start in chunks(len(reference), progress):
        ref, pred = reference[start : start + CHUNK_ROWS], prediction[start : start + CHUNK_ROWS]
        table = rep.obj.cardinalities(
            ref, pred, tnorm=tnorm and tnorm.obj, similarity=similarity and similarity.obj
        )
        table.check((len(ref), n_classes), who)
        if tables is not None:
            tables.append(table)
        part = Summary.of(
            table, axes.sample_metrics, axes.zero_division, who,
            None if weights is None else weights[start : start + CHUNK_ROWS],
        )
        total = part if total is None else total + part
    if total is None:
        raise DataError(f"{who}: there are no samples to score; the reference is empty")
    return total


def chunks(n_rows: int, progress: Progress | None) -> Iterator[int]:
    """The first row of each chunk, advancing ``progress`` as each is done."""
    for start in range(0, n_rows, CHUNK_ROWS):
        yield start
        if progress:
            progress.advance(min(CHUNK_ROWS, n_rows - start))
