"""Turn a data source from a config (a path, inline data, or a mapping) into the data a
representation reads: a LabelMatrix (memberships) or ItemSets (lists of items).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.data import LabelMatrix
from evalkit.errors import DataError
from evalkit.items import ItemSets
from evalkit.registry import Registry

KINDS = {"matrix": LabelMatrix, "items": ItemSets}


def load_source(
    source: Any, *, base: Path, where: str, registry: Registry, classes: Sequence[str] | None = None,
    kind: str = "matrix", role: str = "reference",
) -> LabelMatrix | ItemSets:
    """Load one reference or system as ``kind`` data; ``role`` is "reference" or "prediction"
    (a file holding both sides gives the one asked for). ``classes`` names unnamed matrix
    columns (inline rows, .npy) and selects (and orders) named classes.
    """
    if isinstance(source, (LabelMatrix, ItemSets)):
        data = source
    elif isinstance(source, (str, Path)):
        loader, full = find_loader(source, base, where, registry, kind)
        data = loader.load(full, role)
    elif kind == "items":
        data = _items_from_python(source, where, classes)
    elif isinstance(source, dict):
        data = _from_mapping(source, where)
    else:
        data = _from_rows(source, None, None, where)
    if not isinstance(data, KINDS[kind]):
        raise DataError(f"{where}: this run's representations read {kind} data, but this source holds {type(data).__name__}")
    return data if classes is None else _with_classes(data, classes)


def _with_classes(data: LabelMatrix | ItemSets, classes: Sequence[str]) -> LabelMatrix | ItemSets:
    unnamed = data.classes == tuple(str(i) for i in range(len(data.classes)))
    if isinstance(data, LabelMatrix) and unnamed:
        if len(classes) != len(data.classes):
            raise DataError(
                f"{data.source}: {len(data.classes)} unnamed columns but {len(classes)} names in "
                "`classes`; give one name per column, or use a file with class names (CSV header, .npz)"
            )
        return LabelMatrix(data.values, tuple(classes), data.ids, data.source)
    return data.select(classes)


def find_loader(
    path: str | Path, base: Path, where: str, registry: Registry, kind: str = "matrix"
) -> tuple[Any, Path]:
    """The loader of ``kind`` data for a file, and its full path; errors if it is missing or
    no loader reads it."""
    path = Path(path)
    full = path if path.is_absolute() else base / path
    if not full.is_file():
        raise DataError(f"{where}: no such data file {str(path)!r} (looked for {full})")
    loaders = [registry.create("loader", name) for name in registry.names("loader")]
    loaders = [loader for loader in loaders if loader.kind == kind]
    for loader in loaders:
        if full.suffix.lower() in loader.suffixes:
            return loader, full
    known = sorted(s for loader in loaders for s in loader.suffixes)
    raise DataError(
        f"{where}: no loader reads {full.suffix or 'files without a suffix'!r} files as {kind} data "
        f"({full}); known suffixes: {', '.join(known)}"
    )


def _items_from_python(source: Any, where: str, classes: Sequence[str] | None) -> ItemSets:
    if isinstance(source, dict):
        unknown = set(source) - {"items", "ids"}
        if unknown or "items" not in source:
            raise DataError(
                f"{where}: inline item data is a list of samples or a mapping with `items` (the "
                f"samples) and optional `ids`; got keys {sorted(source)}"
            )
        return ItemSets.from_python(source["items"], ids=source.get("ids"), classes=classes, source=where)
    return ItemSets.from_python(source, classes=classes, source=where)


def _from_mapping(source: dict[str, Any], where: str) -> LabelMatrix:
    unknown = set(source) - {"values", "classes", "ids"}
    if unknown or "values" not in source:
        raise DataError(
            f"{where}: inline data is a list of rows or a mapping with `values` (rows) and "
            f"optional `classes` and `ids`; got keys {sorted(source)}"
        )
    return _from_rows(source["values"], source.get("classes"), source.get("ids"), where)


def _from_rows(rows: Any, classes: Any, ids: Any, where: str) -> LabelMatrix:
    keep = isinstance(rows, np.ndarray) and rows.dtype in (np.float32, np.float64)
    try:
        values = rows if keep else np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(
            f"{where}: inline values must be numbers in rows of equal length (a list of lists); "
            f"check the row lengths and that every cell is a number"
        ) from None
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise DataError(f"{where}: inline values must be a list of rows; got {values.ndim} dimensions")
    names = tuple(map(str, classes)) if classes is not None else tuple(str(i) for i in range(values.shape[1]))
    return LabelMatrix(values, names, tuple(map(str, ids)) if ids is not None else None, where)
