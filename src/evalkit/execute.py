"""Executing a plan: the data read, prepared and reduced by the run's engine (in memory,
streamed, or on Dask), then every number scored from the tally.

Everything config-level was checked by the plan (:mod:`evalkit.plan`); what can fail here is
the data itself (a value out of range, a missing id) or a plugin.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from evalkit import budget
from evalkit.folders import folder_tally
from evalkit.plan import Plan, Source, folders_whole, read_in_chunks
from evalkit.progress import Progress
from evalkit.provenance import described_file, hashing
from evalkit.reduction import Scored, Tally, checked, prepare, reduce_partition, scored
from evalkit.sources import load_source, source_path
from evalkit.streaming import chunk_rows, hashed_as_read, stream_tally


def execute(plan: Plan, progress: Progress | None = None) -> Scored:
    """Score every system of a plan (every run, every sweep value) with its statistics."""
    tally, notes, files = _tally(plan, progress)
    out = scored(plan.job, tally, plan.reference.where)
    out.notes += notes
    out.files = files
    return out


def check_data(plan: Plan, progress: Progress | None = None) -> tuple[int, list[str]]:
    """Every check of :func:`execute` up to scoring (``evalkit validate --data``): every file
    read by the run's engine, every partition prepared (ids, classes, alignment, memberships,
    weights, event lists) with the same messages; the number of samples, and the notes a run
    would give. No number is computed."""
    checking = replace(plan, work=replace(plan.work, job=replace(plan.job, checks_only=True)))
    tally, notes, *_ = _tally(checking, progress)
    return tally.samples, checked(checking.job, tally, plan.reference.where).notes + notes


def _tally(plan: Plan, progress: Progress | None) -> tuple[Tally, list[str], list[dict[str, Any]]]:
    """The tally of all the plan's data by its engine, the engine's note, and the files read."""
    settings = plan.job.settings
    if settings.partitioned:
        # The files are hashed on threads while the run reads them (hashlib and file reads
        # release the GIL): as a loader reads them, or read again (evalkit.provenance); a Dask
        # run's workers read its files, so this process reads them all again.
        claimed = hashed_as_read(plan.work) if settings.engine.name != "dask" else set()
        with hashing([_file(source) for source in plan.sources() if source.full is not None], claimed) as hashes:
            with budget.building(*_partitioned(plan)):
                if settings.engine.name == "dask":
                    from evalkit.dask_engine import dask_tally  # Dask is imported only for a Dask run

                    tally, how = dask_tally(plan.work, progress)
                else:
                    tally, how = stream_tally(plan.work, progress)
            return tally, [how], hashes.described()
    files: list[dict[str, Any]] = []
    reference = _load(plan, plan.reference, files)
    systems = {name: [_load(plan, source, files) for source in runs] for name, runs in plan.systems.items()}
    weights = None if plan.weights is None else _load(plan, plan.weights, files)
    building = budget.building(f"the scores of {', '.join(plan.systems)}", "the size of the data, or the components "
                               "compared, or the statistics' resamples")
    if any(data is None for runs in systems.values() for data in runs):
        with building:
            tally = folder_tally(plan.work, reference, systems, weights, progress, lambda n: _work(plan, n))
        return tally, [], files
    partition, notes = prepare(plan.job, reference, systems, weights, files=plan.work.from_files)
    partition.whole = True
    if progress:
        progress.start("evaluating", _work(plan, len(partition.reference)))
    whole = folders_whole(plan.work)
    with building:
        return notes + reduce_partition(plan.job, partition, progress), [f"data folders read whole: {whole}"] * bool(whole), files


def _work(plan: Plan, n_rows: int) -> int:
    """Rows to process, for the progress bar: every run of every system at every step."""
    runs = sum(len(r) for r in plan.systems.values())
    return sum(step.axes.work(n_rows) for step in plan.job.steps) * runs


def _partitioned(plan: Plan) -> tuple[str, str]:
    """What a streamed or Dask run builds, for :func:`budget.building`: every system's sums, a
    chunk (a block) of rows at a time, with a replicate of them per resample; and what grows
    them, to lower when the memory runs out."""
    settings = plan.job.settings
    dask = settings.engine.name == "dask"
    rows = f"blocks of {settings.engine.partition_rows:,} rows on the Dask cluster" if dask else \
        f"{chunk_rows(plan.work):,} rows at a time"
    what = f"the sums of {', '.join(plan.systems)} ({rows}"
    lower = "the classes or the components compared" + (", or `engine.partition_rows`" if dask else "")
    statistics = settings.statistics
    if statistics is not None and statistics.bootstrap is not None:
        what += f", {budget.amount(statistics.bootstrap.resamples)} Poisson bootstrap resamples"
        lower = f"`statistics.bootstrap.resamples`, {lower}"
    return f"{what})", lower


def _file(source: Source) -> tuple[Path, str, str, str | None]:
    """The source's file as the results' provenance names it: its path, the path shown, its role
    and system."""
    assert source.full is not None, "a file"
    return source.full, str(source_path(source.value, source.where)[0]), source.role, source.system


def _described(source: Source) -> dict[str, Any] | None:
    """The source's file as the results' provenance records it (its size and hash)."""
    return None if source.full is None else described_file(*_file(source))


def _load(plan: Plan, source: Source, files: list[dict[str, Any]]) -> Any:
    """The source's data read whole, or None for a folder read a chunk of files at a time
    (:mod:`evalkit.folders`); its file goes to ``files``."""
    described = _described(source)
    if described is not None:
        files.append(described)
    if read_in_chunks(plan.work, source):
        return None
    weights = source.role == "weights"  # one value column, whatever the classes
    with budget.building(f"the data of {source.where}", "the size of that data"):
        return load_source(
            source.value, where=source.where, kind="matrix" if weights else plan.kind, role=source.role,
            classes=None if weights else plan.job.settings.classes, loader=source.loader, full=source.full,
        )
