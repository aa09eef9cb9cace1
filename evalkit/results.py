"""Tidy result rows: every table, report and JSON document is rendered from these."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

COLUMNS = ("system", "representation", "similarity", "tnorm", "averaging", "metric", "class", "level", "value")


@dataclass(frozen=True)
class Row:
    """One number: a metric of a system under one combination of components.

    Components are named as in the config (``hamacher(p=0.5)``); ``None`` means the component
    does not apply (crisp uses no T-norm; KL divergence uses no representation). ``class_`` is
    set for per-class values (averaging ``none``), ``level`` for per-level values of a metric
    that has levels (OmAP per λ).
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

    def as_dict(self) -> dict[str, Any]:
        row = asdict(self)
        row["class"] = row.pop("class_")
        value = row["value"]
        row["value"] = None if math.isnan(value) else value
        return {k: row[k] for k in COLUMNS}


@dataclass
class Results:
    """The rows of a run, with what produced them."""

    rows: list[Row]
    name: str = ""
    notes: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        from evalkit import __version__

        return {
            "name": self.name,
            "evalkit_version": __version__,
            "rows": [row.as_dict() for row in self.rows],
            "notes": self.notes,
            "config": self.config,
        }
