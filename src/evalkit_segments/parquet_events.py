"""Sound-event lists in Parquet: the columns of a sed_eval / DCASE list (filename, onset, offset,
event_label, under the same names as a TSV header), typed, read with pyarrow, checked column by
column; a problem is an error naming the file and the row. A streamed run reads it a batch of
rows at a time (:mod:`evalkit_segments.event_stream`)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.plugin import BaseComponent, DataError, Intervals, ItemSets, read_parquet, reading
from evalkit_segments.columnar import _names
from evalkit_segments.event_stream import Block, samples
from evalkit_segments.loaders import _COLUMN_OF, COLUMNS, HEADER_NAMES, LabelsParams, _classes, _no_rows

#: Bytes a cell takes once the table is a DataFrame and checked (Python text, its copies and the
#: masks), for the memory check before the file is read: 45 measured (traced peak of a load of
#: 200,000 events, each in a file of its own), so 64, as an item of a Parquet item list.
CELL_BYTES = 64
#: Rows a streamed list reads at a time.
BATCH_ROWS = 65_536


class ParquetEventList(BaseComponent[LabelsParams]):
    """A Parquet event list (.parquet, .pq): one row per event, columns filename, onset, offset,
    event_label (or the aliases of a TSV header, in any order; other columns are ignored). A row
    whose onset, offset and label are all empty lists a file without events. Items are merged,
    sorted ``(onset, offset)`` intervals per file and class, as the ``events`` loader gives."""

    name = "parquet_events"
    kind = "items"
    suffixes = (".parquet", ".pq")
    Params = LabelsParams

    def sniff(self, path: Path) -> bool:
        """The columns of an event list (item lists in Parquet have others)."""
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        with reading(path):
            try:
                names = pq.read_schema(path).names
            except (pa.ArrowException, ValueError) as exc:
                raise DataError(f"{path}: not a readable Parquet file ({exc})") from None
        return set(COLUMNS) <= {_COLUMN_OF.get(str(c).strip().lower()) for c in names}

    def load(self, path: Path, role: str) -> ItemSets:
        import pyarrow as pa

        where = str(path)
        with reading(path):
            try:
                # one expression: the arrow table is freed once it is a frame, before the checks
                frame = read_parquet(path, CELL_BYTES, "their rows as Python objects").to_pandas(ignore_metadata=True)
                file, ids, labels, onset, offset, events = self._rows(frame, where, 0)
            except MemoryError:  # pyarrow's ArrowMemoryError is one too: out of memory, not a bad file
                raise
            except (pa.ArrowException, ValueError) as exc:  # pandas' text columns may decode lazily
                raise DataError(f"{where}: not a readable Parquet file ({exc})") from None
        classes = _classes(set(labels[events]), self.params.labels, path)
        column = {name: i for i, name in enumerate(classes)}
        class_codes = labels[events].map(column).to_numpy(np.int64)
        samples = Intervals(file[events], class_codes, onset[events], offset[events], len(ids), len(classes))
        return ItemSets(samples, classes, ids, where)

    def stream(self, path: Path, role: str, rows: int, start: int = 0) -> Iterator[ItemSets]:
        """The files from the ``start``-th (first-seen order, as :meth:`load` numbers them) as item
        sets of at most ``rows`` files, read :data:`BATCH_ROWS` rows at a time, each with the
        classes of the whole list (a first pass reads the label column alone). A file's rows
        must be together."""
        table, found = self._opened(path)
        classes = tuple(self.params.labels) if self.params.labels is not None else _classes(
            {name for batch in self._batches(table, [found["event_label"]], path) for name in _labels(batch.iloc[:, 0]).unique()}
            - {""}, None, path,
        )
        column = {name: i for i, name in enumerate(classes)}
        files = yield from samples(
            self._blocks(table, found, path, column), classes, rows, start, str(path), True,
            lambda row: f"{path}: row {row}", functools.partial(self._earlier, table, found["filename"], path),
        )
        if not files:
            raise _no_rows(path)

    def _opened(self, path: Path) -> tuple[Any, dict[str, str]]:
        """The file, opened to read a batch at a time, and its column of filename, onset, offset
        and event_label."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        with reading(path):
            try:
                # pages read through a 1 MiB buffer, not whole column chunks at once (as Parquet matrices)
                table = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
            except MemoryError:
                raise
            except (pa.ArrowException, ValueError) as exc:
                raise DataError(f"{path}: not a readable Parquet file ({exc})") from None
        return table, _columns(table.schema_arrow.names, str(path))

    def _batches(self, table: Any, columns: list[str], path: Path) -> Iterator[Any]:
        """The ``columns`` as frames of :data:`BATCH_ROWS` rows."""
        import pyarrow as pa

        batches = table.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_pandas_metadata=False)
        while True:
            with reading(path):
                try:
                    batch = next(batches, None)
                    if batch is None:
                        return
                    frame = batch.to_pandas(ignore_metadata=True)
                except MemoryError:
                    raise
                except (pa.ArrowException, ValueError) as exc:
                    raise DataError(f"{path}: not a readable Parquet file ({exc})") from None
            yield frame

    def _blocks(self, table: Any, found: dict[str, str], path: Path, column: dict[str, int]) -> Iterator[Block]:
        first = 0
        for frame in self._batches(table, [found[c] for c in COLUMNS], path):
            file, ids, labels, onset, offset, events = self._rows(frame, str(path), first)
            klass = np.full(len(frame), -1, np.int64)
            klass[events] = labels[events].map(column).to_numpy(np.int64)
            yield Block(ids, file, klass, onset, offset, np.arange(first + 1, first + len(frame) + 1))
            first += len(frame)

    def _earlier(self, table: Any, filename: str, path: Path, name: str, row: int) -> int | None:
        """The first row before ``row`` that lists file ``name`` (None: none does)."""
        first = 0  # rows before the frame
        for frame in self._batches(table, [filename], path):
            if first >= row - 1:
                break
            names = frame.iloc[: row - 1 - first, 0].fillna("").astype(str).str.strip().to_numpy()
            at = np.flatnonzero(names == name)
            if at.size:
                return first + int(at[0]) + 1
            first += len(frame)
        return None

    def _rows(
        self, frame: Any, where: str, first: int,
    ) -> tuple[np.ndarray, tuple[str, ...], Any, np.ndarray, np.ndarray, np.ndarray]:
        """The frame's rows (``first`` rows of the file come before them), checked: each row's
        file (codes into the files, in first-seen order), label (stripped), onset and offset,
        and whether it is an event (not a row that only lists its file)."""
        found = _columns(frame.columns, where)
        file, onset_column, offset_column, label = (frame[found[c]] for c in COLUMNS)
        for name, column in (("onset", onset_column), ("offset", offset_column)):
            if column.dtype.kind not in "iuf":
                raise DataError(f"{where}: the {name} column holds {column.dtype}, not times in seconds")
        onset, offset = onset_column.to_numpy(np.float64, na_value=np.nan), offset_column.to_numpy(np.float64, na_value=np.nan)
        labels = _labels(label)
        no_event = np.isnan(onset) & np.isnan(offset) & (labels == "").to_numpy()
        _check(where, first, file, onset, offset, labels.to_numpy(), no_event, self.params.labels)
        files = _names(file)
        if files is None:
            raise DataError(f"{where}: a filename is over 128 KiB long")
        return files[0], files[1], labels, onset, offset, ~no_event


def _columns(names: Any, where: str) -> dict[str, str]:
    """The column of filename, onset, offset and event_label, by their names or aliases."""
    found = {_COLUMN_OF.get(str(c).strip().lower()): c for c in names}
    if not set(COLUMNS) <= set(found):
        raise DataError(
            f"{where}: columns {', '.join(map(repr, map(str, names)))}; an event list needs "
            + ", ".join("|".join(a) for a in HEADER_NAMES.values())
        )
    return {c: found[c] for c in COLUMNS}


def _labels(column: Any) -> Any:
    """A label column as stripped text, "" where empty."""
    return column.fillna("").astype(str).str.strip()


def _check(
    where: str, first: int, file: Any, onset: np.ndarray, offset: np.ndarray, labels: np.ndarray, no_event: np.ndarray,
    known: list[str] | None,
) -> None:
    """The first row with a problem (after ``first`` rows of the file), as an error naming it
    (rows count from 1) and its first problem."""
    names = file.fillna("").astype(str).str.strip().to_numpy()
    event = ~no_event
    problems = [
        (names == "", lambda i: "empty filename"),
        (event & (labels == ""), lambda i: "empty event label; every event needs a class label"),
        (event & ~np.isfinite(onset), lambda i: f"onset {onset[i]} is not a finite time"),
        (event & ~np.isfinite(offset), lambda i: f"offset {offset[i]} is not a finite time"),
        (event & (onset < 0), lambda i: f"onset {onset[i]:g} is negative; times are seconds from the start of the file"),
        (event & (offset < onset), lambda i: f"offset {offset[i]:g} is before onset {onset[i]:g}"),
    ]
    if known is not None:
        problems.append((event & ~np.isin(labels, known), lambda i: f"unknown label {labels[i]!r}; the given labels are: "
                         + ", ".join(sorted(known))))
    bad = np.logical_or.reduce([rows for rows, _ in problems])
    if bad.any():
        row = int(np.argmax(bad))
        message = next(message for rows, message in problems if rows[row])
        raise DataError(f"{where}: row {first + row + 1}: {message(row)}")
