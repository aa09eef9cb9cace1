"""Similarities that need no model: exact equality, and values given explicitly (a table)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import Array, BaseComponent, ConfigError, ConfigPath, DataError, hookimpl


@hookimpl
def evalkit_register_similarities(register):
    register(Exact)
    register(GivenMatrix)


class Exact(BaseComponent):
    """1 for identical items, else 0: soft cardinality then equals crisp set counting."""

    name = "exact"
    symmetric = True

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        return np.array([[float(x == y) for y in ys] for x in xs]).reshape(len(xs), len(ys))

    def pairs(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        return np.fromiter((x == y for x, y in zip(xs, ys)), dtype=np.float64, count=len(xs))


class GivenMatrixParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    values: list[tuple[str, str, float]] | None = Field(
        None, description="pairwise values as [item, item, value] triples (symmetric)"
    )
    file: ConfigPath | None = Field(
        None, description="a CSV of item,item,value rows (symmetric; header optional), relative to the config"
    )
    default: float | None = Field(
        None, ge=0, le=1, description="similarity of pairs not given; without it a missing pair is an error"
    )


class GivenMatrix(BaseComponent[GivenMatrixParams]):
    """Similarities given explicitly, for published examples and human judgments.

    Pairs are symmetric and every item is 1 to itself; a pair given neither way takes ``default``,
    or is an error listing the missing pairs.
    """

    name = "matrix"
    symmetric = True  # every pair is stored both ways
    Params = GivenMatrixParams

    def __init__(self, params: GivenMatrixParams) -> None:
        super().__init__(params)
        if params.values is not None and params.file is None:
            triples = params.values
        elif params.file is not None and params.values is None:
            triples = _read_triples(params.file)
        else:
            raise ConfigError("similarity 'matrix': give exactly one of `values` (triples) or `file` (a CSV)")
        self.table: dict[tuple[str, str], float] = {}
        for a, b, value in triples:
            if not 0 <= value <= 1:
                raise ConfigError(f"similarity 'matrix': sim({a!r}, {b!r}) = {value} is outside [0, 1]")
            self.table[(a, b)] = self.table[(b, a)] = float(value)

    def lookup(self, x: Any, y: Any) -> float:
        if x == y:
            return 1.0
        value = self.table.get((x, y), self.params.default)
        if value is None:
            raise DataError(
                f"similarity 'matrix': no value for the pair ({x!r}, {y!r}); add it to `values` "
                "or set `default:`"
            )
        return value

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        return np.array([[self.lookup(x, y) for y in ys] for x in xs]).reshape(len(xs), len(ys))

    def pairs(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        return np.fromiter((self.lookup(x, y) for x, y in zip(xs, ys)), dtype=np.float64, count=len(xs))


def _read_triples(path: Path) -> list[tuple[str, str, float]]:
    if not path.is_file():
        raise ConfigError(f"similarity 'matrix': no such file {str(path)!r}")
    triples = []
    with path.open(newline="", encoding="utf-8-sig") as handle:
        for line, row in enumerate(csv.reader(handle), start=1):
            if len(row) != 3:
                raise DataError(f"{path}:{line}: expected item,item,value; got {len(row)} fields")
            try:
                triples.append((row[0], row[1], float(row[2])))
            except ValueError:
                if line > 1:  # line 1 may be a header
                    raise DataError(f"{path}:{line}: {row[2]!r} is not a number") from None
    return triples
