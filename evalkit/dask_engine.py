"""The Dask engine (``engine: dask``): a run scored on a Dask cluster, in partitions.

Files without sample ids are matched by position: each partition of rows is a task that reads
its rows of every file side by side and adds them up, as a streamed run does, so no data moves
between workers. Files with ids are read in blocks of rows, a task each; a block is checked
(memberships in [0, 1], finite scores) and split into groups by a hash of its ids, so a sample
falls in the same group on every side wherever it sits in its file. Each group is a task that
aligns the reference with each system by id exactly as an in-memory run does (any row order;
an id missing, extra or repeated is an error naming it; ``missing: empty``) and adds the group
up. Either way the partial sums meet in a tree reduction on the workers: the client holds the
plan and the sums, never the data. Poisson bootstrap counts are drawn from the sample ids (or
rows), so the intervals do not depend on the partitioning.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evalkit import budget, stats
from evalkit.config import EngineConfig
from evalkit.data import LabelMatrix, align, only_in_systems, with_empty_samples
from evalkit.errors import DataError, EngineError, shortened
from evalkit.loading import unique_ids
from evalkit.plan import Plan, Source
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.results import Row
from evalkit.streaming import Accumulated, Partial, chunks_of, finish, joined, reduce_rows
from evalkit.table import CHUNK_ROWS

#: The reference's key among the sources (system names are the others).
REFERENCE = ""


@dataclass
class Piece:
    """The rows of one block that fall in one group, with their rows in the file (from 0)."""

    matrix: LabelMatrix
    rows: np.ndarray
    clipped: int = 0


def dask_rows(plan: Plan, progress: Progress | None = None) -> tuple[list[Row], list[str]]:
    """The rows of a run scored on a Dask cluster, and its notes."""
    engine = plan.config.engine
    sizes = {key: budget.size_of(source.value, source.full).samples for key, source in _sources(plan).items()}
    with _client(engine) as (client, cluster):
        shipped = client.submit(_held, plan, pure=False)
        by_id = _has_ids(plan)
        leaves, planned, total = (_by_id if by_id else _by_position)(client, shipped, plan, sizes)
        if progress:
            progress.start(f"reading on {cluster}", sum(planned.values()))
        for done in _finished(client, [*leaves, total], engine.timeout, cluster):
            if progress and done.key in planned:
                progress.advance(planned[done.key])
        summed: Partial = total.result()
    rows, notes = finish(plan, summed)
    how = "grouped by id" if by_id else "matched by position"
    return rows, [*notes, f"Dask: {summed.rows:,} samples read in blocks of up to {engine.partition_rows:,} rows, "
                          f"{how}, on {cluster}"]


def _held(plan: Plan) -> Plan:
    """The plan as a task's result rather than scattered data: a worker that dies takes scattered
    data with it for good, while Dask computes a lost result again (every task here is a pure
    function of the plan and its rows)."""
    return plan


def _finished(client: Any, futures: list[Any], timeout: float, cluster: str) -> Iterator[Any]:
    """The futures as they finish, a failed one raising its task's error. Dask runs again a task
    whose worker died, and recomputes lost results; what it cannot finish is one EngineError:
    the cluster without a worker for ``timeout`` s, a task that its workers died running (Dask's
    ``allowed-failures``), or work cancelled (a restart)."""
    from distributed import wait
    from distributed.client import CancelledError
    from distributed.scheduler import KilledWorker

    pending, alone_since = set(futures), None
    while pending:
        try:
            settled, pending = wait(pending, timeout=1, return_when="FIRST_COMPLETED")
            pending |= {future for future in settled if future.status == "lost"}  # Dask computes it again
        except TimeoutError:  # nothing finished for a second: is any worker left?
            settled = set()
            alone_since = None if client.nthreads() else alone_since or time.monotonic()
            if alone_since is not None and time.monotonic() - alone_since >= timeout:
                raise EngineError(
                    f"{cluster} lost its workers during the run and none came back within {timeout:g} s; "
                    "start workers (`dask worker SCHEDULER-ADDRESS`) and run again, or raise `engine.timeout`"
                ) from None
        except CancelledError as exc:
            raise EngineError(f"{cluster} cancelled the run's work ({exc}): was it restarted? Run again") from None
        for future in settled - pending:
            try:
                if future.status != "finished":  # the result itself stays on the workers
                    future.result()
            except KilledWorker as exc:
                raise EngineError(
                    f"{cluster}: the workers died {exc.allowed_failures + 1} times while running one task, so Dask "
                    "gave up on it; a worker past its memory limit is restarted by its nanny: lower "
                    "`engine.partition_rows`, or give the workers more memory (and look in their logs)"
                ) from None
            yield future


def _has_ids(plan: Plan) -> bool:
    """Whether the reference names its samples: a look at its first row, on the client."""
    first = next(chunks_of(plan, plan.reference, rows=1), None)
    return first is not None and first.ids is not None


Tasks = tuple[list[Any], dict[str, int], Any]  # the reading tasks, their rows, the future of the sum


def _by_position(client: Any, shipped: Any, plan: Plan, sizes: dict[str, int]) -> Tasks:
    """Files without ids: each partition of rows is one task that reads its rows of every file
    side by side and adds them up (a streamed run of those rows), so no data moves. ``shipped``
    is the plan as the workers hold it."""
    ranges = partitions(sizes[REFERENCE], plan.config.engine.partition_rows)
    leaves = [client.submit(_rows, shipped, start, stop, pure=False, priority=-i) for i, (start, stop) in enumerate(ranges)]
    planned = {leaf.key: (stop or max(sizes[REFERENCE], start)) - start for leaf, (start, stop) in zip(leaves, ranges)}
    return leaves, planned, _tree(client, leaves)


def _by_id(client: Any, shipped: Any, plan: Plan, sizes: dict[str, int]) -> Tasks:
    """Files with ids: every file is read in blocks, each block split into groups by a hash of
    the ids; each group aligns its samples by id and adds them up."""
    blocks = {key: partitions(size, plan.config.engine.partition_rows) for key, size in sizes.items()}
    groups = max(len(ranges) for ranges in blocks.values())
    # Earlier blocks first, and a group as soon as its pieces are there.
    read = {
        key: [client.submit(_block, shipped, key, start, stop, groups, pure=False, priority=-index)
              for index, (start, stop) in enumerate(ranges)]
        for key, ranges in blocks.items()
    }
    planned = {f.key: (stop or max(sizes[key], start)) - start for key, ranges in blocks.items()
               for f, (start, stop) in zip(read[key], ranges)}
    pieces = {key: [[client.submit(operator.getitem, block, g, pure=False, priority=1) for block in futures]
                    for g in range(groups)] for key, futures in read.items()}
    sums = [client.submit(_group, shipped, {key: pieces[key][g] for key in read}, pure=False, priority=1)
            for g in range(groups)]
    return [f for futures in read.values() for f in futures], planned, _tree(client, sums)


def _tree(client: Any, futures: list[Any]) -> Any:
    """The sum of the futures' results, neighbours added pairwise on the workers (each sum
    checks the order where its parts meet)."""
    while len(futures) > 1:
        futures = [client.submit(operator.add, *futures[i : i + 2], pure=False) if i + 1 < len(futures) else futures[i]
                   for i in range(0, len(futures), 2)]
    return futures[0]


def partitions(rows: int, size: int) -> list[tuple[int, int | None]]:
    """Row ranges of ``size`` rows over about ``rows`` rows (a file's header or line count
    tells); the last one runs to the end of the file, whatever it holds."""
    starts = range(0, max(rows, 1), size)
    return [(start, start + size) for start in starts[:-1]] + [(starts[-1], None)]


def _sources(plan: Plan) -> dict[str, Source]:
    return {REFERENCE: plan.reference, **{name: runs[0] for name, runs in plan.systems.items()}}


def _rows(plan: Plan, start: int, stop: int | None) -> Partial:
    """One task: rows ``start`` to ``stop`` of every file, read side by side and added up."""
    try:
        return reduce_rows(plan, start, stop)
    except DataError as exc:
        raise DataError(f"{exc} (read by the Dask task for {_span(start, stop)})") from None


def _span(start: int, stop: int | None) -> str:
    return f"rows {start + 1:,} to {stop:,}" if stop is not None else f"rows {start + 1:,} to the end"


def _block(plan: Plan, key: str, start: int, stop: int | None, groups: int) -> list[Piece | None]:
    """One task: rows ``start`` to ``stop`` of a file, checked, as one piece per group of ids
    (none where no row falls)."""
    try:
        block, clipped = _read(plan, key, start, stop)
    except DataError as exc:
        raise DataError(f"{exc} (read by the Dask task for {_span(start, stop)} of the file)") from None
    pieces: list[Piece | None] = [None] * groups
    if block is None:
        return pieces
    if block.ids is None:
        raise DataError(f"{block.source}: no sample ids, but the reference has them; give every file the same ids")
    rows = np.arange(start, start + len(block))
    group = (stats.sample_keys(block.ids, len(block)) % np.uint64(groups)).astype(np.intp)
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(groups + 1))
    for g in range(groups):
        taken = order[bounds[g] : bounds[g + 1]]
        if taken.size:
            ids = tuple(block.ids[i] for i in taken)
            pieces[g] = Piece(replace(block, values=block.values[taken], ids=ids, first_row=0), rows[taken])
    first = next(p for p in pieces if p is not None)
    first.clipped = clipped
    return pieces


def _read(plan: Plan, key: str, start: int, stop: int | None) -> tuple[LabelMatrix | None, int]:
    """A block's rows, checked as memberships (or scores, for ranking metrics alone), and how
    many values were clipped; None when the file has no rows there."""
    rows = CHUNK_ROWS if stop is None else min(CHUNK_ROWS, stop - start)  # a parser reads no further than the block
    parts = list(chunks_of(plan, _sources(plan)[key], rows, start, stop))
    if not sum(len(p) for p in parts):
        return None, 0
    block = joined(parts)
    if key == REFERENCE:
        return block.check_memberships()[0], 0
    if plan.axes.ranks_only:
        return block.check_scores(), 0
    return block.check_memberships(clip=plan.config.data.clip)


def _group(plan: Plan, pieces: dict[str, list[Piece | None]]) -> Partial:
    """One task: a group's samples of every source, aligned by id and added up."""
    axes, config = plan.axes, plan.config
    sources = _sources(plan)
    sides = {key: _side(sources[key], [p for p in parts if p is not None]) for key, parts in pieces.items()}
    known = next((side[0] for side in sides.values() if side is not None), None)
    if known is None:
        return Partial(0, {name: Accumulated(axes) for name in plan.systems})
    reference = sides[REFERENCE] or _empty(sources[REFERENCE], known)
    added = 0
    if config.data.missing == "empty":  # ids only systems list: empty in the reference, as in memory
        extra = only_in_systems(reference[0], [side[0] for key, side in sides.items() if key != REFERENCE and side])
        reference, added = (with_empty_samples(reference[0], extra), *reference[1:]), len(extra)
    partial = Partial(0, {}, rows=len(reference[0]), classes=reference[0].classes, added=added)
    for metric in axes.data_metrics:
        prepare = optional(metric.obj, "prepare")
        if prepare is not None:
            prepare(partial.classes)
    boot = config.statistics.bootstrap if config.statistics is not None else None
    counts = None
    if boot is not None and len(reference[0]):  # keyed by id, as an in-memory run keys them
        counts = stats.poisson_weights(stats.sample_keys(reference[0].ids, 0), boot.resamples, boot.seed)
    for name in plan.systems:
        prediction, _, clipped = sides[name] or _empty(sources[name], reference[0])
        try:
            aligned = align(reference[0], prediction, config.data.missing)
        except DataError as exc:
            raise DataError(f"{exc} (found among the samples of one group of ids: the Dask engine aligns the "
                            "samples in groups by a hash of their ids, so other groups may hold more)") from None
        sums = Accumulated(axes)
        sums.clipped = clipped
        if len(reference[0]):
            sums.add(reference[0].values, aligned.values, counts)
        partial.sums[name] = sums
    return partial


def _side(source: Source, pieces: list[Piece]) -> tuple[LabelMatrix, np.ndarray, int] | None:
    """A source's rows in a group (in file order), its ids checked to be unique; its file's row
    of each; and how many of its values were clipped."""
    if not pieces:
        return None
    matrix = joined([p.matrix for p in pieces])
    rows = np.concatenate([p.rows for p in pieces])
    assert matrix.ids is not None, "files matched by position are not grouped"
    unique_ids(matrix.ids, matrix.source, rows=rows)
    return matrix, rows, sum(p.clipped for p in pieces)


def _empty(source: Source, like: LabelMatrix) -> tuple[LabelMatrix, np.ndarray, int]:
    """No rows of ``source`` in a group where another source has some."""
    name = str(source.full) if source.full is not None else source.where
    empty = LabelMatrix(np.zeros((0, len(like.classes))), like.classes, (), name)
    return empty, np.zeros(0, np.intp), 0


@contextmanager
def _client(engine: EngineConfig) -> Iterator[tuple[Any, str]]:
    """A client of the cluster at the engine's address, or of a LocalCluster started for the run
    (closed after it); with a description of the cluster for notes and progress."""
    from distributed import Client, LocalCluster

    if engine.address is None:
        with LocalCluster(
            n_workers=engine.workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
            silence_logs=logging.CRITICAL,  # a task's error is the run's error, said once
        ) as cluster, Client(cluster) as client:
            yield client, f"a LocalCluster of {len(cluster.workers)} worker(s)"
        return
    _check_scheduler(engine.address, engine.timeout)
    try:
        client = Client(engine.address, timeout=engine.timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise _unreachable(engine.address, exc) from None
    with client:
        try:
            client.wait_for_workers(1, timeout=engine.timeout)
        except TimeoutError:
            raise EngineError(
                f"the Dask scheduler at {engine.address} has no worker, and none joined within {engine.timeout:g} s; "
                f"start workers (`dask worker {engine.address}`), or raise `engine.timeout`"
            ) from None
        workers = len(client.scheduler_info()["workers"])
        yield client, f"the Dask cluster at {engine.address} ({workers} worker(s))"


def _check_scheduler(address: str, timeout: float) -> None:
    """Ask ``address`` who it is, within ``timeout`` s, before a Client connects: Dask's handshake
    waits for a reply without a limit (an HTTP server never sends one) and believes the length a
    reply announces (garbage asks for exabytes). Something must listen there first, so that a
    silence is told apart from a refusal."""
    from distributed.comm import connect
    from distributed.comm.addressing import get_address_host_port

    try:
        socket.create_connection(get_address_host_port(address), timeout=timeout).close()
    except (OSError, ValueError) as exc:
        raise _unreachable(address, exc) from None

    async def identity() -> Any:
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    with ThreadPoolExecutor(1) as thread:  # an event loop of its own, whoever calls
        try:
            reply = thread.submit(asyncio.run, asyncio.wait_for(identity(), timeout)).result()
        except TimeoutError:
            raise EngineError(
                f"{address!r} is not a Dask scheduler: it accepted the connection but did not answer in Dask's "
                f"protocol within {timeout:g} s; give the scheduler's address (its port is 8786 unless set "
                "otherwise; 8787 is its dashboard)"
            ) from None
        except Exception as exc:  # what a peer that is not Dask sends breaks the reader in any way
            raise EngineError(
                f"{address!r} is not a Dask scheduler: it answered with something else ({type(exc).__name__}: "
                f"{shortened(str(exc), 200)}); give the scheduler's address (its port is 8786 unless set otherwise)"
            ) from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        raise EngineError(f"{address!r} is not a Dask scheduler but {'a Dask ' + str(kind) if kind else 'something else'}; "
                          "give the scheduler's address (its port is 8786 unless set otherwise)")


def _unreachable(address: str, exc: BaseException) -> EngineError:
    return EngineError(
        f"cannot reach the Dask scheduler at {address!r} ({exc}); start one (`dask scheduler`) "
        "or leave out `engine.address` to start a LocalCluster on this machine"
    )
