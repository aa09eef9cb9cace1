"""Sound-event lists in Parquet: the columns of a sed_eval / DCASE list (filename, onset, offset,
event_label, under the same names as a TSV header), typed, read with pyarrow, checked column by
column; a problem is an error naming the file and the row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evalkit.plugin import BaseComponent, DataError, Intervals, ItemSets, read_parquet, reading
from evalkit_segments.columnar import _names
from evalkit_segments.loaders import _COLUMN_OF, COLUMNS, HEADER_NAMES, LabelsParams, _classes

#: Bytes a cell takes once the table is a DataFrame and checked (Python text, its copies and the
#: masks), for the memory check before the file is read: 45 measured (traced peak of a load of
#: 200,000 events, each in a file of its own), so 64, as an item of a Parquet item list.
CELL_BYTES = 64


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
                return self._events(frame, path)
            except MemoryError:  # pyarrow's ArrowMemoryError is one too: out of memory, not a bad file
                raise
            except (pa.ArrowException, ValueError) as exc:  # pandas' text columns may decode lazily
                raise DataError(f"{where}: not a readable Parquet file ({exc})") from None

    def _events(self, frame: Any, path: Path) -> ItemSets:
        where = str(path)
        found = {_COLUMN_OF.get(str(c).strip().lower()): c for c in frame.columns}
        if not set(COLUMNS) <= set(found):
            raise DataError(
                f"{where}: columns {', '.join(map(repr, map(str, frame.columns)))}; an event list needs "
                + ", ".join("|".join(a) for a in HEADER_NAMES.values())
            )
        file, onset_column, offset_column, label = (frame[found[c]] for c in COLUMNS)
        for name, column in (("onset", onset_column), ("offset", offset_column)):
            if column.dtype.kind not in "iuf":
                raise DataError(f"{where}: the {name} column holds {column.dtype}, not times in seconds")
        onset, offset = onset_column.to_numpy(np.float64, na_value=np.nan), offset_column.to_numpy(np.float64, na_value=np.nan)
        labels = label.fillna("").astype(str).str.strip()
        no_event = np.isnan(onset) & np.isnan(offset) & (labels == "").to_numpy()
        _check(where, file, onset, offset, labels.to_numpy(), no_event, self.params.labels)
        files = _names(file)
        if files is None:
            raise DataError(f"{where}: a filename is over 128 KiB long")
        file_codes, ids = files
        events = ~no_event
        seen = sorted(set(labels[events]))
        classes = _classes(set(seen), self.params.labels, path)
        column = {name: i for i, name in enumerate(classes)}
        class_codes = labels[events].map(column).to_numpy(np.int64)
        samples = Intervals(file_codes[events], class_codes, onset[events], offset[events], len(ids), len(classes))
        return ItemSets(samples, classes, ids, where)


def _check(
    where: str, file: Any, onset: np.ndarray, offset: np.ndarray, labels: np.ndarray, no_event: np.ndarray,
    known: list[str] | None,
) -> None:
    """The first row of each kind of problem, as an error naming it (rows count from 1)."""
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
    for bad, message in problems:
        rows = np.flatnonzero(bad)
        if rows.size:
            raise DataError(f"{where}: row {rows[0] + 1}: {message(rows[0])}")
