"""The Dask engine (``engine: dask``): a run scored on a Dask cluster, in partitions.

Files without sample ids are matched by position: each partition of rows is a task that reads
its rows of every file side by side and adds them up, as a streamed run does, so no data moves
between workers. Files with ids are read in blocks of rows, a task each; a block is checked
(memberships in [0, 1], finite scores) and put in the reference's class order, and one Dask
DataFrame shuffle of every block's rows by id makes the groups, so a sample falls in the same
group on every side wherever it sits in its file (the tasks grow with blocks plus groups, not
blocks times groups). Each group is a task that
aligns the reference with each system by id exactly as an in-memory run does (any row order;
an id missing, extra or repeated is an error naming it; ``missing: empty``) and adds the group
up. Either way the partial sums meet in a tree reduction on the workers: the client holds the
plan and the sums, never the data. Poisson bootstrap counts are drawn from the sample ids (or
rows), so the intervals do not depend on the partitioning.

What the workers receive of the plan is its :class:`~evalkit.plan.Work` (the job, the settings,
the sources), pickled once: its components travel as their specs and each worker makes them
again from its own registry, once per run (:func:`_opened`); no registry, config or callable
travels, and a component a worker's plugins do not provide is one error naming it and the
worker.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import os
import pickle
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np

from evalkit import budget, engine, stats
from evalkit.data import LabelMatrix, match_classes
from evalkit.errors import DataError, EngineError, shortened
from evalkit.loading import unique_ids
from evalkit.plan import Source, Work
from evalkit.progress import Progress
from evalkit.reduction import Data, Tally, prepare, reduce_partition
from evalkit.settings import Engine
from evalkit.streaming import Partial, chunk_rows, chunks_of, joined, reduce_rows
from evalkit.weights import one_column

#: What a wait that ran out raises: on Python 3.10, Dask's waits and asyncio's raise
#: asyncio.TimeoutError, which became the built-in TimeoutError only in 3.11.
_TIMEOUTS = (TimeoutError, asyncio.TimeoutError)

#: The reference's and the weights' keys among the sources (the others are systems' runs).
REFERENCE, WEIGHTS = "", "\x00weights"

#: glibc's malloc settings of the workers of a LocalCluster started for a run. Dask's nanny sets
#: MALLOC_TRIM_THRESHOLD_=65536, which also fixes the mmap threshold at 128 KiB: every chunk's
#: arrays are then mapped and unmapped, page by page, and a task took 2.2x the CPU of the same
#: rows in a plain process (3.2 s against 1.5 s for 5,000,000 x 17 from .npy). These keep a
#: chunk's arrays (a few MB) on the heap and return memory to the system past 64 MiB free.
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(64 << 20)}


def dask_tally(work: Work, progress: Progress | None = None) -> tuple[Tally, str]:
    """The tally of a run reduced on a Dask cluster, and its note."""
    engine = work.job.settings.engine
    sizes = {key: budget.size_of(source.value, source.full).samples for key, source in _sources(work).items()}
    with _client(engine) as (client, cluster):
        shipped = client.submit(_held, pickle.dumps(work, pickle.HIGHEST_PROTOCOL), pure=False)
        # Item lists are read whole (no loader of theirs reads a row alone): their first row is
        # looked at by a task, so that the client never holds the data.
        by_id = _has_ids(work) if work.kind == "matrix" else \
            next(_finished(client, [client.submit(_on_worker, _has_ids, shipped, pure=False)], engine.timeout,
                           cluster)).result()
        grouped = _by_id if work.kind == "matrix" else _items_by_id
        leaves, planned, total = (grouped if by_id else _by_position)(client, shipped, work, sizes)
        if progress:
            progress.start(f"reading on {cluster}", sum(planned.values()))
        for done in _finished(client, [*leaves, total], engine.timeout, cluster):
            if progress and done.key in planned:
                progress.advance(planned[done.key])
        summed: Partial = total.result()
    how = "grouped by id" if by_id else "matched by position"
    return summed.tally, (f"Dask: {summed.rows:,} samples read in blocks of up to {engine.partition_rows:,} rows, "
                          f"{how}, on {cluster}")


def _held(shipped: bytes) -> bytes:
    """The pickled work as a task's result rather than scattered data: a worker that dies takes
    scattered data with it for good, while Dask computes a lost result again (every task here is
    a pure function of the work and its rows). Bytes, opened by the tasks (:func:`_on_worker`):
    the scheduler unpickles task arguments, and its process need not have the plugins."""
    return shipped


def _on_worker(task: Callable[..., Any], shipped: bytes, *args: Any) -> Any:
    """One task: ``task(work, *args)`` with the work opened from what was shipped. A worker's
    tasks already run side by side on the cluster's cores, so each reduces its chunks' replicates
    on its own thread (the numbers do not depend on it)."""
    engine.REPLICATE_THREADS = 1
    return task(_opened(shipped), *args)


#: The shipped bytes last opened in this process, and their work: a worker hands every task of a
#: run the same bytes object, so a run's components are made once per worker.
_last: tuple[bytes, Work] | None = None


def _opened(shipped: bytes) -> Work:
    """The work in the shipped bytes, its components made by this process's registry (an error
    naming the component and the worker when it cannot)."""
    global _last
    last = _last
    if last is None or last[0] is not shipped:
        last = _last = (shipped, pickle.loads(shipped))
    return last[1]


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
        except _TIMEOUTS:  # nothing finished for a second: is any worker left?
            settled = set()
            alone_since = None if client.nthreads() else alone_since or time.monotonic()
            if alone_since is not None and time.monotonic() - alone_since >= timeout:
                raise EngineError(
                    f"{cluster} lost its workers during the run and none came back within {timeout:g} s; "
                    "start workers (`dask worker SCHEDULER-ADDRESS`) and run again, or raise `engine.timeout`"
                ) from None
        except CancelledError as exc:
            raise _cancelled(cluster, exc) from None
        for future in settled - pending:
            try:
                if future.status != "finished":  # the result itself stays on the workers
                    future.result()
            except CancelledError as exc:
                raise _cancelled(cluster, exc) from None
            except KilledWorker as exc:
                raise EngineError(
                    f"{cluster}: the workers died {exc.allowed_failures + 1} times while running one task, so Dask "
                    "gave up on it; a worker past its memory limit is restarted by its nanny: lower "
                    "`engine.partition_rows`, or give the workers more memory (and look in their logs)"
                ) from None
            yield future


def _cancelled(cluster: str, exc: BaseException) -> EngineError:
    """Work the cluster forgot, with Dask's reasons (one line, not a list of task keys)."""
    reasons = sorted({group.reason for group in getattr(exc, "error_groups", ())}) or [getattr(exc, "reason", "unknown")]
    return EngineError(f"{cluster} cancelled the run's work (reason: {', '.join(reasons)}): was it restarted? Run again")


def _has_ids(work: Work) -> bool:
    """Whether the reference names its samples: a look at its first row."""
    first = next(chunks_of(work, work.reference, rows=1, whole=work.kind == "items"), None)
    return first is not None and first.ids is not None


Tasks = tuple[list[Any], dict[str, int], Any]  # the reading tasks, their rows, the future of the sum


def _by_position(client: Any, shipped: Any, work: Work, sizes: dict[str, int]) -> Tasks:
    """Files without ids: each partition of rows is one task that reads its rows of every file
    side by side and adds them up (a streamed run of those rows), so no data moves. ``shipped``
    is the future of the pickled work (:func:`_held`)."""
    ranges = partitions(sizes[REFERENCE], work.job.settings.engine.partition_rows)
    leaves = [client.submit(_on_worker, _rows, shipped, start, stop, pure=False, priority=-i)
              for i, (start, stop) in enumerate(ranges)]
    planned = {leaf.key: (stop or max(sizes[REFERENCE], start)) - start for leaf, (start, stop) in zip(leaves, ranges)}
    return leaves, planned, _tree(client, leaves)


def _by_id(client: Any, shipped: Any, work: Work, sizes: dict[str, int]) -> Tasks:
    """Files with ids: every file is read in blocks, a task each (:func:`_table`), and one
    shuffle of all their rows by id makes the groups, each a task that aligns its samples by id
    and adds them up. The tasks grow with the blocks plus the groups, not with their product."""
    import dask.dataframe as dd

    like = next(chunks_of(work, work.reference, rows=1))[:0]  # the reference's classes
    assert isinstance(like, LabelMatrix), "matrices are grouped by this shuffle"
    blocks = {key: partitions(size, work.job.settings.engine.partition_rows) for key, size in sizes.items()}
    read, planned = [], {}
    for index, (key, ranges) in enumerate(blocks.items()):
        for order, (start, stop) in enumerate(ranges):  # earlier blocks first
            read.append(client.submit(_on_worker, _table, shipped, like, index, start, stop, pure=False, priority=-order))
            planned[read[-1].key] = (stop or max(sizes[key], start)) - start
    rows = dd.from_delayed(read, meta=_frame(like, 0, 0, 0), verify_meta=False)
    groups = rows.shuffle("id", npartitions=max(len(ranges) for ranges in blocks.values()))
    sums = [client.submit(_on_worker, _group, shipped, part, like.classes, pure=False)
            for part in client.compute(groups.to_delayed())]
    return read, planned, _tree(client, sums)


def _items_by_id(client: Any, shipped: Any, work: Work, sizes: dict[str, int]) -> Tasks:
    """Item lists with ids (their loaders read a file whole): each file is read once, by a task
    that splits its samples into groups by a hash of their ids (:func:`_split`); each group is a
    task that takes its part of every file, aligns the samples by id and adds them up."""
    count = max(1, -(-sizes[REFERENCE] // work.job.settings.engine.partition_rows))
    splits = {key: client.submit(_on_worker, _split, shipped, key, count, pure=False) for key in sizes}
    planned = {future.key: sizes[key] for key, future in splits.items()}
    groups = [
        client.submit(_on_worker, _item_group, shipped, *[client.submit(operator.getitem, split, g, pure=False)
                                              for split in splits.values()], pure=False)
        for g in range(count)
    ]
    return list(splits.values()), planned, _tree(client, groups)


def _split(work: Work, key: str, count: int) -> list[Data]:
    """One task: the ``key`` source read whole, its samples in ``count`` groups by a hash of
    their ids (in file order within a group), the same group for an id in every file."""
    whole = joined(list(chunks_of(work, _sources(work)[key], whole=True)))
    if whole.ids is None:
        raise DataError(f"{whole.source}: no sample ids, but the reference has them; give every file the same ids")
    # Grouped by the id without its extension: score files named by their audio file's stem
    # (`a.tsv` for `a.wav`) are matched with the reference by stem, so they must meet it.
    group = stats.sample_keys([i.rsplit(".", 1)[0] for i in whole.ids], len(whole)) % np.uint64(count)
    parts = []
    for g in range(count):
        rows = np.flatnonzero(group == g)
        parts.append(replace(whole.take(rows), ids=tuple(whole.ids[r] for r in rows)))
    return parts


def _item_group(work: Work, *parts: Data) -> Partial:
    """One task: a group's samples of every source (``parts``, in :func:`_sources`' order),
    aligned by id and reduced."""
    sides = dict(zip(_sources(work), parts))
    systems = {name: [sides[_key(name, run)] for run in range(len(runs))] for name, runs in work.systems.items()}
    weights = sides.get(WEIGHTS)
    assert weights is None or isinstance(weights, LabelMatrix), "weights are a matrix"
    return _reduced(work, sides[REFERENCE], systems, weights)


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


def _sources(work: Work) -> dict[str, Source]:
    """Every source of the run by key: the reference, each run of each system, the weights."""
    keyed = {REFERENCE: work.reference, **{_key(name, run): source for name, runs in work.systems.items()
                                           for run, source in enumerate(runs)}}
    return keyed if work.weights is None else {**keyed, WEIGHTS: work.weights}


def _key(system: str, run: int) -> str:
    return f"{system}\x00{run}"


def _rows(work: Work, start: int, stop: int | None) -> Partial:
    """One task: rows ``start`` to ``stop`` of every file, read side by side and added up."""
    try:
        return reduce_rows(work, start, stop)
    except DataError as exc:
        raise DataError(f"{exc} (read by the Dask task for {_span(start, stop)})") from None


def _span(start: int, stop: int | None) -> str:
    return f"rows {start + 1:,} to {stop:,}" if stop is not None else f"rows {start + 1:,} to the end"


def _table(work: Work, like: LabelMatrix, index: int, start: int, stop: int | None) -> Any:
    """One task: rows ``start`` to ``stop`` of the ``index``-th source, checked and in the
    reference's class order (``like``), as a table the shuffle can move (:func:`_frame`)."""
    key = list(_sources(work))[index]
    try:
        matrix, clipped = _read(work, key, start, stop)
    except DataError as exc:
        raise DataError(f"{exc} (read by the Dask task for {_span(start, stop)} of the file)") from None
    if matrix is None:
        return _frame(like, index, start, 0)
    if matrix.ids is None:
        raise DataError(f"{matrix.source}: no sample ids, but the reference has them; give every file the same ids")
    if key == WEIGHTS:  # its one value column travels in the first class's place
        packed = np.zeros((len(matrix), len(like.classes)))
        packed[:, 0] = one_column(matrix)
        return _frame(replace(matrix, values=packed, classes=like.classes), index, start, 0)
    return _frame(match_classes(like, matrix), index, start, clipped)


def _frame(matrix: LabelMatrix, index: int, start: int, clipped: int) -> Any:
    """A matrix's rows as a DataFrame: id, source (its index), row in the file, values clipped
    (on the first row), whether the values were float32 (float64 holds them exactly, so the group
    gets the very same numbers back), and one float64 column per class."""
    import pandas as pd  # type: ignore[import-untyped]

    n = len(matrix)
    return pd.DataFrame({
        "id": pd.Series(matrix.ids or (), dtype="string"), "source": np.full(n, index, np.int16),
        "row": np.arange(start, start + n, dtype=np.int64), "clipped": np.eye(1, n, dtype=np.int64)[0] * clipped,
        "single": np.full(n, matrix.values.dtype == np.float32),
        **{f"v{i}": matrix.values[:, i].astype(np.float64) for i in range(len(matrix.classes))},
    })


def _read(work: Work, key: str, start: int, stop: int | None) -> tuple[LabelMatrix | None, int]:
    """A block's rows, checked as memberships (or scores, for ranking metrics alone), and how
    many values were clipped; None when the file has no rows there."""
    # Whole chunks, even for a smaller block: a CSV is parsed from its start, and in chunks of a
    # few rows that parse cost 80 ms a block of quickstart (3 ms now); at most a chunk is read past it.
    parts = list(chunks_of(work, _sources(work)[key], chunk_rows(work), start, stop))
    if not sum(len(p) for p in parts):
        return None, 0
    block = joined(parts)
    assert isinstance(block, LabelMatrix), "matrices are read in blocks"
    if key == WEIGHTS:
        return block, 0
    if key == REFERENCE:
        return block.check_memberships()[0], 0
    if work.job.axes.ranks_only:
        return block.check_scores(), 0
    return block.check_memberships(clip=work.job.settings.clip)


def _group(work: Work, frame: Any, classes: tuple[str, ...]) -> Partial:
    """One task: a group's samples of every source (the rows of ``frame``, the shuffle's part of
    one group, in the reference's ``classes``), aligned by id and reduced."""
    sources = _sources(work)
    source_of = frame["source"].to_numpy()
    sides = {key: _side(source, frame[source_of == index], classes) for index, (key, source) in enumerate(sources.items())}
    known = next((side[0] for side in sides.values() if side is not None), None)
    if known is None:
        return Partial(0)
    reference = (sides[REFERENCE] or _empty(sources[REFERENCE], known))[0]
    systems = {name: [(sides[_key(name, run)] or _empty(sources[_key(name, run)], reference))[0] for run in range(len(runs))]
               for name, runs in work.systems.items()}
    weights = None
    if work.weights is not None:
        packed = (sides[WEIGHTS] or _empty(sources[WEIGHTS], reference))[0]
        weights = replace(packed, values=packed.values[:, :1], classes=("weight",))
    clipped = {name: sum(side[2] for run in range(len(runs)) if (side := sides[_key(name, run)]) is not None)
               for name, runs in work.systems.items()}
    return _reduced(work, reference, systems, weights, {name: count for name, count in clipped.items() if count})


def _reduced(
    work: Work, reference: Data, systems: Mapping[str, Sequence[Data]], weights: LabelMatrix | None,
    clipped: dict[str, int] | None = None,
) -> Partial:
    """A group's samples of every source, prepared and reduced; ``clipped``: values clipped as
    its blocks were read."""
    try:
        partition, notes = prepare(work.job, reference, systems, weights, files=work.from_files)
    except DataError as exc:
        raise DataError(f"{exc} (found among the samples of one group of ids: the Dask engine aligns the "
                        "samples in groups by a hash of their ids, so other groups may hold more)") from None
    notes.clipped = clipped or {}
    return Partial(0, notes + reduce_partition(work.job, partition), rows=len(partition.reference) - notes.added)


def _side(source: Source, rows: Any, classes: tuple[str, ...]) -> tuple[LabelMatrix, np.ndarray, int] | None:
    """A source's rows in a group (in file order, of the type they were read as), its ids checked
    to be unique; its file's row of each; and how many of its values were clipped."""
    if not len(rows):
        return None
    rows = rows.sort_values("row")
    values = np.ascontiguousarray(rows[[f"v{i}" for i in range(len(classes))]].to_numpy(np.float64))  # as read: rows
    matrix = LabelMatrix(values.astype(np.float32) if rows["single"].iat[0] else values, classes,
                         tuple(rows["id"].tolist()), _name(source))
    assert matrix.ids is not None, "files matched by position are not grouped"
    unique_ids(matrix.ids, matrix.source, rows=rows["row"].to_numpy())
    return matrix, rows["row"].to_numpy(), int(rows["clipped"].sum())


def _name(source: Source) -> str:
    return str(source.full) if source.full is not None else source.where


def _empty(source: Source, like: LabelMatrix) -> tuple[LabelMatrix, np.ndarray, int]:
    """No rows of ``source`` in a group where another source has some."""
    empty = LabelMatrix(np.zeros((0, len(like.classes))), like.classes, (), _name(source))
    return empty, np.zeros(0, np.intp), 0


@contextmanager
def _client(engine: Engine) -> Iterator[tuple[Any, str]]:
    """A client of the cluster at the engine's address, or of a LocalCluster started for the run
    (closed after it); with a description of the cluster for notes and progress."""
    from distributed import Client, LocalCluster

    if engine.address is None:
        with _worker_malloc():  # the workers start with the cluster
            cluster = LocalCluster(
                n_workers=engine.workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                silence_logs=logging.CRITICAL,  # a task's error is the run's error, said once
                # no dashboard, and the scheduler's HTTP server (health, metrics) on a free port: 8787,
                # its default, is often a user's own cluster's dashboard (distributed warns, then moves)
                scheduler_kwargs={"dashboard_address": ":0"},
            )
        with cluster, Client(cluster) as client:
            yield client, f"a LocalCluster of {len(cluster.workers)} worker(s)"
        return
    _check_scheduler(engine.address, engine.timeout)
    try:
        client = Client(engine.address, timeout=engine.timeout)
    except (OSError, *_TIMEOUTS, ValueError) as exc:
        raise _unreachable(engine.address, exc) from None
    with client:
        try:
            client.wait_for_workers(1, timeout=engine.timeout)
        except _TIMEOUTS:
            raise EngineError(
                f"the Dask scheduler at {engine.address} has no worker, and none joined within {engine.timeout:g} s; "
                f"start workers (`dask worker {engine.address}`), or raise `engine.timeout`"
            ) from None
        workers = len(client.scheduler_info()["workers"])
        yield client, f"the Dask cluster at {engine.address} ({workers} worker(s))"


@contextmanager
def _worker_malloc() -> Iterator[None]:
    """:data:`WORKER_MALLOC` in this process's environment while a LocalCluster starts: Dask's
    nanny takes these variables from the environment before its config (and leaves its own
    there, so a LocalCluster started earlier in the process would decide them)."""
    before = {name: os.environ.get(name) for name in WORKER_MALLOC}
    os.environ.update(WORKER_MALLOC)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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

    from distributed.security import Security

    async def identity() -> Any:  # with the client's security settings, so a tls:// scheduler answers
        comm = await connect(address, timeout=timeout, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    with ThreadPoolExecutor(1) as thread:  # an event loop of its own, whoever calls
        try:
            reply = thread.submit(asyncio.run, asyncio.wait_for(identity(), timeout)).result()
        except _TIMEOUTS:
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
