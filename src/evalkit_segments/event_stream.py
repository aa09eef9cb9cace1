"""Event lists streamed a block of rows at a time, as item sets of whole files.

A streamed run scores a chunk of samples (files) at a time, so every event of a file must be in
the chunk of its file: the rows must be grouped by filename. A loader's reader yields
:class:`Block` s of rows in file order; :func:`samples` checks that each file's rows are
together, holds back the file a block ends in (its rows may go on in the next block) and yields
the finished files as :class:`~evalkit.plugin.ItemSets` of the classes of the whole list.

A file listed again after other files' rows is found in bounded memory: the files already
passed are kept as 64-bit hashes (8 bytes a file), and a hash seen before is confirmed by the
reader's ``earlier`` (a look back through the file for that name), so a hash collision is never
an error.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass

import numpy as np

from evalkit.plugin import DataError, Intervals, ItemSets

#: Where a row is: its line (CSV) or row (Parquet), as a message names it; and where a file was
#: first listed before that place (None: it was not; a hash collision).
Where = Callable[[int], str]
Earlier = Callable[[str, int], int | None]


class Unhandled(Exception):
    """A block the fast reader does not take (the exact reader reads the file and names the line)."""


@dataclass(frozen=True)
class Block:
    """Rows of an event list, in file order: ``names`` are the block's files in first-seen
    order, ``file`` each row's index into them, ``klass`` its class (-1: no event, a row that
    only lists its file or an event scored below ``min_score``), and ``place`` each row's line or
    row number (None: unknown to a fast reader)."""

    names: tuple[str, ...]
    file: np.ndarray
    klass: np.ndarray
    onset: np.ndarray
    offset: np.ndarray
    place: np.ndarray | None

    def __add__(self, later: Block) -> Block:
        """These rows, then ``later``'s (whose first file may be this block's last)."""
        same = bool(later.names) and bool(self.names) and later.names[0] == self.names[-1]
        shift = len(self.names) - same
        place = None if self.place is None or later.place is None else np.r_[self.place, later.place]
        return Block(
            self.names + later.names[same:], np.r_[self.file, later.file + shift], np.r_[self.klass, later.klass],
            np.r_[self.onset, later.onset], np.r_[self.offset, later.offset], place,
        )

    def files(self, stop: int) -> Block:
        """The rows of the first ``stop`` files."""
        rows = self.file < stop
        place = None if self.place is None else self.place[rows]
        return Block(self.names[:stop], self.file[rows], self.klass[rows], self.onset[rows], self.offset[rows], place)

    def after(self, start: int) -> Block:
        """The rows of the files from the ``start``-th on."""
        rows = self.file >= start
        place = None if self.place is None else self.place[rows]
        return Block(self.names[start:], self.file[rows] - start, self.klass[rows], self.onset[rows], self.offset[rows],
                     place)


class _Passed:
    """The files a stream has finished, as sorted 64-bit hashes of their names."""

    def __init__(self) -> None:
        self.hashes = np.empty(0, np.uint64)

    @staticmethod
    def _hash(names: tuple[str, ...]) -> np.ndarray:
        import pandas as pd  # type: ignore[import-untyped]

        return pd.util.hash_array(np.array(names, dtype=object))

    def add(self, names: tuple[str, ...]) -> None:
        # two sorted runs: the stable sort merges them in linear time
        self.hashes = np.sort(np.r_[self.hashes, np.sort(self._hash(names))], kind="stable")

    def maybe(self, names: tuple[str, ...]) -> np.ndarray:
        """Per name, whether its hash is among the finished files' (almost surely: it is one)."""
        hashes = self._hash(names)
        at = np.minimum(np.searchsorted(self.hashes, hashes), max(len(self.hashes) - 1, 0))
        return self.hashes[at] == hashes if len(self.hashes) else np.zeros(len(names), bool)


def samples(
    blocks: Iterator[Block], classes: tuple[str, ...], rows: int, start: int, source: str, merge: bool,
    where: Where, earlier: Earlier,
) -> Generator[ItemSets, None, int]:
    """The files of ``blocks`` from the ``start``-th (in first-seen order) as item sets of at most
    ``rows`` files, each with ``classes``. Returns how many files the list holds, for the
    caller's check that there are some."""
    passed = _Passed()
    open_file: Block | None = None  # the rows of the file the last block ended in
    done = 0  # files finished before the open one
    for block in blocks:
        if not block.names:
            continue
        whole = block if open_file is None else open_file + block
        _check_grouped(whole, passed, where, earlier)
        finished = whole.files(len(whole.names) - 1)
        passed.add(finished.names)
        yield from _cut(finished, done, classes, rows, start, source, merge)
        done += len(finished.names)
        open_file = whole.after(len(whole.names) - 1)
    if open_file is not None:
        yield from _cut(open_file, done, classes, rows, start, source, merge)
        done += 1
    return done


def _check_grouped(block: Block, passed: _Passed, where: Where, earlier: Earlier) -> None:
    """Every file's rows together: none in the block after another file's, none of a file
    finished in an earlier block."""
    back = np.flatnonzero(block.file[1:] < np.maximum.accumulate(block.file)[:-1]) + 1  # after a later file's rows
    found: list[tuple[int, str, int | None]] = []  # (row in the block, file, its first place)
    if back.size:
        row = int(back[0])
        first = int(np.argmax(block.file == block.file[row]))
        found.append((row, block.names[block.file[row]], None if block.place is None else int(block.place[first])))
    if len(set(block.names)) < len(block.names):  # the open file again after the block's first files
        again = next(k for k, name in enumerate(block.names) if name in block.names[:k])
        first = int(np.argmax(block.file == block.names.index(block.names[again])))
        row = int(np.argmax(block.file == again))
        found.append((row, block.names[again], None if block.place is None else int(block.place[first])))
    for index in np.flatnonzero(passed.maybe(block.names)):
        found.append((int(np.argmax(block.file == index)), block.names[index], None))
    for row, name, known in sorted(found, key=lambda at: at[0]):
        if block.place is None:
            raise Unhandled
        place = int(block.place[row])
        before = earlier(name, place) if known is None else known
        if before is not None:
            raise DataError(
                f"{where(place)}: file {name!r} is listed again after other files' rows (first at {where(before)}); "
                "a streamed run reads a file's events together: group the rows by filename (sort the list), "
                "or run without `stream: true`"
            )


def _cut(
    block: Block, first: int, classes: tuple[str, ...], rows: int, start: int, source: str, merge: bool,
) -> Iterator[ItemSets]:
    """The block's files (the ``first``-th of the list and on) from the ``start``-th, as item
    sets of at most ``rows`` files."""
    skip = max(start - first, 0)
    for at in range(skip, len(block.names), rows):
        part = block.after(at).files(rows)
        events = part.klass >= 0
        intervals = Intervals(part.file[events], part.klass[events], part.onset[events], part.offset[events],
                              len(part.names), len(classes), merge)
        yield ItemSets(intervals, classes, part.names, source)
