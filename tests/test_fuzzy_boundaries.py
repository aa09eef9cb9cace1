"""Fuzzy segment boundaries: exact integrals of trapezoidal memberships and their T-norm
intersections (evalkit_segments.fuzzy_boundaries)."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.discovery import default_registry
from evalkit_segments import fuzzy_boundaries as fb
from evalkit_segments.fuzzy_boundaries import fuzzy_cardinalities

REGISTRY = default_registry()
TNORMS = REGISTRY.names("tnorm")
EXACT = ["minimum", "product", "lukasiewicz", "drastic", "nilpotent_minimum"]


def tnorm(spec):
    return REGISTRY.create("tnorm", spec)


class Renamed:
    """The same T-norm under a name the module does not know: forces the quadrature path."""

    name = "renamed"

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, a, b):
        return self.inner(a, b)


def side(*cells):
    """side([(0, 1), (2, 3)], [], [(1, 5)]) -> (cell, onset, offset) arrays."""
    rows = [(c, on, off) for c, intervals in enumerate(cells) for on, off in intervals]
    if not rows:
        return np.zeros(0, dtype=int), np.zeros(0), np.zeros(0)
    c, on, off = zip(*rows)
    return np.array(c), np.array(on, dtype=float), np.array(off, dtype=float)


def run(ref, pred, w_on, w_off=None, t="minimum", tolerance=1e-9, n_cells=None):
    ref, pred = side(*ref), side(*pred)
    n = n_cells if n_cells is not None else max([0, *(ref[0] + 1), *(pred[0] + 1)])
    t = tnorm(t) if isinstance(t, (str, dict)) else t
    return fuzzy_cardinalities(ref, pred, n, w_on, w_on if w_off is None else w_off, t, tolerance)


def random_sides(rng, n_cells, max_per_cell=6, span=10.0):
    def one():
        n = rng.integers(0, max_per_cell * n_cells + 1)
        cell = rng.integers(0, n_cells, n)
        onset = np.round(rng.uniform(0, span, n), 2)  # rounding makes touching/equal ends common
        length = np.round(rng.exponential(1.5, n), 2) * (rng.random(n) > 0.1)  # some of length 0
        return cell, onset, onset + length

    return one(), one()


# --- independent references ------------------------------------------------------------------


def crisp_reference(ref, pred, n_cells):
    """Union lengths and shared length by plain interval arithmetic, cell by cell."""

    def merged(cell, on, off, c):
        out = []
        for a, b in sorted(zip(on[cell == c], off[cell == c])):
            if out and a <= out[-1][1]:
                out[-1][1] = max(out[-1][1], b)
            else:
                out.append([a, b])
        return out

    card_r, card_p, inter = np.zeros(n_cells), np.zeros(n_cells), np.zeros(n_cells)
    for c in range(n_cells):
        mr, mp = merged(*ref, c), merged(*pred, c)
        card_r[c] = sum(b - a for a, b in mr)
        card_p[c] = sum(b - a for a, b in mp)
        inter[c] = sum(max(0.0, min(b, d) - max(a, e)) for a, b in mr for e, d in mp)
    return card_r, card_p, inter


def membership(t, onset, offset, w_on, w_off):
    """max_i μ_i(t) straight from the definition (ramp widths > 0), on a grid t."""
    if not len(onset):
        return np.zeros_like(t)
    rise = (t[:, None] - (onset - w_on / 2)) / w_on
    fall = ((offset + w_off / 2) - t[:, None]) / w_off
    return np.clip(np.minimum(rise, fall), 0, 1).max(axis=1)


def grid_reference(ref, pred, n_cells, w_on, w_off, t, lo=-5.0, hi=20.0, n=400_001):
    """∫μ_ref, ∫μ_pred, ∫T(μ_ref, μ_pred) by the trapezoid rule on a fine grid."""
    grid = np.linspace(lo, hi, n)
    out = np.zeros((3, n_cells))
    for c in range(n_cells):
        mr = membership(grid, ref[1][ref[0] == c], ref[2][ref[0] == c], w_on, w_off)
        mp = membership(grid, pred[1][pred[0] == c], pred[2][pred[0] == c], w_on, w_off)
        out[:, c] = [np.trapezoid(m, grid) for m in (mr, mp, np.asarray(t(mr, mp)))]
    return out


# --- crisp limit ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_zero_ramps_give_union_lengths_and_shared_length(seed):
    rng = np.random.default_rng(seed)
    ref, pred = random_sides(rng, n_cells=4)
    expected = crisp_reference(ref, pred, 4)
    for name in TNORMS:  # on 0/1 memberships every T-norm is logical AND
        card_r, card_p, inter, error = fuzzy_cardinalities(ref, pred, 4, 0.0, 0.0, tnorm(name))
        np.testing.assert_allclose(card_r, expected[0], atol=1e-12)
        np.testing.assert_allclose(card_p, expected[1], atol=1e-12)
        np.testing.assert_allclose(inter, expected[2], atol=1e-12)
        assert np.all(error <= 1e-9)


def test_crisp_hand_cases():
    # overlapping, nested, duplicate and touching intervals on one side: merged, not summed;
    # [0, 6] ∪ [8, 9.5] (7.5) and [5, 8.5] (3.5) share [5, 6] and [8, 8.5]
    card_r, card_p, inter, error = run(
        [[(0, 4), (3, 6), (1, 2), (3, 6), (8, 9), (9, 9.5)]], [[(5, 8.5), (5, 8.5)]], 0.0
    )
    assert (card_r[0], card_p[0], inter[0], error[0]) == pytest.approx((7.5, 3.5, 1.5, 0.0))


# --- hand-derived fuzzy cases ---------------------------------------------------------------


@pytest.mark.parametrize("w_on, w_off", [(2, 2), (1, 3), (0, 2), (2, 0), (0, 0)])
def test_long_interval_integrates_to_its_length(w_on, w_off):
    card_r, card_p, inter, _ = run([[(0, 10)]], [[(0, 10)]], w_on, w_off)
    assert card_r[0] == pytest.approx(10, abs=1e-12)
    assert card_p[0] == pytest.approx(10, abs=1e-12)
    assert inter[0] == pytest.approx(10, abs=1e-12)  # identical sides, minimum: inter = card


def test_short_interval_is_a_lower_triangle():
    # L = 1, ramps 4 + 4: support [−2, 5] of length L + 4 = 5, peak L/8 + 1/2 = 0.625 at 0.5
    card, *_ = run([[(0, 1)]], [[]], 4.0, n_cells=1)
    assert card[0] == pytest.approx(5 * 0.625 / 2, abs=1e-12)
    # asymmetric, w_on = 0: a jump to (L + w_off/2)/w_off = 0.75 at 0, then a ramp down to 0 at
    # off + w_off/2 = 3
    card, *_ = run([[(0, 1)]], [[]], 0.0, 4.0, n_cells=1)
    assert card[0] == pytest.approx(3 * 0.75 / 2, abs=1e-12)


@pytest.mark.parametrize("t", TNORMS)
def test_identical_sides(t):
    ref = [[(0, 3), (2.5, 4), (6, 6.5)], [(1, 1.2)]]
    card_r, card_p, inter, _ = run(ref, ref, 1.0, t=t)
    np.testing.assert_array_equal(card_r, card_p)  # one function of the same intervals
    if t == "minimum":
        np.testing.assert_allclose(inter, card_r, atol=1e-12)
    assert np.all(inter <= card_r + 1e-9)


@pytest.mark.parametrize("delta", [0.25, 1.0, 1.5, 2.0, 5.0])
def test_shifted_prediction_minimum(delta):
    """Reference [0, 10], prediction [δ, 10 + δ], ramps w = 2 on both ends. The rising ramps are
    parallel, the prediction's lies below; the falling ramps too, the reference's below. So
    min(μ_ref, μ_pred) is the trapezoid of [δ, 10] with the same ramps: ∫ = 10 − δ (for
    10 − δ >= w, where that trapezoid still reaches 1)."""
    _, _, inter, error = run([[(0, 10)]], [[(delta, 10 + delta)]], 2.0)
    assert inter[0] == pytest.approx(10 - delta, abs=1e-12)
    assert error[0] == 0


def test_shifted_prediction_other_exact_tnorms():
    """Reference [0, 10], prediction [1, 11], w = 2. Both plateaus meet on [2, 9] (7). Onset:
    μ_ref = (t + 1)/2 on [−1, 1] then 1, μ_pred = t/2 on [0, 2]; the offset is the mirror image.
    Per ramp region, [0, 1] and [1, 2]:
      product      ∫₀¹ (t + 1)t/4 = 5/24,       ∫₁² t/2 = 3/4;
      Łukasiewicz  ∫₀¹ max(t − 1/2, 0) = 1/8,    3/4;
      nilpotent    ∫ t/2 over t > 1/2 = 3/16,    3/4;
      drastic      0 (neither side is 1),      3/4."""
    expected = {
        "minimum": 9.0,
        "product": 7 + 2 * (5 / 24 + 0.75),
        "lukasiewicz": 7 + 2 * (1 / 8 + 0.75),
        "nilpotent_minimum": 7 + 2 * (3 / 16 + 0.75),
        "drastic": 7 + 2 * 0.75,
    }
    for t, value in expected.items():
        _, _, inter, error = run([[(0, 10)]], [[(1, 11)]], 2.0, t=t)
        assert inter[0] == pytest.approx(value, abs=1e-12), t
        assert error[0] == 0


def test_overlapping_ramps_on_one_side_take_the_maximum():
    """[0, 4] and [5, 9], w = 2: the falling ramp of the first (on [3, 5]) and the rising ramp of
    the second (on [4, 6]) cross at 4.5 at height 1/4; the union loses the triangle under both,
    1 · (1/4) / 2, of the sum 8."""
    card, *_ = run([[(0, 4), (5, 9)]], [[]], 2.0, n_cells=1)
    assert card[0] == pytest.approx(8 - 0.125, abs=1e-12)
    # overlapping, nested and duplicate intervals: the union [0, 15] and its length, not a sum
    card, *_ = run([[(0, 10), (5, 15), (2, 3), (5, 15)]], [[]], 2.0, n_cells=1)
    assert card[0] == pytest.approx(15, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_random_fuzzy_sets_match_a_fine_grid(seed):
    """Envelopes of overlapping, unsorted intervals and their intersections against the
    definition evaluated on a fine grid (kinks make its error O(h²) ≈ 1e-9)."""
    rng = np.random.default_rng(100 + seed)
    ref, pred = random_sides(rng, n_cells=3)
    w_on, w_off = [(0.5, 1.0), (2.0, 0.3), (1.0, 1.0)][seed]
    for name in ["minimum", "product", "lukasiewicz", "yager", "aczel_alsina"]:
        t = tnorm(name)
        got = np.array(fuzzy_cardinalities(ref, pred, 3, w_on, w_off, t)[:3])
        np.testing.assert_allclose(got, grid_reference(ref, pred, 3, w_on, w_off, t), atol=1e-7)


# --- exact paths against the quadrature path ---------------------------------------------


@pytest.mark.parametrize("name", EXACT)
def test_exact_path_agrees_with_quadrature(name):
    rng = np.random.default_rng(7)
    ref, pred = random_sides(rng, n_cells=5)
    for w_on, w_off in [(1.0, 1.0), (0.3, 2.0), (0.0, 1.5)]:
        exact = fuzzy_cardinalities(ref, pred, 5, w_on, w_off, tnorm(name))
        quad = fuzzy_cardinalities(ref, pred, 5, w_on, w_off, Renamed(tnorm(name)), 1e-9)
        assert np.all(exact[3] == 0)
        assert np.all(quad[3] <= 1e-9)
        np.testing.assert_array_equal(quad[0], exact[0])  # |G| does not depend on the T-norm: the same computation
        assert np.all(np.abs(quad[2] - exact[2]) <= quad[3] + 1e-12)


@pytest.mark.parametrize(
    "spec, same_as",
    [
        ({"name": "frank", "s": 1}, "product"),
        ({"name": "hamacher", "p": 1}, "product"),
        ({"name": "aczel_alsina", "p": 1}, "product"),
        ({"name": "yager", "p": 1}, "lukasiewicz"),
        ({"name": "schweizer_sklar", "p": 1}, "lukasiewicz"),
        ({"name": "hamacher", "p": "inf"}, "drastic"),
        ({"name": "schweizer_sklar", "p": "-inf"}, "minimum"),
    ],
)
def test_parametric_limits_by_quadrature_match_exact(spec, same_as):
    rng = np.random.default_rng(11)
    ref, pred = random_sides(rng, n_cells=4)
    exact = fuzzy_cardinalities(ref, pred, 4, 1.0, 0.5, tnorm(same_as))
    quad = fuzzy_cardinalities(ref, pred, 4, 1.0, 0.5, tnorm(spec))
    assert np.all(quad[3] <= 1e-9)
    np.testing.assert_allclose(quad[2], exact[2], rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    "name", ["yager", "schweizer_sklar", "aczel_alsina", "dombi", "hamacher", "frank"]
)
def test_reported_error_bound_is_honoured(name):
    """A loose tolerance against a tight one: the difference stays within the two reported
    estimates, and each estimate within its tolerance."""
    rng = np.random.default_rng(5)
    ref, pred = random_sides(rng, n_cells=6)
    t = tnorm(name)
    loose = fuzzy_cardinalities(ref, pred, 6, 1.5, 0.7, t, tolerance=1e-6)
    tight = fuzzy_cardinalities(ref, pred, 6, 1.5, 0.7, t, tolerance=1e-12)
    assert np.all(loose[3] <= 1e-6) and np.all(tight[3] <= 1e-12)
    assert np.all(np.abs(loose[2] - tight[2]) <= loose[3] + tight[3] + 1e-14)


def test_depth_cap_returns_the_achieved_error(monkeypatch):
    """Schweizer–Sklar (p = 2) has a square-root singularity at the edge of its zero region:
    with the refinement capped at one level the tolerance is out of reach; the estimate achieved
    is returned (not raised) and still bounds the actual error."""
    case = ([[(0, 10)]], [[(1, 11)]], 2.0)
    monkeypatch.setattr(fb, "_MAX_DEPTH", 1)
    _, _, capped, error = run(*case, t="schweizer_sklar", tolerance=1e-12)
    assert error[0] > 1e-12
    monkeypatch.undo()
    _, _, precise, precise_error = run(*case, t="schweizer_sklar", tolerance=1e-12)
    assert precise_error[0] <= 1e-12
    assert abs(capped[0] - precise[0]) <= error[0] + 1e-12


# --- bounds and limits for every T-norm ---------------------------------------------------


@pytest.mark.parametrize("name", TNORMS)
def test_bounds_for_every_tnorm(name):
    rng = np.random.default_rng(3)
    ref, pred = random_sides(rng, n_cells=6)
    card_r, card_p, inter, error = fuzzy_cardinalities(ref, pred, 6, 1.0, 2.0, tnorm(name))
    assert np.all(error <= 1e-9)
    assert np.all(inter >= 0)
    assert np.all(inter <= np.minimum(card_r, card_p) + 1e-9)
    minimum = fuzzy_cardinalities(ref, pred, 6, 1.0, 2.0, tnorm("minimum"))[2]
    assert np.all(inter <= minimum + 1e-9)  # the minimum is the largest T-norm


@pytest.mark.parametrize("name", TNORMS)
def test_vanishing_ramps_tend_to_the_crisp_results(name):
    """Each boundary changes μ only within its ramp, by at most 1: |result(w) − crisp| <= k·w
    for k boundaries. Shown for w = 0.1, 0.01, 0.001."""
    rng = np.random.default_rng(9)
    ref, pred = random_sides(rng, n_cells=3, max_per_cell=3)
    crisp = np.array(crisp_reference(ref, pred, 3))
    k = 2 * (len(ref[0]) + len(pred[0]))
    previous = np.inf
    for w in [0.1, 0.01, 0.001]:
        got = np.array(fuzzy_cardinalities(ref, pred, 3, w, w, tnorm(name))[:3])
        gap = np.abs(got - crisp).max()
        assert gap <= k * w
        assert gap <= previous
        previous = gap
    assert previous <= 1e-3 * k


# --- shapes, order, blocks, empty input, validation -------------------------------------


def test_empty_cells_and_sides_give_zeros():
    out = run([[], [(1, 2)], []], [[], [], [(0, 1)]], 1.0, t="yager", n_cells=5)
    for column in out:
        assert column.shape == (5,)
    card_r, card_p, inter, error = out
    assert card_r[[0, 2, 3, 4]].tolist() == [0, 0, 0, 0]
    assert card_p[[0, 1, 3, 4]].tolist() == [0, 0, 0, 0]
    assert inter.tolist() == [0] * 5 and error.tolist() == [0] * 5
    empty = side()
    for column in fuzzy_cardinalities(empty, empty, 3, 1.0, 1.0, tnorm("minimum")):
        assert column.tolist() == [0, 0, 0]
    for column in fuzzy_cardinalities(empty, empty, 0, 1.0, 1.0, tnorm("minimum")):
        assert column.shape == (0,)


def test_order_and_blocking_do_not_matter(monkeypatch):
    rng = np.random.default_rng(21)
    ref, pred = random_sides(rng, n_cells=40)
    for name in ["minimum", "yager"]:
        expected = fuzzy_cardinalities(ref, pred, 40, 0.8, 0.4, tnorm(name))
        perm_r, perm_p = rng.permutation(len(ref[0])), rng.permutation(len(pred[0]))
        shuffled = fuzzy_cardinalities(
            tuple(a[perm_r] for a in ref), tuple(a[perm_p] for a in pred), 40, 0.8, 0.4, tnorm(name)
        )
        with monkeypatch.context() as m:
            m.setattr(fb, "_BLOCK", 7)  # many small blocks of whole cells
            blocked = fuzzy_cardinalities(ref, pred, 40, 0.8, 0.4, tnorm(name))
        for a, b, c in zip(expected[:3], shuffled[:3], blocked[:3]):
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)
            np.testing.assert_allclose(c, a, rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    "ref, w, message",
    [
        (([0], [1.0], [0.5]), 1.0, "offset >= onset"),
        (([0], [np.nan], [1.0]), 1.0, "finite"),
        (([2], [0.0], [1.0]), 1.0, "cell indices"),
        (([0], [0.0], [1.0]), -1.0, "ramp widths"),
    ],
)
def test_bad_input(ref, w, message):
    with pytest.raises(ValueError, match=message):
        fuzzy_cardinalities(ref, side(), 2, w, 1.0, tnorm("minimum"))
