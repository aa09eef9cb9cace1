"""Loaders. Membership matrices: CSV/TSV with a header of class names, NumPy .npy and .npz.
Item lists: JSON Lines, and CSV/TSV with one item per row."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from evalkit.plugin import DEFAULT_CLASS, BaseComponent, DataError, ItemSets, LabelMatrix, hookimpl


@hookimpl
def evalkit_register_loaders(register):
    for cls in (DelimitedLoader, NpyLoader, NpzLoader, JsonLinesItems, DelimitedItems):
        register(cls)


#: A first column with one of these headers holds sample ids, not a class.
ID_HEADERS = {"", "id", "ids", "sample", "sample_id", "filename", "file", "segment", "clip",
              "time", "onset", "index", "frame"}


class DelimitedLoader(BaseComponent):
    """CSV or TSV: a header of class names, optionally a leading id/time column."""

    name = "csv"
    kind = "matrix"
    suffixes = (".csv", ".tsv", ".txt")

    def load(self, path: Path, role: str) -> LabelMatrix:
        delimiter = "\t" if path.suffix == ".tsv" else ","
        with path.open(newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle, delimiter=delimiter))
        if not rows:
            raise DataError(f"{path}: the file is empty; expected a header of class names and rows of values")
        header, body = [h.strip() for h in rows[0]], rows[1:]
        has_ids = header[0].lower() in ID_HEADERS or (body and not _is_number(body[0][0]))
        for line, row in enumerate(body, start=2):
            if len(row) != len(header):
                raise DataError(
                    f"{path}:{line}: {len(row)} fields, but the header has {len(header)}"
                )
        ids = tuple(row[0].strip() for row in body) if has_ids else None
        cells = [row[1:] if has_ids else row for row in body]
        classes = tuple(header[1:] if has_ids else header)
        try:
            values = np.array(cells, dtype=np.float64).reshape(len(cells), len(classes))
        except ValueError:
            raise DataError(_first_bad_cell(path, cells, classes)) from None
        return LabelMatrix(values, classes, ids, str(path))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _first_bad_cell(path: Path, cells: list[list[str]], classes: tuple[str, ...]) -> str:
    for line, row in enumerate(cells, start=2):
        for column, text in enumerate(row):
            if not _is_number(text):
                return (
                    f"{path}:{line}: {text!r} in column {classes[column]!r} is not a number; "
                    "every cell after the id column must be a membership value"
                )
    return f"{path}: could not read the values as numbers"


class NpyLoader(BaseComponent):
    """A NumPy .npy array (samples x classes); classes are named by column index."""

    name = "npy"
    kind = "matrix"
    suffixes = (".npy",)

    def load(self, path: Path, role: str) -> LabelMatrix:
        values = _numeric(np.load(path, allow_pickle=False), path)
        values = values[:, None] if values.ndim == 1 else values
        return LabelMatrix(values, tuple(str(i) for i in range(values.shape[-1])), None, str(path))


class NpzLoader(BaseComponent):
    """A NumPy .npz archive with `values` and optional `classes` and `ids` arrays."""

    name = "npz"
    kind = "matrix"
    suffixes = (".npz",)

    def load(self, path: Path, role: str) -> LabelMatrix:
        with np.load(path, allow_pickle=False) as archive:
            if "values" not in archive.files:
                raise DataError(
                    f"{path}: no array named 'values' (it has {', '.join(archive.files) or 'none'}); "
                    "save with np.savez(path, values=..., classes=..., ids=...)"
                )
            values = _numeric(archive["values"], path)
            values = values[:, None] if values.ndim == 1 else values
            classes = tuple(map(str, archive["classes"])) if "classes" in archive.files else tuple(
                str(i) for i in range(values.shape[-1])
            )
            ids = tuple(map(str, archive["ids"])) if "ids" in archive.files else None
        return LabelMatrix(values, classes, ids, str(path))


def _numeric(values: np.ndarray, path: Path) -> np.ndarray:
    if not np.issubdtype(values.dtype, np.number) and values.dtype != bool:
        raise DataError(f"{path}: values have dtype {values.dtype}; expected numbers")
    return values if np.issubdtype(values.dtype, np.floating) else values.astype(np.float64)


class JsonLinesItems(BaseComponent):
    """JSON Lines of item lists: {"id", "items"}, or {"id", "reference", "prediction"} for both sides."""

    name = "jsonl"
    kind = "items"
    suffixes = (".jsonl", ".ndjson")

    def load(self, path: Path, role: str) -> ItemSets:
        ids, samples = [], []
        with path.open(encoding="utf-8") as handle:
            for line, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path}:{line}: not valid JSON ({exc.msg})") from None
                key = "items" if isinstance(record, dict) and "items" in record else role
                if not isinstance(record, dict) or key not in record:
                    raise DataError(
                        f"{path}:{line}: each line is an object with \"id\" and \"items\" (or "
                        f"\"reference\" and \"prediction\"); this one has no {key!r}"
                    )
                ids.append(str(record.get("id", line)))
                samples.append(record[key])
        return ItemSets.from_python(samples, ids=ids, source=str(path))


class DelimitedItems(BaseComponent):
    """CSV/TSV with one item per row: columns id and item, optionally class (header required)."""

    name = "csv_items"
    kind = "items"
    suffixes = (".csv", ".tsv")

    def sniff(self, path: Path) -> bool:
        """A header naming the columns id and item."""
        with path.open(newline="", encoding="utf-8-sig") as handle:
            header = next(csv.reader(handle, delimiter="\t" if path.suffix == ".tsv" else ","), [])
        return {"id", "item"} <= set(header)

    def load(self, path: Path, role: str) -> ItemSets:
        delimiter = "\t" if path.suffix == ".tsv" else ","
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle, delimiter=delimiter)
            header = reader.fieldnames or []
            if not {"id", "item"} <= set(header):
                raise DataError(
                    f"{path}:1: the header must name the columns id and item (and optionally "
                    f"class); it has {', '.join(header) or 'nothing'}"
                )
            grouped: dict[str, dict[str, list[str]]] = {}
            for row in reader:
                cls = row.get("class") or DEFAULT_CLASS
                grouped.setdefault(row["id"], {}).setdefault(cls, []).append(row["item"])
        classes = list(dict.fromkeys(c for sample in grouped.values() for c in sample))
        return ItemSets.from_python(list(grouped.values()), ids=list(grouped), classes=classes, source=str(path))
