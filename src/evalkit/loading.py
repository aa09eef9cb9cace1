"""The rules every loader follows, written once.

Ids, items and column names are compared as text without surrounding white space; an empty or
repeated sample id, an empty item, an unnamed or repeated column and a key twice in one JSON
object are errors that name the file and line, never a value silently kept or replaced. A file
that cannot be read — not UTF-8, truncated, corrupt, malformed CSV — is a
:class:`~evalkit.errors.DataError` naming the file (and line or archive member), not a plugin
bug. Every built-in loader uses these functions, third-party loaders get them from
:mod:`evalkit.plugin`, and the loader guard of :mod:`evalkit.contracts` applies :func:`reading`
around every ``load`` and ``sniff``.
"""

from __future__ import annotations

import csv
import json
import stat
import zipfile
import zlib
from collections.abc import Collection, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from evalkit import budget
from evalkit.errors import DataError, EvalkitError

#: Bytes read at a time when looking for the first byte that is not UTF-8.
_BLOCK = 1 << 20

#: The modules that read .npy files and zip archives: what they raise while reading (a wrong call
#: aside) is about the file, e.g. "EOF: reading array header" or "zip file version 10.9".
_FILE_READERS = frozenset({"zipfile", "numpy.lib.format", "numpy.lib._format_impl", "numpy.lib.npyio", "numpy.lib._npyio_impl"})


def clean_text(value: Any) -> str:
    """An id or name as evalkit compares it: text (bytes decoded as UTF-8), surrounding white
    space removed, so that ``" a"`` in one file and ``a`` in another are the same sample."""
    return (value.decode("utf-8") if isinstance(value, bytes) else str(value)).strip()


def clean_items(values: Iterable[Any], where: str) -> tuple[Any, ...]:
    """Items as evalkit compares them: text items without surrounding white space (other items,
    such as numbers or intervals, as they are); an empty text item is an error at ``where``."""
    items = []
    for value in values:
        if isinstance(value, str):
            value = value.strip()
            if not value:
                raise DataError(f"{where}: an empty item; remove it, or write the item (an empty set is no items)")
        items.append(value)
    return tuple(items)


def clean_ids(values: Collection[Any], source: str, lines: Sequence[int] | None = None) -> tuple[str, ...]:
    """Sample ids as evalkit compares them (:func:`clean_text`), each non-empty and unique
    (:func:`unique_ids`); ``lines`` gives the line of each id, for the messages."""
    try:
        ids = tuple(map(str.strip, values))  # text, the common case, at C speed
    except TypeError:  # numbers or bytes among them
        ids = tuple(map(clean_text, values))
    unique_ids(ids, source, lines)
    return ids


def _distinct(ids: Sequence[str]) -> bool:
    """Whether no id repeats, by sorting their hashes (8 bytes an id, a quarter of a set's table);
    only when two hashes are equal are the ids themselves compared."""
    import numpy as np

    hashes = np.fromiter(map(hash, ids), np.int64, count=len(ids))
    hashes.sort()
    return not bool((hashes[1:] == hashes[:-1]).any()) or len(set(ids)) == len(ids)


def unique_ids(
    ids: Sequence[str], source: str, lines: Sequence[int] | None = None, rows: Sequence[int] | np.ndarray | None = None,
) -> None:
    """Refuse an empty or repeated sample id: rows would be matched to the wrong samples, or one
    sample scored twice. The message names the lines (with ``lines``) or rows of both (``rows``:
    the file's row of each id, from 0, when the ids are not the file's rows in order)."""
    if _distinct(ids) and "" not in ids:
        return

    def place(row: int) -> str:
        return f"{source}:{lines[row]}" if lines is not None else f"{source}: {first(row)}"

    def first(row: int) -> str:
        return f"line {lines[row]}" if lines is not None else f"row {(row if rows is None else rows[row]) + 1}"

    seen: dict[str, int] = {}
    for row, sample in enumerate(ids):
        if not sample:
            raise DataError(f"{place(row)}: empty sample id; give every sample an id")
        earlier = seen.setdefault(sample, row)
        if earlier != row:
            raise DataError(
                f"{place(row)}: sample id {sample!r} appears twice (first on {first(earlier)}); each "
                "sample needs its own id: merge the rows or rename one"
            )


def check_header(names: Sequence[Any], where: str, unnamed: int | None = None, what: str = "column") -> tuple[str, ...]:
    """Column (or class: ``what``) names (:func:`clean_text`); an empty name, or a name twice (the
    second would silently replace the first), is an error at ``where`` naming both. Column
    ``unnamed`` (0-based; a leading id column) may have no name."""
    header = tuple(clean_text(n) for n in names)
    seen: dict[str, int] = {}
    for column, name in enumerate(header):
        if not name and column != unnamed:
            raise DataError(f"{where}: {what} {column + 1} has no name; name every {what}")
        earlier = seen.setdefault(name, column)
        if earlier != column:
            what_plural = what + ("es" if what.endswith("s") else "s")
            raise DataError(
                f"{where}: {what_plural} {earlier + 1} and {column + 1} are both named {name!r}; one would "
                "silently replace the other: rename or remove one"
            )
    return header


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping: dict[str, Any] = {}
    for key, value in pairs:
        if key in mapping:
            raise _RepeatedKey(key)
        mapping[key] = value
    return mapping


def parse_json(text: str, where: str) -> Any:
    """The JSON value of ``text``. Invalid JSON, a key twice in one object (JSON parsers keep the
    last silently; evalkit's YAML loader refuses them too) or nesting too deep for Python is an
    error at ``where``."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno} column {exc.colno}" if "\n" in text.strip() else f"column {exc.colno}"
        raise DataError(f"{where}: not valid JSON ({exc.msg} at {at})") from None
    except _RepeatedKey as exc:
        raise DataError(
            f"{where}: key {exc.key!r} appears twice in one object; the second would silently replace the "
            "first: remove or rename one"
        ) from None
    except ValueError as exc:  # a number over Python's 4,300 digits
        raise DataError(f"{where}: not valid JSON ({exc})") from None
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deeply to read") from None


def text_lines(path: Path) -> Generator[tuple[int, str], None, None]:
    """(line number, text without its line end) of every line of a UTF-8 text file (a byte-order
    mark is skipped); a file that cannot be read is an error naming it (:func:`reading`)."""
    with reading(path), path.open(newline="", encoding="utf-8-sig") as handle:
        for line, text in enumerate(handle, start=1):
            yield line, text.rstrip("\r\n")


def csv_rows(path: Path, delimiter: str = ",") -> Generator[tuple[int, list[str]], None, None]:
    """(first line, fields) of every record of a UTF-8 CSV (or TSV) file, with CSV quoting; an
    empty line is a record without fields. Malformed CSV is an error naming its line."""
    with reading(path), path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        line = 1
        try:
            for fields in reader:
                yield line, fields
                line = reader.line_num + 1
        except csv.Error as exc:
            hint = ": a field over 128 KiB, often a quote that is never closed" if "field limit" in str(exc) else ""
            raise DataError(f"{path}:{line}: not valid CSV ({exc}{hint})") from None


#: What ``stat`` calls a path that is neither a file nor a folder, for the messages.
_SPECIAL = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def case_twin(path: Path) -> str:
    """For a path that does not exist, the end of its message: the one existing path that names
    it but for letter case (``Ref.csv`` written, ``ref.csv`` on disk), found one part at a time
    from the root; "" when there is none. A file system that ignores case never gets here."""
    here = Path(path.parts[0]) if path.is_absolute() else Path()
    for part in path.parts[1 if path.is_absolute() else 0:]:
        if not (here / part).exists():
            try:
                same = [child for child in here.iterdir() if child.name.casefold() == part.casefold()]
            except OSError:
                return ""
            if len(same) != 1:
                return ""
            part = same[0].name
        here = here / part
    return f"; {here} differs only in letter case: name it as it is written on disk"


def special_file(path: Path) -> str | None:
    """What ``path`` is when it exists but is neither a regular file nor a folder (a link
    followed): ``"a character device, a link to /dev/zero"``; else None. A FIFO, a device or a
    socket has no end to read, hash or count, so reading one would hang or fill the memory."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):  # absent, or a path the system refuses: said where it is read
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = next((name for test, name in _SPECIAL if test(mode)), "not a regular file")
    return what + (f", a link to {path.resolve()}" if path.is_symlink() else "")


#: Column names that say a column holds times or sample ids, never the memberships of a class.
TIME_OR_ID_NAMES = frozenset({
    "id", "ids", "sample", "sample_id", "filename", "file", "segment", "clip", "index", "frame",
    "time", "times", "timestamp", "onset", "offset", "start", "end", "begin", "start_time", "end_time",
})


def not_times_or_ids(classes: Sequence[str], source: str) -> None:
    """Refuse a class read from a file under a name that says time or sample id (``start``,
    ``onset``, ``id``, ...): its values, times such as 0, 0.5, 1.0 included, would be scored as
    memberships without a word. Called only when ``data: classes:`` names no classes: a class
    it names is one, and one it leaves out is not scored."""
    named = [c for c in classes if c.strip().lower() in TIME_OR_ID_NAMES]
    if named:
        others = [c for c in classes if c not in named][:3]
        raise DataError(
            f"{source}: column {named[0]!r} is named like a time or a sample id, so evalkit does not score it as a "
            f"class. List the classes to score, `data: classes: [{', '.join(others)}, ...]` (with {named[0]!r} "
            f"among them to score it too), or, if it holds the sample ids, make it the id column (CSV: "
            f"`loader: {{name: csv, id_column: {named[0]}}}`)"
        )


def check_memory(nbytes: int, where: str, what: str) -> None:
    """Refuse to read data that cannot fit, before reading it: ``nbytes`` (what ``what`` would
    take) against the memory this process can have now (:func:`evalkit.budget.available_memory`:
    the machine's, or less under a process or container limit)."""
    available = budget.available_memory()
    if available is not None and nbytes > available:
        raise DataError(
            f"{where}: {what} would take {budget.human(nbytes)} of memory, but {budget.human(available)} is "
            f"available{budget.limited_by()}; use a smaller file, or a machine with more memory"
        )


def read_parquet(path: Path, cell_bytes: int, becoming: str) -> Any:
    """A Parquet file's columns as a pyarrow Table, read only when they fit: its footer gives
    their size decompressed (its pages do not: 10,000,000 zeros fit in 8 KB), to which the
    loader adds what their cells become (``cell_bytes`` each, ``becoming`` in the message: 8
    for a float64 matrix, more as Python text), and :func:`check_memory` refuses the file before
    a page is read. A file pyarrow cannot read is a DataError naming it."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    with reading(path):
        try:
            meta = pq.read_metadata(path)
            check_memory(_inflated(meta) + meta.num_rows * meta.num_columns * cell_bytes, str(path),
                         f"its columns, decompressed, and {becoming},")
            return pq.read_table(path)
        except MemoryError:  # pyarrow's ArrowMemoryError is one too: out of memory, not a bad file
            raise
        except (pa.ArrowException, ValueError) as exc:
            raise DataError(f"{path}: not a readable Parquet file ({exc})") from None


#: Bytes a value of each fixed-width Parquet physical type takes once read.
_WIDTHS = {"BOOLEAN": 1, "INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8, "INT96": 12}


def _inflated(meta: Any) -> int:
    """The bytes a file's columns take once read, from its footer: a leaf column of fixed width
    takes rows x width; a text or nested one its uncompressed pages, and an offset per row.
    The footer's columns are leaves (a struct of two fields is two), so each is sized by its
    own physical type, not by the Arrow schema's top-level fields."""
    total = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            width = _WIDTHS.get(column.physical_type)
            fixed = width is not None and column.path_in_schema.count(".") == 0
            total += group.num_rows * width if fixed else column.total_uncompressed_size + 8 * group.num_rows
    return total


@contextmanager
def reading(path: Path | str) -> Iterator[None]:
    """Turn what goes wrong while reading ``path`` into a DataError naming it: it cannot be read
    (OSError), is not UTF-8 (with the line and byte), is truncated or corrupt (EOFError, a bad
    zip or zlib stream, what numpy's .npy reader or zipfile raise) or is malformed CSV. Anything
    else is the reader's own problem and passes through. ``path`` may be a description, such as
    an archive member: ``f"{archive} (member 'values.npy')"``."""
    try:
        yield
    except EvalkitError:
        raise
    except UnicodeDecodeError as exc:
        raise DataError(_not_utf8(Path(path), exc)) from exc
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    except csv.Error as exc:
        raise DataError(f"{path}: not valid CSV ({exc})") from exc
    except (EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise DataError(_corrupt(path, exc)) from exc
    except (TypeError, AttributeError):  # a wrong call: the reader's own bug
        raise
    except Exception as exc:
        if not _raised_by_file_reader(exc):
            raise
        raise DataError(_corrupt(path, exc)) from exc


def _corrupt(path: Path | str, exc: BaseException) -> str:
    return (
        f"{path}: cannot be read: it is truncated, corrupt or not in the format its loader reads "
        f"({type(exc).__name__}: {exc}); write it again"
    )


def _raised_by_file_reader(exc: BaseException) -> bool:
    trace = exc.__traceback__
    while trace is not None:
        if trace.tb_frame.f_globals.get("__name__") in _FILE_READERS:
            return True
        trace = trace.tb_next
    return False


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> str:
    """The message for text that is not UTF-8, with the line and byte offset of the first bad
    byte (a decoder reading blocks only knows its place in the block, so the file is scanned)."""
    found = _first_bad_byte(path) if path.is_file() else None
    if found is None:
        return f"{path}: not UTF-8 text ({exc.reason}); save it as UTF-8"
    line, offset, byte = found
    return f"{path}: not UTF-8 text (line {line}: byte 0x{byte:02x} at offset {offset}); save it as UTF-8"


def _first_bad_byte(path: Path) -> tuple[int, int, int] | None:
    """(line, byte offset, byte) of the first byte of ``path`` that is not UTF-8, or None."""
    start, line, pending = 0, 1, b""
    with path.open("rb") as handle:
        while True:
            block = handle.read(_BLOCK)
            data = pending + block
            if not data:
                return None
            try:
                data.decode("utf-8")
                good, pending = len(data), b""
            except UnicodeDecodeError as exc:
                if block and exc.reason == "unexpected end of data":  # a character cut by the block's end
                    good, pending = exc.start, data[exc.start:]
                else:
                    return line + data.count(b"\n", 0, exc.start), start + exc.start, data[exc.start]
            line += data.count(b"\n", 0, good)
            start += good
            if not block:
                return None
