"""Turn a data source from a config (a path, inline data, or a mapping) into the data a
representation reads: a LabelMatrix (memberships) or ItemSets (lists of items).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.arrays import check_real, from_pandas, host_array, is_pandas
from evalkit.data import LabelMatrix, listed, named, unnamed
from evalkit.errors import DataError, shortened
from evalkit.items import ItemSets
from evalkit.loading import case_twin, not_times_or_ids, special_file
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
        if classes is None and isinstance(data, LabelMatrix):
            not_times_or_ids(data.classes, data.source)
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


def declared_classes(
    loader: Any, full: Path | None, role: str, classes: Sequence[str] | None,
) -> LabelMatrix | None:
    """A matrix of no rows with the classes a file declares in its header (the loader's optional
    ``header_classes``), named and selected as :func:`load_source` would; None when only the
    values would tell (no such loader member, unnamed columns, inline data)."""
    read = optional(loader, "header_classes") if loader is not None else None
    try:
        names = read(full) if read is not None else None
    except DataError:  # a header that cannot be read is named when the run reads the file
        return None
    if names is None:
        return None
    header = LabelMatrix(np.zeros((0, len(names))), tuple(names), None, str(full))
    if classes is None:
        not_times_or_ids(header.classes, header.source)
        return header
    selected = with_classes(header, classes, fill=role == "prediction")
    assert isinstance(selected, LabelMatrix), "a matrix's classes are selected as a matrix"
    return selected


def with_classes(data: LabelMatrix | ItemSets, classes: Sequence[str], fill: bool) -> LabelMatrix | ItemSets:
    """``data.classes``: names for unnamed columns (.npy, inline rows), else a selection of named
    classes; the same meaning for a whole file, a streamed chunk or a Dask block."""
    if isinstance(data, LabelMatrix) and not named(data.classes):
        if len(classes) != len(data.classes):
            if len(data) == len(classes) and not data.first_row:  # a part of a file shows no shape
                raise DataError(
                    f"{data.source}: shape {data.values.shape} looks transposed (classes x samples): "
                    f"{len(classes)} classes are expected as columns; pass array.T"
                )
            raise DataError(
                f"{data.source}: {listed(data.classes)} but {len(classes)} names in `classes`; give one name per "
                "column, or data that names its columns (a CSV header, .npz, DataFrame columns)"
            )
        return replace(data, classes=tuple(classes))
    if isinstance(data, ItemSets):  # a system that never predicts a class: empty for it
        return data.select(classes, fill=fill)
    return data.select(classes)


def find_loader(
    path: str | Path, base: Path, where: str, registry: Registry, kind: str = "matrix",
    name: str | None = None,
) -> tuple[Any, Path, str]:
    """The loader of ``kind`` data for a file (or folder), its full path, and the name the
    loader is registered under (what makes it again).

    ``name`` picks a loader explicitly. Otherwise the loaders of ``kind`` whose ``suffixes``
    match (``"/"`` stands for a folder) are candidates; when several match, those whose optional
    ``sniff(path)`` accepts the file are kept, and it must leave exactly one.
    """
    path = Path(path)
    full = path if path.is_absolute() else base / path
    if not full.exists():
        raise DataError(f"{where}: no such data file {str(path)!r} (looked for {full}){case_twin(full)}")
    _check_regular(full, path, where)
    if name is not None:
        loader = registry.create("loader", name, where)
        if loader.kind != kind:
            raise DataError(f"{where}: loader {name!r} reads {loader.kind} data, but this run reads {kind}")
        return loader, full, name
    suffix = "/" if full.is_dir() else full.suffix.lower()
    created = {n: registry.create("loader", n) for n in registry.names("loader")}
    loaders = [loader for loader in created.values() if loader.kind == kind]
    by_suffix = [loader for loader in loaders if suffix in loader.suffixes]
    candidates = by_suffix
    if len(candidates) > 1:
        candidates = [c for c in candidates if (sniff := optional(c, "sniff")) is None or sniff(full)]
    if len(candidates) == 1:
        return candidates[0], full, next(n for n, loader in created.items() if loader is candidates[0])
    if by_suffix and not candidates:
        names = ", ".join(loader.name for loader in by_suffix)
        found = f"{where}: none of the loaders of {full.suffix!r} files for {kind} data ({names}) recognises {full.name}"
        for loader in by_suffix:
            if (diagnose := optional(loader, "diagnose")) is not None and (why := diagnose(full)) is not None:
                raise DataError(f"{found}; it looks like {loader.name!r} data, and that loader says: {why} (name "
                                f"it to read the file with it: {{path: {path}, loader: {loader.name}}})")
        raise DataError(
            f"{found} (its header or columns); name the one it should be, and it will say what is missing: "
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


def _check_regular(full: Path, path: Path, where: str) -> None:
    """A data path must be a regular file, or a folder of them (links are followed)."""
    inside = sorted(full.rglob("*")) if full.is_dir() else []
    for file in [full, *inside]:
        what = special_file(file)
        if what is not None:
            shown = str(path) if file == full else str(path / file.relative_to(full))
            raise DataError(
                f"{where}: the data path {shown!r} is {what}, not a regular file; evalkit reads a data file more "
                "than once (to check, hash and load it): save the data to a file and name that"
            )


def _file_spec(source: dict[str, Any], where: str) -> tuple[str, str | None]:
    unknown = set(source) - {"path", "loader"}
    if unknown:
        raise DataError(f"{where}: a file source takes `path` and optionally `loader`; unknown {sorted(unknown)}")
    return source["path"], source.get("loader")


#: The keys of inline data given as a mapping: the rows (or samples), then the optional lists.
_INLINE = {"matrix": ("values", "classes", "ids"), "items": ("items", "ids")}


def check_inline(source: Any, where: str, kind: str) -> None:
    """Inline data from a config, checked in the plan as far as it can be without its values:
    a mapping has its rows and only known keys, and its ``ids`` and ``classes`` are lists of
    names (``ids: 1`` or ``classes: 3`` would fail only when the data is read; ``ids: ab`` would
    silently be two ids). Python objects (arrays, DataFrames) pass: the loading checks them."""
    if isinstance(source, (bool, int, float)):
        raise DataError(f"{where}: inline data is a list of {_rows(kind)}; got the number {source!r}")
    if not isinstance(source, dict):
        return
    rows, *optional_keys = _INLINE[kind]
    unknown = set(source) - {rows, *optional_keys}
    if unknown or rows not in source:
        listed = " and ".join(f"`{k}`" for k in optional_keys)
        raise DataError(
            f"{where}: inline {'item ' if kind == 'items' else ''}data is a list of {_rows(kind)} or a mapping with "
            f"`{rows}` (the {_rows(kind)}) and optional {listed}; got keys {sorted(source)}"
        )
    if isinstance(source[rows], (str, bool, int, float)):
        raise DataError(f"{where}: inline `{rows}` is a list of {_rows(kind)}; got {source[rows]!r}")
    for key in optional_keys:
        names = source.get(key)
        if names is not None and not _names(names):
            one = "sample" if key == "ids" else "column"
            raise DataError(
                f"{where}: inline `{key}` is a list of names, one per {one} (`{key}: [a, b]`); "
                f"got {shortened(repr(names), 80)}"
            )


def _names(given: Any) -> bool:
    """Whether ``given`` is a list of names (text or numbers): a list, a 1-D array, an Index."""
    if isinstance(given, (str, bytes, dict)) or not isinstance(given, Iterable):
        return False
    try:
        return all(isinstance(n, (str, int, float, np.generic)) for n in given)
    except TypeError:  # a 0-d array
        return False


def _rows(kind: str) -> str:
    return "rows" if kind == "matrix" else "samples"


def _items_from_python(source: Any, where: str, classes: Sequence[str] | None) -> ItemSets:
    if isinstance(source, dict):
        check_inline(source, where, "items")
        return ItemSets.from_python(source["items"], ids=source.get("ids"), classes=classes, source=where)
    return ItemSets.from_python(source, classes=classes, source=where)


def _from_mapping(source: dict[str, Any], where: str) -> LabelMatrix:
    check_inline(source, where, "matrix")
    return _from_rows(source["values"], source.get("classes"), source.get("ids"), where)


def _from_rows(rows: Any, classes: Any, ids: Any, where: str) -> LabelMatrix:
    if isinstance(rows, np.ndarray):  # a list of complex numbers fails the conversion below
        check_real(rows.dtype, where)
    keep = isinstance(rows, np.ndarray) and rows.dtype in (np.float32, np.float64)
    try:
        values = rows if keep else np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise DataError(
            f"{where}: inline values must be real numbers (within the float64 range) in rows of equal length "
            f"(a list of lists); {_not_a_matrix(rows, classes)}"
        ) from None
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise DataError(f"{where}: inline values must be a list of rows; got {values.ndim} dimensions")
    names = tuple(map(str, classes)) if classes is not None else unnamed(values.shape[1])
    return LabelMatrix(values, names, tuple(map(str, ids)) if ids is not None else None, where)


def _not_a_matrix(rows: Any, classes: Any) -> str:
    """Where ``rows`` stop being a matrix of numbers: the first row of another length, or the
    first cell that is not a real number, named as :meth:`LabelMatrix.where` names cells.
    Searched only once the conversion has failed."""
    if not isinstance(rows, (list, tuple, np.ndarray)):
        return f"got {shortened(repr(rows), 80)} ({type(rows).__name__})"
    rows = [list(row) if isinstance(row, (list, tuple, np.ndarray)) else [row] for row in rows]
    names = list(map(str, classes)) if classes is not None else None
    for i, row in enumerate(rows):
        if len(row) != len(rows[0]):
            return f"row {i + 1} has {len(row)} values, row 1 has {len(rows[0])}"
        for j, cell in enumerate(row):
            try:
                float(cell)
            except (TypeError, ValueError, OverflowError):
                name = names[j] if names is not None and j < len(names) else str(j)
                return f"row {i + 1}, class {name!r} holds {shortened(repr(cell), 80)} ({type(cell).__name__})"
    return "check the row lengths and that every cell is a real number"
