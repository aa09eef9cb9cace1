"""The comparison axes of a run, resolved: each component created once, with its label.

A run compares every representation with every T-norm and similarity it uses, under every
averaging, for every metric. :class:`Axes` holds those components and says which combinations
exist; :mod:`evalkit.plan` builds it (and checks it) before any data is read.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.contracts import who
from evalkit.errors import ConfigError
from evalkit.protocols import DataMetric, SetMetric, optional
from evalkit.registry import Registry, label_of


@dataclass(frozen=True)
class Component:
    """A component instance (as the registry hands it out: guarded) with its display label."""

    label: str
    obj: Any

    @property
    def who(self) -> str:
        return who(self.obj)


def resolve(
    registry: Registry, kind: str, specs: Sequence[Any], where: Callable[[int], str], base: Path | None = None,
    labels: Sequence[str] | None = None,
) -> list[Component]:
    """Create each spec's component once; ``where(i)`` names the spec's place in the config and
    ``base`` is the folder that relative paths in parameters are resolved against. ``labels``
    replace the labels made from the specs (a sweep shows the specs as written)."""
    components = [
        Component(labels[index] if labels else label_of(spec), registry.create(kind, spec, where(index), base))
        for index, spec in enumerate(specs)
    ]
    shown = [c.label for c in components]
    duplicates = sorted({label for label in shown if shown.count(label) > 1})
    if duplicates:
        raise ConfigError(f"{where(shown.index(duplicates[0]))}: {kind} {duplicates[0]!r} is listed twice")
    return components


#: (representation, T-norm or None, similarity or None)
Combination = tuple[Component, "Component | None", "Component | None"]


@dataclass(frozen=True)
class Axes:
    """The resolved comparison axes of a run."""

    representations: list[Component]
    tnorms: list[Component]
    similarities: list[Component]
    averagings: list[Component]
    metrics: list[Component]
    zero_division: float

    def check(self) -> str:
        """What every representation reads ("matrix" or "items"), after checking that the axes
        fit together: one kind of data, data metrics only on matrices, each representation's
        T-norm or similarity given."""
        kinds = {rep.obj.data for rep in self.representations}
        if len(kinds) > 1:
            listed = ", ".join(f"{rep.label} reads {rep.obj.data}" for rep in self.representations)
            raise ConfigError(f"the representations read different kinds of data ({listed}); run them in separate configs")
        kind = kinds.pop()
        if kind != "matrix" and self.data_metrics:
            names = ", ".join(m.label for m in self.data_metrics)
            raise ConfigError(f"metrics {names} read membership matrices, but {self.representations[0].who} reads {kind}")
        for rep in self.representations:
            for needed, axis in (("similarity", self.similarities), ("tnorm", self.tnorms)):
                if needed in rep.obj.uses and not axis:
                    article = "a similarity" if needed == "similarity" else "a T-norm"
                    raise ConfigError(f"{rep.who} needs {article}; add `{needed}:` to the config")
        return kind

    @property
    def data_kind(self) -> str:
        return {rep.obj.data for rep in self.representations}.pop()

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
        return not self.set_metrics and all(optional(m.obj, "ranks") for m in self.data_metrics)

    def combinations(self) -> Iterator[Combination]:
        """(representation, tnorm, similarity) triples; an unused axis is not varied."""
        for rep in self.representations:
            uses = rep.obj.uses
            for tnorm in self.tnorms if "tnorm" in uses else [None]:
                for similarity in self.similarities if "similarity" in uses else [None]:
                    yield rep, tnorm, similarity

    def set_combinations(self) -> list[Combination]:
        """The combinations that set metrics are computed for (none without set metrics)."""
        return list(self.combinations()) if self.set_metrics else []

    @functools.cached_property
    def sample_metrics(self) -> list[SetMetric]:
        """The set metrics whose per-sample values some averaging needs (each once)."""
        wanted = [c.obj for c in self.set_metrics]
        return list({id(m): m for avg in self.averagings for m in avg.obj.sample_metrics(wanted)}.values())

    def work(self, n_rows: int) -> int:
        """Rows to process for one system, for progress bars."""
        return n_rows * (len(self.set_combinations()) + (1 if self.data_metrics else 0))
