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
from dataclasses import replace
from typing import Any

import numpy as np

from evalkit import budget
from evalkit.data import LabelMatrix, ids_on_both_or_neither, match_classes
from evalkit.engine import Values, data_states, named_values, set_values, summarize
from evalkit.errors import DataError
from evalkit.plan import Plan, Source
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.results import Row
from evalkit.sources import load_source
from evalkit.table import CHUNK_ROWS, Summary


def chunks_of(plan: Plan, source: Source, rows: int = CHUNK_ROWS) -> Iterator[LabelMatrix]:
    """The source's rows as matrices of exactly ``rows`` rows (the last one shorter)."""
    stream = optional(source.loader, "stream") if source.loader is not None else None
    if stream is not None and source.full is not None:
        parts: Iterator[LabelMatrix] = stream(source.full, source.role, rows)
    else:  # read whole, then scored a chunk at a time
        whole = load_source(
            source.value, where=source.where, kind="matrix", role=source.role, loader=source.loader, full=source.full,
        )
        assert isinstance(whole, LabelMatrix), "a streamed run reads matrices (the plan checks)"
        parts = (whole[s : s + rows] for s in range(0, len(whole), rows))
    return _rechunked(parts, rows)


def _rechunked(parts: Iterator[LabelMatrix], rows: int) -> Iterator[LabelMatrix]:
    """Chunks of exactly ``rows`` rows from parts of any size (row groups, blocks)."""
    waiting: list[LabelMatrix] = []
    held = 0
    for part in parts:
        waiting.append(part)
        held += len(part)
        while held >= rows:
            joined = _joined(waiting)
            yield joined[:rows]
            rest = joined[rows:]
            waiting, held = ([rest] if len(rest) else []), len(rest)
    if held:
        yield _joined(waiting)


def _joined(parts: list[LabelMatrix]) -> LabelMatrix:
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
        row = offset + at + (0 if previous is not None else 1)
        raise DataError(
            f"{chunk.source}: row {row} is sample {str(ids[at])!r}, which does not come after {str(ids[at - 1])!r}; a streamed "
            "run needs every file sorted by sample id (each id once), in the same order: sort the files by id, "
            "or run without `stream: true`"
        )
    return chunk.ids[-1]


def stream_values(plan: Plan, progress: Progress | None = None) -> tuple[dict[str, Values], tuple[str, ...], list[str]]:
    """The values of every system, reading all the sources once, side by side; and notes."""
    axes, config = plan.axes, plan.config
    systems = {name: runs[0] for name, runs in plan.systems.items()}
    readers = {name: chunks_of(plan, source) for name, source in systems.items()}
    summaries: dict[str, dict[Any, Summary]] = {name: {} for name in systems}
    data: dict[str, list[Any]] = {name: [None] * len(axes.data_metrics) for name in systems}
    classes: tuple[str, ...] = ()
    by_position = False
    clipped = dict.fromkeys(systems, 0)
    offset = 0
    last: str | None = None
    for reference in chunks_of(plan, plan.reference):
        last = check_sorted(reference, last, offset)
        if config.data.classes is not None:
            reference = reference.select(config.data.classes)
        reference = reference.check_memberships()[0]
        if not classes:
            by_position = reference.ids is None
            classes = reference.classes
            for metric in axes.data_metrics:
                prepare = optional(metric.obj, "prepare")
                if prepare is not None:
                    prepare(classes)
        for name, reader in readers.items():
            part = next(reader, None)
            if part is None:
                raise DataError(f"{systems[name].where}: ends at row {offset}, before the reference {reference.source}")
            prediction = matched(reference, part, offset)
            prediction, n_clipped = (
                (prediction.check_scores(), 0) if axes.ranks_only else prediction.check_memberships(clip=config.data.clip)
            )
            clipped[name] += n_clipped
            for combination in axes.set_combinations():
                part_summary = summarize(combination, reference.values, prediction.values, axes)
                total = summaries[name].get(combination)
                summaries[name][combination] = part_summary if total is None else total + part_summary
            states = data_states(axes.data_metrics, reference.values, prediction.values)
            data[name] = [s if t is None else t + s for t, s in zip(data[name], states)]
        offset += len(reference)
        if progress:
            progress.advance(len(reference))
    for name, reader in readers.items():
        if next(reader, None) is not None:
            raise DataError(f"{systems[name].where}: has more rows than the reference ({offset})")
    if not offset:
        raise DataError(f"{plan.reference.where}: there are no samples to score; the reference is empty")
    values: dict[str, Values] = {}
    for name in systems:
        values[name] = {}
        for combination, summary in summaries[name].items():
            values[name].update(set_values(combination, summary, axes, classes))
        for metric, state in zip(axes.data_metrics, data[name]):
            values[name].update(named_values(metric.label, metric.who, metric.obj.compute(state), classes))
    notes = [f"{n}: {c} prediction value(s) outside [0, 1] were clipped (clip: true)" for n, c in clipped.items() if c]
    if by_position:
        notes += [f"{name}: rows aligned with the reference by position: neither file has sample ids" for name in systems]
    notes.append(f"streamed: {offset:,} samples read {CHUNK_ROWS:,} rows at a time")
    return values, classes, notes


def stream_rows(plan: Plan, progress: Progress | None = None) -> tuple[list[Row], list[str]]:
    """The rows of a streamed run, and its notes."""
    if progress:  # the rows of the reference, as its file's header or size tells
        progress.start("streaming", budget.size_of(plan.reference.value, plan.reference.full).samples)
    values, _, notes = stream_values(plan, progress)
    rows = [Row.of(system, measure, value) for system, by_measure in values.items() for measure, value in by_measure.items()]
    return rows, notes
