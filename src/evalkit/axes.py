"""The comparison axes of a run, resolved: each component created once, with its label.

A run compares every representation with every T-norm and similarity it uses, under every
averaging, for every metric. :class:`Axes` holds those components and says which combinations
exist; :mod:`evalkit.plan` builds it (and checks it) before any data is read.
"""

from __future__ import annotations

import copy
import functools
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from evalkit.contracts import who
from evalkit.discovery import default_registry
from evalkit.errors import ConfigError, EngineError, EvalkitError, UnknownComponentError
from evalkit.protocols import DataMetric, SetMetric, optional
from evalkit.registry import Registry, label_of


@dataclass(frozen=True)
class Component:
    """A component instance (as the registry hands it out: guarded) with its display label, and
    how it was made: its kind, its spec as written, the folder its relative paths start from.

    It travels (pickles) as that recipe, never as the plugin's object, and is made again where it
    lands from that process's own registry (:func:`rebuilt`): a Dask worker gets specs, not
    objects that hold files, models or the client's plugins. Two components are equal when they
    were made the same way."""

    label: str
    obj: Any = field(compare=False)
    spec: Any = None  # as written in the config (a swept component: with the sweep's value)
    kind: str = ""
    base: Path | None = None  # what the registry resolved relative paths against

    @property
    def who(self) -> str:
        return who(self.obj)

    def __hash__(self) -> int:  # a spec may be a mapping: the kind and label stand for it
        return hash((self.kind, self.label))

    def __reduce__(self) -> tuple[Any, ...]:
        return rebuilt, (self.kind, self.spec, self.base, self.label, self.who)

    def __deepcopy__(self, memo: dict[int, Any]) -> Component:
        """A copy in this process keeps the object (an Evaluator's components may come from a
        registry of its own, which the recipe could not find again)."""
        return Component(self.label, copy.deepcopy(self.obj, memo), copy.deepcopy(self.spec, memo), self.kind, self.base)

    @property
    def given(self) -> dict[str, Any]:
        """The parameters as written (none for a bare name)."""
        return {k: v for k, v in self.spec.items() if k != "name"} if isinstance(self.spec, dict) else {}


def resolve(
    registry: Registry, kind: str, specs: Sequence[Any], where: Callable[[int], str], base: Path | None = None,
    labels: Sequence[str] | None = None,
) -> list[Component]:
    """Create each spec's component once; ``where(i)`` names the spec's place in the config and
    ``base`` is the folder that relative paths in parameters are resolved against. ``labels``
    replace the labels made from the specs (a sweep shows the specs as written)."""
    components = [
        Component(labels[index] if labels else label_of(spec), registry.create(kind, spec, where(index), base), spec, kind, base)
        for index, spec in enumerate(specs)
    ]
    shown = [c.label for c in components]
    duplicates = sorted({label for label in shown if shown.count(label) > 1})
    if duplicates:
        raise ConfigError(f"{where(shown.index(duplicates[0]))}: {kind} {duplicates[0]!r} is listed twice")
    return components


def rebuilt(kind: str, spec: Any, base: Path | None, label: str, made_by: str) -> Component:
    """A component made again from its recipe in the process it was unpickled in (a Dask
    worker), by that process's registry, as the plan made it; ``made_by`` is how the sending
    process named it (its plugin and distribution), for the message when this process cannot."""
    try:
        obj = default_registry().create(kind, spec, f"{made_by}, sent to {_this_process()}", base)
    except UnknownComponentError:
        raise EngineError(
            f"{made_by} is not installed on {_this_process()}: install the distribution that provides it there, "
            "as where the run was planned"
        ) from None
    except EvalkitError as exc:
        raise EngineError(
            f"{made_by} cannot be made again on {_this_process()} ({exc}); install the same version of its "
            "distribution there, with the files it reads, as where the run was planned"
        ) from None
    return Component(label, obj, spec, kind, base)


def _this_process() -> str:
    """How messages name this process: the Dask worker running the task, or the process."""
    host = socket.gethostname()
    try:
        from distributed import get_worker

        return f"the Dask worker {get_worker().address} (host {host})"
    except (ImportError, ValueError):  # no Dask, or not inside a Dask task
        return f"process {os.getpid()} (host {host})"


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

    def __getstate__(self) -> dict[str, Any]:
        """The axes without what the cached properties found, which holds plugin objects."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def check(self) -> str:
        """What the run reads ("matrix" or "items"), after checking that the axes fit together:
        one kind of data for the data metrics and the representations (which a run of only
        item-reading data metrics, such as PSDS, does not use), each representation's T-norm or
        similarity given."""
        readers = [(m.label, optional(m.obj, "data")) for m in self.data_metrics]
        if self.set_metrics or any(kind == "matrix" for _, kind in readers):  # not the default for a PSDS-only run
            readers = [(rep.label, rep.obj.data) for rep in self.representations] + readers
        kinds = {kind for _, kind in readers}
        if len(kinds) > 1:
            listed = ", ".join(f"{label} reads {kind}" for label, kind in readers)
            raise ConfigError(
                f"the representations and metrics read different kinds of data ({listed}); run them in separate configs"
            )
        kind = kinds.pop() if kinds else self.representations[0].obj.data
        for rep in self.representations:
            for needed, axis in (("similarity", self.similarities), ("tnorm", self.tnorms)):
                if needed in rep.obj.uses and not axis:
                    article = "a similarity" if needed == "similarity" else "a T-norm"
                    raise ConfigError(f"{rep.who} needs {article}; add `{needed}:` to the config")
        for metric in self.set_metrics:
            reasons = [self.undefined(avg, metric) for avg in self.averagings]
            if reasons and all(reasons):
                averagings = ", ".join(avg.label for avg in self.averagings)
                raise ConfigError(
                    f"metrics: {metric.label} has no value under the averaging of this run ({averagings}), since "
                    f"{reasons[0]}; add micro or samples to `averaging:`, or drop {metric.label} from `metrics:`"
                )
        return kind

    @staticmethod
    def undefined(averaging: Component, metric: Component) -> str | None:
        """Why ``averaging`` gives ``metric`` no value (None: it gives one)."""
        undefined_for = optional(averaging.obj, "undefined_for")
        return None if undefined_for is None else undefined_for(metric.obj)

    @functools.cached_property
    def set_metrics(self) -> list[Component]:
        return [m for m in self.metrics if isinstance(m.obj, SetMetric)]

    @functools.cached_property
    def data_metrics(self) -> list[Component]:
        return [m for m in self.metrics if isinstance(m.obj, DataMetric)]

    @functools.cached_property
    def data_tags(self) -> dict[str, str]:
        """Per data metric label, what its measures' names are followed by: for metrics listed
        under one name with different parameters (the two DCASE PSDS scenarios), the parameters
        that tell them apart, ``"(dtc_threshold=0.7, gtc_threshold=0.7)"``; else nothing."""
        tags = {}
        for metric in self.data_metrics:
            alike = [m for m in self.data_metrics if m.obj.name == metric.obj.name]
            keys = dict.fromkeys(k for m in alike for k in m.given)
            differing = [k for k in keys if len({repr(m.given.get(k)) for m in alike}) > 1]
            shown = ", ".join(f"{k}={metric.given[k]}" for k in differing if k in metric.given)
            tags[metric.label] = f"({shown})" if len(alike) > 1 else ""
        return tags

    @functools.cached_property
    def lower_is_better(self) -> list[str]:
        """The results that improve as they fall (an error rate, a loss) as the rows name them: a
        metric's label, or each name a data metric lists (its rates, not the thresholds it gives
        beside them) and its per-class name, followed by its tag (:attr:`data_tags`)."""
        names = []
        for metric in self.metrics:
            lower = optional(metric.obj, "lower_is_better")
            if lower is True:
                names.append(metric.label)
            elif lower:
                tag = self.data_tags.get(metric.label, "")
                names += [f"{name}{kind}{tag}" for name in lower for kind in ("", "_per_class")]
        return names

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
    def ceiling(self) -> Axes | None:
        """The axes of the ceiling, or None when there is none to state: the set metrics of each
        representation that uses a T-norm. The ceiling is the reference scored against itself, the
        most a system can reach on it with that T-norm: 1 for the minimum (T(a, a) = a), Σ μ² / Σ μ
        for the product's micro precision. It takes the run's reduction once more, with the
        reference as the one prediction and no replicates: one system's cost at most. Made once
        per axes: made anew for each streamed chunk, it cost more than the chunk's T-norm (its
        metrics checked against runtime protocols by isinstance)."""
        representations = [r for r in self.representations if "tnorm" in r.obj.uses]
        if not representations or not self.tnorms or not self.set_metrics:
            return None
        return replace(self, representations=representations, metrics=self.set_metrics)

    @functools.cached_property
    def sample_metrics(self) -> list[SetMetric]:
        """The set metrics whose per-sample values some averaging needs (each once)."""
        wanted = [c.obj for c in self.set_metrics]
        return list({id(m): m for avg in self.averagings for m in avg.obj.sample_metrics(wanted)}.values())

    def work(self, n_rows: int) -> int:
        """Rows to process for one system, for progress bars."""
        return n_rows * (len(self.set_combinations()) + (1 if self.data_metrics else 0))


def unweighted(metrics: Sequence[Component]) -> str | None:
    """Why sample weights cannot be used with these data metrics (some are not ``weighted``),
    or None when they can."""
    refused = [m.label for m in metrics if not optional(m.obj, "weighted")]
    if not refused:
        return None
    return f"metric(s) {', '.join(map(repr, refused))} do not take sample weights; leave out the weights or those metrics"
