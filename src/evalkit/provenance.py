"""What a run read: every data file with its size and sha256, for the report's provenance.

A streamed or Dask run hashes its files while it reads them, on threads beside it. The plan
decides how each file is hashed, before anything is read: a file whose loader reads it through
:func:`opened` from its first byte to its last, in order (``hashes_as_read``: the .npy stream)
has its bytes hashed as they are read (one pass); any other file (Parquet's pages are read
column by column, a CSV by pandas, a Dask run's blocks on the workers) is read a second time,
on a thread of its own, for its hash. Either way the hash is the sha256 of the whole file's
bytes."""

from __future__ import annotations

import hashlib
import io
import os
import threading
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, cast

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
        self.opened = False  # the first opening hashes it (a file read as reference and system)
        self.digest: tuple[str, int] | None = None


Files = Sequence[tuple[Path, str, str, str | None]]


class Hashes:
    """The files of a run, hashed beside it: those a loader will read whole and in order through
    :func:`opened` (``claimed``, decided by the plan) as they are read; every other file read
    again on a thread of its own from the start, so no file is read by both."""

    def __init__(self, files: Files, claimed: Collection[Path] = ()) -> None:
        self.files = files  # (path, shown, role, system) in the order the provenance lists them
        self.reads = {path.resolve(): _Read() for path in claimed if path.is_file()}
        self.stop = threading.Event()  # the run failed: second reads still going stop
        self.hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-hash")
        rereading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-reread")
        again = dict.fromkeys(path.resolve() for path, *_ in files if path.resolve() not in self.reads)
        self.again = {path: rereading.submit(sha256_of, path, self.stop) for path in again}
        rereading.shutdown(wait=False)

    def described(self) -> list[dict[str, Any]]:
        """Every file's entry (after the run): its hash as read, or from its second read; a file
        claimed but not read whole in order (a column-major .npy, read whole) is read again now."""
        self.hashing.shutdown(wait=True)
        out = []
        for path, shown, role, system in self.files:
            key = path.resolve()
            found = self.again[key].result() if key in self.again else self.reads[key].digest or sha256_of(path)
            assert found is not None, "read to the end"
            out.append(_entry(shown, role, system, *found))
        return out


_hashes: ContextVar[Hashes | None] = ContextVar("evalkit_hashes", default=None)


@contextmanager
def hashing(files: Files, claimed: Collection[Path] = ()) -> Iterator[Hashes]:
    """Hash ``files`` (path, shown path, role, system) while the block runs, those ``claimed``
    as a loader reads them (:class:`Hashes`); it ends with their entries, :meth:`Hashes.described`."""
    hashes = Hashes(files, claimed)
    token = _hashes.set(hashes)
    try:
        yield hashes
    except BaseException:
        hashes.stop.set()
        raise
    finally:
        _hashes.reset(token)
        hashes.hashing.shutdown(wait=False)


def opened(path: Path) -> io.BufferedReader:
    """``path`` opened for reading bytes. While a run hashes it as read (its loader's
    ``hashes_as_read``), its bytes are hashed as they are read, in order, by the first opening;
    a seek away from the bytes read so far gives that up, and the run reads the file again for
    its hash after it."""
    hashes = _hashes.get()
    read = None if hashes is None else hashes.reads.get(Path(path).resolve())
    if hashes is None or read is None or read.opened:
        return Path(path).open("rb")
    read.opened = True
    return cast(io.BufferedReader, _Hashed(Path(path).open("rb"), read, hashes.hashing))  # read(into), seek, tell, close


class _Hashed:
    """A file read through a sha256: the bytes read in order from the first are hashed (large
    blocks on the hashing thread, one block in flight: memory stays at a chunk)."""

    def __init__(self, raw: io.BufferedReader, read: _Read, pool: ThreadPoolExecutor) -> None:
        self.raw, self.read_, self.pool = raw, read, pool
        self.digest: Any = hashlib.sha256()
        self.position = 0
        self.hashed = 0  # bytes hashed (or handed to the thread) from the file's first; -1: given up
        self.size = os.fstat(raw.fileno()).st_size
        self.pending: Future[None] | None = None

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self._hash(data, len(data))  # bytes: nothing can change them while they are hashed
        return data

    def readinto(self, buffer: Any) -> int:
        """Read into ``buffer`` (a loader's, reused from chunk to chunk), which is then hashed
        on the thread while the caller works on it; the block in flight is hashed first, as
        it may be this buffer's last contents."""
        self._wait()
        count = self.raw.readinto(buffer) or 0
        self._hash(memoryview(buffer).cast("B")[:count], count)
        return count

    def _hash(self, data: Any, count: int) -> None:
        """Hash the ``count`` bytes just read, if they follow those hashed so far."""
        start, self.position = self.position, self.position + count
        if self.hashed == start and count:
            self._wait()
            if count <= SMALL:
                self.digest.update(data)
            else:
                self.pending = self.pool.submit(self.digest.update, data)
            self.hashed += count

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
