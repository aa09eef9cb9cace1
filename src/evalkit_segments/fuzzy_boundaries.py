"""Fuzzy segment boundaries: soft cardinalities of interval sets with trapezoidal memberships.

Model (Fränti & Mariescu-Istodor, Section 4.5, measure segments by their length; Ziółko's fuzzy
precision and recall give them soft boundaries):

* An interval [on, off] with ramp widths w_on, w_off >= 0 has the trapezoidal membership

      μ(t) = clip(min((t − (on − w_on/2)) / w_on, ((off + w_off/2) − t) / w_off), 0, 1),

  a linear ramp of width w_on centred on the onset and one of width w_off centred on the offset.
  A long interval (off − on >= (w_on + w_off)/2) reaches 1 and its ∫μ dt is exactly its length;
  a shorter one becomes a triangle of height (off − on)/(w_on + w_off) + 1/2 < 1 (its ∫μ is
  then larger than its length). A width of 0 is a step (a crisp boundary); no division by it
  occurs. An interval of zero length with both widths 0 has measure zero.
* The intervals of one side in one cell combine by the fuzzy union μ_side(t) = max_i μ_i(t), so
  overlapping intervals are not counted twice (inputs need not be sorted or merged).
* Per cell: card_ref = ∫ μ_ref dt, card_pred = ∫ μ_pred dt and
  card_inter = ∫ T(μ_ref, μ_pred) dt. With both widths 0 these are the crisp union lengths and
  the shared length, for every T-norm.

Integration. μ_side is piecewise linear and built exactly: all rising ramps have the slope
1/w_on and all falling ramps −1/w_off, so a trapezoid is dominated by another exactly when its
support [on − w_on/2, off + w_off/2] lies inside the other's; after dropping dominated ones the
supports increase in both ends, and the upper envelope is the sequence of the remaining
trapezoids, each consecutive pair joined where the falling ramp of the first meets the rising ramp
of the second (or through their plateaus at 1 when those overlap). Jumps (width 0) are vertices
repeated at one time. The cardinalities of a side are the exact areas of its polyline.

For the intersection both sides' vertices are merged per cell; between consecutive ones both
memberships are linear. Each such piece is split further where μ_ref = μ_pred and where
μ_ref + μ_pred = 1. On these sub-pieces the integrand is, by T-norm name:

* ``minimum``, ``lukasiewicz``, ``nilpotent_minimum``, ``drastic``: linear (drastic: nonzero
  only where one side is identically 1) → the midpoint rule is exact (the midpoint also avoids
  the jumps of the last two). Where a falling and a rising ramp of equal widths make
  μ_ref + μ_pred = 1 over a whole sub-piece, the nilpotent minimum is 0 there; a sum within
  rounding of 1 (relative to times / ramp width) counts as 1;
* ``product``: quadratic → Simpson's rule is exact.

These return an error bound of 0 (exact up to floating-point rounding).

Every other T-norm: where one side is identically 0 or 1 on a sub-piece the T-norm axioms
T(a, 0) = 0 and T(a, 1) = a give the integral exactly. The remaining sub-pieces (both ramps
moving) are first cut where T changes between 0 and positive (the edge of a nilpotent T-norm's
zero region, where it has a kink, a square-root singularity or a jump: found among 17 samples
per sub-piece and located by bisection), then integrated by adaptive Gauss–Kronrod quadrature
(G7/K15), vectorized over all sub-pieces (the T-norm is called on whole arrays, never per
point). Each
round, a sub-piece's value is K15 on its two halves; its error estimate is the larger of
|K15(whole) − K15(halves)| and the halves' |K15 − G7|, both errors of cruder rules than the
value returned, so conservative for integrands that the refinement resolves. A cell's estimate is
the sum over its sub-pieces; while it exceeds ``tolerance``, the sub-pieces whose estimate exceeds
their share (tolerance × width / the cell's quadrature width) are bisected. Refinement stops at
depth ``_MAX_DEPTH`` (or if more than ``_MAX_LEAVES`` sub-pieces would be active); the returned
error estimate is then the one achieved, possibly above ``tolerance`` — the caller decides.

The work is done in blocks of whole cells of about ``_BLOCK`` intervals, vectorized within a
block: O(n log n) in the number of intervals, no time grid.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

__all__ = ["EXACT_TNORMS", "fuzzy_cardinalities"]

#: T-norms (by name) whose integral over the pieces is computed exactly.
EXACT_TNORMS = frozenset({"minimum", "lukasiewicz", "nilpotent_minimum", "drastic", "product"})
_LINEAR = frozenset({"minimum", "lukasiewicz", "nilpotent_minimum", "drastic"})

_MAX_DEPTH = 60  # bisection levels: 2^-60 of a piece is below any useful time resolution
_MAX_LEAVES = 1 << 20  # active sub-pieces per round and block: a guard against runaway refinement
_CHUNK = 1 << 17  # sub-pieces per T-norm call (15 nodes each), to bound memory
_BLOCK = 1 << 14  # intervals (both sides) per block of cells

# Gauss–Kronrod 7/15 on [-1, 1] (QUADPACK qk15): Kronrod nodes and weights, the Gauss weights
# belonging to the Kronrod nodes of odd index (±xgk[1], ±xgk[3], ±xgk[5], 0).
_XGK = np.array([
    0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
    0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
    0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
    0.207784955007898467600689403773245, 0.000000000000000000000000000000000,
])
_WGK = np.array([
    0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
    0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
    0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
    0.204432940075298892414161999234649, 0.209482141084727828012999174891714,
])
_WG = np.array([
    0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
    0.381830050505118944950369775488975, 0.417959183673469387755102040816327,
])
_NODES = np.concatenate([-_XGK[:-1], _XGK[::-1]])  # 15 nodes, ascending
_W_KRONROD = np.concatenate([_WGK[:-1], _WGK[::-1]])
_W_GAUSS = np.zeros(15)
_W_GAUSS[[1, 3, 5]] = _WG[:3]
_W_GAUSS[[13, 11, 9]] = _WG[:3]
_W_GAUSS[7] = _WG[3]
_W_DIFF = _W_KRONROD - _W_GAUSS


def fuzzy_cardinalities(
    ref: tuple[np.ndarray, np.ndarray, np.ndarray],
    pred: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_cells: int,
    onset_ramp: float,
    offset_ramp: float,
    tnorm: Any,
    tolerance: float = 1e-9,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(card_ref, card_pred, card_inter, error_bound), each of shape (n_cells,).

    ``ref`` and ``pred`` are (cell, onset, offset) arrays of intervals, cells numbered
    0 .. n_cells − 1; ``onset_ramp`` and ``offset_ramp`` the ramp widths (>= 0); ``tnorm`` a
    T-norm instance (``name``, element-wise ``tnorm(a, b)``); ``tolerance`` the absolute error
    bound per cell for the quadrature of T-norms not integrated exactly. ``error_bound`` is 0
    for the exact T-norms (see the module docstring), else the achieved error estimate.
    """
    n_cells = int(n_cells)
    w_on, w_off = float(onset_ramp), float(offset_ramp)
    if not (np.isfinite(w_on) and np.isfinite(w_off) and w_on >= 0 and w_off >= 0):
        raise ValueError(
            f"ramp widths must be finite and >= 0; got {onset_ramp!r}, {offset_ramp!r}"
        )
    if not tolerance > 0:
        raise ValueError(f"tolerance must be > 0; got {tolerance!r}")
    cell_r, on_r, off_r = _checked(ref, n_cells, "ref")
    cell_p, on_p, off_p = _checked(pred, n_cells, "pred")
    out = (np.zeros(n_cells), np.zeros(n_cells), np.zeros(n_cells), np.zeros(n_cells))
    order_r, order_p = np.argsort(cell_r, kind="stable"), np.argsort(cell_p, kind="stable")
    cell_r, on_r, off_r = cell_r[order_r], on_r[order_r], off_r[order_r]
    cell_p, on_p, off_p = cell_p[order_p], on_p[order_p], off_p[order_p]
    for lo, hi in _cell_blocks(cell_r, cell_p, n_cells):
        ir = slice(*np.searchsorted(cell_r, [lo, hi]))
        ip = slice(*np.searchsorted(cell_p, [lo, hi]))
        part = _block(
            (cell_r[ir] - lo, on_r[ir], off_r[ir]), (cell_p[ip] - lo, on_p[ip], off_p[ip]),
            hi - lo, w_on, w_off, tnorm, float(tolerance),
        )
        for whole, piece in zip(out, part):
            whole[lo:hi] = piece
    return out


def _cell_blocks(cell_r: np.ndarray, cell_p: np.ndarray, n_cells: int) -> list[tuple[int, int]]:
    """Ranges [lo, hi) of whole cells holding about _BLOCK intervals each (cache-sized arrays)."""
    if n_cells == 0:
        return []
    counts = np.bincount(cell_r, minlength=n_cells) + np.bincount(cell_p, minlength=n_cells)
    load = np.cumsum(counts)
    marks = np.arange(1, int(load[-1]) // _BLOCK + 1) * _BLOCK
    ends = np.unique(np.searchsorted(load, marks) + 1)  # a block ends after a cell reaching a mark
    edges = [0, *(int(e) for e in ends if e < n_cells), n_cells]
    return list(itertools.pairwise(edges))


def _block(
    ref: tuple[np.ndarray, np.ndarray, np.ndarray],
    pred: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_cells: int,
    w_on: float,
    w_off: float,
    tnorm: Any,
    tolerance: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """fuzzy_cardinalities on checked inputs of n_cells cells."""
    side_r = _envelope(*ref, w_on, w_off)
    side_p = _envelope(*pred, w_on, w_off)
    card_ref, card_pred = _area(side_r, n_cells), _area(side_p, n_cells)
    cell, width, r0, r1, p0, p1 = _split(*_pieces(side_r, side_p))
    name = getattr(tnorm, "name", None)
    error = np.zeros(n_cells)
    if name in _LINEAR:
        # integrand linear on every sub-piece: the midpoint rule is exact (and skips the jumps)
        rm, pm = (r0 + r1) / 2, (p0 + p1) / 2
        value = width * _call(tnorm, rm, pm)
        if name == "nilpotent_minimum" and w_on + w_off > 0:
            # Where a falling and a rising ramp of equal widths sum to exactly 1 over a whole
            # sub-piece, T = 0 there (a + b > 1 fails); the rounding of the times (relative to
            # the ramp width) must not flip that to the minimum.
            times = max(
                (float(np.abs(v).max()) for v in (*ref[1:], *pred[1:]) if len(v)), default=0.0
            )
            ramp = min(w for w in (w_on, w_off) if w > 0)
            slack = 64 * np.finfo(np.float64).eps * (1 + times / ramp)
            value[np.abs(rm - (1 - pm)) <= slack] = 0.0
        inter = np.bincount(cell, weights=value, minlength=n_cells)
    elif name == "product":
        # quadratic on every sub-piece: Simpson is exact
        mid = _call(tnorm, (r0 + r1) / 2, (p0 + p1) / 2)
        value = width * (_call(tnorm, r0, p0) + 4 * mid + _call(tnorm, r1, p1)) / 6
        inter = np.bincount(cell, weights=value, minlength=n_cells)
    else:
        inter, error = _quadrature(tnorm, cell, width, r0, r1, p0, p1, n_cells, tolerance)
    return card_ref, card_pred, inter, error


# ---------------------------------------------------------------------------------------------
# One side: the upper envelope of its trapezoids
# ---------------------------------------------------------------------------------------------


def _checked(side: Any, n_cells: int, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cell, onset, offset = side
    cell = np.asarray(cell)
    onset = np.asarray(onset, dtype=np.float64).ravel()
    offset = np.asarray(offset, dtype=np.float64).ravel()
    if cell.size == 0:
        cell = cell.astype(np.intp)
    if cell.dtype.kind not in "iu":
        if cell.dtype.kind == "f" and np.all(cell == np.round(cell)):
            cell = cell.astype(np.intp)
        else:
            raise ValueError(f"{what}: cell indices must be integers")
    cell = cell.ravel().astype(np.intp, copy=False)
    if not (len(cell) == len(onset) == len(offset)):
        raise ValueError(f"{what}: cell, onset and offset differ in length")
    if len(cell) and (cell.min() < 0 or cell.max() >= n_cells):
        raise ValueError(f"{what}: cell indices must lie in [0, {n_cells})")
    if not (np.isfinite(onset).all() and np.isfinite(offset).all()) or np.any(offset < onset):
        raise ValueError(f"{what}: onsets and offsets must be finite with offset >= onset")
    return cell, onset, offset


def _envelope(
    cell: np.ndarray, onset: np.ndarray, offset: np.ndarray, w_on: float, w_off: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices (cell, x, y) of max_i μ_i per cell, sorted by (cell, x); μ is linear between
    consecutive vertices of a cell and 0 outside its first and last vertex; a jump is two
    vertices at one x."""
    a = onset - w_on / 2  # support [a, d]
    d = offset + w_off / 2
    live = d > a  # a zero-length crisp interval has measure zero
    cell, onset, offset, a, d = cell[live], onset[live], offset[live], a[live], d[live]
    if not len(cell):
        empty = np.zeros(0)
        return np.zeros(0, dtype=np.intp), empty, empty
    order = np.lexsort((-d, a, cell))
    cell, onset, offset, a, d = cell[order], onset[order], offset[order], a[order], d[order]
    # Drop trapezoids whose support lies inside an earlier one's (same slopes: dominated).
    # Exact running maximum of d within cells: on integer keys cell · (n + 1) + rank(d).
    _, rank = np.unique(d, return_inverse=True)
    key = cell.astype(np.int64) * (len(d) + 1) + rank.reshape(-1)
    keep = np.ones(len(key), dtype=bool)
    keep[1:] = key[1:] > np.maximum.accumulate(key)[:-1]
    cell, onset, offset, a, d = cell[keep], onset[keep], offset[keep], a[keep], d[keep]

    b = onset + w_on / 2  # top of the rising ramp
    c = offset - w_off / 2  # start of the falling ramp
    tri = b > c  # shorter than its ramps: a triangle (then w_on + w_off > 0)
    wsum = w_on + w_off
    if tri.any():
        fraction = w_on / wsum
        peak = np.clip(a + (d - a) * fraction, a, d)
        height = np.where(tri, np.minimum((d - a) / (wsum if wsum > 0 else 1.0), 1.0), 1.0)
        top_b, top_c = np.where(tri, peak, b), np.where(tri, peak, c)
    else:
        height, top_b, top_c = np.ones(len(a)), b, c
    x = np.stack([a, top_b, top_c, d], axis=1)
    y = np.stack([np.zeros(len(a)), height, height, np.zeros(len(a))], axis=1)
    mask = np.ones(x.shape, dtype=bool)

    same = cell[1:] == cell[:-1]
    # Plateaus overlapping or touching: the envelope stays at 1 from one to the next.
    merged = same & (c[:-1] >= b[1:])
    # Supports overlapping otherwise: falling ramp of i meets rising ramp of i + 1 at (p, v),
    # 0 < v < 1 (here w_on + w_off > 0). Only consecutive pairs meet on the envelope.
    joined = same & ~merged & (d[:-1] > a[1:])
    if joined.any():
        i = np.flatnonzero(joined)
        p = (a[i + 1] * w_off + d[i] * w_on) / wsum
        p = np.minimum(np.maximum(p, top_c[i]), top_b[i + 1])
        v = np.clip((d[i] - a[i + 1]) / wsum, 0.0, np.minimum(height[i], height[i + 1]))
        x[i, 3], y[i, 3], x[i + 1, 0], y[i + 1, 0] = p, v, p, v
    if merged.any():
        i = np.flatnonzero(merged)
        mask[i, 2] = mask[i, 3] = mask[i + 1, 0] = mask[i + 1, 1] = False
    cells = np.repeat(cell, 4).reshape(-1, 4)
    return cells[mask], x[mask], y[mask]


def _area(side: tuple[np.ndarray, np.ndarray, np.ndarray], n_cells: int) -> np.ndarray:
    cell, x, y = side
    if len(cell) < 2:
        return np.zeros(n_cells)
    same = cell[1:] == cell[:-1]
    area = np.where(same, (x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2, 0.0)
    return np.bincount(cell[:-1], weights=area, minlength=n_cells)


# ---------------------------------------------------------------------------------------------
# Both sides: linear pieces and their sub-pieces
# ---------------------------------------------------------------------------------------------


def _pieces(side_r, side_p):
    """Consecutive merged breakpoints of a cell, with both memberships at their ends:
    (cell, x0, x1, r0, r1, p0, p1), r0 the right limit at x0, r1 the left limit at x1."""
    cr, xr, _ = side_r
    cp, xp, _ = side_p
    nr = len(cr)
    xs = np.concatenate([xr, xp])
    if not len(xs):
        z = np.zeros(0)
        return np.zeros(0, dtype=np.intp), z, z, z, z, z, z
    # Exact integer keys cell · (n + 1) + rank(x): each side's keys are already sorted (its
    # vertices are in (cell, x) order), so both merge by binary search instead of a lexsort.
    values, rank = np.unique(xs, return_inverse=True)
    key = np.concatenate([cr, cp]).astype(np.int64) * (len(values) + 1) + rank.reshape(-1)
    key_r, key_p = key[:nr], key[nr:]
    merged = np.empty(len(key), dtype=np.int64)
    pos_r = np.arange(nr) + np.searchsorted(key_p, key_r, side="left")
    pos_p = np.arange(len(key_p)) + np.searchsorted(key_r, key_p, side="right")
    merged[pos_r], merged[pos_p] = key_r, key_p
    new = np.ones(len(merged), dtype=bool)
    new[1:] = merged[1:] != merged[:-1]
    ids = np.cumsum(new) - 1
    bkey = merged[new]
    bcell, bx = bkey // (len(values) + 1), values[bkey % (len(values) + 1)]
    j = np.flatnonzero(bcell[1:] == bcell[:-1])
    cell, x0, x1 = bcell[j], bx[j], bx[j + 1]
    r0, r1 = _values(side_r, ids[pos_r], j, cell, x0, x1)
    p0, p1 = _values(side_p, ids[pos_p], j, cell, x0, x1)
    return cell, x0, x1, r0, r1, p0, p1


def _values(side, ids, j, cell, x0, x1):
    """One side's membership just right of x0 and just left of x1 on the pieces (j, j + 1)."""
    vcell, vx, vy = side
    n = len(vcell)
    if n < 2:
        z = np.zeros(len(j))
        return z, z.copy()
    k = np.searchsorted(ids, j, side="right") - 1  # last vertex at or before x0 (right limit)
    np.clip(k, 0, n - 2, out=k)
    ok = (vcell[k] == cell) & (vcell[k + 1] == cell) & (vx[k] <= x0) & (vx[k + 1] >= x1)
    xa, xb, ya, yb = vx[k], vx[k + 1], vy[k], vy[k + 1]
    span = np.where(ok, xb - xa, 1.0)  # > 0 where ok: xa <= x0 < x1 <= xb
    slope = (yb - ya) / span
    # each formula exact at its own vertex
    y0 = np.where(ok, np.clip(ya + slope * (x0 - xa), 0.0, 1.0), 0.0)
    y1 = np.where(ok, np.clip(yb - slope * (xb - x1), 0.0, 1.0), 0.0)
    return y0, y1


def _split(cell, x0, x1, r0, r1, p0, p1):
    """Pieces cut where μ_ref = μ_pred and where μ_ref + μ_pred = 1: (cell, width, r0, r1, p0,
    p1) of the sub-pieces of positive width. Pieces where one side is identically 0 are dropped:
    T(a, 0) = 0 for every T-norm."""
    live = ~(((r0 == 0) & (r1 == 0)) | ((p0 == 0) & (p1 == 0)))
    cell, x0, x1, r0, r1, p0, p1 = (v[live] for v in (cell, x0, x1, r0, r1, p0, p1))
    e0, e1 = r0 - p0, r1 - p1
    g0, g1 = r0 + p0 - 1, r1 + p1 - 1
    cross_eq, cross_sum = e0 * e1 < 0, g0 * g1 < 0
    cut = cross_eq | cross_sum
    whole = ~cut
    parts = [(cell[whole], (x1 - x0)[whole], r0[whole], r1[whole], p0[whole], p1[whole])]
    if cut.any():
        cell, x0, x1, r0, r1, p0, p1, e0, e1, g0, g1, cross_eq, cross_sum = (
            v[cut] for v in (cell, x0, x1, r0, r1, p0, p1, e0, e1, g0, g1, cross_eq, cross_sum)
        )
        s_eq = np.where(cross_eq, e0 / np.where(cross_eq, e0 - e1, 1.0), 1.0)
        s_sum = np.where(cross_sum, g0 / np.where(cross_sum, g0 - g1, 1.0), 1.0)
        ends = [np.zeros(len(cell)), s_eq, s_sum, np.ones(len(cell))]
        s = np.sort(np.stack(ends, axis=1), axis=1)
        s = np.clip(s, 0.0, 1.0)
        lo, hi = s[:, :-1], s[:, 1:]
        width = (x1 - x0)[:, None] * (hi - lo)
        keep = width > 0
        ra, pa = _along(r0, r1, p0, p1, lo)
        rb, pb = _along(r0, r1, p0, p1, hi)
        cells = np.broadcast_to(cell[:, None], keep.shape)
        parts.append(tuple(v[keep] for v in (cells, width, ra, rb, pa, pb)))
    return tuple(np.concatenate(column) for column in zip(*parts))


def _call(tnorm, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(tnorm(a, b), dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# Adaptive Gauss–Kronrod quadrature for the other T-norms
# ---------------------------------------------------------------------------------------------


def _quadrature(tnorm, cell, width, r0, r1, p0, p1, n_cells: int, tolerance: float):
    """∫ T(μ_ref, μ_pred) per cell and the error estimate (see the module docstring)."""
    value = np.zeros(n_cells)
    error = np.zeros(n_cells)
    # T(a, 0) = 0 and T(a, 1) = a (T-norm axioms): exact where one side is constant 0 or 1.
    zero = ((r0 == 0) & (r1 == 0)) | ((p0 == 0) & (p1 == 0))
    r_one = (r0 == 1) & (r1 == 1) & ~zero
    p_one = (p0 == 1) & (p1 == 1) & ~zero & ~r_one
    exact = np.where(r_one, width * (p0 + p1) / 2, np.where(p_one, width * (r0 + r1) / 2, 0.0))
    value += np.bincount(cell, weights=exact, minlength=n_cells)
    todo = ~(zero | r_one | p_one)
    cell, width, r0, r1, p0, p1 = (v[todo] for v in (cell, width, r0, r1, p0, p1))
    if not len(cell):
        return value, error
    cell, width, r0, r1, p0, p1 = _cut_at_zero_set(tnorm, cell, width, r0, r1, p0, p1)
    span = np.bincount(cell, weights=width, minlength=n_cells)
    share = tolerance / np.where(span > 0, span, 1.0)  # the tolerance per unit width
    whole, _ = _gk15(tnorm, width, r0, r1, p0, p1)
    for depth in range(_MAX_DEPTH + 1):
        # K15 on both halves: their sum is the value, compared with K15 on the whole (and the
        # halves' own |K15 − G7|) for the error estimate.
        rm, pm, n = (r0 + r1) / 2, (p0 + p1) / 2, len(cell)
        halves, gk_err = _gk15(
            tnorm,
            np.concatenate([width, width]) / 2,
            np.concatenate([r0, rm]), np.concatenate([rm, r1]),
            np.concatenate([p0, pm]), np.concatenate([pm, p1]),
        )
        left, right = halves[:n], halves[n:]
        both = left + right
        err = np.maximum(np.abs(whole - both), gk_err[:n] + gk_err[n:])
        total = error + np.bincount(cell, weights=err, minlength=n_cells)
        refine = (total[cell] > tolerance) & (err > share[cell] * width)
        if depth == _MAX_DEPTH or refine.sum() * 2 > _MAX_LEAVES:
            refine[:] = False
        done = ~refine
        value += np.bincount(cell[done], weights=both[done], minlength=n_cells)
        error += np.bincount(cell[done], weights=err[done], minlength=n_cells)
        if not refine.any():
            break
        cell, width, r0, r1, p0, p1, rm, pm = (
            v[refine] for v in (cell, width, r0, r1, p0, p1, rm, pm)
        )
        cell = np.concatenate([cell, cell])
        width = np.concatenate([width, width]) / 2
        r0, r1 = np.concatenate([r0, rm]), np.concatenate([rm, r1])
        p0, p1 = np.concatenate([p0, pm]), np.concatenate([pm, p1])
        whole = np.concatenate([left[refine], right[refine]])
    return value, error


def _cut_at_zero_set(tnorm, cell, width, r0, r1, p0, p1):
    """Sub-pieces cut where T changes between 0 and positive (the boundary of a nilpotent
    T-norm's zero region, where it has a kink, a square-root singularity or a jump), so that
    quadrature meets these only at the ends of a sub-piece. Found among 17 samples per sub-piece
    (both ends and the 15 Gauss–Kronrod nodes), then located by bisection to rounding level."""
    n = len(cell)
    frac = np.concatenate([[0.0], (_NODES + 1) / 2, [1.0]])
    f = _call(tnorm, *_along(r0, r1, p0, p1, frac[None, :]))
    zero = f == 0
    flip = zero[:, 1:] != zero[:, :-1]
    # T(a, 0) = 0: a zero at an end where one side vanishes is no boundary of the zero region
    flip[:, 0] &= ~((r0 == 0) | (p0 == 0))
    flip[:, -1] &= ~((r1 == 0) | (p1 == 0))
    piece, k = np.nonzero(flip)
    if not len(piece):
        return cell, width, r0, r1, p0, p1
    lo, hi = frac[k], frac[k + 1]
    lo_zero = zero[piece, k]
    a, b, c, d = r0[piece], r1[piece], p0[piece], p1[piece]
    for _ in range(60):  # bisection on the fraction: [lo, hi] brackets the change
        mid = (lo + hi) / 2
        mid_zero = _call(tnorm, *_along(a, b, c, d, mid)) == 0
        same = mid_zero == lo_zero
        lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
    cut = (lo + hi) / 2
    ids = np.concatenate([np.arange(n), np.arange(n), piece])
    at = np.concatenate([np.zeros(n), np.ones(n), cut])
    order = np.lexsort((at, ids))
    ids, at = ids[order], at[order]
    same = ids[1:] == ids[:-1]
    q, s_lo, s_hi = ids[:-1][same], at[:-1][same], at[1:][same]
    w = width[q] * (s_hi - s_lo)
    keep = w > 0
    q, s_lo, s_hi, w = q[keep], s_lo[keep], s_hi[keep], w[keep]
    ra, pa = _along(r0[q], r1[q], p0[q], p1[q], s_lo)
    rb, pb = _along(r0[q], r1[q], p0[q], p1[q], s_hi)
    return cell[q], w, ra, rb, pa, pb


def _along(r0, r1, p0, p1, s):
    """Both memberships at fraction s of sub-pieces (broadcasting; exact at s = 0 and 1)."""
    r0, r1, p0, p1 = (np.asarray(v)[..., None] if np.ndim(s) == 2 else v for v in (r0, r1, p0, p1))
    r = np.where(s < 0.5, r0 + (r1 - r0) * s, r1 - (r1 - r0) * (1 - s))
    p = np.where(s < 0.5, p0 + (p1 - p0) * s, p1 - (p1 - p0) * (1 - s))
    return np.clip(r, 0.0, 1.0), np.clip(p, 0.0, 1.0)


def _gk15(tnorm, width, r0, r1, p0, p1):
    """K15 integral and |K15 − G7| of T on each sub-piece, evaluated in chunks."""
    kronrod = np.empty(len(width))
    err = np.empty(len(width))
    for start in range(0, len(width), _CHUNK):
        part = slice(start, start + _CHUNK)
        rc, rh = (r0[part] + r1[part]) / 2, (r1[part] - r0[part]) / 2
        pc, ph = (p0[part] + p1[part]) / 2, (p1[part] - p0[part]) / 2
        r = np.clip(rc[:, None] + rh[:, None] * _NODES, 0.0, 1.0)
        p = np.clip(pc[:, None] + ph[:, None] * _NODES, 0.0, 1.0)
        f = _call(tnorm, r, p)
        half = width[part] / 2
        kronrod[part] = half * (f @ _W_KRONROD)
        err[part] = np.abs(half * (f @ _W_DIFF))
    return kronrod, err
