"""Parquet item lists (keywords, labels), read with pyarrow: one item per row (columns id and
item, optionally class), or a list of items per row (columns id and items, optionally class).

The loader rules of a CSV item list apply (:mod:`evalkit.loading`): ids and items stripped, an
empty item or a missing id refused with its row, samples in first-seen order, classes in
first-seen order, a sample's items in file order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evalkit.plugin import (
    DEFAULT_CLASS,
    BaseComponent,
    DataError,
    ItemSets,
    check_header,
    clean_ids,
    clean_items,
    read_parquet,
    reading,
)

#: Bytes an item takes as Python text (a short str object and its place in a tuple), for the
#: memory check before the file is read.
ITEM_BYTES = 64
#: The column of items: one per row, or a list per row.
ONE, MANY = "item", "items"


def _columns(path: Path) -> list[str]:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    with reading(path):
        try:
            return [str(n).strip() for n in pq.read_schema(path).names]
        except (pa.ArrowException, ValueError) as exc:
            raise DataError(f"{path}: not a readable Parquet file ({exc})") from None


class ParquetItems(BaseComponent):
    """A Parquet item list (.parquet, .pq): columns ``id`` and ``item`` (one item per row) or
    ``items`` (a list of items per row), and optionally ``class``."""

    name = "parquet_items"
    kind = "items"
    suffixes = (".parquet", ".pq")

    def sniff(self, path: Path) -> bool:
        """Columns id and item (or items)."""
        names = set(_columns(path))
        return "id" in names and bool({ONE, MANY} & names)

    def load(self, path: Path, role: str) -> ItemSets:
        import pyarrow as pa

        where = str(path)
        names = check_header(_columns(path), where, what="column")
        column = MANY if MANY in names else ONE
        if "id" not in names or column not in names:
            raise DataError(f"{where}: an item list needs the columns id and item (or items); it has {', '.join(names)}")
        table = read_parquet(path, ITEM_BYTES, "their items as Python text").rename_columns(names)
        ids = self._text(table.column("id"), where, "id", "sample id")
        classes = self._text(table.column("class"), where, "class", "class") if "class" in names else None
        items = table.column(column)
        if column == MANY:  # a list per row: one row per item, each with its row's id and class
            if not pa.types.is_list(items.type) and not pa.types.is_large_list(items.type):
                raise DataError(f"{where}: column 'items' holds {items.type}; write a list of items per row")
            lengths = items.combine_chunks().value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
            rows = np.repeat(np.arange(len(lengths)), lengths)
            items = items.combine_chunks().flatten()
        else:
            rows = np.arange(table.num_rows)
        if not (pa.types.is_string(items.type) or pa.types.is_large_string(items.type)):
            raise DataError(f"{where}: column {column!r} holds {items.type}; items are text (keywords, labels)")
        values = items.to_pylist()
        return _grouped(ids, classes, values, rows, where)

    @staticmethod
    def _text(column: Any, where: str, name: str, what: str) -> list[str]:
        """A column of names as stripped text; a null is an error naming its row."""
        if column.null_count:
            row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
            raise DataError(f"{where}: column {name!r}: row {row + 1} has no {what} (null)")
        return [str(v).strip() for v in column.to_pylist()]


def _grouped(ids: list[str], classes: list[str] | None, items: list[Any], rows: np.ndarray, where: str) -> ItemSets:
    """Items of rows ``rows`` (of ``ids`` and ``classes``) grouped per sample and class."""
    import pandas as pd  # type: ignore[import-untyped]

    sample_codes, samples = pd.factorize(np.array(ids, dtype=object), sort=False)
    if classes is None:
        class_codes, names = np.zeros(len(ids), np.int64), [DEFAULT_CLASS]
    else:
        if "" in classes:
            raise DataError(
                f"{where}: row {classes.index('') + 1} has an empty class; with a class column, every row names its class"
            )
        class_codes, names = pd.factorize(np.array(classes, dtype=object), sort=False)
    cleaned = [clean_items([item], f"{where}: row {row + 1}")[0] if item is not None else _no_item(where, row)
               for item, row in zip(items, rows.tolist())]
    cell = sample_codes[rows] * len(names) + class_codes[rows]
    order = np.argsort(cell, kind="stable")  # file order within a cell
    bounds = np.searchsorted(cell[order], np.arange(len(samples) * len(names) + 1))
    per_cell = [tuple(cleaned[i] for i in order[a:b]) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    width = len(names)
    grid = tuple(tuple(per_cell[s * width : (s + 1) * width]) for s in range(len(samples)))
    return ItemSets(grid, check_header(list(map(str, names)), where, what="class"), clean_ids(list(samples), where), where)


def _no_item(where: str, row: int) -> Any:
    raise DataError(f"{where}: row {row + 1} has no item (null); remove the row (a sample without items has an empty list)")
