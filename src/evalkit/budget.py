"""The memory a run's statistics and results will need, estimated before any data value is
read, and the memory this machine has, so that a run that cannot fit is refused at once with the
figures.

Only the statistics scale with a number the user picks (the resamples) times the data size, and
the result rows with the sweep's values; the rest of a run holds the data and one chunk at a
time. The sizes come from cheap looks at the sources: a ``.npy``/``.npz`` header, the number of
lines of a text file (an upper bound on its samples), the length of inline data. So the
estimate is an upper bound for long formats (one line per event) and close for matrices.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.errors import EngineError

#: Bytes read per block when counting lines.
_BLOCK = 1 << 20
#: Bytes a result row costs until the run ends: about 220 are kept per row (measured with
#: tracemalloc on a sweep of 29,000 rows), and the tables and reports render each again.
ROW_BYTES = 1024


@dataclass(frozen=True)
class Size:
    """An estimate of a data source's samples and classes."""

    samples: int
    classes: int


def size_of(value: Any, full: Path | None) -> Size:
    """Samples and classes of a source: a file or folder (``full``) or data given inline."""
    if full is not None:
        files = sorted(p for p in full.rglob("*") if p.is_file()) if full.is_dir() else [full]
        sizes = [_file_size(f) for f in files] or [Size(0, 1)]
        return Size(sum(s.samples for s in sizes), max(s.classes for s in sizes))
    values: Any = value.get("values", value.get("items")) if isinstance(value, dict) else getattr(value, "values", value)
    shape = np.shape(values) if isinstance(values, np.ndarray) else (len(values),) if hasattr(values, "__len__") else (1,)
    first = values[0] if shape[0] and not isinstance(values, np.ndarray) and isinstance(values, (list, tuple)) else None
    classes = shape[1] if len(shape) > 1 else len(first) if isinstance(first, (list, tuple, dict)) else 1
    return Size(int(shape[0]), max(int(classes), 1))


def classes_of(value: Any, full: Path | None) -> int:
    """Classes of a source from its header alone (of a text file, its first line, where
    :func:`size_of` counts every line too): what sizes a streamed chunk's rows."""
    if full is not None and full.is_file() and full.suffix.lower() not in (".npy", ".npz", ".parquet"):
        try:
            with full.open("rb") as handle:
                return _fields(handle.readline(_BLOCK))
        except OSError:
            return 1  # unreadable: the loader says why when the data is read
    return size_of(value, full).classes


def _file_size(path: Path) -> Size:
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            with path.open("rb") as handle:
                return _npy_size(handle)
        if suffix == ".npz":
            with zipfile.ZipFile(path) as archive:
                sizes = [_npy_size(archive.open(name)) for name in archive.namelist() if name.endswith(".npy")]
            return max(sizes, key=lambda s: s.samples * s.classes, default=Size(0, 1))
        if suffix == ".parquet":
            return _parquet_size(path)
        return _text_size(path)
    except (OSError, ValueError, zipfile.BadZipFile):
        return Size(0, 1)  # unreadable: the loader says why when the data is read


def _npy_size(handle: Any) -> Size:
    version = np.lib.format.read_magic(handle)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape = read(handle)[0]  # the header only, no values
    return Size(int(shape[0]) if shape else 1, int(np.prod(shape[1:])) if len(shape) > 1 else 1)


def _parquet_size(path: Path) -> Size:
    """Rows and columns from the file's footer (a long table's rows are samples x classes)."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    try:
        meta = pq.read_metadata(path)
    except pa.ArrowException:
        return Size(0, 1)
    return Size(meta.num_rows, max(meta.num_columns - 1, 1))


def _text_size(path: Path) -> Size:
    lines, first = 0, b""
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            if not first:
                first = block.split(b"\n", 1)[0]
            lines += block.count(b"\n")
    return Size(max(lines, 1), _fields(first))


def _fields(header: bytes) -> int:
    """Columns of a text table's header line but the first (the ids), at least 1."""
    return max(max(header.count(b","), header.count(b"\t"), header.count(b" ")), 1)


@dataclass(frozen=True)
class Need:
    """One part of a run's memory: how many bytes, what for, what to lower, and where that is
    in the config (its keys, for the message's file:line)."""

    bytes: int
    what: str
    lower: str
    key: tuple[str, ...]


def statistics_needs(
    size: Size, systems: int, measures: int, combinations: int, bootstrap: int | None, test: int | None,
    test_method: str = "permutation", keyed: tuple[bool, bool] = (False, False), bca: bool = False,
) -> list[Need]:
    """The largest allocations of the statistics section (each in bytes).

    Each statistic's replicate sums (resamples x combinations x classes, per system) and values
    (resamples x measures). Its draws: keyed by sample id (``keyed``: the bootstrap's, the
    test's) they are made for a block of 16,384 samples at a time; drawn over all the samples
    (multinomial, unkeyed permutations) they are held whole: int32 counts, a byte per swap and
    per kept sample; BCa's jackknife weights (100 groups) are float64, a block or all at once as
    the bootstrap's counts. A float64 block of counts
    (resamples x 16,384) is taken as they are summed.
    """
    n, c = size.samples, size.classes
    block = min(n, 16384)
    sums = systems * (combinations * c * 5 + measures) * 8
    needs = []
    if bootstrap:
        drawn = block if keyed[0] else n
        needs.append(Need(
            bootstrap * (drawn * 4 + block * 8 + sums) + (min(n, 100) * drawn * 8 if bca else 0),
            f"bootstrap ({amount(bootstrap)} resamples x {drawn:,} samples{' at a time' if keyed[0] else ''})",
            "`statistics.bootstrap.resamples`", ("statistics", "bootstrap", "resamples"),
        ))
    if test:
        drawn = block if keyed[1] else n
        per_sample = 4 + (2 if test_method == "permutation" else 0)
        needs.append(Need(
            test * (drawn * per_sample + block * 8 + 3 * sums),
            f"paired {test_method} tests ({amount(test)} resamples x {drawn:,} samples{' at a time' if keyed[1] else ''})",
            "`statistics.test.resamples`", ("statistics", "test", "resamples"),
        ))
    return needs


#: Bytes a folder of data files (score files) costs per byte of its text while a run holds it:
#: its frames as float64 columns (about as many bytes as their text), aligned by id (a copy),
#: the parser's columns while it reads, and what a score-folder metric works on. Measured with
#: benchmarks/bench_psds.py (two folders of 1,168 score files of 1,000 frames x 10 classes at 4
#: decimals, 187 MB of text): PSDS peaks 0.81 GiB above the interpreter's 0.17 in memory (4.6 per
#: byte), 0.61 GiB streamed (3.5). segment_based and intersection_based work on less (200 such
#: files, 15 MiB: peaks of 252 and 369 MiB where PSDS takes 389, interpreter included).
FOLDER_BYTES = 5

#: Bytes a chunk of a folder's files costs per byte of their text at the peak of a run that reads
#: the folder a chunk at a time (in memory or streamed): the chunk read, the samples taken from it
#: and prepared, and a score-folder metric's work over the chunk's scores (PSDS's sorted scores and
#: per-threshold counts of every file in it). Measured with tracemalloc on long_files folders of
#: tests/test_folder_chunks.py (2,000 frames at 2 decimals): 31-32 in memory, 33-34 streamed, with
#: 4 and 16 files a chunk; on bench_psds.py's DCASE-size files (4 decimals) 14-15 (RSS).
CHUNK_BYTES = 36


#: Samples per chunk of a run (streamed, or in memory: :mod:`evalkit.folders`) when a source is a
#: folder of files, one a sample (score files: a file's frames x classes, 1,000 x 10 at a 10 ms
#: hop), so a chunk holds a few MB. PSDS streamed on DCASE-size folders (bench_psds.py, 1,168
#: files x 2 systems) peaks at 0.31 GiB with 64 files a chunk (0.44 with 128, 0.67 with 256;
#: sed_scores_eval 0.49) in the same CPU time; in memory at 0.30 GiB.
FOLDER_ROWS = 64


def folder_need(path: Path, where: tuple[str, ...], chunk: int | None, kept: float = 0.0, whole: str = "") -> Need:
    """The memory of a folder of data files (one per sample: score files) read whole, or
    ``chunk`` files at a time (a run's chunk, a Dask run's block), from the sizes the folder lists
    (no file is read); and ``kept`` bytes per byte of all of its text that the data metrics'
    states keep to the end (a part per file: the metrics' ``kept_per_byte``). ``whole``: why a
    folder is read whole (``keyed: false`` draws), said in the figure's text."""
    sizes = [f.stat().st_size for f in path.iterdir() if f.is_file()] if path.is_dir() else []
    held = sum(sorted(sizes, reverse=True)[:chunk]) if chunk is not None else sum(sizes)
    block = where[:1] == ("engine",)  # a Dask worker's block, measured as a whole read
    per_byte = CHUNK_BYTES if chunk is not None and not block else FOLDER_BYTES
    read = _read(chunk, len(sizes)) + (f": {whole}" if whole else "")
    if kept:
        return Need(
            int(held * per_byte + sum(sizes) * kept),
            f"the data of {path} ({read}, {human(held)} of text) and the per-file states the "
            f"metrics keep of all its {amount(len(sizes))} files", "the files evaluated", where,
        )
    lower = "the files per chunk (`engine.partition_rows`)" if chunk is not None and block else (
        "the files evaluated" if chunk is not None else
        "the files evaluated, or leave out `keyed: false` (keyed draws read a chunk of files at a time)" if whole else
        "the files evaluated, or stream them (`data: {stream: true}` reads a chunk of files at a time)")
    return Need(held * per_byte, f"the data of {path} ({read}, {human(held)} of text)", lower, where)


def _read(chunk: int | None, files: int) -> str:
    return f"{amount(min(chunk, files))} of its {amount(files)} files at a time" if chunk is not None else \
        f"its {amount(files)} files whole"


def rows_need(steps: int, systems: int, measures: int, tested: bool) -> Need:
    """The result rows, kept to the end of the run: one per sweep value, system and measure
    (and as many paired-test comparisons when there are tests)."""
    rows = steps * systems * measures * (2 if tested else 1)
    return Need(
        rows * ROW_BYTES, f"result rows ({amount(steps)} sweep values x {systems} systems x {measures:,} measures)",
        "the number of sweep values (`sweep.values`)", ("sweep", "values"),
    )


#: Bytes a per-sample value (``per_sample: true``) costs at the peak of a run: about 35 are kept
#: per value to the end, and writing the json report takes 228 more, the parquet report 100 and
#: ``Results.per_sample()`` 33 (tracemalloc, 28,800 values of quickstart's 300 samples).
SAMPLE_VALUE_BYTES = 256


def per_sample_need(samples: int, systems: int, steps: int, combinations: int, quantities: int) -> Need:
    """Each sample's values, kept to the end of the run and written in the reports: one per
    sample, system, sweep value, combination and quantity (counts and set metrics)."""
    values = samples * systems * steps * combinations * quantities
    return Need(
        values * SAMPLE_VALUE_BYTES,
        f"{amount(values)} per-sample values (at most {amount(samples)} samples x {systems} systems"
        + (f" x {amount(steps)} sweep values" if steps > 1 else "")
        + f" x {combinations} combinations x {quantities} counts and metrics)",
        "the samples, or leave out `per_sample: true`", ("per_sample",),
    )


#: A cgroup memory limit at or above this is "no limit" (cgroup v1 writes 2**63 rounded to pages).
_NO_LIMIT = 1 << 60


def available_memory() -> int | None:
    """Bytes this process can allocate now: the least of :func:`memory_limits` (None: unknown)."""
    limits = memory_limits()
    return min(limits.values()) if limits else None


def memory_limits(cgroup_root: Path = Path("/sys/fs/cgroup"), membership: Path = Path("/proc/self/cgroup")) -> dict[str, int]:
    """The bytes left under each limit on this process's memory, by the limit's name: the
    machine's ``MemAvailable``, the process limits RLIMIT_AS (``ulimit -v``, against the
    address space in use) and RLIMIT_DATA (``ulimit -d``), and a container's cgroup
    (:func:`cgroup_room`). A run under a limit fails where the limit is, whatever the machine has."""
    limits = {}
    machine = _meminfo_available()
    if machine is not None:
        limits["MemAvailable"] = machine
    try:
        import resource
    except ImportError:  # not a Unix system
        resource = None  # type: ignore[assignment]
    if resource is not None:
        for name, which, used in (("the process limit RLIMIT_AS, ulimit -v", resource.RLIMIT_AS, "VmSize"),
                                  ("the process limit RLIMIT_DATA, ulimit -d", resource.RLIMIT_DATA, "VmData")):
            soft = resource.getrlimit(which)[0]
            if soft != resource.RLIM_INFINITY:
                limits[name] = max(soft - _status_bytes(used), 0)
    cgroup = cgroup_room(cgroup_root, membership)
    if cgroup is not None:
        limits["the cgroup's memory limit"] = cgroup
    return limits


def limited_by() -> str:
    """`` (under the process limit RLIMIT_AS, ulimit -v)``: the tightest limit, which left the
    bytes available that a message gives, when it is not the machine's own memory; else nothing.
    Read again only for the message (an error path): the bytes left under each limit move
    between two reads, so the tightest is named, not the one whose bytes equal the figure given."""
    limits = memory_limits()
    name = min(limits, key=limits.__getitem__) if limits else "MemAvailable"
    return "" if name == "MemAvailable" else f" (under {name})"


def _meminfo_available() -> int | None:
    """Linux ``MemAvailable``; else free pages; None when neither is known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _status_bytes(key: str) -> int:
    """A size from ``/proc/self/status`` (``VmSize``: the address space; ``VmData``: the data
    segment), 0 when it is not there."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


#: The two layouts of the cgroup tree: the version, the folder of the memory controller, and the
#: files of the limit and the usage, and the key of the usage's reclaimable part in memory.stat.
_CGROUPS = (
    (2, ".", "memory.max", "memory.current", "inactive_file"),
    (1, "memory", "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),
)


def cgroup_room(root: Path, membership: Path) -> int | None:
    """The bytes left under the memory limit of this process's cgroup and of every group above
    it (the least of them), or None without a limit. ``membership`` is ``/proc/self/cgroup``;
    ``root`` the cgroup mount. Left = limit - (usage - inactive file cache), as the kernel
    reclaims that cache before it refuses memory."""
    try:
        lines = membership.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    rooms = []
    for version, controller, limit_file, usage_file, cache_key in _CGROUPS:
        paths = [line.split(":", 2)[2] for line in lines if _member(line, version)]
        if not paths:
            continue
        top = root / controller
        folder = top / paths[0].lstrip("/")
        for level in [folder, *folder.parents]:
            if not level.is_relative_to(top):
                break
            try:
                limit = (level / limit_file).read_text(encoding="ascii").strip()
                usage = int((level / usage_file).read_text(encoding="ascii"))
            except (OSError, ValueError):
                continue  # a level without a memory controller, or a group outside this namespace
            if limit != "max" and int(limit) < _NO_LIMIT:
                rooms.append(max(int(limit) - usage + _stat(level / "memory.stat", cache_key), 0))
    return min(rooms) if rooms else None


def _member(line: str, version: int) -> bool:
    """Whether a /proc/self/cgroup line is the v2 group (``0::/path``) or v1's memory group
    (``4:memory:/path``, or ``4:cpu,memory:/path``)."""
    parts = line.split(":", 2)
    if len(parts) != 3:
        return False
    return parts[:2] == ["0", ""] if version == 2 else "memory" in parts[1].split(",")


def _stat(path: Path, key: str) -> int:
    try:
        for line in path.read_text(encoding="ascii").splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


@contextmanager
def building(what: str, lower: str = "the data or the settings it grows with") -> Iterator[None]:
    """Name what the enclosed work builds: running out of memory there (a ``MemoryError``, under
    a process or container limit or past the estimates) is one error naming it, what to
    ``lower`` and the memory there is, not an internal error."""
    try:
        yield
    except MemoryError:
        raise out_of_memory(f"building {what}", lower) from None


def out_of_memory(doing: str, lower: str) -> EngineError:
    """The error of a ``MemoryError`` raised while ``doing`` (``building the scores of x``)."""
    available = available_memory()
    room = "" if available is None else f"; {human(available)} is available{limited_by()}"
    return EngineError(f"ran out of memory {doing}{room}: lower {lower}, or raise the limit")


def human(n: float) -> str:
    """``1.09 TiB``: bytes in binary units (in decimals: a count of resamples from a config can
    make an integer beyond a float's range)."""
    value = Decimal(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024:
            return f"{value:.3g} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return f"{value:.3g} PiB"


def amount(n: float) -> str:
    """``12,345``, or ``1.23e+300`` when the digits would not be readable: counts from a config
    can be any size, infinite included."""
    if n == float("inf"):
        return "infinitely many"
    return f"{n:,.0f}" if n < 1e15 else f"{Decimal(n):.3g}"
