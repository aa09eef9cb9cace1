"""What a run read: every data file with its size and sha256, for the report's provenance.

A streamed or Dask run hashes its files while it reads them, on threads beside it. A loader that
reads a file through :func:`opened` has its bytes hashed as it reads them, in order (one pass,
the .npy stream); a file no loader read that way, whole and in order (Parquet's pages are read
column by column, a CSV by pandas, a Dask run's blocks on the workers), is read a second time
for its hash. Either way the hash is the sha256 of the whole file's bytes.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any, cast

#: Bytes hashed at a time: data files may be large.
BLOCK = 1 << 20
#: Blocks read through :func:`opened` up to this size are hashed at once, larger ones on the
#: hashing thread (a header's small reads are not worth a hand-over).
SMALL = 1 << 16


def described_file(path: Path, shown: str, role: str, system: str | None) -> dict[str, Any]:
    """A file (or a folder, its files in order with their names) with its sha256 and size."""
    found = sha256_of(path)
    assert found is not None, "read to the end"
    return _entry(shown, role, system, *found)


def sha256_of(path: Path, stop: threading.Event | None = None) -> tuple[str, int] | None:
    """The sha256 and size of a file (or of a folder: its files in order with their names);
    None when ``stop`` is set before the end (a loader hashes the file as it reads it)."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest, size = hashlib.sha256(), 0
    for file in files:
        if path.is_dir():
            digest.update(str(file.relative_to(path)).encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(BLOCK), b""):
                if stop is not None and stop.is_set():
                    return None
                digest.update(block)
                size += len(block)
    return digest.hexdigest(), size


def _entry(shown: str, role: str, system: str | None, sha256: str, size: int) -> dict[str, Any]:
    return {"role": role, "system": system, "path": shown, "sha256": sha256, "bytes": size}


class _Read:
    """A file's hash as a loader reads it through :func:`opened`; ``digest`` is that of the whole
    file once a reading of it has gone from its first byte to its last in order."""

    def __init__(self) -> None:
        self.claimed = threading.Event()  # a loader opened it: its second read stops
        self.digest: tuple[str, int] | None = None


class Hashes:
    """The files of a run, hashed beside it: each as it is read (:func:`opened`), or read again
    on a thread of its own when no loader claims it (the second read stops at a claim)."""

    def __init__(self, files: Sequence[tuple[Path, str, str, str | None]]) -> None:
        self.files = files  # (path, shown, role, system) in the order the provenance lists them
        self.reads = {path.resolve(): _Read() for path, *_ in files if path.is_file()}
        self.hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-hash")
        rereading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-reread")
        self.again = [rereading.submit(self._again, path) for path, *_ in files]
        rereading.shutdown(wait=False)

    def _again(self, path: Path) -> tuple[str, int] | None:
        read = self.reads.get(path.resolve())
        return sha256_of(path, None if read is None else read.claimed)

    def described(self) -> list[dict[str, Any]]:
        """Every file's entry (after the run): its hash as read, or from its second read; a file
        claimed but not read whole is read again now."""
        self.hashing.shutdown(wait=True)
        out = []
        for (path, shown, role, system), again in zip(self.files, self.again):
            found = again.result() or self.reads[path.resolve()].digest or sha256_of(path)
            assert found is not None, "read to the end"
            out.append(_entry(shown, role, system, *found))
        return out


_hashes: ContextVar[Hashes | None] = ContextVar("evalkit_hashes", default=None)


@contextmanager
def hashing(files: Sequence[tuple[Path, str, str, str | None]]) -> Iterator[Hashes]:
    """Hash ``files`` (path, shown path, role, system) while the block runs; it ends with their
    entries, :meth:`Hashes.described`."""
    hashes = Hashes(files)
    token = _hashes.set(hashes)
    try:
        yield hashes
    except BaseException:
        for read in hashes.reads.values():  # the run failed: second reads still going stop
            read.claimed.set()
        raise
    finally:
        _hashes.reset(token)
        hashes.hashing.shutdown(wait=False)


def opened(path: Path) -> IO[bytes]:
    """``path`` opened for reading bytes. While a run hashes it, its bytes are hashed as they
    are read (a loader that reads its file through this, in order, spares the run a second
    read of it); a seek away from the bytes read so far gives that up, and the run reads the
    file again for its hash."""
    hashes = _hashes.get()
    read = None if hashes is None else hashes.reads.get(Path(path).resolve())
    if hashes is None or read is None or read.claimed.is_set():  # the first reading hashes it
        return Path(path).open("rb")
    read.claimed.set()
    return cast(IO[bytes], _Hashed(Path(path).open("rb"), read, hashes.hashing))  # read, seek, tell, close


class _Hashed:
    """A file read through a sha256: the bytes read in order from the first are hashed (large
    blocks on the hashing thread, one block in flight: memory stays at a chunk)."""

    def __init__(self, raw: IO[bytes], read: _Read, pool: ThreadPoolExecutor) -> None:
        self.raw, self.read_, self.pool = raw, read, pool
        self.digest: Any = hashlib.sha256()
        self.position = 0
        self.hashed = 0  # bytes hashed (or handed to the thread) from the file's first; -1: given up
        self.size = os.fstat(raw.fileno()).st_size
        self.pending: Future[None] | None = None

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        start, self.position = self.position, self.position + len(data)
        if self.hashed == start and data:
            self._wait()
            if len(data) <= SMALL:
                self.digest.update(data)
            else:
                self.pending = self.pool.submit(self.digest.update, data)  # bytes: nothing can change them
            self.hashed += len(data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self.position = self.raw.seek(offset, whence)
        if self.position != self.hashed:
            self.hashed = -1  # read out of order: this reading gives no hash
        return self.position

    def tell(self) -> int:
        return self.position

    def _wait(self) -> None:
        if self.pending is not None:
            self.pending.result()
            self.pending = None

    def close(self) -> None:
        self._wait()
        if self.hashed == self.size and self.read_.digest is None:
            self.read_.digest = (self.digest.hexdigest(), self.size)
        self.raw.close()

    def __enter__(self) -> _Hashed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
