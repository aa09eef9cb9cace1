"""Event lists read column by column: pyarrow's CSV reader, then numpy on whole columns.

The exact reader (:class:`evalkit_segments.loaders.EventListLoader`) walks the file row by row
to name the line of any problem. This one reads a well-formed file about ten times as fast and
gives the same item sets; at the first sign of anything it does not handle — a row of another
width, a non-numeric or empty time, a negative or non-finite time, an offset before its onset,
an empty or unknown label, a row with only a filename, text that is not UTF-8, a field over
128 KiB — it returns None, and the exact reader reads the file and names the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evalkit.plugin import Intervals, ItemSets

#: The csv module's field limit, which the exact reader of a .csv file reports as an error.
FIELD_LIMIT = 131072
#: Bytes parsed at a time (by two threads): 4 MiB blocks parsed a million events as fast as
#: ``pandas.read_csv``; 1 MiB blocks took 40% longer.
BLOCK_BYTES = 4 << 20


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

    is_csv = separator == ","
    columns = [f"column{i}" for i in range(4)]
    text = pa.dictionary(pa.int32(), pa.string())  # names become codes as they are parsed
    types = dict(zip((columns[i] for i in order), (text, pa.float64(), pa.float64(), text)))
    try:
        table = pc.read_csv(
            path,
            read_options=pc.ReadOptions(skip_rows=header_line, column_names=columns, block_size=BLOCK_BYTES),
            parse_options=pc.ParseOptions(delimiter="," if is_csv else "\t", quote_char='"' if is_csv else False),
            convert_options=pc.ConvertOptions(column_types=types, strings_can_be_null=False),
        )
    except (pa.ArrowException, ValueError, OSError):  # another width, a time that is no number, not UTF-8, ...
        return None
    if table.num_rows == 0:
        return None
    onset = table.column(columns[order[1]]).to_numpy()
    offset = table.column(columns[order[2]]).to_numpy()
    # NaN also stands for an empty field (a row with only a filename): the exact reader decides.
    if not (np.isfinite(onset).all() and np.isfinite(offset).all() and (onset >= 0).all() and (offset >= onset).all()):
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
