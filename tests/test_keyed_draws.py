"""evalkit.stats' keyed draws: Poisson(1) counts and fair coins, each a function of (seed, sample
key, replicate) alone (:func:`evalkit.stats.poisson_weights`, :func:`evalkit.stats.keyed_masks`).

Exact where the generator is exact: the thresholds against the Poisson CDF in 50-digit decimal
arithmetic, the count of every 32-bit uniform through the lookup table. Statistical where it is
random: chi-square tests over millions of draws against the distribution the docstring states.
They are seeded, so deterministic; each asserts p > 1e-4, which a correct generator fails for one
seed in 10,000, and the p-values measured are written next to them.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from run_depth import examples

from evalkit import stats

ALPHA = 1e-4


def poisson_thresholds() -> list[int]:
    """T_k = round(2**32 P(K <= k)) for K ~ Poisson(1), every k where T_k < 2**32, in 50 digits."""
    with localcontext() as context:
        context.prec = 50
        e = Decimal(-1).exp()
        cdf = [sum(e / math.factorial(j) for j in range(k + 1)) for k in range(20)]
        scaled = [int((c * 2**32).to_integral_value(ROUND_HALF_EVEN)) for c in cdf]
    return [t for t in scaled if t < 2**32]


def stated_pmf() -> np.ndarray:
    """P(count = k), k = 0 .. len(T), of the docstring: (T_k - T_(k-1)) / 2**32."""
    edges = [0, *poisson_thresholds(), 2**32]
    return np.diff(edges) / 2**32


def keys(n: int) -> np.ndarray:
    return stats.sample_keys([f"clip{i}" for i in range(n)], n)


# ----------------------------------------------------------------------------- exact


def test_the_thresholds_are_the_poisson_cdf_rounded_to_32_bits_and_each_probability_within_2_to_the_minus_32():
    assert stats._POISSON_THRESHOLDS.tolist() == poisson_thresholds()
    pmf = stated_pmf()
    with localcontext() as context:
        context.prec = 50
        e = Decimal(-1).exp()
        exact = [e / math.factorial(k) for k in range(len(pmf) - 1)]
        exact.append(1 - sum(exact))  # the last count takes the tail past it
    for k, (p, q) in enumerate(zip(pmf, exact)):
        assert abs(Decimal(p) - q) <= Decimal(2) ** -32, k  # p is an exact binary fraction


def test_every_32_bit_uniform_gets_the_count_of_its_interval():
    # The true count #{k : T_k <= u} is non-decreasing in u. A bucket (one value of the top 16
    # bits) where the table holds a count, agreeing with it at the bucket's first and last u, so
    # agrees at every u in it; the buckets that hold a T_k compare all 32 bits, checked at each
    # T_k and the u just below it. Together: every one of the 2**32 uniforms.
    thresholds = np.array(poisson_thresholds(), dtype=np.uint64)
    buckets = np.arange(1 << 16, dtype=np.uint64) << np.uint64(16)
    u = np.concatenate([buckets, buckets | np.uint64(0xFFFF), thresholds, thresholds - np.uint64(1)])
    expected = np.searchsorted(thresholds, u, side="right")
    noise = np.random.default_rng(0).integers(0, 2**32, u.size, dtype=np.uint64)
    assert (stats._poisson_pairs((u << np.uint64(32) | noise)[np.newaxis])[0, 0] == expected).all()  # the high half
    assert (stats._poisson_pairs((noise << np.uint64(32) | u)[np.newaxis])[0, 1] == expected).all()  # the low half
    held = np.unique(thresholds >> np.uint64(16))
    assert (np.flatnonzero(stats._POISSON_TABLE == 255) == held).all()  # looked at in full: only these


# ----------------------------------------------------------------------------- distribution


def test_poisson_counts_follow_the_stated_distribution_in_each_half_of_a_hash():
    # 4,000,000 counts (40,000 samples x 100 replicates); even replicates take a hash's high
    # half, odd ones its low half: each is tested against the stated P(k), counts of 7 and more
    # pooled (expected 58 and more). Measured: p = 0.41 (even), 0.72 (odd).
    weights = stats.poisson_weights(keys(40_000), 100, seed=7)
    assert weights.dtype == np.uint8 and weights.shape == (100, 40_000)
    pmf = stated_pmf()
    expected_p = np.append(pmf[:7], pmf[7:].sum())
    for half in (weights[0::2], weights[1::2]):
        observed = np.bincount(np.minimum(half.ravel(), 7), minlength=8)
        result = scipy.stats.chisquare(observed, expected_p * half.size)
        assert result.pvalue > ALPHA, result
    assert weights.max() <= len(pmf) - 1


def test_coins_are_fair():
    # 4,000,000 coins; binomial test. Measured: p = 0.96.
    masks = stats.keyed_masks(keys(40_000), 100, seed=7)
    assert masks.dtype == np.bool_ and masks.shape == (100, 40_000)
    assert scipy.stats.binomtest(int(masks.sum()), masks.size, 0.5).pvalue > ALPHA


def independence_p(x: np.ndarray, y: np.ndarray) -> float:
    """Chi-square test of independence of two discrete draws (counts above 3 pooled)."""
    x, y = np.minimum(x.ravel(), 3), np.minimum(y.ravel(), 3)
    table = np.zeros((x.max() + 1, y.max() + 1))
    np.add.at(table, (x, y), 1)
    return float(scipy.stats.chi2_contingency(table).pvalue)


def test_draws_are_independent_across_replicates_samples_and_domains():
    # Pairs most at risk of sharing bits: the two replicates of one hash (2p, 2p + 1), the next
    # hash's (2p + 2), neighbouring keys (positions: keys 0, 1, 2, ... as in a run without ids),
    # neighbouring coins of one hash, and a coin and a count of the same seed, key and replicate
    # (their domains differ). 20,000 samples x 64 replicates each. Measured p: 0.99, 0.038,
    # 0.00077, 0.20, 0.17, 0.55; the third over seeds 0 .. 29 is uniform (KS p = 0.90, smallest
    # 0.0008 at this seed), so chance, not a pattern.
    positions = np.arange(20_000, dtype=np.uint64)
    weights = stats.poisson_weights(positions, 64, seed=3)
    masks = stats.keyed_masks(positions, 64, seed=3)
    pairs = {
        "replicates of one hash": (weights[0::2], weights[1::2]),
        "replicates of two hashes": (weights[0:-2:2], weights[2::2]),
        "neighbouring keys": (weights[:, 0::2], weights[:, 1::2]),
        "coins of one hash": (masks[0::2], masks[1::2]),
        "neighbouring keys' coins": (masks[:, 0::2], masks[:, 1::2]),
        "a coin and a count": (masks, weights),
    }
    for name, (x, y) in pairs.items():
        assert independence_p(x.astype(np.int64), y.astype(np.int64)) > ALPHA, name


def test_the_64_coins_of_a_hash_are_uncorrelated():
    # Over N samples, N r^2 of two independent fair coins is about chi-square(1), and the 2,016
    # pairs of one hash's 64 coins sum to about chi-square(2016). Measured: p = 0.62.
    n = 50_000
    coins = stats.keyed_masks(keys(n), 64, seed=11).astype(np.float64)
    r = np.corrcoef(coins)[np.triu_indices(64, 1)]
    assert scipy.stats.chi2.sf(n * (r**2).sum(), r.size) > ALPHA


def test_another_seed_draws_anew():
    # Two independent draws agree with probability sum P(k)^2 (counts) or 1/2 (coins); over
    # 2,000,000 draws the agreement must lie within 5 standard errors of it.
    k = keys(20_000)
    for make, agree in ((stats.poisson_weights, (stated_pmf() ** 2).sum()), (stats.keyed_masks, 0.5)):
        same = (make(k, 100, seed=7) == make(k, 100, seed=8)).mean()
        assert abs(same - agree) < 5 * math.sqrt(agree * (1 - agree) / 2_000_000), make.__name__


# ----------------------------------------------------------------------------- keyed: any split, any order


WHOLE = keys(300)


@settings(max_examples=examples(200), deadline=None)
@given(
    masks=st.booleans(),
    first=st.integers(0, 200),
    resamples=st.integers(1, 150),
    part=st.lists(st.integers(0, 299), unique=True, max_size=300),
    seed=st.integers(0, 2**64 - 1),
)
def test_any_part_and_any_first_replicate_draw_the_whole_drawings_values(masks, first, resamples, part, seed):
    make = stats.keyed_masks if masks else stats.poisson_weights
    whole = make(WHOLE, first + resamples, seed)
    drawn = make(WHOLE[part], resamples, seed, first)
    assert drawn.shape == (resamples, len(part))
    assert (drawn == whole[first:, part]).all()


@pytest.mark.parametrize("make", [stats.poisson_weights, stats.keyed_masks])
@pytest.mark.parametrize("block", [7, 64, 1000])
def test_the_block_size_changes_no_value(make, block, monkeypatch):
    # Blocks of hashes narrower than the keys, or than a word's coins, cut rows and columns apart.
    k = keys(200)
    whole = make(k, 130, 5)
    monkeypatch.setattr(stats, "_HASH_BLOCK", block)
    assert (make(k, 130, 5) == whole).all()
    assert (make(k, 61, 5, 67) == whole[67:128]).all()


def test_sample_keys_hash_ids_not_positions():
    named = keys(3)
    assert (named == keys(50)[:3]).all()
    assert not (named == np.arange(3)).any()
    assert (stats.sample_keys(None, 4) == np.arange(4)).all()


@pytest.mark.parametrize("make", [stats.poisson_weights, stats.keyed_masks])
def test_bad_counts_are_one_clear_error(make):
    with pytest.raises(ValueError, match=r"^resamples must be >= 1, got 0$"):
        make(WHOLE, 0, 1)
    with pytest.raises(ValueError, match=r"^first must be >= 0, got -1$"):
        make(WHOLE, 1, 1, -1)


def test_a_seed_of_any_size_draws_as_numpy_takes_it():
    # The configuration takes any seed >= 0, and numpy's generators (the draws not keyed) too.
    k = keys(1000)
    big = [stats.poisson_weights(k, 8, seed) for seed in (1, 2**64, 2**64 + 1, 2**200)]
    assert all(not (a == b).all() for i, a in enumerate(big) for b in big[i + 1:])
    assert stats.keyed_masks(k, 8, 2**70).shape == (8, 1000)
