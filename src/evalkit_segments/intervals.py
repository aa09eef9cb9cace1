"""Intervals of item data as columns: (cell, onset, offset), checked, from any form of events."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any, ClassVar, TypeVar

import numpy as np
from pydantic import BaseModel, Field

from evalkit.plugin import Array, BaseComponent, DataError, Intervals, ItemSets, ScoreSeries

P = TypeVar("P", bound=BaseModel)

#: The parameter of a representation that reads score series: the decision threshold.
THRESHOLD = Field(
    None, allow_inf_nan=False,
    description="for a system given as scores over time (score files): a frame scoring above this is detected, "
    "and runs of detected frames are its events (none: the system must be events)",
)

def intervals(items: Sequence[Any], where: str = "") -> np.ndarray:
    """Items as an (n, 2) float array of (onset, offset), checked."""
    try:
        flat = np.fromiter(chain.from_iterable(items), dtype=np.float64, count=2 * len(items))
        values = flat.reshape(len(items), 2)
    except (TypeError, ValueError):
        raise DataError(
            f"{where}segments are (onset, offset) pairs of numbers; got {list(items[:3])!r}"
        ) from None
    bad = ~np.isfinite(values).all(axis=1) | (values[:, 1] < values[:, 0]) | (values[:, 0] < 0)
    if bad.any():
        onset, offset = values[np.argmax(bad)]
        raise DataError(
            f"{where}segment ({onset:g}, {offset:g}) is not a valid interval: times must be "
            "finite, non-negative, and the offset not before the onset"
        )
    return values


def cell_intervals(data: ItemSets, threshold: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cell, onset, offset) of every interval of a batch, as listed (not merged); cells numbered
    sample-major. Score series become their detections above ``threshold``."""
    if isinstance(data.samples, Intervals):  # an event list read as columns: checked by its loader
        return data.samples.cells()
    if isinstance(data.samples, ScoreSeries):
        if threshold is None:
            raise DataError(
                f"{data.source}: scores over time, not events; give the representation `threshold:` (a frame "
                "scoring above it is detected, as in sed_scores_eval), or score them with psds"
            )
        return data.samples.detections(threshold)
    cells = [items for sample in data.samples for items in sample]
    values = intervals(list(chain.from_iterable(cells)), f"{data.source}: ")
    cell = np.repeat(np.arange(len(cells)), np.fromiter(map(len, cells), dtype=np.intp, count=len(cells)))
    return cell, values[:, 0], values[:, 1]


class IntervalSimilarity(BaseComponent[P]):
    """A similarity of two intervals from their four times: ``matrix`` and ``pairs`` check the
    ``(onset, offset)`` items and hand the times, broadcast, to ``_similarity``."""

    name: ClassVar[str]

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        a, b = intervals(xs, f"{self.name}: "), intervals(ys, f"{self.name}: ")
        return self._similarity(a[:, None, 0], a[:, None, 1], b[None, :, 0], b[None, :, 1])

    def pairs(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        a, b = intervals(xs, f"{self.name}: "), intervals(ys, f"{self.name}: ")
        return self._similarity(a[:, 0], a[:, 1], b[:, 0], b[:, 1])

    def _similarity(self, on_a: Array, off_a: Array, on_b: Array, off_b: Array) -> Array:
        raise NotImplementedError

