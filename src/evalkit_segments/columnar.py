"""Event lists read column by column: pyarrow's CSV reader, then numpy on whole columns.

The exact reader (:class:`evalkit_segments.loaders.EventListLoader`) walks the file row by row
to name the line of any problem. This one reads a well-formed file about ten times as fast and
gives the same item sets; at the first sign of anything it does not handle — a row of another
width, a non-numeric or empty time, a negative or non-finite time, an offset before its onset,
an empty or unknown label, a row with only a filename, text that is not UTF-8, a field over
128 KiB — it returns None, and the exact reader reads the file and names the line.

For a streamed run (:mod:`evalkit_segments.event_stream`) it reads the same way a block of
rows at a time (:func:`event_blocks`), after a first pass over the label column alone
(:func:`labels_in`) that gives every block the classes of the whole list.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.plugin import Intervals, ItemSets
from evalkit_segments.event_stream import Block, Unhandled

#: The csv module's field limit, which the exact reader of a .csv file reports as an error.
FIELD_LIMIT = 131072
#: Bytes parsed at a time (by two threads): 4 MiB blocks parsed a million events as fast as
#: ``pandas.read_csv``; 1 MiB blocks took 40% longer.
BLOCK_BYTES = 4 << 20
#: Bytes a streamed list reads and parses at a time (on one thread).
STREAM_BYTES = 1 << 20


def read_events(
    path: Path, order: list[int], header_line: int, classes_given: list[str] | None, separator: str,
) -> ItemSets | None:
    """The item sets of an event list, or None when the exact reader must read it.

    ``order``: the file's column of filename, onset, offset and label; ``header_line``: the
    line of its header (0: none); ``classes_given``: the ``labels`` parameter; ``separator``:
    a tab, or a comma (then with CSV quoting).
    """
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.csv as pc  # type: ignore[import-untyped]

    read, parse, columns = _options(order, header_line, separator)
    try:
        table = pc.read_csv(path, read_options=read, parse_options=parse, convert_options=_convert(columns, order))
    except (pa.ArrowException, ValueError, OSError):  # another width, a time that is no number, not UTF-8, ...
        return None
    if table.num_rows == 0:
        return None
    onset = table.column(columns[order[1]]).to_numpy()
    offset = table.column(columns[order[2]]).to_numpy()
    if not _timed(onset, offset):
        return None
    files = _coded(table.column(columns[order[0]]))
    labels = _coded(table.column(columns[order[3]]))
    if files is None or labels is None:
        return None
    (file_codes, ids), (label_codes, seen) = files, labels
    classes = tuple(sorted(seen)) if classes_given is None else tuple(classes_given)
    column = {name: i for i, name in enumerate(classes)}
    if any(name not in column for name in seen):
        return None
    class_codes = np.array([column[name] for name in seen], dtype=np.int64)[label_codes]
    return ItemSets(Intervals(file_codes, class_codes, onset, offset, len(ids), len(classes)), classes, ids, str(path))


def _timed(onset: np.ndarray, offset: np.ndarray) -> bool:
    """Whether every time is finite and not negative, and no offset comes before its onset.
    NaN also stands for an empty field (a row with only a filename): the exact reader decides."""
    return bool(np.isfinite(onset).all() and np.isfinite(offset).all() and (onset >= 0).all() and (offset >= onset).all())


def _coded(column: Any) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """A dictionary-encoded text column as codes and names in first-seen order (see
    :func:`_stripped`)."""
    unified = column.unify_dictionaries()
    codes = np.concatenate([chunk.indices.to_numpy(zero_copy_only=False) for chunk in unified.chunks])
    uniques = unified.chunk(0).dictionary.to_pylist() if unified.num_chunks else []
    return _stripped(codes, uniques)


def _names(values: object) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """Codes of the names of a pandas column and the names in first-seen order (see :func:`_stripped`)."""
    import pandas as pd  # type: ignore[import-untyped]

    codes, uniques = pd.factorize(values, sort=False)
    return _stripped(codes, list(uniques))


def _stripped(codes: np.ndarray, uniques: list[Any]) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """The codes of the stripped names (" a" and "a" are one) and those names; None for an
    empty name (code -1 or "") or one over the field limit. Only the distinct values are stripped."""
    import pandas as pd

    if (codes < 0).any():  # an empty field
        return None
    stripped = [str(u).strip() for u in uniques]
    if not all(stripped) or max(map(len, stripped)) > FIELD_LIMIT:
        return None
    merged, names = pd.factorize(np.array(stripped, dtype=object), sort=False)
    return merged[codes], tuple(names)


def _options(order: list[int], header_line: int, separator: str, width: int = 4) -> tuple[Any, Any, list[str]]:
    """pyarrow's read and parse options of an event list of ``width`` columns, and their names."""
    import pyarrow.csv as pc

    is_csv = separator == ","
    columns = [f"column{i}" for i in range(width)]
    read = pc.ReadOptions(skip_rows=header_line, column_names=columns, block_size=BLOCK_BYTES)
    parse = pc.ParseOptions(delimiter=separator, quote_char='"' if is_csv else False)
    return read, parse, columns


def _convert(columns: list[str], order: list[int]) -> Any:
    """Filenames and labels as dictionary codes (names become codes as they are parsed), times as float64."""
    import pyarrow as pa
    import pyarrow.csv as pc

    text = pa.dictionary(pa.int32(), pa.string())
    types = dict(zip((columns[i] for i in order), (text, pa.float64(), pa.float64(), text)))
    return pc.ConvertOptions(column_types=types, strings_can_be_null=False)


def _tables(path: Path, read: Any, parse: Any, convert: Any) -> Iterator[Any]:
    """The list as tables of about :data:`STREAM_BYTES` of its text each, cut at line ends.

    Each block is parsed on its own, on this thread: pyarrow's streaming reader (``open_csv``)
    reads ahead without bound while its batches are consumed more slowly (its memory pool held
    155 MB reading a 290 MB list: memory grew with the file); read a block at a time, it held 6 MB."""

    read.use_threads = False  # the second core serves the other file's reader and the provenance hash
    with path.open("rb") as handle:
        rest = b""
        while data := handle.read(STREAM_BYTES):
            block = rest + data
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            if cut:
                yield _parsed(block[:cut], read, parse, convert)
                read.skip_rows = 0  # the header is in the first block
        if rest:
            yield _parsed(rest, read, parse, convert)


def _parsed(text: bytes, read: Any, parse: Any, convert: Any) -> Any:
    """A block of whole lines as one table (one record batch)."""
    import pyarrow as pa
    import pyarrow.csv as pc

    read.block_size = len(text) + 1
    return pc.read_csv(pa.py_buffer(text), read_options=read, parse_options=parse, convert_options=convert)


def labels_in(path: Path, order: list[int], header_line: int, width: int, separator: str) -> set[str] | None:
    """The event labels of the list (stripped, not empty), from its label column alone; None
    when pyarrow cannot read the file (the caller reads it row by row). Rows of another width
    (a file without events) are skipped: they hold no label."""
    import pyarrow as pa
    import pyarrow.compute as pac  # type: ignore[import-untyped]
    import pyarrow.csv as pc

    read, parse, columns = _options(order, header_line, separator, width)
    parse.invalid_row_handler = lambda row: "skip"
    label = columns[order[3]]
    convert = pc.ConvertOptions(include_columns=[label], column_types={label: pa.string()}, strings_can_be_null=False)
    seen: set[str] = set()
    try:
        for table in _tables(path, read, parse, convert):
            seen.update(name.strip() for name in pac.unique(table.column(0)).to_pylist())
    except (pa.ArrowException, ValueError, OSError):
        return None
    seen.discard("")
    return seen


def event_blocks(
    path: Path, order: list[int], header_line: int, classes: tuple[str, ...], separator: str,
) -> Iterator[Block]:
    """The rows of an event list of four columns a block of :data:`STREAM_BYTES` at a time;
    raises :class:`Unhandled` at a block with anything :func:`read_events` leaves to the exact
    reader (or a label not in ``classes``, or no rows at all)."""
    import pyarrow as pa

    read, parse, columns = _options(order, header_line, separator)
    column = {name: i for i, name in enumerate(classes)}
    tables = _tables(path, read, parse, _convert(columns, order))
    read_any = False
    while True:
        try:
            table = next(tables, None)
        except (pa.ArrowException, ValueError, OSError):
            raise Unhandled from None
        if table is None:
            if not read_any:  # no rows: the exact reader says so
                raise Unhandled
            return
        if not table.num_rows:  # empty lines alone, or the header
            continue
        onset, offset = (table.column(columns[order[i]]).to_numpy() for i in (1, 2))
        files = _coded(table.column(columns[order[0]]))
        labels = _coded(table.column(columns[order[3]]))
        if not _timed(onset, offset) or files is None or labels is None or not set(labels[1]) <= column.keys():
            raise Unhandled
        (file, names), (label, seen) = files, labels
        first, at = _first_seen(file)  # the dictionary's order need not be the block's
        klass = np.array([column[name] for name in seen], dtype=np.int64)[label]
        read_any = True
        yield Block(tuple(names[i] for i in at), first, klass, onset, offset, None)


def _first_seen(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes renumbered in first-seen order, and the old code of each new one."""
    import pandas as pd

    first, at = pd.factorize(codes, sort=False)
    return first.astype(np.int64), at
