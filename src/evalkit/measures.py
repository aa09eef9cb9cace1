"""What a value measures: one small typed record from the engine to the rows, the statistics,
the tables and the plots, so that nothing unpacks a key by position or parses a label back.

A data metric says what its arrays are with :class:`PerClass` and :class:`PerLevel` instead of
by a name suffix, and reports a curve as a :class:`Curve` (one per class: :class:`CurvePerClass`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

import numpy as np

#: The fields that name what was measured, in the order labels show them.
PARTS = ("representation", "similarity", "tnorm", "averaging", "metric", "class_", "level")


@dataclass(frozen=True)
class Measure:
    """One measured quantity, independent of the system and of the value.

    ``kind`` is "set" for a set metric under a representation and an averaging (components are
    named as in the config, ``hamacher(p=0.5)``; a component that does not apply is ``None``),
    "data" for a data metric (KLD, mAP, ...). ``class_`` is set for a per-class value,
    ``level`` for a per-level one (OmAP per λ), ``sweep`` and ``sweep_value`` for the values of a
    sweep.
    """

    kind: Literal["set", "data"]
    metric: str
    representation: str | None = None
    similarity: str | None = None
    tnorm: str | None = None
    averaging: str | None = None
    class_: str | None = None
    level: int | None = None
    sweep: str | None = None
    sweep_value: float | None = None

    @property
    def single(self) -> bool:
        """One number for the whole data set (not one of a class or level)."""
        return self.class_ is None and self.level is None

    def at(self, **changes: Any) -> Measure:
        """This measure with some parts changed (a class, a level, a sweep value)."""
        return replace(self, **changes)

    def parts(self, keys: Sequence[str] = PARTS) -> list[tuple[str, Any]]:
        """(field, value) of the parts that apply, in label order."""
        return [(k, getattr(self, k)) for k in keys if getattr(self, k) is not None]

    def label(self, keys: Sequence[str] = PARTS, sweep: bool = True) -> str:
        """``fuzzy · minimum · micro · f1``: the parts that apply, and (with ``sweep``) the sweep
        value last."""
        shown = [f"λ={v}" if k == "level" else str(v) for k, v in self.parts(keys)]
        if sweep and self.sweep is not None and self.sweep_value is not None:
            shown.append(f"{self.sweep}={self.sweep_value:g}")
        return " · ".join(shown)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class PerClass:
    """A data metric's value for each class, in the data's class order."""

    values: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", np.asarray(self.values, dtype=np.float64))


@dataclass(frozen=True)
class PerLevel:
    """A data metric's value for each level (0, 1, ...), e.g. OmAP at each ontology distance λ."""

    values: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", np.asarray(self.values, dtype=np.float64))


@dataclass(frozen=True)
class Curve:
    """A curve a data metric reports beside its numbers (the PSD-ROC of PSDS, a PR curve): its
    points in drawing order, ``y`` held from each ``x`` to the next when ``steps``. Reports draw
    it; the JSON report keeps its points."""

    x: np.ndarray
    y: np.ndarray
    x_label: str
    y_label: str
    steps: bool = True

    def __post_init__(self) -> None:
        for name in ("x", "y"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.float64))
        if self.x.shape != self.y.shape or self.x.ndim != 1:
            raise ValueError(f"a curve's x and y are two arrays of one length; got shapes {self.x.shape} and {self.y.shape}")


@dataclass(frozen=True)
class CurvePerClass:
    """A data metric's curve for each class, in column order (a ROC or PR curve per class)."""

    curves: tuple[Curve, ...]

