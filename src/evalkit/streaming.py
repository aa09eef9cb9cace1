"""Streamed runs (``data: {stream: true}``): the reference and every system are read a chunk of
rows at a time, side by side, and each chunk is prepared and reduced as any partition is
(:mod:`evalkit.reduction`), so memory does not grow with the data (for files whose loader can
stream them; others are read whole, then reduced a chunk at a time).

Rows are matched as they stream, so every file must list its samples sorted by id (strictly
increasing text order, so that a repeated id shows as it streams, in memory that does not grow):
each file's order is checked, and a chunk of the reference is matched with every other file's
rows up to its last id, by id, exactly as in memory (an id missing or extra is an error naming
it, or an empty sample under ``missing: empty``). Files without ids on either side are matched
by position, as in-memory runs are. Loaders that can read part of a file (``stream``: .npy,
Parquet) read it a chunk at a time; any other file is read whole and then reduced a chunk at a
time.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from evalkit import budget, table
from evalkit.data import LabelMatrix
from evalkit.errors import DataError
from evalkit.loading import not_times_or_ids
from evalkit.plan import Source, Work
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.reduction import Data, Tally, prepare, reduce_partition
from evalkit.sources import load_source, with_classes

#: Samples per chunk of a streamed item-list run: a sample holds many items (a file's events),
#: so fewer samples make a chunk (1,000,000 event files peak at 246 MiB in chunks of 4,096,
#: 345 MiB in chunks of 16,384, no faster: benchmarks/bench_stream_events.py).
ITEM_ROWS = 4_096


def chunk_rows(work: Work) -> int:
    """Rows (samples) per chunk of a streamed run of this data: for matrices, about
    :data:`~evalkit.table.CHUNK_BYTES` of float64 a chunk (:func:`evalkit.table.chunk_rows`) at
    the classes named, or those of the reference's header (its loader's ``header_classes``, else
    :func:`evalkit.budget.classes_of`); for item lists, :data:`ITEM_ROWS`, or
    :data:`evalkit.budget.FOLDER_ROWS` when a source is a folder of files."""
    if any(source.full is not None and source.full.is_dir() for source in work.sources()):
        return budget.FOLDER_ROWS
    if work.kind != "matrix":
        return ITEM_ROWS
    reference = work.reference
    header = optional(reference.loader, "header_classes") if reference.full is not None else None
    classes = work.job.settings.classes or (header(reference.full) if header is not None else None)
    return table.chunk_rows(len(classes) if classes else budget.classes_of(reference.value, reference.full))


def hashed_as_read(work: Work) -> set[Path]:
    """The files a streamed run hashes as their loader reads them (``hashes_as_read``), decided
    before anything is read (:mod:`evalkit.provenance`): every other file is read again for its
    hash."""
    return {source.full for source in work.sources()
            if source.full is not None and source.loader is not None and optional(source.loader, "hashes_as_read")}


def chunks_of(
    work: Work, source: Source, rows: int | None = None, start: int = 0, stop: int | None = None, whole: bool = False,
) -> Iterator[Data]:
    """The source's rows (samples) ``start`` to ``stop`` (to its end by default) as matrices (or
    item sets) of exactly ``rows`` rows (:func:`chunk_rows` by default; the last one shorter),
    with the classes ``data.classes`` names or selects, as in memory. ``whole``: read the file
    whole, never streamed by its loader (which asks for a file's rows together: a Dask task
    reads files in any order)."""
    selected = None if source.role == "weights" else work.job.settings.classes  # weights: one value column
    rows = chunk_rows(work) if rows is None else rows
    named = selected is not None or source.loader is None  # the classes are checked once: every chunk has them
    for chunk in _until(_chunks(work, source, rows, start, whole), rows, None if stop is None else stop - start):
        if isinstance(chunk, LabelMatrix):
            if not named:
                not_times_or_ids(chunk.classes, chunk.source)
                named = True
            chunk = replace(chunk, first_row=start)
        yield chunk if selected is None else with_classes(chunk, selected, fill=source.role == "prediction")
        start += len(chunk)


def _chunks(work: Work, source: Source, rows: int, start: int, whole: bool) -> Iterator[Data]:
    """The source's rows from ``start`` in chunks of ``rows``: streamed by its loader, or read
    whole and cut (item lists: all of a file's classes in every chunk)."""
    stream = optional(source.loader, "stream") if source.loader is not None and not whole else None
    if stream is not None and source.full is not None:
        parts: Iterator[Data] = stream(source.full, source.role, rows, start)
    else:  # read whole, then scored a chunk at a time
        data = load_source(
            source.value, where=source.where, kind="matrix" if source.role == "weights" else work.kind, role=source.role,
            loader=source.loader, full=source.full,
        )
        parts = (data[s : s + rows] for s in range(start, len(data), rows))
    return _rechunked(parts, rows)


def _until(chunks: Iterator[Any], rows: int, count: int | None) -> Iterator[Data]:
    """The first ``count`` rows of chunks of ``rows`` rows (all of them with no count)."""
    if count is None:
        yield from chunks
        return
    for left in range(count, 0, -rows):
        chunk = next(chunks, None)
        if chunk is None:
            return
        yield chunk[:left]


def _rechunked(parts: Iterator[Any], rows: int) -> Iterator[Data]:
    """Chunks of exactly ``rows`` rows from parts of any size (row groups, blocks)."""
    waiting: list[Data] = []
    held = 0
    for part in parts:
        waiting.append(part)
        held += len(part)
        while held >= rows:
            together = joined(waiting)
            yield together[:rows]
            rest = together[rows:]
            waiting, held = ([rest] if len(rest) else []), len(rest)
    if held:
        yield joined(waiting)


def joined(parts: list[Data]) -> Data:
    """Matrices, or item sets, of the same classes, one after the other."""
    if len(parts) == 1:
        return parts[0]
    ids = None if parts[0].ids is None else tuple(itertools.chain.from_iterable(p.ids or () for p in parts))
    first = parts[0]
    if isinstance(first, LabelMatrix):
        return replace(first, values=np.concatenate([p.values for p in parts if isinstance(p, LabelMatrix)]), ids=ids)
    samples: Any = first.samples
    for part in parts[1:]:
        samples = samples + part.samples  # type: ignore[union-attr]
    return replace(first, samples=samples, ids=ids)


def check_sorted(chunk: Data, previous: str | None, offset: int) -> str | None:
    """The chunk's ids must increase strictly, from ``previous`` (the last id of the chunk
    before); returns the chunk's last id."""
    if chunk.ids is None or not chunk.ids:
        return previous
    ids = np.array(([previous] if previous is not None else []) + list(chunk.ids), dtype=object)  # str order
    wrong = np.flatnonzero(ids[1:] <= ids[:-1])
    if wrong.size:
        at = int(wrong[0]) + 1
        raise out_of_order(chunk.source, offset + at + (0 if previous is not None else 1), str(ids[at]), str(ids[at - 1]))
    return chunk.ids[-1]


def out_of_order(source: str, row: int, sample: str, previous: str) -> DataError:
    return DataError(
        f"{source}: row {row} is sample {sample!r}, which does not come after {previous!r}; a streamed run "
        "needs every file sorted by sample id (each id once), in the same order: sort the files by id, "
        "or run without `stream: true`"
    )


class _Window:
    """A file read in order beside the reference: its rows up to a reference chunk's last id
    (or, where the data has no ids, as many rows as the chunk has), its order checked as they
    come, the chunks read joined once per hand-over."""

    def __init__(self, work: Work, source: Source, start: int, stop: int | None) -> None:
        self.chunks = chunks_of(work, source, chunk_rows(work), start, stop)
        self.where = source.where
        self.waiting: list[Data] = []  # read, not yet handed over
        self.last: str | None = None
        self.offset = start  # rows read so far, from the file's first

    def _more(self) -> bool:
        chunk = next(self.chunks, None)
        if chunk is None:
            return False
        self.last = check_sorted(chunk, self.last, self.offset)
        self.offset += len(chunk)
        if len(chunk):
            self.waiting.append(chunk)
        return True

    def ahead(self) -> tuple[bool, str | None]:
        """Whether rows are left, and the last id of those read (None without ids)."""
        while not self.waiting and self._more():
            pass
        if not self.waiting:
            return False, None
        ids = self.waiting[-1].ids
        return True, ids[-1] if ids else None

    def upto(self, bound: str | None, count: int, like: Data) -> Data:
        """The rows with ids up to ``bound``; without ids (``bound`` None, or a file that has
        none, which aligning refuses), the next ``count`` rows. None left: an empty part of
        ``like`` (the reference's classes)."""
        left, last = self.ahead()
        if not left:
            return replace(like[:0], source=self.where)
        if bound is not None and last is not None:
            while self.waiting[-1].ids[-1] < bound and self._more():  # type: ignore[index]  # ids increase strictly
                pass
            together = joined(self.waiting)
            cut = int(np.searchsorted(np.array(together.ids, dtype=object), np.array(bound, dtype=object), side="right"))
        else:
            while sum(len(chunk) for chunk in self.waiting) < count and self._more():
                pass
            together = joined(self.waiting)
            cut = min(count, len(together))
        rest = together[cut:]
        self.waiting = [rest] if len(rest) else []
        return together[:cut]


@dataclass
class Partial:
    """What a range of rows adds up to (a :class:`Tally`), and the reference's first and last
    ids, which check the order where two ranges meet."""

    start: int
    tally: Tally = field(default_factory=Tally)
    rows: int = 0
    first: str | None = None
    last: str | None = None
    source: str = ""

    def __add__(self, later: Partial) -> Partial:
        """The rows of this range and of the range just after it. A range without reference rows
        may still hold samples (ids only systems list, under ``missing: empty``): its tally counts."""
        if not self.rows or not later.rows:
            return replace(later if not self.rows else self, tally=self.tally + later.tally)
        if self.last is not None and later.first is not None and later.first <= self.last:
            raise out_of_order(later.source, later.start + 1, later.first, self.last)
        return replace(self, tally=self.tally + later.tally, rows=self.rows + later.rows, last=later.last)


def reduce_rows(work: Work, start: int = 0, stop: int | None = None, progress: Progress | None = None) -> Partial:
    """Rows ``start`` to ``stop`` (the end by default) of the reference, with the rows of every
    other file that belong with them, read side by side a chunk at a time and reduced; after
    the reference's last row, the other files' rows left (ids the reference lacks), a chunk at a
    time."""
    job = work.job
    windows = {(name, run): _Window(work, source, start, stop)
               for name, runs in work.systems.items() for run, source in enumerate(runs)}
    weights = None if work.weights is None else _Window(work, work.weights, start, stop)
    partial = Partial(start)

    def reduced(reference: Data, bound: str | None, past: bool = False) -> None:
        systems = {name: [windows[name, run].upto(bound, len(reference), reference) for run in range(len(runs))]
                   for name, runs in work.systems.items()}
        matched = None if weights is None else weights.upto(bound, len(reference), reference)
        assert matched is None or isinstance(matched, LabelMatrix), "weights are a matrix"
        if bound is None:
            for rows in [*(run for runs in systems.values() for run in runs), *([matched] if matched else [])]:
                _check_length(reference, rows, start + partial.rows)
        part, counted = prepare(job, reference, systems, matched, files=work.from_files, ids_checked=True,
                                past_the_reference=past)
        part.first_row = start + partial.rows
        partial.tally += counted
        partial.tally += reduce_partition(job, part)  # replicate states added in place

    like = None
    for reference in chunks_of(work, work.reference, chunk_rows(work), start, stop):
        partial.last = check_sorted(reference, partial.last, start + partial.rows)
        if like is None:
            partial.first, partial.source, like = (reference.ids or (None,))[0], reference.source, reference[:0]
        reduced(reference, reference.ids[-1] if reference.ids else None)
        partial.rows += len(reference)
        if progress:
            progress.advance(len(reference))
    others = [*windows.values(), *([weights] if weights is not None else [])]
    while stop is None and like is not None and like.ids is not None:  # ids only other files list
        ahead = [last for left, last in (window.ahead() for window in others) if left and last is not None]
        if not ahead:
            break
        reduced(like, min(ahead), past=True)
    for window in others:
        if window.ahead()[0]:
            raise DataError(
                f"{window.where}: has more rows than the reference {partial.source or work.reference.where} "
                f"({start + partial.rows:,}); rows without ids are matched by position, so every file needs as many"
            )
    return partial


def _check_length(reference: Data, rows: Data, offset: int) -> None:
    """Files matched by position hold the same number of rows."""
    if len(rows) < len(reference):
        raise DataError(
            f"{rows.source} ends at row {offset + len(rows)}, before the other side ({reference.source}); rows "
            "without ids are matched by position, so every file needs as many"
        )


def stream_tally(work: Work, progress: Progress | None = None) -> tuple[Tally, str]:
    """The tally of a streamed run, reading every source once, side by side; and its note."""
    if progress:  # the rows of the reference, as its file's header or size tells
        progress.start("streaming", budget.size_of(work.reference.value, work.reference.full).samples)
    total = reduce_rows(work, progress=progress)
    return total.tally, f"streamed: {total.rows:,} samples read {chunk_rows(work):,} rows at a time"
