"""Parquet files of memberships, read with pyarrow: wide (an id column or index and one column per
class) or long (one row per sample and class: id, class, value).

Parquet stores typed columns, so nothing is parsed from text: the file's numbers are the numbers
scored. The pandas metadata a file may carry is not read (it is the file's word about how to
rebuild Python objects); a DataFrame's index written with ``frame.to_parquet(path)`` is a column
like any other, named after the index (or ``__index_level_0__``), and gives the sample ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.plugin import (
    BaseComponent,
    DataError,
    LabelMatrix,
    check_header,
    clean_ids,
    read_parquet,
    reading,
    rows_from,
)

#: Column names that hold sample ids, as in a CSV matrix (case-insensitive).
ID_NAMES = ("id", "ids", "sample", "sample_id", "filename", "file", "segment", "clip", "__index_level_0__")
#: Rows read at a time at least: a record batch becomes a matrix at a cost per batch (half the
#: time of a 16,384-row batch), and 131,072 rows of 17 classes are 17 MiB as float64.
BATCH_ROWS = 131_072
#: The columns of a long table, besides the id.
LONG = ("class", "value")


def _id_column(columns: Any) -> str | None:
    """The column that holds the sample ids: the first named like ids."""
    return next((c for c in columns if str(c).strip().lower() in ID_NAMES), None)


class ParquetMatrix(BaseComponent):
    """A Parquet table of memberships (.parquet, .pq).

    Wide: one column per class, the sample ids in a column named id, sample, filename, file,
    segment or clip, or in a pandas index (without one, rows are matched by position).
    Long: columns id (any of those names), ``class`` and ``value``, one row per sample and class;
    a (sample, class) pair without a row is 0, and a pair twice is an error.
    """

    name = "parquet"
    kind = "matrix"
    suffixes = (".parquet", ".pq")

    def load(self, path: Path, role: str) -> LabelMatrix:
        import pyarrow as pa  # type: ignore[import-untyped]

        table = read_parquet(path, 8, "their float64 matrix")
        where = str(path)
        check_header(table.column_names, where, what="column")
        id_column = _id_column(table.column_names)
        try:
            if id_column is not None and _is_long(table.column_names, id_column):
                return _long(table.to_pandas(ignore_metadata=True), id_column, where)
            return _wide(table, id_column, where)
        except MemoryError:
            raise
        except pa.ArrowException as exc:  # pandas' text columns may decode lazily
            raise DataError(f"{where}: not a readable Parquet file ({exc})") from None

    def header_classes(self, path: Path) -> tuple[str, ...] | None:
        """The class columns of a wide table, from the schema alone (None for a long table: its
        classes are values)."""
        import pyarrow as pa
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        with reading(path):
            try:
                names = pq.read_schema(path).names
            except (pa.ArrowException, ValueError) as exc:
                raise DataError(f"{path}: not a readable Parquet file ({exc})") from None
        check_header(names, str(path), what="column")
        id_column = _id_column(names)
        if id_column is not None and _is_long(names, id_column):
            return None
        return tuple(n.strip() for n in names if n != id_column)

    def stream(self, path: Path, role: str, rows: int, start: int = 0) -> Iterator[LabelMatrix]:
        """A wide table ``rows`` at a time from row ``start`` (whole row groups are read as
        needed, from the one that holds ``start``); a long table is read whole, since a sample's
        values may lie anywhere in it."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        where = str(path)
        with reading(path):
            try:
                # pages read through a 1 MiB buffer, not whole column chunks at once: a row group of
                # 1,000,000 x 17 float32 held 300 MiB of pyarrow's memory at a time, now 80 MiB
                table = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
            except MemoryError:  # pyarrow's ArrowMemoryError is one too: out of memory, not a bad file
                raise
            except (pa.ArrowException, ValueError) as exc:
                raise DataError(f"{where}: not a readable Parquet file ({exc})") from None
        names = table.schema_arrow.names
        check_header(names, where, what="column")
        id_column = _id_column(names)
        if id_column is not None and _is_long(names, id_column):
            yield from rows_from([self.load(path, role)], start)
            return
        sizes = np.array([table.metadata.row_group(g).num_rows for g in range(table.num_row_groups)], dtype=np.int64)
        group = int(np.searchsorted(np.cumsum(sizes), start, side="right"))  # the group that holds row `start`
        first = int(sizes[:group].sum())
        size = max(rows, BATCH_ROWS)
        batches = table.iter_batches(batch_size=size, row_groups=range(group, len(sizes)))
        yield from rows_from(self._batches(batches, id_column, where, size, first), start - first)

    def _batches(self, batches: Iterator[Any], id_column: str | None, where: str, rows: int, start: int) -> Iterator[LabelMatrix]:
        """Record batches as matrices; a batch that cannot be read names its rows (from ``start``)."""
        import pyarrow as pa

        while True:
            try:
                batch = next(batches, None)
                chunk = None if batch is None else _wide(batch, id_column, where)
            except MemoryError:
                raise
            except (pa.ArrowException, ValueError) as exc:
                raise DataError(f"{where}: rows {start + 1} to {start + rows} cannot be read ({exc})") from None
            if batch is None or chunk is None:
                return
            yield chunk
            start += batch.num_rows


def _is_long(columns: Any, id_column: str) -> bool:
    """Whether the columns are those of a long table: the ids, class and value."""
    return {str(c).strip() for c in columns} == {str(id_column).strip(), *LONG}


def _wide(table: Any, id_column: str | None, where: str) -> LabelMatrix:
    """A wide table or record batch (one column per class) as a matrix, the ids from
    ``id_column``: read column by column into one float64 matrix, without pandas."""
    import pyarrow as pa

    names = [n for n in table.column_names if n != id_column]
    not_numbers = [n for n in names if not _numeric(table.schema.field(n).type, pa)]
    if not_numbers:
        raise DataError(
            f"{where}: column(s) {', '.join(map(repr, not_numbers[:5]))} are not numbers (every column but the "
            f"sample ids is a class; name the id column one of {', '.join(ID_NAMES)}, or write a long table "
            "of id, class, value)"
        )
    ids = None
    if id_column is not None:
        column = table.column(id_column)
        if column.null_count:
            row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
            raise DataError(f"{where}: column {id_column!r}: row {row + 1} has no sample id (null)")
        ids = clean_ids([str(i) for i in column.to_pylist()], where)
    # row-major, as every loader gives it: sums then run in the same order (to the last bit);
    # float32 columns stay float32 (as a float32 .npy does: half the memory, the same numbers)
    single = all(table.schema.field(n).type == pa.float32() for n in names)
    values = np.empty((table.num_rows, len(names)), dtype=np.float32 if single else np.float64)
    for i, name in enumerate(names):  # a null is NaN, which the membership checks name
        values[:, i] = table.column(name).to_numpy(zero_copy_only=False)
    return LabelMatrix(values, tuple(n.strip() for n in names), ids, where)


def _numeric(kind: Any, pa: Any) -> bool:
    return bool(pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind))


def _no_missing(column: Any, where: str, what: str) -> None:
    """A null in a column of names is an error naming its row (it is no name, not "None")."""
    missing = column.isna().to_numpy()
    if missing.any():
        raise DataError(f"{where}: row {int(np.argmax(missing)) + 1} has no {what} (null)")


def _long(frame: Any, id_column: str, where: str) -> LabelMatrix:
    """A long table (id, class, value) as a matrix: samples in first-seen order, classes
    sorted, 0 where a pair has no row."""
    import pandas as pd  # type: ignore[import-untyped]

    columns = {str(c).strip(): c for c in frame.columns}
    _no_missing(frame[id_column], f"{where}: column {id_column!r}", "sample id")
    _no_missing(frame[columns["class"]], f"{where}: column 'class'", "class")
    ids = frame[id_column].astype(str).str.strip()
    classes = frame[columns["class"]].astype(str).str.strip()
    if frame[columns["value"]].dtype.kind not in "biuf":
        raise DataError(f"{where}: the value column holds {frame[columns['value']].dtype}, not numbers")
    if (ids == "").any() or (classes == "").any():
        row = int(np.argmax(((ids == "") | (classes == "")).to_numpy()))
        raise DataError(f"{where}: row {row + 1} has an empty sample id or class")
    twice = pd.DataFrame({"id": ids, "class": classes}).duplicated()
    if twice.any():
        row = int(np.argmax(twice.to_numpy()))
        raise DataError(
            f"{where}: sample {ids.iloc[row]!r}, class {classes.iloc[row]!r} has two rows (row {row + 1} is the "
            "second); each pair needs one value"
        )
    sample_codes, sample_names = pd.factorize(ids, sort=False)
    class_codes, class_names = pd.factorize(classes, sort=True)
    values = np.zeros((len(sample_names), len(class_names)))
    values[sample_codes, class_codes] = frame[columns["value"]].to_numpy(dtype=np.float64, na_value=np.nan)
    return LabelMatrix(values, tuple(class_names), tuple(sample_names), where)
