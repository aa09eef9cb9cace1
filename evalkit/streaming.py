"""Streamed runs (``data: {stream: true}``): the reference and every system are read a chunk of
rows at a time, side by side, and each chunk is reduced to the evaluation state, so memory does
not grow with the data (for set metrics, and data metrics whose state is a sum).

Rows are matched as they stream, so every file must list its samples sorted by id (strictly
increasing text order, so that a repeated id shows as it streams, in memory that does not grow):
the reference's order is checked, the systems' ids are compared with it chunk by chunk, and the
first out of place is an error naming the ids and the row. Files without ids on either side are
matched by position, as in-memory runs are.
Loaders that can read part of a file (``stream``: .npy, Parquet) read it a chunk at a time;
any other file is read whole and then scored a chunk at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evalkit import budget, stats
from evalkit.axes import Axes
from evalkit.data import LabelMatrix, empty_reference_note, ids_on_both_or_neither, match_classes
from evalkit.engine import Values, data_states, named_values, set_values, summarize
from evalkit.errors import DataError
from evalkit.loading import not_times_or_ids
from evalkit.plan import Plan, Source
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.results import Row
from evalkit.sources import load_source, with_classes
from evalkit.table import CHUNK_ROWS, Summary
from evalkit.uncertainty import batch_values, percentile_bounds, rows_of, stack


def chunks_of(
    plan: Plan, source: Source, rows: int = CHUNK_ROWS, start: int = 0, stop: int | None = None,
) -> Iterator[LabelMatrix]:
    """The source's rows ``start`` to ``stop`` (to its end by default) as matrices of exactly
    ``rows`` rows (the last one shorter), with the classes ``data.classes`` names or selects, as
    in memory."""
    selected = plan.config.data.classes
    for chunk in _until(_chunks(source, rows, start), rows, None if stop is None else stop - start):
        if selected is None and source.loader is not None:
            not_times_or_ids(chunk.classes, chunk.source)
        placed = replace(chunk, first_row=start)
        part = placed if selected is None else with_classes(placed, selected, fill=source.role == "prediction")
        assert isinstance(part, LabelMatrix), "classes keep a matrix a matrix"
        yield part
        start += len(chunk)


def _chunks(source: Source, rows: int, start: int) -> Iterator[LabelMatrix]:
    """The source's rows from ``start`` in chunks of ``rows``: streamed by its loader, or read
    whole and cut."""
    stream = optional(source.loader, "stream") if source.loader is not None else None
    if stream is not None and source.full is not None:
        parts: Iterator[LabelMatrix] = stream(source.full, source.role, rows, start)
    else:  # read whole, then scored a chunk at a time
        whole = load_source(
            source.value, where=source.where, kind="matrix", role=source.role, loader=source.loader, full=source.full,
        )
        assert isinstance(whole, LabelMatrix), "a streamed run reads matrices (the plan checks)"
        parts = (whole[s : s + rows] for s in range(start, len(whole), rows))
    return _rechunked(parts, rows)


def _until(chunks: Iterator[LabelMatrix], rows: int, count: int | None) -> Iterator[LabelMatrix]:
    """The first ``count`` rows of chunks of ``rows`` rows (all of them with no count)."""
    if count is None:
        yield from chunks
        return
    for left in range(count, 0, -rows):
        chunk = next(chunks, None)
        if chunk is None:
            return
        yield chunk[:left]


def _rechunked(parts: Iterator[LabelMatrix], rows: int) -> Iterator[LabelMatrix]:
    """Chunks of exactly ``rows`` rows from parts of any size (row groups, blocks)."""
    waiting: list[LabelMatrix] = []
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


def joined(parts: list[LabelMatrix]) -> LabelMatrix:
    """Matrices of the same classes, one after the other."""
    if len(parts) == 1:
        return parts[0]
    ids = None if parts[0].ids is None else tuple(i for p in parts for i in (p.ids or ()))
    return replace(parts[0], values=np.concatenate([p.values for p in parts]), ids=ids)


def matched(reference: LabelMatrix, prediction: LabelMatrix, offset: int) -> LabelMatrix:
    """The prediction chunk with the reference chunk's classes, checked to hold the same samples
    in the same order (rows ``offset`` onwards of both files)."""
    prediction = match_classes(reference, prediction)
    ids_on_both_or_neither(reference, prediction)
    if len(prediction) != len(reference):
        shorter = prediction if len(prediction) < len(reference) else reference
        raise DataError(
            f"{shorter.source} ends at row {offset + len(shorter)}, before the other side "
            f"({reference.source if shorter is prediction else prediction.source}); a streamed run needs the same "
            "samples on both sides"
        )
    if reference.ids is not None and prediction.ids != reference.ids:
        assert prediction.ids is not None, "both sides have ids here"
        row = next(i for i, (a, b) in enumerate(zip(reference.ids, prediction.ids)) if a != b)
        raise DataError(
            f"{prediction.source}: row {offset + row + 1} is sample {prediction.ids[row]!r} where the reference "
            f"{reference.source} has {reference.ids[row]!r}; a streamed run matches rows as they come, so both files "
            "must list the samples in the same order (sort both by id), or run without `stream: true`"
        )
    return prediction


def check_sorted(chunk: LabelMatrix, previous: str | None, offset: int) -> str | None:
    """The chunk's ids must increase strictly, from ``previous`` (the last id of the chunk
    before); returns the chunk's last id."""
    if chunk.ids is None or not chunk.ids:
        return previous
    ids = np.array(([previous] if previous is not None else []) + list(chunk.ids))
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


class Accumulated:
    """One system's sums over the rows seen: a summary per combination and each data metric's
    state; with Poisson resampling, the same for every replicate (a batch of summaries, and one
    state per replicate for the data metrics, which must take weights). Sums are keyed by the
    combination's place among the axes' combinations, so those of two processes add up."""

    def __init__(self, axes: Axes) -> None:
        self.axes = axes
        self.summaries: dict[int, Summary] = {}
        self.data: list[Any] = [None] * len(axes.data_metrics)
        self.batches: dict[int, Summary] = {}
        self.replicate_data: list[list[Any]] = []
        self.clipped = 0

    def __add__(self, other: Accumulated) -> Accumulated:
        """The sums of this range of rows and another's."""
        total = Accumulated(self.axes)
        for mine, theirs, into in ((self.summaries, other.summaries, total.summaries),
                                   (self.batches, other.batches, total.batches)):
            into.update(mine)
            for key, part in theirs.items():
                _merge(into, key, part)
        total.data = _added(self.data, other.data)
        total.replicate_data = [_added(a, b) for a, b in zip(self.replicate_data, other.replicate_data)] \
            if self.replicate_data and other.replicate_data else self.replicate_data or other.replicate_data
        total.clipped = self.clipped + other.clipped
        return total

    def add(self, reference: np.ndarray, prediction: np.ndarray, counts: np.ndarray | None) -> None:
        """Add a chunk; ``counts`` (replicates x rows) are its Poisson resample counts."""
        axes = self.axes
        for key, combination in enumerate(axes.set_combinations()):
            tables: list[Any] = []
            _merge(self.summaries, key, summarize(combination, reference, prediction, axes, tables=tables))
            if counts is not None:
                for table in tables:
                    batch = Summary.replicates(table, counts, axes.sample_metrics, axes.zero_division)
                    _merge(self.batches, key, batch)
        self.data = _added(self.data, data_states(axes.data_metrics, reference, prediction))
        if counts is not None and axes.data_metrics:
            per_replicate = [data_states(axes.data_metrics, reference, prediction, row.astype(np.float64)) for row in counts]
            self.replicate_data = per_replicate if not self.replicate_data else [
                _added(total, part) for total, part in zip(self.replicate_data, per_replicate)
            ]

    def values(self, classes: tuple[str, ...]) -> Values:
        values: Values = {}
        combinations = self.axes.set_combinations()
        for key, summary in self.summaries.items():
            values.update(set_values(combinations[key], summary, self.axes, classes))
        values.update(self._data_values(self.data, classes))
        return values

    def replicates(self, classes: tuple[str, ...], n_replicates: int) -> Values:
        """Every value of every replicate, stacked along a first axis."""
        values: Values = {}
        combinations = self.axes.set_combinations()
        for key, batch in self.batches.items():
            values.update(batch_values(self.axes, combinations[key], batch, classes, n_replicates))
        if self.replicate_data:
            values.update(stack([self._data_values(states, classes) for states in self.replicate_data]))
        return values

    def _data_values(self, states: list[Any], classes: tuple[str, ...]) -> Values:
        values: Values = {}
        for metric, state in zip(self.axes.data_metrics, states):
            tag = self.axes.data_tags[metric.label]
            values.update(named_values(metric.label, metric.who, metric.obj.compute(state), classes, tag))
        return values


def _merge(totals: dict[int, Summary], key: int, part: Summary) -> None:
    totals[key] = part if key not in totals else totals[key] + part


def _added(totals: list[Any], parts: list[Any]) -> list[Any]:
    return [part if total is None else total + part for total, part in zip(totals, parts)]


@dataclass
class Partial:
    """What a range of rows adds up to: every system's sums, and the reference's first and last
    ids, which check the order where two ranges meet."""

    start: int
    sums: dict[str, Accumulated]
    rows: int = 0
    first: str | None = None
    last: str | None = None
    source: str = ""
    classes: tuple[str, ...] = ()
    by_position: bool = False  # neither side has ids
    added: int = 0  # samples only systems list, empty in the reference (missing: empty)

    def __add__(self, later: Partial) -> Partial:
        """The rows of this range and of the range just after it."""
        if not self.rows or not later.rows:
            return later if not self.rows else self
        if self.last is not None and later.first is not None and later.first <= self.last:
            raise out_of_order(later.source, later.start + 1, later.first, self.last)
        sums = {name: total + later.sums[name] for name, total in self.sums.items()}
        return replace(self, sums=sums, rows=self.rows + later.rows, last=later.last, added=self.added + later.added)


def reduce_rows(plan: Plan, start: int = 0, stop: int | None = None, progress: Progress | None = None) -> Partial:
    """Rows ``start`` to ``stop`` (the end by default) of the reference and of every system,
    read side by side a chunk at a time and added up."""
    axes, config = plan.axes, plan.config
    boot = config.statistics.bootstrap if config.statistics is not None else None
    systems = {name: runs[0] for name, runs in plan.systems.items()}
    readers = {name: chunks_of(plan, source, start=start, stop=stop) for name, source in systems.items()}
    partial = Partial(start, {name: Accumulated(axes) for name in systems})
    offset = start
    for reference in chunks_of(plan, plan.reference, start=start, stop=stop):
        partial.last = check_sorted(reference, partial.last, offset)
        reference = reference.check_memberships()[0]
        if not partial.classes:
            partial.first, partial.source, partial.classes = (reference.ids or (None,))[0], reference.source, reference.classes
            partial.by_position = reference.ids is None
            for metric in axes.data_metrics:
                prepare = optional(metric.obj, "prepare")
                if prepare is not None:
                    prepare(reference.classes)
        counts = None
        if boot is not None:  # keyed by id, or by position (as an in-memory run keys them)
            keys = stats.sample_keys(reference.ids, len(reference)) if reference.ids is not None else \
                np.arange(offset, offset + len(reference), dtype=np.uint64)
            counts = stats.poisson_weights(keys, boot.resamples, boot.seed)
        for name, reader in readers.items():
            part = next(reader, None)
            if part is None:
                raise DataError(f"{systems[name].where}: ends at row {offset}, before the reference {reference.source}")
            prediction = matched(reference, part, offset)
            if axes.ranks_only:
                prediction = prediction.check_scores()
            else:
                prediction, clipped = prediction.check_memberships(clip=config.data.clip)
                partial.sums[name].clipped += clipped
            partial.sums[name].add(reference.values, prediction.values, counts)
        offset += len(reference)
        if progress:
            progress.advance(len(reference))
    for name, reader in readers.items():
        if next(reader, None) is not None:
            raise DataError(f"{systems[name].where}: has more rows than the reference ({offset})")
    partial.rows = offset - start
    return partial


def finish(plan: Plan, total: Partial) -> tuple[list[Row], list[str]]:
    """The rows of a streamed run from its sums over every row (with Poisson bootstrap intervals
    when asked for), and its notes."""
    config = plan.config
    if not total.rows:
        raise DataError(f"{plan.reference.where}: there are no samples to score; the reference is empty")
    boot = config.statistics.bootstrap if config.statistics is not None else None
    rows: list[Row] = []
    for name, accumulated in total.sums.items():
        low = high = None
        if boot is not None:
            assert config.statistics is not None, "a bootstrap belongs to the statistics section"
            low, high = percentile_bounds(accumulated.replicates(total.classes, boot.resamples), config.statistics.level)
        rows += rows_of(name, accumulated.values(total.classes), low, high)
    notes = [f"{name}: {a.clipped} prediction value(s) outside [0, 1] were clipped (clip: true)"
             for name, a in total.sums.items() if a.clipped]
    if total.by_position:
        notes += [f"{name}: rows aligned with the reference by position: neither file has sample ids" for name in total.sums]
    if total.added:
        notes.insert(0, empty_reference_note(total.added))
    return rows, notes


def stream_rows(plan: Plan, progress: Progress | None = None) -> tuple[list[Row], list[str]]:
    """The rows of a streamed run, reading every source once, side by side; and its notes."""
    if progress:  # the rows of the reference, as its file's header or size tells
        progress.start("streaming", budget.size_of(plan.reference.value, plan.reference.full).samples)
    total = reduce_rows(plan, progress=progress)
    rows, notes = finish(plan, total)
    return rows, [*notes, f"streamed: {total.rows:,} samples read {CHUNK_ROWS:,} rows at a time"]
