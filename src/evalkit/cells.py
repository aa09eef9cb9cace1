"""The cells of a batch of item sets, flattened for batched similarity calls.

Representations over item lists (soft cardinality, Crisp*, segments, ...) score pairs of items
within each (sample, class) cell. Building every cell's pairs as index arrays lets a similarity
with ``pairs`` score a whole chunk of small documents in one call, while large cells (or every
cell, for a similarity with ``block_items = 1``) are scored as one ``matrix`` each, their sums
taken in numpy over many matrices at once.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from itertools import chain
from typing import Any

import numpy as np

from evalkit.components import Similarity
from evalkit.items import ItemSets
from evalkit.optional import optional

#: A cell with at least this many items (G ⧺ P) is scored as one matrix: for large documents one
#: cdist-style call is many times faster than their k² element-wise pairs; many small documents
#: are faster scored together in one ``pairs`` call, unless the similarity says otherwise
#: (``block_items``).
BLOCK_ITEMS = 64
#: Matrices summed together hold at most about this many values (2 MiB), whatever their number.
#: Small enough that the allocator reuses each chunk's arrays: 32 MiB ones were mapped afresh
#: and page-faulted in every chunk (a third more time over 50,000 small documents).
CHUNK_VALUES = 1 << 18


class Cells:
    """The (sample, class) cells of a batch, flattened: every cell's items G ⧺ P in one list."""

    def __init__(self, reference: ItemSets, prediction: ItemSets) -> None:
        self.shape = (len(reference), len(reference.classes))
        # Cells sample-major, each cell's items G ⧺ P; iterated at C level, no Python per cell.
        ref_cells = list(chain.from_iterable(reference.samples))
        pred_cells = list(chain.from_iterable(prediction.samples))
        # slices of a list are cheaper than .tolist() of an object array's
        self.item_list: list[Any] = list(chain.from_iterable(chain.from_iterable(zip(ref_cells, pred_cells))))
        self.n_ref = np.fromiter(map(len, ref_cells), np.intp, len(ref_cells))
        self.n_pred = np.fromiter(map(len, pred_cells), np.intp, len(pred_cells))
        self.size = self.n_ref + self.n_pred
        self.offset = np.cumsum(self.size) - self.size  # each cell's first item; none without cells
        self.cell_of_item = np.repeat(np.arange(len(self.size)), self.size)
        position = np.arange(len(self.item_list)) - np.repeat(self.offset, self.size)
        self.in_ref = position < np.repeat(self.n_ref, self.size)

    @functools.cached_property
    def items(self) -> np.ndarray:
        """The items as an object array, for gathering the pairs of the ``pairs`` route (built
        only if asked for: the matrix route slices :attr:`item_list`)."""
        items = np.empty(len(self.item_list), dtype=object)
        items[:] = self.item_list
        return items

    def ref_items(self, cell: int) -> list[Any]:
        start = int(self.offset[cell])
        return self.item_list[start : start + int(self.n_ref[cell])]

    def pred_items(self, cell: int) -> list[Any]:
        start = int(self.offset[cell] + self.n_ref[cell])
        return self.item_list[start : start + int(self.n_pred[cell])]

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

    def matrices(self, similarity: Similarity, cells: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(rows, values): each cell's G ⧺ P x G ⧺ P ``matrix``, flattened row-major and
        concatenated, a chunk of cells at a time (at most ``CHUNK_VALUES`` values, or one cell):
        one ``matrices`` call per chunk, or one ``matrix`` call per cell. ``rows`` are the global
        indices of the items whose rows they are."""
        items, offset, size = self.item_list, self.offset[cells].tolist(), self.size[cells].tolist()
        batched = optional(similarity, "matrices")
        start = 0
        while start < len(cells):
            stop, n_values = start + 1, size[start] ** 2
            while stop < len(cells) and n_values + size[stop] ** 2 <= CHUNK_VALUES:
                n_values += size[stop] ** 2
                stop += 1
            # A generator, not a list of every cell's items: a hundred thousand lists kept alive at
            # once would set off full garbage collections (a third of the time at 1e5 documents).
            groups = (items[first : first + k] for first, k in zip(offset[start:stop], size[start:stop]))
            if batched is not None:
                values = batched(list(chain.from_iterable(groups)), size[start:stop])
            else:
                values = np.concatenate([np.asarray(similarity.matrix(g, g), dtype=np.float64).ravel() for g in groups])
            k = self.size[cells[start:stop]]
            rows = np.repeat(self.offset[cells[start:stop]] - (np.cumsum(k) - k), k) + np.arange(k.sum())
            yield rows, np.asarray(values, dtype=np.float64)
            start = stop

    def side_sums(self, rows: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's sum over its cell's reference columns, and over its prediction columns, of
        the values ``matrices`` yields."""
        cell = self.cell_of_item[rows]
        begin = np.cumsum(self.size[cell]) - self.size[cell]
        bounds = np.column_stack([begin, begin + self.n_ref[cell]]).ravel()  # G, P, G, P, ...
        # reduceat sums [bounds[m], bounds[m + 1]) (the last to the end); an empty one gives the
        # value at its bound instead of 0, and none may start at len(values): there, the last
        # row's empty prediction side is added after (not a copy of the values with a 0 appended).
        tail = bounds[-1] == len(values)
        sums = np.add.reduceat(values, bounds[:-1] if tail else bounds)
        if tail:
            sums = np.append(sums, 0.0)
        sums[np.diff(bounds, append=len(values)) == 0] = 0.0
        return sums[0::2], sums[1::2]

    def per_cell(self, weights: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Sum ``weights`` of the selected items per cell, as a (samples, classes) array."""
        totals = np.bincount(self.cell_of_item[items], weights=weights, minlength=len(self.size))
        return totals.reshape(self.shape)

    def as_blocks(self, similarity: Similarity) -> np.ndarray:
        """Which cells to score one matrix each (large ones, or all if there is no ``pairs``)."""
        if optional(similarity, "pairs") is None:
            return self.size > 0
        return self.size >= max(optional(similarity, "block_items") or BLOCK_ITEMS, 1)


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
