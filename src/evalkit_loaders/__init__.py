"""Loaders. Membership matrices: CSV/TSV with a header of class names, NumPy .npy and .npz.
Item lists: JSON Lines, and CSV/TSV with one item per row.

Each follows evalkit's loader rules (``evalkit.plugin.clean_ids``, ``clean_items``,
``check_header``, ``parse_json``, ``csv_rows``, ``check_memory``): ids and items stripped, an
empty or repeated id, an empty item and an unnamed or repeated column refused with the file and
line, and nothing read that cannot fit in memory.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import sys
import zipfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import (
    DEFAULT_CLASS,
    BaseComponent,
    DataError,
    ItemSets,
    LabelMatrix,
    check_header,
    check_memory,
    clean_ids,
    clean_items,
    clean_text,
    csv_rows,
    hookimpl,
    opened,
    parse_json,
    reading,
    rows_from,
    text_lines,
)
from evalkit_loaders.parquet import ParquetMatrix
from evalkit_loaders.parquet_items import ParquetItems


@hookimpl
def evalkit_register_loaders(register):
    for cls in (DelimitedLoader, NpyLoader, NpzLoader, ParquetMatrix, JsonLinesItems, DelimitedItems, ParquetItems):
        register(cls)


#: A first column with one of these headers holds sample ids, not a class.
ID_HEADERS = {"", "id", "ids", "sample", "sample_id", "filename", "file", "segment", "clip",
              "time", "onset", "index", "frame"}

#: Rows the columnar reader parses at a time; each chunk is copied into the one matrix, so the
#: peak memory stays near the matrix's own size.
CHUNK_ROWS = 1 << 14

#: A file up to this size is first read by :func:`_plain` (the ``csv`` module and ``float``):
#: 256 KiB of 17 classes parse in 0.025 s, where importing pandas takes 0.25 s (and pandas, once
#: imported, parses them in 0.005 s: the cost of reading such a file without it when pandas is
#: imported later anyway).
PLAIN_BYTES = 1 << 18

#: A plain decimal number: what ``float`` and pandas' parser read alike, correctly rounded.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _delimiter(path: Path) -> str:
    return "\t" if path.suffix.lower() == ".tsv" else ","


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _filled(records: Iterator[tuple[int, list[str]]]) -> Generator[tuple[int, list[str]], None, None]:
    """The records that are not blank (no fields, or only spaces and tabs): the columnar reader
    skips those, the header's line included (and no others: a form feed or a no-break space is
    not blank to it, though ``str.strip`` removes them)."""
    for line, fields in records:
        if len(fields) > 1 or "".join(fields).strip(" \t"):
            yield line, fields


def _width_error(where: str, fields: int, width: int) -> DataError:
    """A row not as wide as the header, named by its line, with the likely fix."""
    fix = ("a value too many: a stray delimiter, or a value that holds one and needs quotes" if fields > width else
           "a value is missing, or the line is not a row of values (delete it)")
    return DataError(f"{where}: {fields} field{'s' * (fields != 1)}, but the header has {width}; {fix}")


class DelimitedParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    id_column: str | Literal[False] | None = Field(
        None,
        description="the column of sample ids, by its header name; false: no id column (every column is a class, "
        "rows are matched by position). Default: the first column, when its header is one of "
        + ", ".join(repr(h) for h in sorted(ID_HEADERS))
        + " or its first value is not a number; a first column that looks like ids or times (strictly "
        "increasing, above 1) under another name is an error that asks you to choose; a column named like a time "
        "or an id (start, onset, end, ...) is never a class unless `data: classes:` names it",
    )


class DelimitedLoader(BaseComponent[DelimitedParams]):
    """CSV or TSV: a header of class names, optionally a column of sample ids or times (``id_column``)."""

    name = "csv"
    kind = "matrix"
    suffixes = (".csv", ".tsv", ".txt")
    Params = DelimitedParams

    def load(self, path: Path, role: str) -> LabelMatrix:
        delimiter = _delimiter(path)
        header, names, id_index = self._header(path, delimiter)
        try:
            values, raw_ids = _plain(path, delimiter, names, id_index) or _read(path, delimiter, len(names), id_index)
            ids = None if raw_ids is None else clean_ids(raw_ids, str(path))
        except (ValueError, DataError) as exc:  # the columnar reader says that a line is bad, not which
            _diagnose(path, delimiter, names, id_index)
            if isinstance(exc, DataError):
                raise
            raise DataError(f"{path}: cannot be read as a table of numbers ({exc})") from exc
        if self.params.id_column is None and id_index is None:
            _not_ids_or_times(path, header, names, values)
        classes = tuple(n for i, n in enumerate(names) if i != id_index)
        return LabelMatrix(values, classes, ids, str(path))

    def header_classes(self, path: Path) -> tuple[str, ...]:
        """The class names of the header: every column but the ids."""
        _, names, id_index = self._header(path, _delimiter(path))
        return tuple(n for i, n in enumerate(names) if i != id_index)

    def stream(self, path: Path, role: str, rows: int, start: int = 0) -> Iterator[LabelMatrix]:
        """The table ``rows`` rows at a time from row ``start``, by pandas' C parser (rows before
        ``start`` are parsed and dropped: a line cannot be found without reading the ones before
        it); a chunk that does not parse is read again row by row, to name its line."""
        return rows_from(self._blocks(path, rows), start)

    def _blocks(self, path: Path, rows: int) -> Iterator[LabelMatrix]:
        import pandas as pd  # type: ignore[import-untyped]

        delimiter = _delimiter(path)
        header, names, id_index = self._header(path, delimiter)
        columns = [str(i) for i in range(len(names))]
        id_name = None if id_index is None else columns[id_index]
        dtype = {c: (object if i == id_index else np.float64) for i, c in enumerate(columns)}
        classes = tuple(n for i, n in enumerate(names) if i != id_index)
        exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}  # as _read
        try:
            with pd.read_csv(
                path, sep=delimiter, header=0, names=columns, index_col=False, dtype=dtype, na_filter=False,
                encoding="utf-8-sig", engine="c", chunksize=rows, **exact,
            ) as chunks:
                first = True
                for chunk in chunks:
                    ids = None if id_name is None else clean_ids(chunk.pop(id_name).tolist(), str(path))
                    values = chunk.to_numpy(np.float64)
                    if first and self.params.id_column is None and id_index is None:
                        _not_ids_or_times(path, header, names, values)
                    first = False
                    yield LabelMatrix(values, classes, ids, str(path))
        except (ValueError, pd.errors.ParserError):
            _diagnose(path, delimiter, names, id_index)
            raise DataError(f"{path}: cannot be read as a table of numbers") from None

    def _header(self, path: Path, delimiter: str) -> tuple[int, tuple[str, ...], int | None]:
        """The header's line, the column names and the id column's position, checked against
        the first row."""
        records = _filled(csv_rows(path, delimiter))
        try:
            header = next(records, None)
            first = next(records, None)
        finally:
            records.close()
        if header is None:
            raise DataError(f"{path}: the file is empty; expected a header of class names and rows of values")
        id_index = self._id_column(path, header, first)
        names = check_header(header[1], f"{path}:{header[0]}", unnamed=id_index)
        if first is not None and len(first[1]) != len(names):
            raise _width_error(f"{path}:{first[0]}", len(first[1]), len(names))
        return header[0], names, id_index

    def _id_column(self, path: Path, header: tuple[int, list[str]], first: tuple[int, list[str]] | None) -> int | None:
        """The position of the id column: the one named by ``id_column``, none for ``false``, or
        by default the first when its header or its first value says so."""
        chosen = self.params.id_column
        if chosen is False:
            return None
        line, names = header[0], [clean_text(h) for h in header[1]]
        if chosen is None:
            named = names[0].lower() in ID_HEADERS
            return 0 if named or (first is not None and first[1] and _number(first[1][0]) is None) else None
        if clean_text(chosen) not in names:
            close = difflib.get_close_matches(clean_text(chosen), names, 1)
            raise DataError(
                f"{path}:{line}: no column {chosen!r} (the loader's `id_column`)"
                + (f"; did you mean {close[0]!r}?" if close else "")
                + f" The header has: {', '.join(map(repr, names))}"
            )
        return names.index(clean_text(chosen))


def _plain(
    path: Path, delimiter: str, names: tuple[str, ...], id_index: int | None
) -> tuple[np.ndarray, list[Any] | None] | None:
    """Values (and raw ids) of a small file (:data:`PLAIN_BYTES`) without quotes, every row of
    the header's width and every value a plain decimal (:data:`_DECIMAL`), read by the ``csv``
    module: the numbers :func:`_read` gives (``float`` and pandas' parser both round correctly).
    None for any other file, which :func:`_read` reads, so that its rules and messages apply."""
    if path.stat().st_size > PLAIN_BYTES or b'"' in path.read_bytes():
        return None
    values: list[list[float]] = []
    ids: list[Any] = []
    records = _filled(csv_rows(path, delimiter))
    try:
        next(records)  # the header
        for _, fields in records:
            if len(fields) != len(names):
                return None
            if id_index is not None:
                ids.append(fields.pop(id_index))
            if not all(map(_DECIMAL.fullmatch, fields)):
                return None
            values.append(list(map(float, fields)))
    except DataError:  # a line csv cannot read: the columnar reader's messages say it
        return None
    finally:
        records.close()
    return np.array(values, np.float64).reshape(len(values), len(names) - (id_index is not None)), (
        None if id_index is None else ids
    )


def _read(path: Path, delimiter: str, width: int, id_index: int | None) -> tuple[np.ndarray, list[Any] | None]:
    """Values (and raw ids) by pandas' C parser, a chunk of rows at a time, each chunk written in
    place into one float64 matrix allocated for the most rows the file can hold and shrunk to the
    rows it has: no Python list of cells, no second copy of the matrix."""
    import pandas as pd

    columns = [str(i) for i in range(width)]  # by position: the header was read and checked
    dtype = {c: (object if i == id_index else np.float64) for i, c in enumerate(columns)}
    # pandas 2 parses floats with a fast routine that is not always correctly rounded, so numbers
    # would differ from Python's float() in the last bit; pandas 3's is exact and deprecates this
    exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
    newlines, returns = _line_ends(path)
    classes = width - (id_index is not None)
    check_memory(max(newlines, returns) * classes * 8, str(path), "its values, as float64,")
    values = np.empty((newlines + returns + 1, classes))  # at most a row per line end, and one unended
    id_name = None if id_index is None else columns[id_index]
    ids: list[Any] | None = None if id_name is None else []
    rows = 0
    with pd.read_csv(
        path, sep=delimiter, header=0, names=columns, index_col=False, dtype=dtype, na_filter=False,
        encoding="utf-8-sig", engine="c", chunksize=CHUNK_ROWS, **exact,
    ) as chunks:
        for chunk in chunks:
            if ids is not None:
                ids += chunk.pop(id_name).tolist()
            values[rows:rows + len(chunk)] = chunk.to_numpy(np.float64)
            rows += len(chunk)
    values.resize((rows, values.shape[1]), refcheck=False)  # in place: the matrix has no views yet
    return values, ids


def _line_ends(path: Path) -> tuple[int, int]:
    """The number of ``\n`` and of ``\r`` in a file: about one per row (LF, CR or CRLF line ends).
    Pages of the matrix allocated for more rows than the file has are never touched, so they
    take no memory."""
    newlines = returns = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            newlines += block.count(b"\n")
            returns += block.count(b"\r")
    return newlines, returns


def _diagnose(path: Path, delimiter: str, names: tuple[str, ...], id_index: int | None) -> None:
    """Raise the error of the first bad line, read row by row once the columnar reader failed:
    a wrong number of fields, a cell that is not a number (or is NaN), an empty or repeated id.
    Returns if it finds none, leaving the reader's own error to the caller."""
    records = _filled(csv_rows(path, delimiter))
    next(records)  # the header
    ids: list[str] = []
    lines: list[int] = []
    for line, fields in records:
        if len(fields) != len(names):
            raise _width_error(f"{path}:{line}", len(fields), len(names))
        for column, text in enumerate(fields):
            if column == id_index:
                ids.append(text)
                lines.append(line)
            elif (value := _number(text)) is None or math.isnan(value):
                raise DataError(
                    f"{path}:{line}: {text!r} in column {names[column]!r} is not a number; every cell but "
                    "the sample id is a membership value (or a score)"
                )
    clean_ids(ids, str(path), lines)


def _not_ids_or_times(path: Path, line: int, names: tuple[str, ...], values: np.ndarray) -> None:
    """A first column of strictly increasing values above 1, under a header that is not a known
    id name (``t``, ``x``), is sample ids or times, not memberships: refuse it rather than
    score it as a class, and say how to choose (a time or id name, ``start``, is refused by its
    name whatever its values: :func:`evalkit.loading.not_times_or_ids`)."""
    if values.shape[1] < 2 or len(values) < 2:
        return
    column = values[:, 0]
    if column[-1] > 1 and bool(np.all(column[1:] > column[:-1])):
        raise DataError(
            f"{path}:{line}: the first column {names[0]!r} looks like sample ids or times (strictly increasing, "
            f"{column[0]:g} to {column[-1]:g}), not the memberships of a class. Say which it is: "
            f"`{{path: {path.name}, loader: {{name: csv, id_column: {names[0]}}}}}` reads it as the sample ids; "
            f"`loader: {{name: csv, id_column: false}}` as a class"
        )


def _npy(handle: IO[bytes], size: int, where: str) -> np.ndarray:
    """The array of a .npy stream of ``size`` bytes, checked (:func:`_npy_header`) and fitting in
    memory before anything is allocated."""
    shape, dtype, _ = _npy_header(handle, size, where)
    check_memory(math.prod(shape) * dtype.itemsize, where, f"an array of shape {shape}")
    handle.seek(0)
    return np.lib.format.read_array(handle, allow_pickle=False)


def _npy_header(handle: IO[bytes], size: int, where: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    """The shape, dtype and column-major flag a .npy header declares, checked, with ``handle``
    left at the data: an object array (unpickling would run code from the file) is refused, and
    the header must promise exactly the bytes that follow it (more: the file is truncated;
    fewer: it is corrupt, and the rest would be silently dropped)."""
    version = np.lib.format.read_magic(handle)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read_header(handle)
    if dtype.hasobject:
        raise DataError(f"{where}: holds Python objects, which evalkit does not unpickle; save numbers (and text)")
    declared = math.prod(shape) * dtype.itemsize
    held = size - handle.tell()
    if declared != held:
        raise DataError(
            f"{where}: the header promises {declared:,} bytes ({dtype}, shape {shape}) but {held:,} follow it; "
            "the file is truncated or corrupt"
        )
    return shape, dtype, fortran


def _dimensions(shape: tuple[int, ...], where: str) -> None:
    """A matrix has 2 dimensions, or 1 for one class: a 0-d array (one number) or a 3-D one is refused."""
    if not shape:
        raise DataError(
            f"{where}: a single number (a 0-d array); expected a 2-D (samples x classes) matrix, or 1-D for one class"
        )
    if len(shape) > 2:
        raise DataError(f"{where}: expected a 2-D (samples x classes) matrix, got shape {shape}")


def _matrix(values: np.ndarray, where: str) -> np.ndarray:
    """Real numbers as a 2-D matrix (a 1-D array is one class; :func:`_dimensions`). Complex values would lose their
    imaginary part and dates would become numbers, so only booleans, integers and floats pass."""
    _dimensions(values.shape, where)
    if values.dtype.kind not in "biuf":
        raise DataError(f"{where}: values have dtype {values.dtype}; expected real numbers (booleans, integers or floats)")
    if values.dtype.kind != "f":
        check_memory(values.size * 8, where, "its values as float64")
        values = values.astype(np.float64)
    return values[:, None] if values.ndim == 1 else values


class NpyLoader(BaseComponent):
    """A NumPy .npy array (samples x classes); classes are named by column index."""

    name = "npy"
    kind = "matrix"
    suffixes = (".npy",)
    hashes_as_read = True  # stream: through opened, in order (a column-major array is read again)

    def load(self, path: Path, role: str) -> LabelMatrix:
        with path.open("rb") as handle:
            values = _matrix(_npy(handle, path.stat().st_size, str(path)), str(path))
        return LabelMatrix(values, tuple(str(i) for i in range(values.shape[-1])), None, str(path))

    def stream(self, path: Path, role: str, rows: int, start: int = 0) -> Iterator[LabelMatrix]:
        """The array ``rows`` rows at a time from row ``start``, read into reused buffers
        (:class:`_Buffers`; not memory-mapped: mapped pages would stay in the process's memory)
        through :func:`~evalkit.plugin.opened`, which hashes the bytes for the provenance as they
        are read; a column-major array is read whole."""
        where = str(path)
        with opened(path) as handle:
            shape, dtype, fortran = _npy_header(handle, path.stat().st_size, where)  # the data follow
            if fortran or len(shape) not in (1, 2):
                yield from rows_from([self.load(path, role)], start)
                return
            width = shape[1] if len(shape) == 2 else 1
            classes = tuple(str(i) for i in range(width))
            handle.seek(min(start, shape[0]) * width * dtype.itemsize, os.SEEK_CUR)
            buffers = _Buffers(min(rows, shape[0]) * width, dtype)
            for first in range(start, shape[0], rows):
                chunk = buffers.free()[: min(rows, shape[0] - first) * width]
                if handle.readinto(chunk.data) != chunk.nbytes:
                    raise DataError(f"{where}: ends before the rows its header declares; was it changed while read?")
                yield LabelMatrix(_matrix(chunk.reshape(-1, width), where), classes, None, where)


class _Buffers:
    """The buffers a stream reads its chunks into, each reused once nothing holds the chunk last
    read into it, else a new one is made (a consumer may keep rows: a window waiting for ids, a
    Dask block of several chunks). A new array per chunk cost more than the read: glibc maps a
    block of a few MB anew, page fault by page fault, whenever it has trimmed its heap."""

    def __init__(self, size: int, dtype: np.dtype) -> None:
        self.size, self.dtype = size, dtype
        self.kept: list[np.ndarray] = []

    def free(self) -> np.ndarray:
        for buffer, count in zip(self.kept, _references(self.kept)):
            if count == _ALONE:  # no chunk (a view of it) is alive
                return buffer
        buffer = np.empty(self.size, self.dtype)
        self.kept = [*self.kept[-1:], buffer]  # two take turns: the chunk being read, the one being reduced
        return buffer


def _references(arrays: list[np.ndarray]) -> list[int]:
    """Each array's reference count: every view of an array holds one."""
    return [sys.getrefcount(array) for array in arrays]


#: The count :func:`_references` gives for an array that only its list holds (the interpreter's
#: own references, which differ between Python versions, are counted the same way).
_ALONE = _references([np.empty(0)])[0]


class NpzLoader(BaseComponent):
    """A NumPy .npz archive with `values` and optional `classes` and `ids` arrays.

    The sizes its members declare are checked against the available memory before anything is
    decompressed (a small archive may inflate to gigabytes)."""

    name = "npz"
    kind = "matrix"
    suffixes = (".npz",)

    def header_classes(self, path: Path) -> tuple[str, ...] | None:
        """The names of the `classes` array, without inflating `values` (None without one)."""
        with zipfile.ZipFile(path) as archive:
            return _classes({m.filename.removesuffix(".npy"): _Member(archive, m, path) for m in archive.infolist()})

    def load(self, path: Path, role: str) -> LabelMatrix:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            check_header([m.filename for m in members], str(path), what="archive member")
            check_memory(sum(m.file_size for m in members), str(path), "its arrays, decompressed,")
            arrays = {m.filename.removesuffix(".npy"): _Member(archive, m, path) for m in members}
            if "values" not in arrays:
                raise DataError(
                    f"{path}: no array named 'values' (it has {', '.join(arrays) or 'none'}); "
                    "save with np.savez(path, values=..., classes=..., ids=...)"
                )
            _check_shapes({name: member.shape() for name, member in arrays.items()}, path)
            values = _matrix(arrays["values"].read(), arrays["values"].where)
            classes = _classes(arrays) or tuple(str(i) for i in range(values.shape[-1]))
            ids = clean_ids(arrays["ids"].names(), arrays["ids"].where) if "ids" in arrays else None
        return LabelMatrix(values, classes, ids, str(path))


def _check_shapes(shapes: dict[str, tuple[int, ...]], path: Path) -> None:
    """The arrays of an .npz fit together, checked from their headers before any is inflated
    (a small archive can hold gigabytes): ``values`` a matrix, ``classes`` one name per column,
    ``ids`` one per row."""
    values = shapes["values"]
    _dimensions(values, f"{path} (member 'values.npy')")
    wanted = {"classes": (values[1] if len(values) == 2 else 1, "columns", "class names"), "ids": (values[0], "rows", "ids")}
    for name, (count, of, what) in wanted.items():
        shape = shapes.get(name)
        if shape is None:
            continue
        if len(shape) != 1:
            raise DataError(f"{path} (member '{name}.npy'): shape {shape}; expected a 1-D array of names")
        if shape[0] != count:
            raise DataError(f"{path}: 'values' has {count:,} {of} but '{name}' has {shape[0]:,} {what}")


def _classes(arrays: dict[str, _Member]) -> tuple[str, ...] | None:
    """The class names of an archive's `classes` array, checked; None without one."""
    if "classes" not in arrays:
        return None
    return check_header(arrays["classes"].names(), arrays["classes"].where, what="class")


class _Member:
    """One array of an .npz archive; errors name the archive and the member."""

    def __init__(self, archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: Path) -> None:
        self.archive, self.member = archive, member
        self.where = f"{path} (member {member.filename!r})"

    def read(self) -> np.ndarray:
        with reading(self.where), self.archive.open(self.member) as handle:
            return _npy(handle, self.member.file_size, self.where)

    def shape(self) -> tuple[int, ...]:
        """The shape its header declares, inflating only the header's bytes."""
        with reading(self.where), self.archive.open(self.member) as handle:
            return _npy_header(handle, self.member.file_size, self.where)[0]

    def names(self) -> list[Any]:
        """A 1-D array of names (text, bytes or numbers), as a list."""
        names = self.read()
        if names.ndim != 1:
            raise DataError(f"{self.where}: shape {names.shape}; expected a 1-D array of names")
        return names.tolist()


class JsonLinesItems(BaseComponent):
    """JSON Lines of item lists: {"id", "items"}, or {"id", "reference", "prediction"} for both sides."""

    name = "jsonl"
    kind = "items"
    suffixes = (".jsonl", ".ndjson")

    def load(self, path: Path, role: str) -> ItemSets:
        ids: list[Any] = []
        samples: list[Any] = []
        lines: list[int] = []
        for line, text in text_lines(path):
            if not text.strip():
                continue
            record = parse_json(text, f"{path}:{line}")
            key = "items" if isinstance(record, dict) and "items" in record else role
            if not isinstance(record, dict) or key not in record:
                raise DataError(
                    f"{path}:{line}: each line is an object with \"id\" and \"items\" (or "
                    f"\"reference\" and \"prediction\"); this one has no {key!r}"
                )
            ids.append(record.get("id", line))
            samples.append(record[key])
            lines.append(line)
        return ItemSets.from_python(samples, ids=ids, source=str(path), lines=lines)


class DelimitedItems(BaseComponent):
    """CSV/TSV with one item per row: columns id and item, optionally class (header required)."""

    name = "csv_items"
    kind = "items"
    suffixes = (".csv", ".tsv")

    def sniff(self, path: Path) -> bool:
        """A header naming the columns id and item."""
        records = _filled(csv_rows(path, _delimiter(path)))
        try:
            header = next(records, (1, []))[1]
        finally:
            records.close()
        return {"id", "item"} <= {clean_text(h) for h in header}

    def load(self, path: Path, role: str) -> ItemSets:
        records = _filled(csv_rows(path, _delimiter(path)))
        line, names = next(records, (1, []))
        header = check_header(names, f"{path}:{line}")
        if not {"id", "item"} <= set(header):
            raise DataError(
                f"{path}:{line}: the header must name the columns id and item (and optionally "
                f"class); it has {', '.join(header) or 'nothing'}"
            )
        at_id, at_item = header.index("id"), header.index("item")
        at_class = header.index("class") if "class" in header else None
        grouped: dict[str, dict[str, list[Any]]] = {}
        first_line: dict[str, int] = {}
        for line, fields in records:
            where = f"{path}:{line}"
            if len(fields) != len(header):
                raise _width_error(where, len(fields), len(header))
            sample = clean_text(fields[at_id])
            cls = DEFAULT_CLASS if at_class is None else clean_text(fields[at_class])
            if not cls:
                raise DataError(f"{where}: empty class; with a class column, every row names its class")
            first_line.setdefault(sample, line)
            grouped.setdefault(sample, {}).setdefault(cls, []).extend(clean_items(fields[at_item:at_item + 1], where))
        ids = clean_ids(grouped, str(path), list(first_line.values()))
        classes = check_header(list(dict.fromkeys(c for sample in grouped.values() for c in sample)), str(path), what="class")
        samples = tuple(tuple(tuple(per.get(c, ())) for c in classes) for per in map(grouped.pop, ids))
        return ItemSets(samples, classes, ids, str(path))
