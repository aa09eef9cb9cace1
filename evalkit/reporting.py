"""Writing report files so that results are never lost and no report is left half-written.

Every file goes to a temporary name in its folder and is renamed over the old one, so an
interrupted run leaves the previous good report (or none), never a truncated one. A writer that
fails does not stop the others: its failure is collected, with the writer and the file named.
"""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.results import Results


def atomic_write(path: Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 would hide a report from others
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def report_file(out: Path, writer: Any) -> Path:
    """The file ``writer`` writes for ``out`` (the report path without suffix)."""
    return out.with_name(out.name + writer.suffix)


def report_pattern(out: Path, writer: Any) -> str:
    """The names of the files ``writer`` writes in ``out``'s folder, as a glob pattern: its
    :func:`report_file`, or ``out-*`` plus its suffix for a writer of several files (``write``)."""
    several = optional(writer, "write") is not None
    return glob.escape(out.name) + ("-*" if several else "") + writer.suffix


@dataclass
class Written:
    """The report files written, and the writers that failed (one message each)."""

    paths: list[Path] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def write_reports(
    results: Results, writers: Mapping[str, Any], out: Path, progress: Progress | None = None,
) -> Written:
    """Each writer's files (``out`` plus the writer's suffix); failures are collected, not raised."""
    written = Written()
    out.parent.mkdir(parents=True, exist_ok=True)
    if progress:
        progress.start("writing reports", len(writers))
    for name, writer in writers.items():
        path = report_file(out, writer)
        try:
            write = optional(writer, "write")
            if write is not None:  # writers of several files (one image per plot)
                written.paths += write(results, out)
            else:
                written.paths.append(atomic_write(path, writer.render(results)))
        except (EvalkitError, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            written.failures.append(f"report writer {name!r} could not write {path}: {reason}")
        if progress:
            progress.advance(1)
    return written


def _umask() -> int:
    """The process's umask (reading it means setting it; it is set back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
