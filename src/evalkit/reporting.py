"""Writing report files so that results are never lost and a report folder holds one run's set.

A run's reports are written as one set: every file goes to a temporary name in its folder
(``.NAME.XXXX.part``), and only when every writer has finished are they renamed over the old
ones, together, with SIGINT and SIGTERM held for the renames. So an interrupted run leaves the
previous set, and removes its temporaries (the CLI makes SIGTERM an exception, as Ctrl-C is);
a temporary left by a killed run is removed by the next run into that folder. A run holds a lock
on the folder while it writes, so two runs into one folder write one after the other, never a
mix. A writer that fails does not stop the others: its failure is collected, naming the writer
and the file, and its previous files are left as they were.
"""

from __future__ import annotations

import contextlib
import contextvars
import glob
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError, ReportError
from evalkit.progress import Progress
from evalkit.protocols import optional, report_file
from evalkit.results import Results

#: How long a run waits for another run writing reports into the same folder. Writing even a
#: large set takes seconds; a lock held for minutes is a stopped or stuck run, and saying so,
#: naming the folder, beats waiting for ever.
LOCK_WAIT = 60.0
#: The lock file of a report folder; it exists only while a run writes there.
LOCK_NAME = ".evalkit-reports.lock"

#: The set being written (inside :func:`write_reports`): :func:`atomic_write` stages its file
#: there instead of renaming it at once.
_current: contextvars.ContextVar[_ReportSet | None] = contextvars.ContextVar("report_set", default=None)


def atomic_write(path: Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename
    (inside :func:`write_reports`, the rename waits for the whole set). A file that cannot be
    written (a full disk, a quota) is a :class:`~evalkit.errors.ReportError` naming ``path``."""
    path = Path(path)
    temporary = None
    if path.is_dir():  # a rename over it would fail only when the set is renamed, half of it done
        raise ReportError(f"could not write {path}: it is a folder; choose another `out:` name, or move the folder")
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
        with os.fdopen(handle, "wb") as file:
            file.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 would hide a report from others
        staging = _current.get()
        if staging is None:
            os.replace(temporary, path)
        else:
            staging.staged[Path(temporary)] = path
    except BaseException as exc:  # a failure or an interruption: no temporary is left behind
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise ReportError(f"could not write {path}: {exc.strerror or exc}") from exc
        raise
    return path


@dataclass
class Written:
    """The report files written, and the writers that failed (one message each)."""

    paths: list[Path] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def write_reports(
    results: Results, writers: Mapping[str, Any], out: Path, progress: Progress | None = None,
    wait: float = LOCK_WAIT,
) -> Written:
    """Each writer's files (``out`` plus the writer's suffix), written as one set under the
    folder's lock (waiting up to ``wait`` seconds for it); failures are collected, not raised."""
    written = Written()
    out.parent.mkdir(parents=True, exist_ok=True)
    renamed: list[Path] = []
    try:
        with _locked(out.parent, wait, progress), _staging() as staging, _temporaries_removed(out):
            if progress:
                progress.start("writing reports", len(writers))
            for name, writer in writers.items():
                before = dict(staging.staged)
                try:
                    written.paths += _write(results, writer, out)
                except ReportError as exc:  # a file that could not be written: it names the file
                    staging.discard(before)  # a writer's files are kept whole or not at all
                    written.failures.append(f"report writer {name!r}: {exc}")
                except (EvalkitError, OSError) as exc:
                    staging.discard(before)
                    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                    several = optional(writer, "write") is not None
                    where = out.with_name(f"{out.name}-*{writer.suffix}") if several else report_file(out, writer)
                    written.failures.append(f"report writer {name!r} could not write {where}: {reason}")
                if progress:
                    progress.advance(1)
            staging.commit(renamed)
    except ReportError as exc:  # the folder is locked by another run, or a rename failed
        written.failures.append(str(exc))
        written.paths = [path for path in written.paths if path in renamed]  # what the folder holds of this run
    return written


def start_reports(writers: Mapping[str, Any]) -> None:
    """Each writer's optional ``start()``: what its report needs whatever the results are
    (the HTML report's worker process, which imports matplotlib), started before the run is
    scored, so that it is ready when the report is written."""
    for writer in writers.values():
        if (start := optional(writer, "start")) is not None:
            start()


def prepare_reports(writers: Mapping[str, Any], results: Results) -> None:
    """Each writer's optional ``results_ready(results)``: what its report can start as soon as
    the results exist (the figures, handed to the worker), so that it runs while the command
    prints the tables and writes the other reports."""
    for writer in writers.values():
        if (ready := optional(writer, "results_ready")) is not None:
            ready(results)


def stop_reports(writers: Mapping[str, Any]) -> None:
    """Each writer's optional ``stop()``: what ``start`` and ``results_ready`` started is
    stopped, after the reports are written or when the run failed or was interrupted before."""
    for writer in writers.values():
        if (stop := optional(writer, "stop")) is not None:
            stop()


def _write(results: Results, writer: Any, out: Path) -> list[Path]:
    """The files of one writer: its own ``write`` (several files), or its ``render`` in one."""
    write = optional(writer, "write")
    if write is not None:
        return list(write(results, out))
    return [atomic_write(report_file(out, writer), writer.render(results))]


class _ReportSet:
    """The temporaries of one set of reports (temporary -> final path), renamed together."""

    def __init__(self) -> None:
        self.staged: dict[Path, Path] = {}

    def discard(self, keep: Mapping[Path, Path]) -> None:
        """Remove the temporaries staged since ``keep`` was taken."""
        for temporary in [t for t in self.staged if t not in keep]:
            temporary.unlink(missing_ok=True)
            del self.staged[temporary]

    def commit(self, renamed: list[Path]) -> None:
        """Rename every temporary over its report, with SIGINT and SIGTERM held meanwhile, so
        that an interruption lands before the first rename or after the last; each report
        renamed is added to ``renamed`` (a rename that fails stops the others)."""
        held = {signal.SIGINT, signal.SIGTERM}
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, held) if hasattr(signal, "pthread_sigmask") else None
        try:
            while self.staged:
                temporary, path = next(iter(self.staged.items()))
                try:
                    os.replace(temporary, path)
                except OSError as exc:
                    raise ReportError(f"could not write {path}: {exc.strerror or exc}") from exc
                del self.staged[temporary]
                renamed.append(path)
        finally:
            if blocked is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


@contextlib.contextmanager
def _temporaries_removed(out: Path) -> Iterator[None]:
    """Every temporary of ``out``'s reports in its folder removed before and after: before, what
    a killed run left, whatever its formats were; after, what a signal left between a temporary's
    creation and its staging (inside ``mkstemp``). Under the folder's lock no other run writes
    there, so each such file is a leftover."""
    pattern = "." + glob.escape(out.name) + "*.part"
    for stale in out.parent.glob(pattern):
        stale.unlink(missing_ok=True)
    try:
        yield
    finally:
        for stale in out.parent.glob(pattern):
            stale.unlink(missing_ok=True)


@contextlib.contextmanager
def _staging() -> Iterator[_ReportSet]:
    """A report set that :func:`atomic_write` stages into; whatever it still holds at the end
    (an interruption, a failure) is removed."""
    staging = _ReportSet()
    token = _current.set(staging)
    try:
        yield staging
    finally:
        _current.reset(token)
        staging.discard({})


@contextlib.contextmanager
def _locked(folder: Path, wait: float, progress: Progress | None) -> Iterator[None]:
    """An exclusive ``flock`` on the folder's :data:`LOCK_NAME`, waiting up to ``wait`` seconds.

    The lock file is removed before it is unlocked, and a run that locks a file checks that it
    is still the folder's (not one just removed), so the folder keeps no lock file and two runs
    never hold two different ones. The kernel releases the lock of a killed run.
    """
    if sys.platform == "win32":  # no flock: reports are still written as one set
        yield
        return
    import fcntl

    path = folder / LOCK_NAME
    deadline = time.monotonic() + wait
    waiting = False
    while True:
        try:
            handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise ReportError(f"could not write reports in {folder}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(handle, 32).decode("ascii", "replace").strip()
            os.close(handle)
            if time.monotonic() >= deadline:
                raise ReportError(
                    f"another evalkit run (process {holder or '?'}) has been writing reports in {folder} for "
                    f"{wait:g} s (it holds {path}); run again when it has finished, or choose another `out:`"
                ) from None
            if progress and not waiting:
                progress.start(f"waiting for another run writing reports in {folder}", 1)
            waiting = True
            time.sleep(0.05)
            continue
        try:
            if os.path.samestat(os.fstat(handle), os.stat(path)):
                break
        except FileNotFoundError:
            pass
        os.close(handle)  # the file was removed by the run that held it: lock the folder's own
    try:
        os.ftruncate(handle, 0)
        os.write(handle, str(os.getpid()).encode("ascii"))  # for the message of a run that waits
        yield
    finally:
        path.unlink(missing_ok=True)
        os.close(handle)


def _umask() -> int:
    """The process's umask (reading it means setting it; it is set back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
