"""The engine: resolve components once, then reduce each system's data chunk by chunk.

For every system and every combination of the comparison axes, the representation fills the
cardinality table one chunk of rows at a time and the chunk is at once reduced to a
:class:`~evalkit.table.Summary`; averagings and metrics then read the merged summary.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from evalkit.contracts import who
from evalkit.errors import ConfigError
from evalkit.items import ItemSets
from evalkit.protocols import DataMetric, SetMetric
from evalkit.registry import Registry, label_of
from evalkit.results import Row
from evalkit.table import CHUNK_ROWS, CardinalityTable, Summary, concatenate

class Progress(Protocol):
    """Receives progress: ``start`` once per system with the rows to process, then ``advance``
    per chunk. The CLI shows it as a bar; the Python API passes None."""

    def start(self, label: str, total: int) -> None: ...

    def advance(self, rows: int) -> None: ...


@dataclass(frozen=True)
class Component:
    """A component instance (as the registry hands it out: guarded) with its display label."""

    label: str
    obj: Any

    @property
    def who(self) -> str:
        return who(self.obj)


def resolve(
    registry: Registry, kind: str, specs: Sequence[Any], where: Callable[[int], str], base: Path | None = None
) -> list[Component]:
    """Create each spec's component once; ``where(i)`` names the spec's place in the config and
    ``base`` is the folder that relative paths in parameters are resolved against."""
    components = []
    for index, spec in enumerate(specs):
        components.append(Component(label_of(spec), registry.create(kind, spec, where(index), base)))
    labels = [c.label for c in components]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise ConfigError(f"{where(labels.index(duplicates[0]))}: {kind} {duplicates[0]!r} is listed twice")
    return components


@dataclass(frozen=True)
class Plan:
    """The resolved comparison axes of a run."""

    representations: list[Component]
    tnorms: list[Component]
    similarities: list[Component]
    averagings: list[Component]
    metrics: list[Component]
    zero_division: float

    @property
    def data_kind(self) -> str:
        """What every representation of the run reads: "matrix" or "items"."""
        kinds = {rep.obj.data for rep in self.representations}
        if len(kinds) > 1:
            listed = ", ".join(f"{rep.label} reads {rep.obj.data}" for rep in self.representations)
            raise ConfigError(f"the representations read different kinds of data ({listed}); run them in separate configs")
        kind = kinds.pop()
        if kind != "matrix" and self.data_metrics:
            names = ", ".join(m.label for m in self.data_metrics)
            raise ConfigError(f"metrics {names} read membership matrices, but {self.representations[0].who} reads {kind}")
        return kind

    @functools.cached_property
    def set_metrics(self) -> list[Component]:
        return [m for m in self.metrics if isinstance(m.obj, SetMetric)]

    @functools.cached_property
    def data_metrics(self) -> list[Component]:
        return [m for m in self.metrics if isinstance(m.obj, DataMetric)]

    @property
    def ranks_only(self) -> bool:
        """Only metrics that rank predictions (``ranks = True``: mAP, OmAP): predictions are then
        scores, any finite value (logits too), not memberships in [0, 1]."""
        return not self.set_metrics and all(getattr(m.obj, "ranks", False) for m in self.data_metrics)

    def combinations(self) -> Iterable[tuple[Component, Component | None, Component | None]]:
        """(representation, tnorm, similarity) triples; an unused axis is not varied."""
        for rep in self.representations:
            uses = rep.obj.uses
            if "similarity" in uses and not self.similarities:
                raise ConfigError(f"{rep.who} needs a similarity; add `similarity:` to the config")
            if "tnorm" in uses and not self.tnorms:
                raise ConfigError(f"{rep.who} needs a T-norm; add `tnorm:` to the config")
            for tnorm in self.tnorms if "tnorm" in uses else [None]:
                for similarity in self.similarities if "similarity" in uses else [None]:
                    yield rep, tnorm, similarity

    def set_combinations(self) -> list[tuple[Component, Component | None, Component | None]]:
        """The combinations that set metrics are computed for (none without set metrics)."""
        return list(self.combinations()) if self.set_metrics else []

    @functools.cached_property
    def sample_metrics(self) -> list[SetMetric]:
        """The set metrics whose per-sample values some averaging needs (each once)."""
        wanted = [c.obj for c in self.set_metrics]
        return list({id(m): m for avg in self.averagings for m in avg.obj.sample_metrics(wanted)}.values())

    def work(self, n_rows: int) -> int:
        """Rows to process for one system, for progress bars."""
        passes = sum(1 for _ in self.combinations()) if self.set_metrics else 0
        return n_rows * (passes + (1 if self.data_metrics else 0))


def score_system(
    system: str, reference: Any, prediction: Any, plan: Plan, classes: Sequence[str],
    progress: Progress | None = None, keep: dict[tuple, CardinalityTable] | None = None,
) -> Values:
    """Every value for one system: each combination of the axes, then the data metrics. With
    ``keep``, each combination's whole per-sample table is kept there (for resampling)."""
    if progress:
        progress.start(f"evaluating {system}", plan.work(len(reference)))
    checking = [s.obj for s in plan.similarities if hasattr(s.obj, "check")]
    if checking and isinstance(reference, ItemSets):
        samples = {**reference.by_sample("reference"), **prediction.by_sample(system)}
        for similarity in checking:
            similarity.check(samples)
    values: Values = {}
    for combination in plan.set_combinations():
        tables = [] if keep is not None else None
        summary = summarize(combination, reference, prediction, plan, progress, tables)
        if tables is not None:
            keep[combination_key(combination)] = concatenate(tables)
        values.update(set_values(combination, summary, plan))
    if plan.data_metrics:
        for metric in plan.data_metrics:
            if hasattr(metric.obj, "prepare"):
                metric.obj.prepare(classes)
        values.update(data_values(plan, reference, prediction, progress))
    return values


#: What one system scores: ("set", representation, similarity, tnorm, averaging, metric) or
#: ("data", metric) -> a value, a per-class array, or (data metrics) a mapping of named values.
Values = dict[tuple, Any]


def combination_key(combination: tuple) -> tuple:
    """(representation, similarity, tnorm) labels of a (representation, tnorm, similarity)."""
    rep, tnorm, similarity = combination
    return (rep.label, similarity and similarity.label, tnorm and tnorm.label)


def set_values(combination: tuple, summary: Summary, plan: Plan) -> Values:
    """Every averaging of every set metric from one combination's summary."""
    key = combination_key(combination)
    return {
        ("set", *key, avg.label, metric.label): avg.obj.reduce(summary, metric.obj, plan.zero_division)
        for avg in plan.averagings
        for metric in plan.set_metrics
    }


def data_values(plan: Plan, reference: Any, prediction: Any, progress: Progress | None = None) -> Values:
    """Every data metric, in one pass over the data (chunk states merge by +)."""
    states: list[Any] = [None] * len(plan.data_metrics)
    for s in _chunks(len(reference), progress):
        ref, pred = reference[s : s + CHUNK_ROWS], prediction[s : s + CHUNK_ROWS]
        parts = [m.obj.update(ref, pred) for m in plan.data_metrics]
        states = [part if state is None else state + part for state, part in zip(states, parts)]
    return {("data", m.label): m.obj.compute(state) for m, state in zip(plan.data_metrics, states)}


def value_rows(system: str, values: Values, classes: Sequence[str]) -> list[Row]:
    """The tidy rows of one system's values (a per-class array: one row per class)."""
    rows: list[Row] = []
    for key, value in values.items():
        if key[0] == "data":
            rows += data_rows(system, key[1], value, classes)
        elif np.ndim(value):
            rows += [Row(system, *key[1:], float(v), c) for c, v in zip(classes, value)]
        else:
            rows.append(Row(system, *key[1:], float(value)))
    return rows


def data_rows(system: str, label: str, value: Any, classes: Sequence[str]) -> list[Row]:
    """Rows of a data metric: one value, or several named ones (``{"omap": ...,
    "omap_per_level": array}``). An array named ``*_per_class`` gives one row per class, any
    other array one row per level."""
    named = value if isinstance(value, dict) else {label: value}
    rows = []
    for name, result in named.items():
        base = (system, None, None, None, None, name)
        if not np.ndim(result):
            rows.append(Row(*base, float(result)))
        elif name.endswith("_per_class"):
            rows += [Row(*base, float(v), class_=c) for c, v in zip(classes, result)]
        else:
            rows += [Row(*base, float(v), level=i) for i, v in enumerate(result)]
    return rows


def summarize(
    combination: tuple, reference: Any, prediction: Any, plan: Plan, progress: Progress | None = None,
    tables: list[CardinalityTable] | None = None,
) -> Summary:
    """Fill and reduce the cardinality table chunk by chunk; chunk summaries merge by ``+``.
    With ``tables``, the checked chunk tables are appended to it."""
    rep, tnorm, similarity = combination
    total = None
    n_classes = reference.shape[1] if isinstance(reference, np.ndarray) else len(reference.classes)
    who = rep.who + (f" with {tnorm.who}" if tnorm else "")
    for start in _chunks(len(reference), progress):
        ref, pred = reference[start : start + CHUNK_ROWS], prediction[start : start + CHUNK_ROWS]
        table = rep.obj.cardinalities(
            ref, pred, tnorm=tnorm and tnorm.obj, similarity=similarity and similarity.obj
        )
        table.check((len(ref), n_classes), who)
        if tables is not None:
            tables.append(table)
        part = Summary.of(table, plan.sample_metrics, plan.zero_division, who)
        total = part if total is None else total + part
    return total


def _chunks(n_rows: int, progress: Progress | None) -> Iterable[int]:
    for start in range(0, n_rows, CHUNK_ROWS):
        yield start
        if progress:
            progress.advance(min(CHUNK_ROWS, n_rows - start))
