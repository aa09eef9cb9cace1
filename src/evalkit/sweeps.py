"""Sweeps: a run repeated for each value of one varied quantity.

``vary: offset`` adds the value to the predictions (Harju & Mesaros's Figure 1);
``vary: FIELD.PARAMETER`` sets a component parameter (``tnorm.p``). The axes of every value are
built with the plan, so a value that a component rejects is reported before any data is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.axes import Axes, resolve
from evalkit.budget import amount
from evalkit.config import RangeConfig, SweepConfig, as_list
from evalkit.data import LabelMatrix
from evalkit.errors import ConfigError
from evalkit.registry import Registry, label_of

#: config field -> (component kind, Axes attribute)
FIELDS = {
    "representation": ("representation", "representations"), "tnorm": ("tnorm", "tnorms"),
    "similarity": ("similarity", "similarities"), "averaging": ("averaging", "averagings"),
    "metrics": ("metric", "metrics"),
}


#: Values a sweep may have: each is a whole run, and a range's count is checked before its list
#: is built (``stop: 1e300`` would be a MemoryError after a minute).
MAX_SWEEP = 10_000


def sweep_values(sweep: SweepConfig, where: Callable[..., str]) -> list[float]:
    """The values of a sweep (each finite, by the config's types); none, or more than
    :data:`MAX_SWEEP`, is an error."""
    count = sweep.count()
    if not count:
        raise ConfigError(f"{where('sweep', 'values')}: the sweep has no values; give at least one")
    if count > MAX_SWEEP:
        fix = "raise `step` or narrow `start`..`stop`" if isinstance(sweep.values, RangeConfig) else "list fewer"
        raise ConfigError(
            f"{where('sweep', 'values')}: the sweep has {amount(count)} values, more than the {MAX_SWEEP:,} a sweep may have "
            f"(each is a whole run); {fix}"
        )
    return sweep.value_list()


def sweep_axes(
    specs: list[Any], registry: Registry, where: Callable[..., str], base: Path | None, axes: Axes,
    sweep: SweepConfig, value: float,
) -> Axes:
    """The axes with the swept parameter set to ``value`` on every component of the field that
    has it; labels are as written less that parameter (so a line of a sweep plot is one label).
    ``specs`` are the field's specs as written."""
    if sweep.vary == "offset":
        return axes
    field_name, parameter = sweep.vary.split(".")
    kind, attribute = FIELDS[field_name]
    changed, accepting = [], 0
    for spec in specs:
        name = spec if isinstance(spec, str) else spec["name"]
        accepts = parameter in registry.entry(kind, name, where(field_name)).cls.Params.model_fields
        accepting += accepts
        changed.append({**({"name": spec} if isinstance(spec, str) else spec), parameter: value} if accepts else spec)
    if not accepting:
        names = ", ".join(s if isinstance(s, str) else s["name"] for s in specs) or "(none)"
        raise ConfigError(f"{where('sweep', 'vary')}: no {kind} of this config has a parameter {parameter!r} ({names})")
    labels = [label_of({k: v for k, v in spec.items() if k != parameter} if isinstance(spec, dict) else spec) for spec in specs]
    components = resolve(registry, kind, changed, lambda i: f"{where('sweep', 'vary')} ({parameter}={value:g})", base, labels)
    changes: dict[str, Any] = {attribute: components}  # one of the Axes' component lists
    return replace(axes, **changes)


def field_specs(config: Any, sweep: SweepConfig) -> list[Any]:
    """The specs of the field a parameter sweep varies (none for an offset sweep)."""
    return [] if sweep.vary == "offset" else as_list(getattr(config, sweep.vary.split(".")[0]))


def offset(data: Any, vary: str, samples: Sequence[str] | None, value: float) -> Any:
    """Predictions plus ``value`` (clipped to [0, 1]) in ``samples`` (by id; default: all). A
    sample named but absent is the caller's to report, once it has seen all the data."""
    if vary != "offset" or not isinstance(data, LabelMatrix):
        return data
    rows = np.ones(len(data), dtype=bool)
    if samples is not None:
        rows = np.isin(np.array(data.ids or (), dtype=object), list(samples)) if data.ids else ~rows
    values = data.values.copy()
    values[rows] = np.clip(values[rows] + value, 0.0, 1.0)
    return replace(data, values=values)
