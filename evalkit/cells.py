"""The cells of a batch of item sets, flattened for batched similarity calls.

Representations over item lists (soft cardinality, Crisp*, segments, ...) score pairs of items
within each (sample, class) cell. Building every cell's pairs as index arrays lets a similarity
with ``pairs`` score a whole chunk of small documents in one call, while large cells are scored
as one ``matrix`` each.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from evalkit.components import Similarity
from evalkit.items import ItemSets
from evalkit.optional import optional

#: A cell with at least this many items (G ⧺ P) is scored as one matrix: for large documents one
#: cdist-style call is many times faster than their k² element-wise pairs; many small documents
#: are faster scored together in one ``pairs`` call.
BLOCK_ITEMS = 64


class Cells:
    """The (sample, class) cells of a batch, flattened: every cell's items G ⧺ P in one list."""

    def __init__(self, reference: ItemSets, prediction: ItemSets) -> None:
        self.shape = (len(reference), len(reference.classes))
        items: list[Any] = []
        n_ref, n_pred = [], []
        for ref_sample, pred_sample in zip(reference.samples, prediction.samples):
            for g, p in zip(ref_sample, pred_sample):
                items += g
                items += p
                n_ref.append(len(g))
                n_pred.append(len(p))
        self.items = np.empty(len(items), dtype=object)
        self.items[:] = items if items else []
        self.n_ref, self.n_pred = np.array(n_ref, dtype=np.intp), np.array(n_pred, dtype=np.intp)
        self.size = self.n_ref + self.n_pred
        self.offset = np.cumsum(self.size) - self.size  # each cell's first item; none without cells
        self.cell_of_item = np.repeat(np.arange(len(self.size)), self.size)
        position = np.arange(len(items)) - np.repeat(self.offset, self.size)
        self.in_ref = position < np.repeat(self.n_ref, self.size)

    def ref_items(self, cell: int) -> list[Any]:
        return self.items[self.offset[cell] : self.offset[cell] + self.n_ref[cell]].tolist()

    def pred_items(self, cell: int) -> list[Any]:
        start = self.offset[cell] + self.n_ref[cell]
        return self.items[start : start + self.n_pred[cell]].tolist()

    def pairs(self, cells: np.ndarray, cross: bool) -> tuple[np.ndarray, np.ndarray]:
        """Global item indices (I, J) of the pairs of the given cells, row-major per cell: every
        ordered pair within G ⧺ P, or (``cross``) every reference x prediction pair."""
        rows = self.n_ref[cells] if cross else self.size[cells]
        cols = self.n_pred[cells] if cross else self.size[cells]
        counts = rows * cols
        start = np.repeat(np.cumsum(counts) - counts, counts)
        t = np.arange(counts.sum()) - start
        per_row = np.repeat(cols, counts)
        base = np.repeat(self.offset[cells], counts)
        col_base = base + (np.repeat(self.n_ref[cells], counts) if cross else 0)
        return base + t // per_row, col_base + t % per_row

    def per_cell(self, weights: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Sum ``weights`` of the selected items per cell, as a (samples, classes) array."""
        totals = np.bincount(self.cell_of_item[items], weights=weights, minlength=len(self.size))
        return totals.reshape(self.shape)

    def as_blocks(self, similarity: Similarity) -> np.ndarray:
        """Which cells to score one matrix each (large ones, or all if there is no ``pairs``)."""
        if optional(similarity, "pairs") is None:
            return self.size > 0
        return self.size >= BLOCK_ITEMS


def pair_similarities(similarity: Similarity, cells: Cells, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """sim(items[I], items[J]) element-wise, in one ``pairs`` call."""
    if not len(i):
        return np.zeros(0)
    pairs = optional(similarity, "pairs")  # not None: without it, Cells.as_blocks makes every cell a block
    return np.asarray(pairs(cells.items[i].tolist(), cells.items[j].tolist()), dtype=np.float64)


def cross_blocks(similarity: Similarity, cells: Cells) -> Iterator[tuple[int, np.ndarray]]:
    """(cell, reference x prediction similarity matrix) for every cell with items on both
    sides: large cells (or all, without ``pairs``) one ``matrix`` each, the others from one
    batched ``pairs`` call."""
    both = (cells.n_ref > 0) & (cells.n_pred > 0)
    blocks = cells.as_blocks(similarity) & both
    for cell in map(int, np.flatnonzero(blocks)):
        g, p = cells.ref_items(cell), cells.pred_items(cell)
        yield cell, np.asarray(similarity.matrix(g, p), dtype=np.float64)
    small = np.flatnonzero(both & ~blocks)
    sim = pair_similarities(similarity, cells, *cells.pairs(small, cross=True))
    ends = np.cumsum(cells.n_ref[small] * cells.n_pred[small])
    for cell, end in zip(map(int, small), ends):
        rows, cols = cells.n_ref[cell], cells.n_pred[cell]
        yield cell, sim[end - rows * cols : end].reshape(rows, cols)
