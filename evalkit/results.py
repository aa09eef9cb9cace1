"""Tidy result rows: every table, plot, report and JSON document is rendered from these."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from evalkit.measures import Measure
from evalkit.version import __version__

COLUMNS = (
    "system", "representation", "similarity", "tnorm", "averaging", "metric", "class", "level",
    "sweep", "sweep_value", "value", "ci_low", "ci_high",
)


def _number(value: float | None) -> float | None:
    """JSON has no NaN: an undefined value is null."""
    return None if value is None or math.isnan(value) else value


@dataclass(frozen=True)
class Row:
    """One number: a metric of a system under one combination of components.

    Components are named as in the config (``hamacher(p=0.5)``); ``None`` means the component
    does not apply (crisp uses no T-norm; KL divergence uses no representation). ``class_`` is
    set for per-class values (averaging ``none``), ``level`` for per-level values of a metric
    that has levels (OmAP per λ), ``sweep`` and ``sweep_value`` for the rows of a sweep (what
    was varied, e.g. ``offset`` or ``tnorm.p``, and its value). ``ci_low`` and ``ci_high`` bound
    the confidence interval when one was asked for (bootstrap over samples, or jackknife across
    a system's runs).
    """

    system: str
    representation: str | None
    similarity: str | None
    tnorm: str | None
    averaging: str | None
    metric: str
    value: float
    class_: str | None = None
    level: int | None = None
    sweep: str | None = None
    sweep_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None

    @classmethod
    def of(
        cls, system: str, measure: Measure, value: float, ci_low: float | None = None, ci_high: float | None = None,
    ) -> Row:
        return cls(
            system, measure.representation, measure.similarity, measure.tnorm, measure.averaging,
            measure.metric, value, measure.class_, measure.level, measure.sweep, measure.sweep_value,
            ci_low, ci_high,
        )

    @property
    def measure(self) -> Measure:
        """What was measured, but not for which system nor the value (a set metric always has an
        averaging; a data metric never has)."""
        return Measure(
            "set" if self.averaging is not None else "data", self.metric, self.representation,
            self.similarity, self.tnorm, self.averaging, self.class_, self.level, self.sweep, self.sweep_value,
        )

    def as_dict(self) -> dict[str, Any]:
        row = asdict(self)
        row["class"] = row.pop("class_")
        for key in ("value", "ci_low", "ci_high"):
            row[key] = _number(row[key])
        return {k: row[k] for k in COLUMNS}


@dataclass(frozen=True)
class Comparison:
    """A paired test of ``system`` against ``baseline`` on the same samples, for one measure:
    ``difference`` = system − baseline, and the two-sided ``p_value`` of "no difference"."""

    system: str
    baseline: str
    representation: str | None
    similarity: str | None
    tnorm: str | None
    averaging: str | None
    metric: str
    difference: float
    p_value: float
    method: str  # "permutation" or "bootstrap"
    resamples: int
    sweep_value: float | None = None

    @classmethod
    def of(
        cls, system: str, baseline: str, measure: Measure, difference: float, p_value: float, method: str,
        resamples: int,
    ) -> Comparison:
        return cls(
            system, baseline, measure.representation, measure.similarity, measure.tnorm, measure.averaging,
            measure.metric, difference, p_value, method, resamples, measure.sweep_value,
        )

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["difference"], out["p_value"] = _number(self.difference), _number(self.p_value)
        return out


@dataclass(frozen=True)
class Agreement:
    """Kendall's τ between the system rankings of two measures (each oriented so that higher is
    better), over ``n_systems`` systems."""

    measure_a: Measure
    measure_b: Measure
    tau: float
    p_value: float
    n_systems: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "measure_a": self.measure_a.label(), "measure_b": self.measure_b.label(),
            "tau": _number(self.tau), "p_value": _number(self.p_value), "n_systems": self.n_systems,
        }


@dataclass
class Results:
    """The rows of a run, with what produced them.

    ``provenance``: ``evalkit_version``, ``created`` (an ISO timestamp, the only field that
    differs between two runs of one config and seed), ``config_file`` and ``config_text`` (the
    YAML as written), and ``data``: for each file read, ``{"role", "system", "path", "sha256",
    "bytes"}``.
    """

    rows: list[Row]
    name: str = ""
    notes: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    agreement: list[Agreement] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    reports: list[str] = field(default_factory=list)  # the report files written (not a result)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "evalkit_version": __version__,
            "rows": [row.as_dict() for row in self.rows],
            "comparisons": [c.as_dict() for c in self.comparisons],
            "agreement": [a.as_dict() for a in self.agreement],
            "notes": self.notes,
            "config": self.config,
            "provenance": self.provenance,
        }


