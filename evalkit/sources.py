"""Turn a data source from a config (a path, inline rows, or a mapping) into a LabelMatrix."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.data import LabelMatrix
from evalkit.errors import DataError
from evalkit.registry import Registry


def load_source(
    source: Any, *, base: Path, where: str, registry: Registry, classes: Sequence[str] | None = None
) -> LabelMatrix:
    """Load one reference or system. ``classes`` names unnamed columns (inline rows, .npy) and
    selects (and orders) named ones.
    """
    if isinstance(source, LabelMatrix):
        matrix = source
    elif isinstance(source, (str, Path)):
        matrix = _load_file(Path(source), base, where, registry)
    elif isinstance(source, dict):
        matrix = _from_mapping(source, where)
    else:
        matrix = _from_rows(source, None, None, where)
    if classes is None:
        return matrix
    unnamed = matrix.classes == tuple(str(i) for i in range(len(matrix.classes)))
    if unnamed and len(classes) == len(matrix.classes):
        return LabelMatrix(matrix.values, tuple(classes), matrix.ids, matrix.source)
    if unnamed:
        raise DataError(
            f"{matrix.source}: {len(matrix.classes)} unnamed columns but {len(classes)} names in "
            "`classes`; give one name per column, or use a file with class names (CSV header, .npz)"
        )
    return matrix.select(classes)


def _load_file(path: Path, base: Path, where: str, registry: Registry) -> LabelMatrix:
    loader, full = find_loader(path, base, where, registry)
    return loader.load(full)


def find_loader(path: str | Path, base: Path, where: str, registry: Registry) -> tuple[Any, Path]:
    """The loader for a data file and its full path; errors if it is missing or unreadable."""
    path = Path(path)
    full = path if path.is_absolute() else base / path
    if not full.is_file():
        raise DataError(f"{where}: no such data file {str(path)!r} (looked for {full})")
    loaders = [registry.create("loader", name) for name in registry.names("loader")]
    for loader in loaders:
        if full.suffix.lower() in loader.suffixes:
            return loader, full
    known = sorted(s for loader in loaders for s in loader.suffixes)
    raise DataError(f"{where}: no loader reads {full.suffix or 'files without a suffix'!r} files ({full}); known: {', '.join(known)}")


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
