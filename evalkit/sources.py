"""Turn a data source from a config (a path, inline data, or a mapping) into the data a
representation reads: a LabelMatrix (memberships) or ItemSets (lists of items).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.arrays import from_pandas, host_array, is_pandas
from evalkit.data import LabelMatrix
from evalkit.errors import DataError
from evalkit.items import ItemSets
from evalkit.protocols import optional
from evalkit.registry import Registry

KINDS: dict[str, type[LabelMatrix] | type[ItemSets]] = {"matrix": LabelMatrix, "items": ItemSets}


def source_path(source: Any, where: str) -> tuple[str | Path | None, str | None]:
    """The file a source names (None for inline data) and the loader it names, if any."""
    if isinstance(source, (str, Path)):
        return source, None
    if isinstance(source, dict) and "path" in source:
        return _file_spec(source, where)
    return None, None


def load_source(
    source: Any, *, where: str, kind: str = "matrix", role: str = "reference", classes: Sequence[str] | None = None,
    loader: Any = None, full: Path | None = None,
) -> LabelMatrix | ItemSets:
    """Load one reference or system as ``kind`` data: a file with the ``loader`` the plan found
    for it (``full`` is its path), or inline data (from Python also arrays, tensors and pandas
    objects: :mod:`evalkit.arrays`). ``role`` is "reference" or "prediction" (a
    file holding both sides gives the one asked for). ``classes`` names unnamed matrix columns
    (inline rows, .npy) and selects (and orders) named classes.
    """
    if loader is not None:
        data = loader.load(full, role)
    elif isinstance(source, (LabelMatrix, ItemSets)):
        data = source
    elif kind == "matrix" and is_pandas(source):
        data = from_pandas(source, where)
    elif kind == "items":
        data = _items_from_python(source, where, classes)
    elif isinstance(source, dict):
        data = _from_mapping(source, where)
    else:
        data = _from_rows(host_array(source, where), None, None, where)
    if not isinstance(data, KINDS[kind]):
        raise DataError(f"{where}: this run's representations read {kind} data, but this source holds {type(data).__name__}")
    return data if classes is None else with_classes(data, classes, fill=role == "prediction")


def with_classes(data: LabelMatrix | ItemSets, classes: Sequence[str], fill: bool) -> LabelMatrix | ItemSets:
    """``data.classes``: names for unnamed columns (.npy, inline rows), else a selection of named
    classes; the same meaning for a whole file, a streamed chunk or a Dask block."""
    unnamed = data.classes == tuple(str(i) for i in range(len(data.classes)))
    if isinstance(data, LabelMatrix) and unnamed:
        if len(classes) != len(data.classes):
            if len(data) == len(classes) and not data.first_row:  # a part of a file shows no shape
                raise DataError(
                    f"{data.source}: shape {data.values.shape} looks transposed (classes x samples): "
                    f"{len(classes)} classes are expected as columns; pass array.T"
                )
            raise DataError(
                f"{data.source}: {len(data.classes)} unnamed columns but {len(classes)} names in "
                "`classes`; give one name per column, or use a file with class names (CSV header, .npz)"
            )
        return replace(data, classes=tuple(classes))
    if isinstance(data, ItemSets):  # a system that never predicts a class: empty for it
        return data.select(classes, fill=fill)
    return data.select(classes)


def find_loader(
    path: str | Path, base: Path, where: str, registry: Registry, kind: str = "matrix",
    name: str | None = None,
) -> tuple[Any, Path]:
    """The loader of ``kind`` data for a file (or folder), and its full path.

    ``name`` picks a loader explicitly. Otherwise the loaders of ``kind`` whose ``suffixes``
    match (``"/"`` stands for a folder) are candidates; when several match, those whose optional
    ``sniff(path)`` accepts the file are kept, and it must leave exactly one.
    """
    path = Path(path)
    full = path if path.is_absolute() else base / path
    if not full.exists():
        raise DataError(f"{where}: no such data file {str(path)!r} (looked for {full})")
    if name is not None:
        loader = registry.create("loader", name, where)
        if loader.kind != kind:
            raise DataError(f"{where}: loader {name!r} reads {loader.kind} data, but this run reads {kind}")
        return loader, full
    suffix = "/" if full.is_dir() else full.suffix.lower()
    loaders = [registry.create("loader", n) for n in registry.names("loader")]
    loaders = [loader for loader in loaders if loader.kind == kind]
    by_suffix = [loader for loader in loaders if suffix in loader.suffixes]
    candidates = by_suffix
    if len(candidates) > 1:
        candidates = [c for c in candidates if (sniff := optional(c, "sniff")) is None or sniff(full)]
    if len(candidates) == 1:
        return candidates[0], full
    if by_suffix and not candidates:
        names = ", ".join(loader.name for loader in by_suffix)
        raise DataError(
            f"{where}: none of the loaders of {full.suffix!r} files for {kind} data ({names}) recognises {full.name} "
            f"(its header or columns); name the one it should be, and it will say what is missing: "
            f"{{path: {path}, loader: {by_suffix[0].name}}}"
        )
    if candidates:
        names = ", ".join(loader.name for loader in candidates)
        raise DataError(
            f"{where}: several loaders read {full.name} as {kind} data ({names}); name one: "
            f"{{path: {path}, loader: {candidates[0].name}}}"
        )
    known = sorted({s for loader in loaders for s in loader.suffixes})
    what = "folders" if suffix == "/" else f"{suffix or 'files without a suffix'!r} files"
    raise DataError(
        f"{where}: no loader reads {what} as {kind} data ({full}); known suffixes: {', '.join(known)}"
    )


def _file_spec(source: dict[str, Any], where: str) -> tuple[str, str | None]:
    unknown = set(source) - {"path", "loader"}
    if unknown:
        raise DataError(f"{where}: a file source takes `path` and optionally `loader`; unknown {sorted(unknown)}")
    return source["path"], source.get("loader")


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
    except (TypeError, ValueError, OverflowError):
        raise DataError(
            f"{where}: inline values must be numbers in rows of equal length (a list of lists); "
            f"check the row lengths and that every cell is a number within the float64 range"
        ) from None
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise DataError(f"{where}: inline values must be a list of rows; got {values.ndim} dimensions")
    names = tuple(map(str, classes)) if classes is not None else tuple(str(i) for i in range(values.shape[1]))
    return LabelMatrix(values, names, tuple(map(str, ids)) if ids is not None else None, where)
