"""Item sets: per sample and class, a list of items (keywords, labels, segments, ...).

The data of representations that compare items by a similarity (soft cardinality, exact and
thresholded matching) rather than memberships.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, overload

import numpy as np

from evalkit.errors import DataError
from evalkit.gather import gather
from evalkit.loading import check_header, clean_ids, clean_items
from evalkit.score_series import ScoreSeries

Items = tuple[Any, ...]

#: The class of item lists that are not grouped by class.
DEFAULT_CLASS = "items"


class Intervals(Sequence[tuple[Items, ...]]):
    """Time intervals per sample and class, held as four columns: the samples of an event list.

    An event list of a million rows would be a million Python tuples; as columns it is read,
    reordered (:meth:`take`), cut (slices) and scored (:meth:`cells`) by numpy. It is a sequence
    of samples like any ``ItemSets.samples``: indexing a sample gives its classes' intervals,
    sorted, with overlapping or touching ones merged (built once, when first asked for); with
    ``merge=False`` they are kept as listed (for similarities that compare events one by one).
    """

    def __init__(
        self, sample: np.ndarray, klass: np.ndarray, onset: np.ndarray, offset: np.ndarray, n_samples: int, n_classes: int,
        merge: bool = True,
    ) -> None:
        self.sample, self.klass = np.asarray(sample, np.int64), np.asarray(klass, np.int64)
        self.onset, self.offset = np.asarray(onset, np.float64), np.asarray(offset, np.float64)
        self.n_samples, self.n_classes, self.merge = n_samples, n_classes, merge

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cell, onset, offset) of every interval, cells numbered sample-major; in no order, not
        merged (segment representations sort and merge)."""
        return self.sample * self.n_classes + self.klass, self.onset, self.offset

    def latest_end(self) -> float | None:
        return float(self.offset.max()) if self.offset.size else None

    def take(self, rows: np.ndarray) -> Intervals:
        """These samples, in this order, each as often as listed; -1 is an empty sample."""
        keep, place = gather(self.sample, self.n_samples, rows)
        return Intervals(place, self.klass[keep], self.onset[keep], self.offset[keep], len(rows), self.n_classes, self.merge)

    def select(self, positions: Sequence[int]) -> Intervals:
        """The classes at ``positions`` (-1: a class without intervals), in that order."""
        new = np.full(self.n_classes, -1, np.int64)
        for to, old in enumerate(positions):
            if old >= 0:
                new[old] = to
        place = new[self.klass]
        keep = place >= 0
        return Intervals(
            self.sample[keep], place[keep], self.onset[keep], self.offset[keep], self.n_samples, len(positions), self.merge,
        )

    def __len__(self) -> int:
        return self.n_samples

    @overload
    def __getitem__(self, row: int) -> tuple[Items, ...]: ...

    @overload
    def __getitem__(self, row: slice) -> Intervals: ...

    def __getitem__(self, row: int | slice) -> tuple[Items, ...] | Intervals:
        if isinstance(row, slice):
            return self.take(np.arange(self.n_samples)[row])
        return self._rows[row]

    def __iter__(self) -> Iterator[tuple[Items, ...]]:
        return iter(self._rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._rows == tuple(other)

    def __hash__(self) -> int:
        return hash(self._rows)

    def __add__(self, other: Sequence[tuple[Items, ...]]) -> Intervals | tuple[tuple[Items, ...], ...]:
        """These samples, then ``other``'s: still columns when ``other`` is intervals of as many
        classes (parts of one event list, read apart)."""
        if isinstance(other, Intervals) and other.n_classes == self.n_classes and other.merge == self.merge:
            return Intervals(
                np.r_[self.sample, other.sample + self.n_samples], np.r_[self.klass, other.klass],
                np.r_[self.onset, other.onset], np.r_[self.offset, other.offset], self.n_samples + other.n_samples,
                self.n_classes, self.merge,
            )
        return self._rows + tuple(other)

    def __radd__(self, other: Sequence[tuple[Items, ...]]) -> tuple[tuple[Items, ...], ...]:
        return tuple(other) + self._rows

    def __repr__(self) -> str:
        return f"Intervals({self.onset.size} intervals of {self.n_samples} samples x {self.n_classes} classes)"

    @functools.cached_property
    def _rows(self) -> tuple[tuple[Items, ...], ...]:
        """Per sample and class, the sorted intervals, overlapping or touching ones merged (unless
        ``merge`` is off)."""
        key, onset, offset = self.cells()
        if not key.size:
            return tuple(((),) * self.n_classes for _ in range(self.n_samples))
        if self.merge:
            key, onset, offset = _merged(key, onset, offset)
        else:
            order = np.lexsort((offset, onset, key))
            key, onset, offset = key[order], onset[order], offset[order]
        pairs = list(zip(onset.tolist(), offset.tolist()))
        group_at = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        group_end = np.r_[group_at[1:], len(key)]
        n_classes = self.n_classes
        rows: list[list[Items]] = [[()] * n_classes for _ in range(self.n_samples)]
        for k, a, b in zip(key[group_at].tolist(), group_at.tolist(), group_end.tolist()):
            rows[k // n_classes][k % n_classes] = tuple(pairs[a:b])
        return tuple(map(tuple, rows))


def _merged(key: np.ndarray, onset: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each cell's intervals sorted, those that overlap or touch merged into one."""
    import pandas as pd  # type: ignore[import-untyped]

    # By onset, then (stable) by cell: equal onsets may come in any order, since the merge
    # takes them together whatever their offsets. Two sorts are 3x faster than lexsort.
    order = np.argsort(onset)
    order = order[np.argsort(key[order], kind="stable")]
    key, onset, offset = key[order], onset[order], offset[order]
    reach = pd.Series(offset).groupby(key).cummax().to_numpy()  # the furthest end so far, per cell
    first = np.r_[True, key[1:] != key[:-1]]
    starts = first | (onset > np.r_[0.0, reach[:-1]])  # a gap after everything before: a new interval
    start_at = np.flatnonzero(starts)
    end_at = np.r_[start_at[1:], len(key)] - 1
    return key[start_at], onset[start_at], reach[end_at]


@dataclass(frozen=True)
class ItemSets:
    """``samples[i][c]`` is the tuple of items of sample ``i`` in class ``classes[c]`` (for event
    lists read from files, :class:`Intervals`: the same, held as columns; for a detector's
    scores over time, :class:`~evalkit.score_series.ScoreSeries`)."""

    samples: tuple[tuple[Items, ...], ...] | Intervals | ScoreSeries
    classes: tuple[str, ...] = (DEFAULT_CLASS,)
    ids: tuple[str, ...] | None = None
    source: str = "<inline>"
    notes: tuple[str, ...] = ()  # what a loader made of its file (a column it ignored), said in the results

    def __post_init__(self) -> None:
        if self.ids is not None and len(self.ids) != len(self.samples):
            raise DataError(f"{self.source}: {len(self.samples)} samples but {len(self.ids)} ids")
        check_header(self.classes, self.source, what="class")  # a class twice: one would hide the other

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, rows: slice) -> ItemSets:
        ids = self.ids[rows] if self.ids is not None else None
        return replace(self, samples=self.samples[rows], ids=ids)

    def take(self, rows: np.ndarray) -> ItemSets:
        """These samples, in this order; -1 is an empty sample. Ids are dropped (the caller
        knows the new ones)."""
        if isinstance(self.samples, (Intervals, ScoreSeries)):
            return replace(self, samples=self.samples.take(rows), ids=None)
        empty = tuple(() for _ in self.classes)
        return replace(self, samples=tuple(self.samples[r] if r >= 0 else empty for r in rows), ids=None)

    #: A class a system never mentions is an empty set for it, not an error (see evalkit.data.align).
    absent_class_is_empty = True

    def select(self, classes: Sequence[str], fill: bool = False) -> ItemSets:
        """Only ``classes``, in this order; with ``fill``, a class not here gets empty lists."""
        index = {c: i for i, c in enumerate(self.classes)}
        missing = [c for c in classes if c not in index]
        if missing and not fill:
            import difflib

            hints = [
                f"{m!r}" + (f" (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(m, self.classes, 1)) else "")
                for m in missing
            ]
            raise DataError(f"{self.source}: no class {', '.join(hints)}; it has: {', '.join(self.classes)}")
        if isinstance(self.samples, (Intervals, ScoreSeries)):
            return replace(self, samples=self.samples.select([index.get(c, -1) for c in classes]), classes=tuple(classes))
        rows = tuple(tuple(s[index[c]] if c in index else () for c in classes) for s in self.samples)
        return replace(self, samples=rows, classes=tuple(classes))

    def sample_name(self, row: int) -> str:
        return self.ids[row] if self.ids is not None else f"row {row + 1}"

    def by_sample(self, side: str) -> dict[str, Items]:
        """``{"<side>:<sample>": all its items}``, for similarities that check their vocabulary.

        With one class a sample's items are its tuple itself: no new sequence per sample (a
        list each took 0.8 s of a 100,000-document soft-cardinality run, in the collector)."""
        names = self.ids if self.ids is not None else (f"row {row}" for row in range(1, len(self) + 1))
        if len(self.classes) == 1:
            items: Iterator[Items] = map(itemgetter(0), self.samples)
        else:
            items = (tuple(chain.from_iterable(s)) for s in self.samples)
        return dict(zip((f"{side}:{name}" for name in names), items))

    @classmethod
    def from_python(
        cls, samples: Any, *, ids: Sequence[Any] | None = None, classes: Sequence[str] | None = None,
        source: str = "<inline>", lines: Sequence[int] | None = None,
    ) -> ItemSets:
        """From a list of samples, each a list of items or a mapping class -> list of items.

        ``lines``, for data read from a file, is the line of each sample: errors name it, and
        the loader rules apply (:mod:`evalkit.loading`: ids and text items stripped, an empty
        item or id refused). Python objects and inline config data are taken as they are."""
        if not isinstance(samples, (list, tuple)):
            raise DataError(
                f"{source}: item data is a list of samples, each a list of items (or a mapping "
                f"class -> items); got {type(samples).__name__}"
            )

        def where(row: int) -> str:
            return f"{source}:{lines[row]}" if lines is not None else f"{source}: sample {row + 1}"

        def items(values: Any, row: int) -> Items:
            """One list of items as a tuple (its place is worded only for a message: 100,000
            f-strings cost more than the tuples)."""
            if not isinstance(values, (list, tuple)):  # a str or bytes is one item, not a list
                raise DataError(
                    f"{where(row)}: expected a list of items, got {values!r}; write a single item as a one-element list"
                )
            return tuple(values) if lines is None else clean_items(values, where(row))

        grouped = any(map(isinstance, samples, repeat(dict)))
        if grouped:
            names = list(classes or dict.fromkeys(c for s in samples if isinstance(s, dict) for c in s))
            rows = []
            for i, sample in enumerate(samples):
                if not isinstance(sample, dict):
                    raise DataError(
                        f"{where(i)}: the sample is a {type(sample).__name__}; when some samples map classes to "
                        "items, all must"
                    )
                rows.append(tuple(items(sample.get(c, ()), i) for c in names))
        else:
            names = list(classes or [DEFAULT_CLASS])
            if len(names) != 1:
                raise DataError(
                    f"{source}: samples are plain item lists (one class) but {len(names)} classes were given; "
                    "map each class to its items instead"
                )
            rows = [(items(sample, i),) for i, sample in enumerate(samples)]
        if lines is None:
            return cls(tuple(rows), tuple(map(str, names)), None if ids is None else tuple(map(str, ids)), source)
        cleaned = None if ids is None else clean_ids(ids, source, lines)
        return cls(tuple(rows), check_header(names, source, what="class"), cleaned, source)
