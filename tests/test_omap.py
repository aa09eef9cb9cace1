"""Average precision, OmAP (Liu et al. 2023, the authors' conventions) and OBCE loss weights."""

from __future__ import annotations

import warnings
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from run_depth import examples

from evalkit_ontology.omap import average_precision, obce_weights, omap

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def sk_ap(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """scikit-learn's per-class AP (it warns, and returns 0, for a class without positives)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([sklearn_metrics.average_precision_score(y[:, c], s[:, c]) for c in range(y.shape[1])])


def tree_distances(n_nodes: int, classes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Hop counts of a random tree (node i hangs under a random earlier node), restricted to
    ``classes`` -- like AudioSet, where abstract nodes lie on paths but are not classes."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    child = np.arange(1, n_nodes)
    parent = np.array([rng.integers(0, i) for i in child])
    graph = coo_matrix((np.ones(child.size), (parent, child)), shape=(n_nodes, n_nodes)).tocsr()
    d = shortest_path(graph, directed=False, unweighted=True)
    return d[np.ix_(classes, classes)]


def random_problem(rng, n_clips, n_classes, *, n_nodes=None, max_labels=3, decimals=2):
    """Clips with 1..max_labels labels, scores correlated with the labels and rounded (ties)."""
    n_nodes = n_nodes or int(n_classes * 1.3) + 1
    classes = np.sort(rng.choice(n_nodes, n_classes, replace=False))
    d = tree_distances(n_nodes, classes, rng)
    y = np.zeros((n_clips, n_classes), dtype=bool)
    weights = 1.0 / np.arange(1, n_classes + 1) ** 0.8  # skewed class frequencies
    weights /= weights.sum()
    for n in range(n_clips):
        y[n, rng.choice(n_classes, rng.integers(1, max_labels + 1), replace=False, p=weights)] = True
    s = np.round(np.clip(0.3 * y + rng.random((n_clips, n_classes)) * 0.8, 0, 1), decimals)
    return y, s, d


# --------------------------------------------------------------- slow, loop-based reference


def slow_omap(y: np.ndarray, s: np.ndarray, d: np.ndarray, no_positive: str = "zero") -> dict:
    """The conventions doc read literally, with plain loops: per level, per class, per threshold.

    Independent of the module: W^λ built as a matrix, the clip weight as a Python min over the
    clip's labels, AP by walking the distinct scores from the top.
    """
    n_clips, n_classes = y.shape
    off = ~np.eye(n_classes, dtype=bool)
    levels = range(int(np.max(d)) + 1)
    ap = np.zeros((len(levels), n_classes))
    for lam in levels:
        m = np.where(d > lam, d, 0.0)
        mu = m[off].mean() if n_classes > 1 else 0.0
        w_mat = m / mu if mu > 1e-9 else m
        for c in range(n_classes):
            labels = [np.flatnonzero(y[n]) for n in range(n_clips)]
            w = np.array([min(w_mat[k, c] for k in labels[n]) for n in range(n_clips)])
            n_pos = int(y[:, c].sum())
            if n_pos == 0:
                ap[lam, c] = 0.0 if no_positive == "zero" else np.nan
                continue
            total, previous_recall = 0.0, 0.0
            for threshold in sorted(set(s[:, c].tolist()), reverse=True):
                admitted = s[:, c] >= threshold
                tp = int((admitted & y[:, c]).sum())
                fp = float(w[admitted & ~y[:, c]].sum())
                recall = tp / n_pos
                if recall > previous_recall:
                    total += (recall - previous_recall) * tp / (tp + fp)
                previous_recall = recall
            ap[lam, c] = total
    per_level = np.nanmean(ap, axis=1)
    return {"omap": per_level.mean(), "omap_lambda0": per_level[0], "omap_per_level": per_level, "ap_per_level": ap}


def assert_same(ours: dict, ref: dict, tol: float = 1e-9) -> None:
    assert abs(ours["omap"] - ref["omap"]) <= tol
    assert abs(ours["omap_lambda0"] - ref["omap_lambda0"]) <= tol
    np.testing.assert_allclose(ours["omap_per_level"], ref["omap_per_level"], rtol=0, atol=tol)
    np.testing.assert_allclose(ours["ap_per_level"], ref["ap_per_level"], rtol=0, atol=tol)


# ------------------------------------------------------------------------ average precision


@settings(max_examples=examples(150), deadline=None)
@given(
    shape=st.tuples(st.integers(1, 40), st.integers(1, 6)),
    data=st.data(),
)
def test_average_precision_equals_sklearn_per_class(shape, data):
    y = data.draw(hnp.arrays(bool, shape))
    # Scores from a handful of levels: many ties, including ties between positives and negatives.
    s = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0])))
    np.testing.assert_allclose(average_precision(y, s), sk_ap(y, s), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_average_precision_with_ties_and_macro_map_equal_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.random((300, 12)) < 0.2
    y[rng.integers(0, 300, 12), np.arange(12)] = True  # every class has a positive
    s = np.round(rng.random((300, 12)) + 0.4 * y, 1)  # one decimal: heavy ties
    ap = average_precision(y, s)
    np.testing.assert_allclose(ap, sk_ap(y, s), rtol=0, atol=1e-12)
    assert ap.mean() == pytest.approx(sklearn_metrics.average_precision_score(y, s, average="macro"), abs=1e-12)
    s32 = (s / 3).astype(np.float32)  # float32 scores are ranked (and tied) as given
    np.testing.assert_allclose(average_precision(y, s32), sk_ap(y, s32), rtol=0, atol=1e-12)


def test_average_precision_is_zero_without_positives_and_accepts_01_ints():
    y = np.array([[1, 0], [0, 0], [1, 0]])
    s = np.array([[0.2, 0.9], [0.5, 0.1], [0.7, 0.3]])
    ap = average_precision(y, s)
    assert ap[1] == 0.0  # scikit-learn >= 1.2
    assert ap[0] == pytest.approx((1 / 2) * 1 + (1 / 2) * (2 / 3))  # ranks: pos, neg, pos


# ------------------------------------------------------------------ hand-drawn five-node tree

# The ontology (classes A..E = columns 0..4):
#
#         A
#        / \
#       B   C
#      / \
#     D   E
#
# Hop distances:        A  B  C  D  E
FIVE = np.array([[0, 1, 1, 2, 2],  # A
                 [1, 0, 2, 1, 1],  # B
                 [1, 2, 0, 3, 3],  # C
                 [2, 1, 3, 0, 2],  # D
                 [2, 1, 3, 2, 0]],  # E
                dtype=float)
# D_max = 3 -> levels 0, 1, 2, 3. Off-diagonal sums (20 ordered cells): unordered pairs at
# distance 1: AB AC BD BE; 2: AD AE BC DE; 3: CD CE.
#   λ=0: M = D,            sum 2·(4·1 + 4·2 + 2·3) = 36 -> μ = 36/20 = 9/5
#   λ=1: M keeps 2 and 3,  sum 2·(4·2 + 2·3)       = 28 -> μ = 28/20 = 7/5
#   λ=2: M keeps 3,        sum 2·(2·3)             = 12 -> μ = 12/20 = 3/5
#   λ=3: M = 0, μ = 0 -> W = M = 0: every FP weight 0.
MU = [F(9, 5), F(7, 5), F(3, 5), None]
# Clips, labels and d_min (min distance from the labels to each class):
#   n0 {D}:    A2 B1 C3 D0 E2
#   n1 {E}:    A2 B1 C3 D2 E0
#   n2 {C}:    A1 B2 C0 D3 E3
#   n3 {B, D}: A1 B0 C2 D0 E1
#   n4 {A}:    A0 B1 C1 D2 E2
FIVE_Y = np.array([[0, 0, 0, 1, 0],
                   [0, 0, 0, 0, 1],
                   [0, 0, 1, 0, 0],
                   [0, 1, 0, 1, 0],
                   [1, 0, 0, 0, 0]], dtype=bool)
#                      A     B     C     D     E
FIVE_S = np.array([[0.10, 0.80, 0.70, 0.90, 0.10],   # n0
                   [0.20, 0.10, 0.60, 0.60, 0.60],   # n1
                   [0.30, 0.85, 0.50, 0.55, 0.30],   # n2
                   [0.95, 0.80, 0.40, 0.50, 0.20],   # n3
                   [0.90, 0.20, 0.30, 0.10, 0.70]])  # n4


def _w(dist: int, lam: int) -> F:
    """FP weight of a negative at minimum distance ``dist`` at level ``lam``."""
    return F(0) if dist <= lam or MU[lam] is None else F(dist) / MU[lam]


def five_node_expected() -> list[list[F]]:
    """AP[λ][class], each derived from the ranking of its column (written out per class)."""
    ap = []
    for lam in range(4):
        # A: n3 (neg, d=1) 0.95 > n4 (pos) 0.90: one positive, P = 1 / (1 + w(1)).
        a = 1 / (1 + _w(1, lam))
        # B: n2 (neg, d=2) 0.85, then the tie group {n3 (pos), n0 (neg, d=1)} at 0.80: the
        # tied negative counts at the positive's threshold. P = 1 / (1 + w(2) + w(1)).
        b = 1 / (1 + _w(2, lam) + _w(1, lam))
        # C: n0 (neg, d=3) 0.7, n1 (neg, d=3) 0.6, n2 (pos) 0.5; the rest below.
        c = 1 / (1 + 2 * _w(3, lam))
        # D: n0 (pos) 0.9, n1 (neg, d=2) 0.6, n2 (neg, d=3) 0.55, n3 (pos) 0.5.
        # Two positives: ΔR = 1/2 at P = 1, then at P = 2 / (2 + w(2) + w(3)).
        d = F(1, 2) + F(1, 2) * 2 / (2 + _w(2, lam) + _w(3, lam))
        # E: n4 (neg, d=2) 0.7, n1 (pos) 0.6; n3 (neg, d=1) at 0.2 is below and never counts.
        e = 1 / (1 + _w(2, lam))
        ap.append([a, b, c, d, e])
    return ap


def test_five_node_hand_values():
    expected = five_node_expected()
    # Spelled out: λ=0 A = 1/(1 + 5/9) = 9/14, B = 1/(1 + 15/9) = 3/8, C = 1/(1 + 10/3) = 3/13,
    # D = 1/2 + 1/(2 + 25/9) = 61/86, E = 1/(1 + 10/9) = 9/19; λ=2: C = 1/(1 + 10) = 1/11,
    # D = 1/2 + 1/(2 + 5) = 9/14, the others 1; λ=3: all 1.
    assert expected[0] == [F(9, 14), F(3, 8), F(3, 13), F(61, 86), F(9, 19)]
    assert expected[1] == [F(1), F(7, 17), F(7, 37), F(53, 78), F(7, 17)]
    assert expected[2] == [F(1), F(1), F(1, 11), F(9, 14), F(1)]
    assert expected[3] == [F(1)] * 5

    out = omap(FIVE_Y, FIVE_S, FIVE)
    np.testing.assert_allclose(out["ap_per_level"], np.array(expected, dtype=float), rtol=0, atol=1e-15)
    per_level = [sum(row) / 5 for row in expected]
    np.testing.assert_allclose(out["omap_per_level"], [float(v) for v in per_level], rtol=0, atol=1e-15)
    assert out["omap_lambda0"] == pytest.approx(float(per_level[0]), abs=1e-15)
    assert out["omap"] == pytest.approx(float(sum(per_level) / 4), abs=1e-15)  # 4 levels, not D_max = 3
    assert_same(out, slow_omap(FIVE_Y, FIVE_S, FIVE))


def test_result_is_invariant_to_clip_and_class_order():
    rng = np.random.default_rng(1)
    y, s, d = random_problem(rng, 80, 12)
    out = omap(y, s, d)
    rows, cols = rng.permutation(80), rng.permutation(12)
    shuffled = omap(y[rows][:, cols], s[rows][:, cols], d[np.ix_(cols, cols)])
    assert shuffled["omap"] == pytest.approx(out["omap"], abs=1e-12)
    np.testing.assert_allclose(shuffled["ap_per_level"], out["ap_per_level"][:, cols], rtol=0, atol=1e-12)


# ------------------------------------------------------------------ all distances equal to d


@pytest.mark.parametrize("dist", [1, 2, 4])
@pytest.mark.parametrize("seed", [0, 1])
def test_equal_distances_reduce_to_map(dist, seed):
    """Every pair of classes at distance d (d = 1: a complete graph; d = 2: the classes are the
    leaves of a star whose centre is not a class; d = 2h: legs of h hops).

    Derivation: D_max = d, levels 0..d. For λ < d, M^λ = D, μ^λ = d, so W^λ = 1 off the diagonal
    and a negative (its class is not among the clip's labels) costs exactly 1: plain AP. At
    λ = d, M = 0, μ = 0, W = 0: P = 1 at every threshold, so AP = 1 for a class with a positive
    and 0 (no_positive="zero") without one. Hence

        OmAP = (d · mAP + (D_max + 1 − d) · (fraction of classes with a positive)) / (D_max + 1).
    """
    rng = np.random.default_rng(seed)
    n_classes = 9
    y, s, _ = random_problem(rng, 120, n_classes)
    y[:, 4] = False  # a class without positives: AP 0 at every level
    y[y.sum(axis=1) == 0, 0] = True
    d = dist * (1 - np.eye(n_classes))
    out = omap(y, s, d)
    m_ap = average_precision(y, s).mean()
    frac_pos = (y.sum(axis=0) > 0).mean()
    assert out["omap_per_level"].shape == (dist + 1,)
    np.testing.assert_allclose(out["omap_per_level"][:dist], m_ap, rtol=0, atol=1e-12)
    assert out["omap_per_level"][dist] == pytest.approx(frac_pos, abs=1e-12)
    assert out["omap"] == pytest.approx((dist * m_ap + frac_pos) / (dist + 1), abs=1e-12)
    y[:, 4] = y[:, 3]  # now every class has a positive: the formula with 1
    out = omap(y, s, d)
    m_ap = average_precision(y, s).mean()
    assert m_ap == pytest.approx(sklearn_metrics.average_precision_score(y, s, average="macro"), abs=1e-12)
    assert out["omap"] == pytest.approx((dist * m_ap + 1) / (dist + 1), abs=1e-12)


# ------------------------------------------------------------------ against the slow reference


@pytest.mark.parametrize("seed", range(4))
def test_matches_slow_reference_on_random_trees(seed):
    rng = np.random.default_rng(100 + seed)
    y, s, d = random_problem(rng, 200, 30, n_nodes=45, max_labels=4, decimals=2 if seed % 2 else 6)
    assert_same(omap(y, s, d), slow_omap(y, s, d))


def test_matches_slow_reference_with_classes_without_positives():
    rng = np.random.default_rng(7)
    y, s, d = random_problem(rng, 150, 20)
    y[:, [3, 11]] = False
    y[y.sum(axis=1) == 0, 0] = True
    assert_same(omap(y, s, d), slow_omap(y, s, d))
    skip = omap(y, s, d, no_positive="skip")
    ref = slow_omap(y, s, d, no_positive="skip")
    assert_same(skip, ref)
    assert np.isnan(skip["ap_per_level"][:, [3, 11]]).all()
    # "zero" averages over all 20 classes with two zeros; "skip" over the 18 others.
    zero = omap(y, s, d)
    np.testing.assert_allclose(zero["omap_per_level"] * 20 / 18, skip["omap_per_level"], rtol=1e-12)


def test_lambda0_is_weighted_and_the_coarsest_level_is_one():
    rng = np.random.default_rng(3)
    y, s, d = random_problem(rng, 200, 25)
    out = omap(y, s, d)
    has_pos = y.any(axis=0)
    assert out["omap_lambda0"] != pytest.approx(average_precision(y, s).mean(), abs=1e-6)
    # the top level costs no FP: precision 1 at each threshold, Σ delta / n_pos = 1 exactly
    np.testing.assert_array_equal(out["ap_per_level"][-1], has_pos.astype(float))
    assert out["omap_per_level"].shape == (int(d.max()) + 1,)


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_clips=st.integers(1, 40), n_classes=st.integers(1, 10))
def test_per_level_values_lie_in_unit_interval(seed, n_clips, n_classes):
    rng = np.random.default_rng(seed)
    y, s, d = random_problem(rng, n_clips, n_classes, max_labels=min(3, n_classes), decimals=1)
    out = omap(y, s, d)
    assert ((out["ap_per_level"] >= 0) & (out["ap_per_level"] <= 1 + 1e-12)).all()
    assert ((out["omap_per_level"] >= 0) & (out["omap_per_level"] <= 1 + 1e-12)).all()
    assert 0 <= out["omap"] <= 1 + 1e-12
    assert_same(out, slow_omap(y, s, d))


# ------------------------------------------------------------------------ errors and options


def test_unlabeled_clip_is_an_error_naming_it_or_skipped():
    y = FIVE_Y.copy()
    y[2] = False
    with pytest.raises(ValueError, match=r"1 clip\(s\) have no label \(0-based rows 2\).*unlabeled='skip'"):
        omap(y, FIVE_S, FIVE)
    skipped = omap(y, FIVE_S, FIVE, unlabeled="skip")
    keep = [0, 1, 3, 4]
    assert_same(skipped, omap(y[keep], FIVE_S[keep], FIVE), tol=0.0)
    with pytest.raises(ValueError, match="no clip to evaluate"):
        omap(np.zeros((3, 5), bool), FIVE_S[:3], FIVE, unlabeled="skip")


def test_non_finite_scores_and_non_binary_targets_are_errors():
    s = FIVE_S.copy()
    s[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"scores must be finite.*clip 1, class 3"):
        omap(FIVE_Y, s, FIVE)
    with pytest.raises(ValueError, match="scores must be finite"):
        average_precision(FIVE_Y, s)
    s[1, 3] = np.inf
    with pytest.raises(ValueError, match="scores must be finite"):
        omap(FIVE_Y, s, FIVE)
    y = FIVE_Y.astype(float)
    y[4, 0] = 0.7
    with pytest.raises(ValueError, match=r"targets must be binary.*clip 4, class 0"):
        omap(y, FIVE_S, FIVE)
    with pytest.raises(ValueError, match="targets must be binary"):
        obce_weights(y, FIVE)
    with pytest.raises(ValueError, match="shape"):
        omap(FIVE_Y, FIVE_S[:, :4], FIVE)
    with pytest.raises(ValueError, match="at least one clip"):
        average_precision(np.zeros((0, 3), bool), np.zeros((0, 3)))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d[:4, :4], r"must be a \(5, 5\) matrix"),
        (lambda d: d + np.eye(5), "zero diagonal"),
        (lambda d: np.triu(d), "symmetric"),
        (lambda d: -d, "non-negative"),
        (lambda d: np.where(d == 3, np.nan, d), "NaN"),
    ],
)
def test_invalid_distance_matrices(change, message):
    with pytest.raises(ValueError, match=message):
        omap(FIVE_Y, FIVE_S, change(FIVE.copy()))


def test_infinite_distances_error_or_max_plus_one():
    # Two components {A, B, D, E} and {C}: C's distances to the others become inf.
    d = FIVE.copy()
    d[2, [0, 1, 3, 4]] = d[[0, 1, 3, 4], 2] = np.inf
    with pytest.raises(ValueError, match=r"inf.*disconnected='max_plus_one'"):
        omap(FIVE_Y, FIVE_S, d)
    out = omap(FIVE_Y, FIVE_S, d, disconnected="max_plus_one")
    substituted = np.where(np.isinf(d), 3.0, d)  # largest finite distance 2, plus one
    assert_same(out, omap(FIVE_Y, FIVE_S, substituted), tol=0.0)
    assert out["omap_per_level"].shape == (4,)  # levels 0..3
    np.testing.assert_array_equal(
        obce_weights(FIVE_Y, d, disconnected="max_plus_one"), obce_weights(FIVE_Y, substituted)
    )
    with pytest.raises(ValueError, match="inf"):
        obce_weights(FIVE_Y, d)


def test_unknown_options_are_errors():
    with pytest.raises(ValueError, match="no_positive"):
        omap(FIVE_Y, FIVE_S, FIVE, no_positive="nan")
    with pytest.raises(ValueError, match="unlabeled"):
        omap(FIVE_Y, FIVE_S, FIVE, unlabeled="drop")


def test_single_class_and_single_clip():
    out = omap(np.ones((3, 1), bool), np.array([[0.1], [0.5], [0.5]]), np.zeros((1, 1)))
    assert out["omap"] == 1.0 and out["omap_per_level"].shape == (1,)
    out = omap(FIVE_Y[:1], FIVE_S[:1], FIVE)
    assert_same(out, slow_omap(FIVE_Y[:1], FIVE_S[:1], FIVE))


# ------------------------------------------------------------------------------- OBCE weights


def test_obce_hand_derived_five_node_tree():
    y = np.zeros((2, 5), bool)
    y[0, 3] = True  # {D}: distances to A..E = 2 1 3 0 2
    y[1, [1, 3]] = True  # {B, D}: min distances 1 0 2 0 1
    # β = 1, clip {D}: r = [2, 1, 3, 0, 2] / 3 -> labels to 1 -> [2/3, 1/3, 1, 1, 2/3], mean 11/15
    #   -> [10/11, 5/11, 15/11, 15/11, 10/11].
    # Clip {B, D}: [1, 0, 2, 0, 1] / 2 -> [1/2, 1, 1, 1, 1/2], mean 4/5 -> [5/8, 5/4, 5/4, 5/4, 5/8].
    r = obce_weights(y, FIVE)
    np.testing.assert_allclose(r[0], np.array([10, 5, 15, 15, 10]) / 11, rtol=1e-15)
    np.testing.assert_allclose(r[1], [5 / 8, 5 / 4, 5 / 4, 5 / 4, 5 / 8], rtol=1e-15)
    # β = 2, clip {D}: d² = [4, 1, 9, 0, 4] / 9 -> [4/9, 1/9, 1, 1, 4/9], mean 3/5
    #   -> [20/27, 5/27, 5/3, 5/3, 20/27].
    r2 = obce_weights(y[:1], FIVE, beta=2.0)
    np.testing.assert_allclose(r2[0], [20 / 27, 5 / 27, 5 / 3, 5 / 3, 20 / 27], rtol=1e-15)


def test_obce_shapes_means_and_beta_effect():
    rng = np.random.default_rng(5)
    y, _, d = random_problem(rng, 60, 15)
    weights = {beta: obce_weights(y, d, beta) for beta in (0.0, 0.5, 1.0, 2.0, 4.0)}
    for r in weights.values():
        assert r.shape == y.shape and (r >= 0).all()
        np.testing.assert_allclose(r.mean(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(weights[0.0], 1.0)  # β = 0: plain BCE, as the paper says (d⁰ = 1, a mean of ones)
    # A larger β stresses far classes: among the negatives of a clip, the ratio of the farthest
    # class's weight to the nearest non-zero one grows with β.
    dmin = np.array([[min(d[k, c] for k in np.flatnonzero(row)) for c in range(15)] for row in y])
    for n in range(len(y)):
        neg = ~y[n] & (dmin[n] > 0)
        far, near = np.argmax(np.where(neg, dmin[n], -1)), np.argmin(np.where(neg, dmin[n], np.inf))
        if dmin[n, far] == dmin[n, near]:
            continue
        ratios = [weights[b][n, far] / weights[b][n, near] for b in (0.5, 1.0, 2.0, 4.0)]
        assert np.all(np.diff(ratios) > 0)
        assert ratios[1] == pytest.approx(dmin[n, far] / dmin[n, near])  # β = 1: the distance ratio
    # Labels get the highest weight of their row (step 3 sets them to max = 1 before step 4).
    for r in weights.values():
        assert np.all(r[y] >= np.max(np.where(y, 0, r), axis=1)[np.nonzero(y)[0]] - 1e-12)


def test_obce_options_and_errors():
    y = FIVE_Y.copy()
    y[1] = False
    with pytest.raises(ValueError, match=r"0-based rows 1.*unlabeled='uniform'"):
        obce_weights(y, FIVE)
    r = obce_weights(y, FIVE, unlabeled="uniform")
    np.testing.assert_array_equal(r[1], 1.0)
    np.testing.assert_array_equal(r[[0, 2, 3, 4]], obce_weights(FIVE_Y[[0, 2, 3, 4]], FIVE))  # row by row: the same
    with pytest.raises(ValueError, match="beta"):
        obce_weights(FIVE_Y, FIVE, beta=-1.0)
    # Every class a label: max(r) = 0 in step 2, no division; all weights 1.
    np.testing.assert_array_equal(obce_weights(np.ones((2, 5), bool), FIVE), 1.0)
