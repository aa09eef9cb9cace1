"""Uncertainty, numerically: bootstrap and jackknife intervals, paired tests, rank agreement.

Everything here is vectorized with numpy and deterministic given a :class:`numpy.random.Generator`.
Nothing here knows about metrics: the engine hands in arrays of replicate values and gets
bounds or p-values back, column by column over any trailing axes (classes, metrics, ...).

Why weights. Every evalkit summary is *linear in the samples*: the per-class sums of ``|G|``,
``|P|``, ``|G ∩ P|`` and the per-sample metric sums (with their defined counts) are sums over
samples (:mod:`evalkit.table`). A bootstrap resample is therefore a vector of counts ``w`` (how
many times each sample is drawn), and the resample's sums are ``w @ per_sample``; all ``B``
replicates are one matrix product ``W @ per_sample`` with ``W = bootstrap_weights(n, B, rng)``,
after which each metric is recomputed from the replicate sums exactly as from the real sums.
The same holds for the jackknife (:func:`jackknife_weights`) and for paired permutations
(:func:`permutation_masks`).

Conventions (all documented at the functions):

- intervals are two-sided, ``level`` in (0, 1), bounds at quantiles ``(1 ∓ level) / 2``;
- quantiles are linearly interpolated between order statistics (numpy's and scipy's default,
  Hyndman & Fan type 7);
- non-finite replicates (an undefined ratio under ``zero_division=nan``) are ignored column by
  column; a column with no finite replicate gives NaN bounds;
- p-values carry the ``+1`` of Phipson & Smyth, so they are never 0 and at least ``1/(1+B)``.

References: B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall,
1993 (ch. 13 percentile interval, ch. 14 BCa, ch. 11 jackknife, ch. 15-16 permutation and
bootstrap tests); M. H. Quenouille (1949, 1956) and J. W. Tukey (1958) for the jackknife;
B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", *Stat. Appl. Genet.
Mol. Biol.* 9 (2010); P. Hall and S. R. Wilson, "Two guidelines for bootstrap hypothesis
testing", *Biometrics* 47 (1991).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from statistics import NormalDist

import numpy as np

from evalkit.siphash import sip_hashes

__all__ = [
    "bootstrap_weights",
    "percentile_interval",
    "bca_interval",
    "normal_cdf",
    "normal_ppf",
    "jackknife_groups",
    "jackknife_weights",
    "jackknife_interval",
    "permutation_masks",
    "p_value",
    "paired_bootstrap_p_value",
    "kendall_tau",
]

#: At most this many random draws are held at once while building weights or masks (32 MB of
#: int64 indices), so memory stays bounded whatever ``resamples x n`` is; the result itself is
#: ``resamples x n`` int32 (or bool), which the caller sizes.
_BLOCK_ENTRIES = 1 << 22

#: Two computed values closer than ``ROUNDING_RTOL * |x| + ROUNDING_ATOL`` are taken as equal in
#: real arithmetic wherever a statistic makes a discrete decision from them: "at least as
#: extreme" in :func:`p_value`, "below" and "tied" in :func:`bca_interval`'s bias correction, a
#: tie between systems in a ranking. A permutation or replicate that reproduces the observed
#: statistic exactly in real arithmetic differs from it by rounding, and rounding depends on the
#: machine (numpy's SIMD path for a sum or a ``power``): without the tolerance it would be counted
#: at random, the p-value biased low, and the numbers would differ between CPUs. The absolute part
#: is for metrics of order 1 (ratios); it only matters below ~1e-12, which is no difference at all.
ROUNDING_RTOL = 1e-9
ROUNDING_ATOL = 1e-12


def rounding_tolerance(values: np.ndarray) -> np.ndarray:
    """How far from ``values`` another computed value may lie and still be taken as equal."""
    return ROUNDING_RTOL * np.abs(values) + ROUNDING_ATOL

#: The jackknife spread below which the BCa acceleration is taken as undefined (zero variance):
#: leave-out values that are equal in real arithmetic differ by rounding, and the ratio
#: sum(d^3) / sum(d^2)^(3/2) of rounding noise is an arbitrary number of order 1, not 0.
_JACKKNIFE_RTOL = 1e-12


# --------------------------------------------------------------------------- argument checks


def _count(value, name: str, minimum: int) -> int:
    try:
        count = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if count < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {count}")
    return count


def _level(level) -> float:
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise ValueError(f"level must be a number in (0, 1), got {level!r}") from None
    if not 0.0 < value < 1.0:  # also rejects NaN
        raise ValueError(
            f"level must be strictly between 0 and 1 (e.g. 0.95 for a 95% interval), got {level!r}"
        )
    return value


def _replicates(replicates, name: str = "replicates") -> np.ndarray:
    array = np.asarray(replicates, dtype=np.float64)
    if array.ndim < 1 or array.shape[0] < 1:
        raise ValueError(
            f"{name} must have shape (resamples, ...) with at least one resample; "
            f"got shape {array.shape}"
        )
    return array


def _broadcast_to(array, shape: tuple, name: str, expected: str) -> np.ndarray:
    array = np.asarray(array, dtype=np.float64)
    try:
        return np.broadcast_to(array, shape)
    except ValueError:
        raise ValueError(f"{name} has shape {array.shape}; expected {expected}") from None


# --------------------------------------------------------------------------- bootstrap


def bootstrap_weights(n: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap resamples of ``n`` samples as counts: an int32 array (resamples, n), rows sum to n.

    Row ``b`` counts how often each sample is drawn when ``n`` samples are drawn uniformly with
    replacement (Efron & Tibshirani, ch. 6), i.e. a Multinomial(n; 1/n, ..., 1/n) vector. Since
    every evalkit summary is linear in the samples, ``weights @ per_sample`` gives the sums of
    all resamples in one matrix product (convert ``weights`` to float64 once if it is reused).

    The draws are exactly ``rng.integers(0, n, size=(resamples, n))`` (taken in blocks of rows,
    which consumes the generator identically), counted per row by one ``np.bincount`` over
    row-offset indices per block: no Python loop over resamples. So the resamples are the ones
    ``scipy.stats.bootstrap`` draws from the same generator state.
    """
    n = _count(n, "n (the number of samples)", 1)
    resamples = _count(resamples, "resamples", 1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r}"
        )
    weights = np.empty((resamples, n), dtype=np.int32)
    rows = max(1, _BLOCK_ENTRIES // n)
    for start in range(0, resamples, rows):
        block = min(rows, resamples - start)
        drawn = rng.integers(0, n, size=(block, n))
        drawn += (np.arange(block, dtype=drawn.dtype) * n)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=block * n)
        weights[start : start + block] = counts.reshape(block, n)
    return weights


#: T_k = round(2**32 P(K <= k)) for K ~ Poisson(1), for every k where it is below 2**32
#: (k = 0 .. 11): a 32-bit uniform u counts #{k : T_k <= u} (:func:`poisson_weights`).
_POISSON_THRESHOLDS = np.array(
    [t for t in (round(math.fsum(math.exp(-1) / math.factorial(j) for j in range(k + 1)) * 2**32)
                 for k in range(20)) if t < 2**32],
    dtype=np.uint64,
)


def _poisson_table() -> np.ndarray:
    """The count of every 32-bit uniform from its top 16 bits, by bucket of 2**16 values: exact
    where no threshold falls inside the bucket, 255 (look at all 32 bits) where one does."""
    starts = np.arange(1 << 16, dtype=np.uint64) << np.uint64(16)
    low = np.searchsorted(_POISSON_THRESHOLDS, starts, side="right")
    high = np.searchsorted(_POISSON_THRESHOLDS, starts | np.uint64(0xFFFF), side="right")
    return np.where(low == high, low, 255).astype(np.uint8)


_POISSON_TABLE = _poisson_table()
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)

#: At most this many 64-bit hashes are made at once (256 KB, and as much again for the mixing's
#: temporary): every pass of :func:`_mix` runs in the core's L2 cache rather than through memory.
_HASH_BLOCK = 1 << 15


def _mix(x: np.ndarray, spare: np.ndarray | None = None) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea & Flood, "Fast splittable pseudorandom number
    generators", OOPSLA 2014): a bijection of uint64 whose outputs pass BigCrush as a counter
    is fed through it. In place (``x`` is returned), ``spare`` a temporary of its shape."""
    spare = np.empty_like(x) if spare is None else spare
    for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, 0)):
        np.right_shift(x, np.uint64(shift), out=spare)
        x ^= spare
        if factor:
            x *= np.uint64(factor)
    return x


def sample_keys(ids: Sequence[str] | None, n: int) -> np.ndarray:
    """A uint64 key per sample for :func:`poisson_weights`: a hash of its id (the same in every
    process and run), or its position when the samples have no ids."""
    if ids is None:
        return np.arange(n, dtype=np.uint64)
    return _mix(sip_hashes(ids))  # pandas' hash_array of the ids (as the keys were first made), without pandas


def poisson_weights(keys: np.ndarray, resamples: int, seed: int, first: int = 0) -> np.ndarray:
    """Poisson bootstrap resamples as counts: a uint8 array (resamples, n) of Poisson(1) draws
    (no count exceeds 12, see below: a byte each keeps a chunk's counts small).

    The count of sample i in replicate b is a function of (``seed``, ``keys[i]``, b) alone — a
    counter-based generator — so the replicates of any part of the data are the columns of the
    whole's, in any order: chunks, streams and cluster partitions resample identically. Unlike
    the multinomial bootstrap the replicate sizes vary around n (Hanley & MacGibbon, "Creating
    non-parametric bootstrap samples using Poisson frequencies", 2006; Chamandy, Muralidharan,
    Najmi & Naidu, "Estimating uncertainty for massive data streams", Google, 2012). ``first``:
    the replicates from that one on (so one replicate's counts are made alone).

    The draw: one SplitMix64 hash of (seed, key, b // 2) gives 32 uniform bits u to replicate b
    (the high half for even b, the low half for odd b), and the count is #{k : T_k <= u} with
    ``T_k = round(2**32 P(K <= k))`` for K ~ Poisson(1), k = 0 .. 11 (:data:`_POISSON_THRESHOLDS`).
    So P(count = k) = (T_k - T_(k-1)) / 2**32, within 2**-32 of e**-1 / k! for k = 0 .. 11; 12
    takes the rest, 4 / 2**32 = 9.3e-10 (P(K >= 12) = 8.3e-10), and no count exceeds 12
    (P(K >= 13) = 6.4e-11). The counts are read from a table of u's top 16 bits; all 32 bits are
    compared with the T_k only in the 8 of its 65,536 buckets that hold a T_k.
    """
    resamples, first = _count(resamples, "resamples", 1), _count(first, "first", 0)
    n = np.size(keys)
    weights = np.empty((resamples, n), dtype=np.uint8)
    pairs = range(first // 2, (first + resamples + 1) // 2)
    for rows, cols, bits in _keyed_hashes(keys, seed, pairs, _HASH_BLOCK):
        top = 2 * (pairs.start + rows.start) - first  # the replicate of the block's high halves' first row
        skip, stop = max(0, -top), min(2 * len(bits), resamples - top)
        if skip == 0 and stop == 2 * len(bits) and cols == slice(0, n):  # whole rows of the output: counted in place
            _poisson_pairs(bits, weights[top : top + stop].reshape(len(bits), 2, n))
        else:
            weights[top + skip : top + stop, cols] = _poisson_pairs(bits).reshape(2 * len(bits), -1)[skip:stop]
    return weights


def _poisson_pairs(bits: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The Poisson(1) counts of (hashes, keys) uint64 ``bits``, (hashes, 2, keys) uint8: in
    ``[:, 0]`` the counts of the high 32 bits, in ``[:, 1]`` those of the low 32 bits (into
    ``out`` if given). The table's index, a half's top 16 bits, is the 16-bit word 3 or 1 of
    the little-endian hash, read in place: one lookup for both halves, no shifted copies."""
    words = bits.astype("<u8", copy=False).view(np.uint16).reshape(*bits.shape, 4)
    index = words[:, :, 3:0:-2].transpose(0, 2, 1)
    counts = np.take(_POISSON_TABLE, index, out=out, mode="wrap")  # indices < 2**16: "wrap" only skips a buffered check
    near = np.flatnonzero(counts == 255)
    if near.size:
        row, half, col = np.unravel_index(near, counts.shape)
        shift = np.uint64(32) - (half.astype(np.uint64) << np.uint64(5))  # 32 for a high half, 0 for a low one
        uniform = (bits[row, col] >> shift) & np.uint64(0xFFFFFFFF)
        counts.reshape(-1)[near] = np.searchsorted(_POISSON_THRESHOLDS, uniform, side="right")
    return counts


def keyed_masks(keys: np.ndarray, resamples: int, seed: int, first: int = 0) -> np.ndarray:
    """Paired permutations keyed by sample: (resamples, n) bool, True where sample i's two
    systems swap in replicate b, a fair coin that is a function of (``seed``, ``keys[i]``, b)
    alone. So any split of the data, in any order, permutes identically, as
    :func:`permutation_masks` cannot (its coins follow the rows' positions in one generator).

    The coin of replicate b is bit ``b % 64`` of the SplitMix64 hash of (seed, key, b // 64),
    with the seed in a domain of its own, so a test's swaps are independent of a bootstrap's
    counts of the same seed: one hash gives 64 replicates' coins.
    """
    resamples, first = _count(resamples, "resamples", 1), _count(first, "first", 0)
    masks = np.empty((resamples, np.size(keys)), dtype=np.bool_)
    words = range(first // 64, (first + resamples + 63) // 64)
    per_word = min(64, resamples)  # the coins a block writes, hashes x per_word, stay about 8 x _HASH_BLOCK
    for rows, cols, bits in _keyed_hashes(keys, seed ^ _MASK_DOMAIN, words, _HASH_BLOCK // max(1, per_word // 8)):
        for j, word in enumerate(bits, words.start + rows.start):
            start = 64 * j - first  # the replicate of the word's bit 0
            lo, hi = max(0, -start) // 8, (min(64, resamples - start) + 7) // 8  # its bytes in use
            # byte y of a word, in little-endian order, holds its bits 8y .. 8y + 7: a row of each
            octets = np.ascontiguousarray(word.astype("<u8", copy=False).view(np.uint8).reshape(-1, 8)[:, lo:hi].T)
            for bit in range(8):  # the coins of bits 8y + bit: byte row y shifted
                taken = _taken(start + 8 * lo + bit, 8, hi - lo, resamples)
                if taken is not None:
                    source, target = taken
                    coins = masks[target, cols].view(np.uint8)
                    np.right_shift(octets[source], np.uint8(bit), out=coins)
                    coins &= np.uint8(1)
    return masks


#: Mixed into a seed for :func:`keyed_masks` (the first 64 bits of the fractional part of pi).
_MASK_DOMAIN = 0x243F6A8885A308D3


def _taken(start: int, step: int, count: int, size: int) -> tuple[slice, slice] | None:
    """Rows ``start, start + step, ...`` (``count`` of them) of a block, as the output rows in
    ``[0, size)``: the block's rows that fall there, and where they go; None if none does."""
    skip = max(0, -(start // step))
    stop = min(count, -(-(size - start) // step))
    if skip >= stop:
        return None
    return slice(skip, stop), slice(start + skip * step, start + (stop - 1) * step + 1, step)


def _keyed_hashes(keys: np.ndarray, seed: int, counters: range, entries: int) -> Iterator[tuple[slice, slice, np.ndarray]]:
    """64 random bits per (counter, key), each a function of (``seed``, key, counter) alone
    (SplitMix64 of the key's own hash plus the counter times the golden ratio, as SplitMix64
    steps its state), in blocks of at most ``entries``: the counters' and the keys' places of a
    block and its bits, (counters, keys) uint64, overwritten by the next block. The seed is
    hashed by numpy's ``SeedSequence``, which takes any non-negative integer, as
    ``np.random.default_rng`` does for the draws that are not keyed."""
    keys = np.asarray(keys, dtype=np.uint64).ravel()
    with np.errstate(over="ignore"):
        base = _mix(keys ^ np.random.SeedSequence(seed).generate_state(1, np.uint64))
    width = max(1, min(keys.size, entries))
    height = max(1, entries // width)
    buffer, spare = np.empty(height * width, dtype=np.uint64), np.empty(height * width, dtype=np.uint64)
    for top in range(0, len(counters), height):
        rows = slice(top, min(top + height, len(counters)))
        steps = np.arange(counters[rows][0] + 1, counters[rows][-1] + 2, dtype=np.uint64) * _GOLDEN
        for left in range(0, keys.size, width):
            cols = slice(left, min(left + width, keys.size))
            size = len(steps) * (cols.stop - cols.start)
            bits = np.add(steps[:, None], base[None, cols], out=buffer[:size].reshape(len(steps), -1))
            yield rows, cols, _mix(bits, spare[:size].reshape(bits.shape))


def _sorted_finite(replicates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B, K) replicates sorted along axis 0 with every non-finite value moved to the end
    (as NaN), and the number of finite values per column."""
    finite = np.isfinite(replicates)
    ordered = np.sort(np.where(finite, replicates, np.nan), axis=0)
    return ordered, finite.sum(axis=0)


def _quantiles(ordered: np.ndarray, counts: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-column quantile ``q[k]`` of the first ``counts[k]`` values of sorted column ``k``.

    Linear interpolation between order statistics at virtual index ``(m - 1) q`` (numpy's and
    scipy's default ``"linear"``, Hyndman & Fan type 7). NaN where a column has no value or q is
    NaN. Vectorized: one gather for the lower and one for the upper order statistic.
    """
    q = np.broadcast_to(q, counts.shape)
    position = (counts - 1) * q
    valid = (counts > 0) & np.isfinite(position)
    position = np.where(valid, position, 0.0)
    below = np.floor(position)
    last = np.maximum(counts - 1, 0)
    low = np.minimum(below.astype(np.intp), last)
    high = np.minimum(low + 1, last)
    a = np.take_along_axis(ordered, low[None], axis=0)[0]
    b = np.take_along_axis(ordered, high[None], axis=0)[0]
    fraction = position - below
    with np.errstate(invalid="ignore"):
        value = np.where(fraction > 0, a + fraction * (b - a), a)
    return np.where(valid, value, np.nan)


_NORMAL = NormalDist()


def normal_cdf(x) -> np.ndarray:
    """Φ(x), the standard normal CDF, element-wise, as scipy's ``ndtr`` (to 1e-12, tested).

    Why not scipy: its import took 0.5 s of every cold run with intervals. Why not
    ``NormalDist.cdf``: it is ``(1 + erf(x/√2)) / 2``, which loses every digit in the lower tail
    (relative error 1 at x = -9); ``erfc`` keeps them."""
    x = np.asarray(x, dtype=np.float64)
    return np.vectorize(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)), otypes=[np.float64])(x) if x.size else x.copy()


def normal_ppf(p) -> np.ndarray:
    """Φ⁻¹(p), element-wise, as scipy's ``ndtri``: -inf at 0, inf at 1, NaN outside [0, 1]
    (``NormalDist.inv_cdf`` refuses the ends)."""
    p = np.asarray(p, dtype=np.float64)
    z = np.where(p == 0.0, -np.inf, np.where(p == 1.0, np.inf, np.nan))
    inside = (p > 0.0) & (p < 1.0)
    z[inside] = [_NORMAL.inv_cdf(v) for v in p[inside].tolist()]
    return z


def percentile_interval(
    replicates: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap percentile interval (Efron & Tibshirani, ch. 13.3): the ``(1 - level)/2``
    and ``(1 + level)/2`` quantiles of the replicates, along axis 0.

    Simple and transformation-respecting, but only first-order accurate where BCa is
    second-order accurate (E&T ch. 14.3, 22), so prefer :func:`bca_interval` when the jackknife
    is at hand: for a precision near 1 the percentile interval under-covers (93% rather than
    95% at n = 200, tests/test_stats.py). ``replicates`` has
    shape (resamples, ...); the bounds have the trailing shape. Non-finite replicates
    (undefined ratios) are ignored per column; a column with none finite gives NaN bounds.
    """
    replicates = _replicates(replicates)
    level = _level(level)
    trailing = replicates.shape[1:]
    ordered, counts = _sorted_finite(replicates.reshape(replicates.shape[0], -1))
    tail = (1.0 - level) / 2.0
    low = _quantiles(ordered, counts, np.asarray(tail))
    high = _quantiles(ordered, counts, np.asarray(1.0 - tail))
    return low.reshape(trailing), high.reshape(trailing)


def bca_interval(
    replicates: np.ndarray, estimate: np.ndarray, jackknife: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """The bias-corrected and accelerated (BCa) bootstrap interval (Efron & Tibshirani, ch. 14.3).

    Why: the percentile interval assumes the bootstrap distribution is centred on the estimate
    and its spread does not depend on the true value; ratios such as precision near 0 or 1 are
    biased and skewed. BCa corrects both and is second-order accurate. With
    ``z_α = Φ⁻¹((1 - level)/2)``:

    - bias correction ``z0 = Φ⁻¹(F)``, ``F`` the fraction of replicates below the estimate,
      ties counting one half (as recent ``scipy.stats.bootstrap`` does; equal to E&T eq.
      14.14 when no replicate equals the estimate; counting ties as "not below" would bias z0
      for discrete statistics such as a crisp precision, where ties are common); a tie is equal
      up to rounding (:func:`rounding_tolerance`), so the bound does not depend on the CPU;
    - acceleration ``a = Σ d³ / (6 (Σ d²)^{3/2})``, ``d = mean(jackknife) - jackknife``
      (E&T eq. 14.15) from ``jackknife``, the (m, ...) leave-one-out values, or leave-one-group-out
      values for large n (:func:`jackknife_groups`; same formula, see there);
    - bounds at the quantiles ``Φ(z0 + (z0 + z)/(1 - a (z0 + z)))`` for ``z = ±z_α``.

    Degenerate columns fall back to the percentile interval (:func:`percentile_interval`):
    a non-finite estimate; ``z0`` infinite (every finite replicate on one side of the estimate);
    zero jackknife variance (spread below 1e-12 relative, i.e. rounding noise), a non-finite
    jackknife value, or fewer than 2 of them, where ``a`` is undefined; ``1 - a (z0 + z) <= 0``,
    where the BCa formula breaks down; and all replicates equal (the interval is that value
    either way). Non-finite replicates are ignored per column (``F`` and the quantiles use the
    finite ones); a column with none gives NaN bounds. Vectorized over trailing axes:
    ``estimate`` broadcasts to the trailing shape, ``jackknife`` to (m, *trailing).
    """
    replicates = _replicates(replicates)
    level = _level(level)
    resamples, trailing = replicates.shape[0], replicates.shape[1:]
    estimate = _broadcast_to(
        estimate, trailing, "estimate", f"a shape broadcastable to {trailing}"
    ).reshape(-1)
    jackknife = np.asarray(jackknife, dtype=np.float64)
    if jackknife.ndim < 1 or jackknife.shape[0] < 1:
        raise ValueError(
            "jackknife must have shape (m, ...) with m >= 1 leave-out values; "
            f"got {jackknife.shape}"
        )
    jackknife = _broadcast_to(
        jackknife, (jackknife.shape[0], *trailing), "jackknife",
        f"(m, ...) with trailing shape broadcastable to {trailing}",
    ).reshape(jackknife.shape[0], -1)

    flat = replicates.reshape(resamples, -1)
    ordered, counts = _sorted_finite(flat)
    finite = np.isfinite(flat)
    with np.errstate(invalid="ignore", divide="ignore"):
        near = np.abs(flat - estimate) <= rounding_tolerance(estimate)
        below = (finite & (flat < estimate) & ~near).sum(axis=0)
        ties = (finite & near).sum(axis=0)
        z0 = normal_ppf((below + 0.5 * ties) / counts)

        centred = jackknife.mean(axis=0) - jackknife
        spread = np.sqrt((centred**2).mean(axis=0))
        scale = np.abs(jackknife).max(axis=0)
        sum2 = (centred**2).sum(axis=0)
        acceleration = (centred**3).sum(axis=0) / (6.0 * sum2**1.5)
        jack_ok = (
            np.isfinite(jackknife).all(axis=0)
            & (jackknife.shape[0] >= 2)
            & (spread > _JACKKNIFE_RTOL * scale)
            & np.isfinite(acceleration)
        )

        z_low = float(normal_ppf((1.0 - level) / 2.0))
        q_bca = []
        ok = np.isfinite(estimate) & np.isfinite(z0) & jack_ok
        for z in (z_low, -z_low):
            shifted = z0 + z
            denominator = 1.0 - acceleration * shifted
            ok &= denominator > 0
            q_bca.append(normal_cdf(z0 + shifted / denominator))

    largest = np.take_along_axis(ordered, np.maximum(counts - 1, 0)[None], axis=0)[0]
    ok &= ~(largest - ordered[0] <= rounding_tolerance(largest))  # all equal (to rounding): either interval is that value
    tail = (1.0 - level) / 2.0
    q_low = np.where(ok, q_bca[0], tail)
    q_high = np.where(ok, q_bca[1], 1.0 - tail)
    low = _quantiles(ordered, counts, q_low)
    high = _quantiles(ordered, counts, q_high)
    return low.reshape(trailing), high.reshape(trailing)


# --------------------------------------------------------------------------- jackknife


#: Groups of a delete-a-group jackknife (BCa's acceleration): see :func:`jackknife_groups`.
JACKKNIFE_GROUPS = 100


def jackknife_groups(n: int, groups: int = JACKKNIFE_GROUPS) -> list[np.ndarray]:
    """The groups of samples a (delete-a-group) jackknife leaves out, one index array per group.

    For ``n <= groups`` this is the ordinary leave-one-out jackknife (``n`` singletons). For
    larger ``n`` the samples are dealt into ``groups`` strided groups, ``i % groups`` (sizes
    differ by at most one), so leave-out values cost ``groups`` rather than ``n`` recomputations.

    The approximation, for the BCa acceleration: with empirical influence values ``U_i``, the
    leave-one-out ``a = Σ U³ / (6 (Σ U²)^{3/2})``; removing a group shifts the statistic by about
    the group's summed influence, and for a group of ``h`` exchangeable samples
    ``E[(Σ U)³] = h μ3`` and ``E[(Σ U)²] = h μ2``, so the same formula on group values estimates
    the same ``a`` (``n μ3 / (6 (n μ2)^{3/2})``), from ``groups`` values instead of ``n``: unbiased
    to first order, noisier. Its noise is about ``sqrt(6) / (6 groups)`` (0.004 for 100 groups,
    whatever n: the sampling error of a skewness from ``groups`` values), and an error Δa moves a
    BCa bound by about ``Δa z²`` bootstrap standard deviations, i.e. by about Δa of the
    interval's width: well under 1% typically (tests/test_stats.py measures it). Passing more
    groups costs only more recomputations of the metric from sums. Strided rather than
    contiguous groups keep any ordering of the data (by file, by scene) spread over all groups,
    so the groups behave like random ones.
    """
    n = _count(n, "n (the number of samples)", 1)
    groups = _count(groups, "groups", 2)
    m = min(n, groups)
    return [np.arange(j, n, m) for j in range(m)]


def jackknife_weights(n: int, groups: int = JACKKNIFE_GROUPS) -> np.ndarray:
    """(m, n) float64 weights of a delete-a-group jackknife: row j is 0 on group j of
    :func:`jackknife_groups` and 1 elsewhere, so ``weights @ per_sample`` gives every leave-out
    sum at once, exactly as bootstrap weights give the resamples' sums."""
    members = jackknife_groups(n, groups)
    weights = np.ones((len(members), n))
    for j, group in enumerate(members):
        weights[j, group] = 0.0
    return weights


def _jackknife_mean(values) -> tuple[np.ndarray, np.ndarray, int]:
    values = np.asarray(values, dtype=np.float64)
    if values.ndim < 1 or values.shape[0] < 2:
        k = values.shape[0] if values.ndim else 0
        raise ValueError(
            f"a jackknife interval across runs needs at least 2 runs of the system; got {k}. "
            "Give each system several runs (e.g. different seeds), or use a bootstrap interval "
            "over samples instead"
        )
    k = values.shape[0]
    # Leave-one-out means, their mean, the jackknife estimate and variance (Quenouille; Tukey):
    #   θ_(i) = (Σ x - x_i) / (k - 1),  θ_(.) = mean θ_(i),  θ_jack = k θ̂ - (k - 1) θ_(.),
    #   se² = (k - 1)/k Σ (θ_(i) - θ_(.))².
    # For the mean θ_(.) = x̄, so θ_jack = x̄, and θ_(i) - x̄ = (x̄ - x_i)/(k - 1), whence
    #   se² = (k - 1)/k · Σ (x_i - x̄)² / (k - 1)² = Σ (x_i - x̄)² / (k (k - 1)) = s² / k.
    leave_out = (values.sum(axis=0) - values) / (k - 1)
    centre = leave_out.mean(axis=0)
    estimate = k * values.mean(axis=0) - (k - 1) * centre
    se = np.sqrt((k - 1) / k * ((leave_out - centre) ** 2).sum(axis=0))
    return estimate, se, k


def _scalar(array: np.ndarray):
    return float(array) if np.ndim(array) == 0 else array


def jackknife_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """``(estimate, low, high)``: the jackknife mean of ``k >= 2`` independent runs of a system and
    its t-based interval ``estimate ± t_{k-1, (1+level)/2} · se``.

    Why: a system trained several times (seeds) varies from run to run; Harju & Mesaros (2023)
    report jackknife estimates of the mean over ten runs with 95% confidence intervals. The
    jackknife (Quenouille 1956; Tukey 1958) estimate of the mean is the mean itself, and its
    standard error is ``s / sqrt(k)`` (derived in the code), so the interval is the Student-t
    interval for the mean of the runs.

    ``values`` has shape (k,) (floats returned) or (k, ...) (arrays of the trailing shape). A
    NaN run makes that column NaN: runs are not dropped silently. ``k < 2`` is a ValueError.
    """
    level = _level(level)
    estimate, se, k = _jackknife_mean(values)
    from scipy import stats as scipy_stats

    half = scipy_stats.t.ppf((1.0 + level) / 2.0, k - 1) * se
    return _scalar(estimate), _scalar(estimate - half), _scalar(estimate + half)


# --------------------------------------------------------------------------- paired tests


def permutation_masks(n: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Random paired permutations: (resamples, n) bool, True where sample i's two systems swap.

    A paired permutation (randomization) test of "the two systems are exchangeable on every
    sample" (Efron & Tibshirani, ch. 15; Fisher's randomization test): under that null, swapping
    the outputs of the two systems on any subset of samples leaves the joint distribution
    unchanged, so the difference recomputed under random swaps is a draw from its null
    distribution. How the engine uses this, for any metric that is a function of sums over
    samples (every averaging of the cardinality table, and the per-sample metric sums):

        D = per_sample_B - per_sample_A                  # (n, ...) per-sample tables
        swapped_A = sum_A + masks @ D                    # A where not swapped, B where swapped
        swapped_B = sum_B - masks @ D
        null = metric(swapped_A) - metric(swapped_B)     # (resamples, ...)
        p = p_value(metric(sum_A) - metric(sum_B), null)

    Each entry is an independent fair coin (``rng.integers(0, 2, dtype=bool)``).
    """
    n = _count(n, "n (the number of samples)", 1)
    resamples = _count(resamples, "resamples", 1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {rng!r}"
        )
    return rng.integers(0, 2, size=(resamples, n), dtype=np.bool_)


def p_value(observed: np.ndarray, null: np.ndarray) -> np.ndarray:
    """Two-sided Monte Carlo p-value: ``(1 + #{|null| >= |observed|}) / (1 + R)`` along axis 0.

    ``null`` has shape (R, ...): statistics recomputed under the null (permutations from
    :func:`permutation_masks`, or shifted bootstrap replicates); ``observed`` broadcasts to the
    trailing shape. The ``+1`` counts the observed statistic as one of the null draws, which
    makes the test exact (``P(p <= α) <= α``) and p never 0 (Phipson & Smyth 2010): the smallest
    p is ``1 / (1 + R)``. "At least as extreme" allows for rounding (:data:`ROUNDING_RTOL`,
    :data:`ROUNDING_ATOL`), so ``observed == 0`` gives p = 1. Non-finite null values (undefined
    metrics) are left out, so R is the number of finite ones per column; a non-finite observed
    value, or no finite null value, gives NaN.
    """
    null = _replicates(null, "null")
    trailing = null.shape[1:]
    observed = np.abs(_broadcast_to(
        observed, trailing, "observed", f"a shape broadcastable to {trailing} (null is (R, ...))"
    ))
    finite = np.isfinite(null)
    threshold = observed - rounding_tolerance(observed)
    with np.errstate(invalid="ignore"):
        extreme = (finite & (np.abs(null) >= threshold)).sum(axis=0)
        p = (1.0 + extreme) / (1.0 + finite.sum(axis=0))
    p = np.where(np.isfinite(observed) & finite.any(axis=0), p, np.nan)
    return p[()] if p.ndim == 0 else p


def paired_bootstrap_p_value(differences: np.ndarray, observed) -> np.ndarray:
    """Two-sided paired-bootstrap p-value of "no difference", by the shifted null.

    ``differences`` (B, ...): the difference ``metric(A) - metric(B)`` recomputed on each
    bootstrap resample of the samples (the same weights for both systems, which keeps the
    pairing); ``observed`` (broadcasting to the trailing shape): the difference on the data.

    The null distribution is the bootstrap distribution shifted to be centred on 0 by
    subtracting the observed difference, ``d* - d̂`` (Hall & Wilson 1991, guideline 1: resample
    ``θ* - θ̂``, not ``θ* - θ0``; Efron & Tibshirani ch. 16), and the p-value is
    :func:`p_value` of ``d̂`` against it:

        p = (1 + #{ |d*_b - d̂| >= |d̂| }) / (1 + B),

    two-sided, never 0, at most 1. It is the same form as the permutation p-value, so the two
    methods report comparable numbers. (The alternative, inverting the percentile interval,
    ``p = 2 min(P(d* <= 0), P(d* >= 0))``, agrees for a symmetric bootstrap distribution;
    the shifted null is preferred because its null distribution does not depend on where d̂
    falls, so its level holds better for skewed statistics.) Non-finite replicates are ignored.
    """
    differences = _replicates(differences, "differences")
    trailing = differences.shape[1:]
    observed = _broadcast_to(
        observed, trailing, "observed",
        f"a shape broadcastable to {trailing} (differences is (B, ...))",
    )
    return p_value(observed, differences - observed)


# --------------------------------------------------------------------------- rank agreement


def kendall_tau(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Kendall's τ-b between two measures over the same systems, and its two-sided p-value:
    exact for tie-free rankings of up to 33 systems (or with at most one discordant or
    concordant pair), else the normal approximation with the variance corrected for ties (Kendall,
    "Rank Correlation Methods", 1970; the choices of :func:`scipy.stats.kendalltau`, which the
    tests compare with). Computed here, without scipy, whose import took 0.68 s of a cold
    ``evalkit run`` with rank agreement.

    Why τ-b: measures tie (two systems at the same score), and τ-b corrects for ties in either
    ranking. Pairs where either value is non-finite are left out (a measure undefined for a
    system cannot rank it). With fewer than 2 finite pairs, or a constant measure (no ranking),
    τ is undefined: ``(nan, nan)``, and no warning leaks.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"kendall_tau needs two 1-D arrays of equal length (one value per system); "
            f"got shapes {x.shape} and {y.shape}"
        )
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = len(x)
    if n < 2 or x.min() == x.max() or y.min() == y.max():
        return math.nan, math.nan
    pairs = n * (n - 1) // 2
    s, dis = 0, 0  # concordant less discordant pairs; discordant pairs
    for start in range(0, n, 1024):  # rows of the pair matrices a block at a time: memory n x 1024
        rows = slice(start, start + 1024)
        sx, sy = np.sign(x[rows, None] - x[None, :]), np.sign(y[rows, None] - y[None, :])
        product = sx * sy
        s += int(product.sum())
        dis += int((product < 0).sum())
    s, dis = s // 2, dis // 2  # each pair was seen from both ends
    x_ties, x_pairs, x_variance = _ties(x)
    y_ties, y_pairs, y_variance = _ties(y)
    tau = min(1.0, max(-1.0, s / math.sqrt(pairs - x_ties) / math.sqrt(pairs - y_ties)))
    if not x_ties and not y_ties and (n <= 33 or min(dis, pairs - dis) <= 1):
        return tau, _kendall_exact_p(n, min(dis, pairs - dis))
    m = n * (n - 1.0)
    variance = (m * (2 * n + 5) - x_variance - y_variance) / 18 + 2 * x_ties * y_ties / m
    if n > 2:
        variance += x_pairs * y_pairs / (9 * m * (n - 2))
    z = abs(s) / math.sqrt(variance)
    return tau, min(1.0, math.erfc(z / math.sqrt(2)))  # 2 P(Z > |z|)


def _ties(values: np.ndarray) -> tuple[int, float, float]:
    """For the groups of t equal values: Σ t(t-1)/2 (tied pairs), Σ t(t-1)(t-2) and
    Σ t(t-1)(2t+5), the terms of τ-b's variance under ties."""
    t = np.unique(values, return_counts=True)[1].astype(np.int64)
    t = t[t > 1]
    return int((t * (t - 1) // 2).sum()), float((t * (t - 1.0) * (t - 2)).sum()), float((t * (t - 1.0) * (2 * t + 5)).sum())


def _kendall_exact_p(n: int, c: int) -> float:
    """Two-sided exact p of τ with ``c`` the fewer of the discordant and concordant pairs, n
    systems, no ties: twice the share of the n! orderings with at most c inversions (the number
    of permutations of n with i inversions, by the recurrence M(n, i) = Σ_{k<n} M(n-1, i-k)), in
    exact integers; 1 at the centre of the distribution."""
    if n <= 2 or 4 * c >= n * (n - 1):
        return 1.0
    counts = [1] + [0] * c  # permutations of 1 element: one, with no inversion
    for size in range(2, n + 1):
        running, grown = 0, []
        for i in range(c + 1):  # M(size, i) = Σ_{k=0}^{size-1} M(size-1, i-k): a window sum
            running += counts[i] - (counts[i - size] if i >= size else 0)
            grown.append(running)
        counts = grown
    return min(1.0, 2 * sum(counts) / math.factorial(n))
