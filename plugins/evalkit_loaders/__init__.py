"""Label-matrix loaders: CSV/TSV with a header of class names, NumPy .npy and .npz."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from evalkit import hookimpl
from evalkit.data import LabelMatrix
from evalkit.errors import DataError
from evalkit.protocols import BaseComponent


@hookimpl
def evalkit_register_loaders(register):
    for cls in (DelimitedLoader, NpyLoader, NpzLoader):
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
