"""Sample weights for mAP and OmAP, and the binned mAP's bound, held against scikit-learn and
against the data they stand for (a weight of k is the clip repeated k times; a bin hides only the
order of its own clips).

``tests/test_map_binned.py`` checks the binned metric through runs; here the bound is checked
class by class, shown to be sharp, and the state checked as a sum.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from run_depth import examples
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path
from sklearn.metrics import average_precision_score

import evalkit
from evalkit.errors import DataError
from evalkit_ontology.binned import binned_average_precision, histogram
from evalkit_ontology.metrics import BinnedMAP, BinnedMAPParams
from evalkit_ontology.omap import average_precision, omap

TIED_SCORES = st.sampled_from([0.0, 0.1, 0.25, 0.3, 0.5, 0.5001, 0.75, 0.9, 1.0])
#: Weights >= 0, zeros included, over 100 orders of magnitude (so that sums of the weights of some
#: clips and classes are rounded away against others'); not below 1e-100, where products of two
#: weights (a bin's p (A + p), a query's δ · P) would underflow: the limit of float64, not of
#: the method.
WEIGHTS = st.sampled_from([0.0, 0.25, 1.0, 2.5, 3.0]) | st.floats(1e-100, 1e3)
SCORES = TIED_SCORES | st.floats(0, 1)


@st.composite
def problems(draw, max_clips=30, max_classes=4, weights=WEIGHTS, scores=SCORES):
    """(targets, scores, weights): 0/1 targets, scores with ties, weights >= 0 (some 0), the first
    clip of weight 1 so that something is counted."""
    n = draw(st.integers(1, max_clips))
    c = draw(st.integers(2, max_classes))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n * c, max_size=n * c)), float).reshape(n, c)
    s = np.array(draw(st.lists(scores, min_size=n * c, max_size=n * c))).reshape(n, c)
    w = np.array(draw(st.lists(weights, min_size=n, max_size=n)), float)
    w[0] = 1.0
    return y, s, w


def sklearn_macro(y, s, w):
    with warnings.catch_warnings():  # a class without positive weight: AP 0, with a warning
        warnings.simplefilter("ignore")
        return average_precision_score(y, s, average="macro", sample_weight=w)


def sklearn_per_class(y, s, w):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(average_precision_score(y, s, average=None, sample_weight=w))


def tree_distances(n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Hop counts between ``n_classes`` nodes of a random tree (parent of node i drawn among 0..i-1)."""
    parents = [int(rng.integers(0, i)) for i in range(1, n_classes)]
    graph = coo_matrix((np.ones(n_classes - 1), (np.arange(1, n_classes), parents)), shape=(n_classes, n_classes))
    return shortest_path(graph.tocsr(), directed=False, unweighted=True)


# ------------------------------------------------------------------------- weighted mAP


@settings(max_examples=examples(150), deadline=None)
@given(problems())
def test_weighted_map_equals_sklearn(problem):
    """``map`` with weights is ``average_precision_score(average="macro", sample_weight=w)``, zero
    weights included (scikit-learn leaves those clips out; a class whose positives all weigh 0
    has no positive and gets 0, as with ``no_positive: zero``)."""
    y, s, w = problem
    expected = sklearn_macro(y, s, w)
    np.testing.assert_allclose(average_precision(y, s, weights=w), sklearn_per_class(y, s, w), rtol=1e-12, atol=1e-15)
    got = evalkit.evaluate(y, s, metrics=["map"], sample_weight=w)["map"]
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


@settings(max_examples=examples(100), deadline=None)
@given(problems(weights=st.integers(0, 3)), st.sampled_from(["zero", "skip"]))
def test_integer_weights_are_repeated_clips_for_map(problem, no_positive):
    """A weight of k is the clip k times, for both ``no_positive`` settings: a class whose positives
    all weigh 0 has no positive, so ``skip`` leaves it out as it would the repeated data."""
    y, s, w = problem
    counts = w.astype(int)
    spec = [{"name": "map", "no_positive": no_positive, "per_class": True}]
    weighted = evalkit.evaluate(y, s, metrics=spec, sample_weight=w)
    repeated = evalkit.evaluate(np.repeat(y, counts, axis=0), np.repeat(s, counts, axis=0), metrics=spec)
    assert weighted.keys() == repeated.keys()
    for key, value in repeated.items():
        np.testing.assert_allclose(np.asarray(weighted[key]), np.asarray(value), rtol=1e-12, atol=1e-15, err_msg=key)


@settings(max_examples=examples(100), deadline=None)
@given(problems(max_classes=6, weights=st.integers(0, 3)), st.integers(0, 2**32 - 1),
       st.sampled_from(["zero", "skip"]), st.sampled_from(["error", "skip"]))
def test_integer_weights_are_repeated_clips_for_omap(problem, seed, no_positive, unlabeled):
    """The same for OmAP, whose false positives weigh the clip weight times the ontology weight;
    a clip of weight 0 is left out, so an unlabeled one is no error."""
    y, s, w = problem
    counts = w.astype(int)
    d = tree_distances(y.shape[1], np.random.default_rng(seed))
    ry, rs = np.repeat(y, counts, axis=0), np.repeat(s, counts, axis=0)
    if unlabeled == "error":
        assume(ry.any(axis=1).all())
    assume(ry.any(axis=1).any())
    options = {"no_positive": no_positive, "unlabeled": unlabeled}
    weighted, repeated = omap(y, s, d, weights=w, **options), omap(ry, rs, d, **options)
    np.testing.assert_allclose(weighted["ap_per_level"], repeated["ap_per_level"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(weighted["omap_per_level"], repeated["omap_per_level"], rtol=1e-12, atol=1e-15)
    assert weighted["omap"] == pytest.approx(repeated["omap"], rel=1e-12, abs=1e-15)


@settings(max_examples=examples(60), deadline=None)
@given(problems(max_clips=60, max_classes=6), st.integers(0, 2**32 - 1))
def test_weights_of_one_change_no_bit(problem, seed):
    """Weights of 1 take the weighted code path and give bit for bit the unweighted values: every
    sum of weights is then an exact integer, so the same floating-point operations follow."""
    y, s, _ = problem
    ones = np.ones(len(y))
    np.testing.assert_array_equal(average_precision(y, s, weights=ones), average_precision(y, s))
    assume(y.any())  # OmAP needs a labeled clip
    d = tree_distances(y.shape[1], np.random.default_rng(seed))
    a, b = omap(y, s, d, weights=ones, unlabeled="skip"), omap(y, s, d, unlabeled="skip")
    np.testing.assert_array_equal(a["ap_per_level"], b["ap_per_level"])
    assert a["omap"] == b["omap"]


def test_weighted_values_of_a_class_do_not_depend_on_the_other_classes():
    """Reversing the columns gives each class the same AP, at every OmAP level: its sums of weights
    are its own, not differences of running sums over the classes before it. Common classes
    first, rare ones last, as that order rounded a rare class's TP by the weight of all the
    positives before it (7e-13 relative here; 3.5e-11 with AudioSet's shape)."""
    rng = np.random.default_rng(4)
    n, c = 4000, 60
    y = rng.random((n, c)) < np.linspace(0.3, 0.002, c)
    y[np.arange(n), rng.integers(0, c, n)] = True  # every clip labeled
    s = np.round(rng.random((n, c)) + 0.5 * y, 3)
    w = rng.random(n) * 3
    d = tree_distances(c, rng)
    rev = np.arange(c)[::-1]
    ap, ap_rev = average_precision(y, s, weights=w), average_precision(y[:, rev], s[:, rev], weights=w)
    np.testing.assert_allclose(ap_rev[rev], ap, rtol=1e-14, atol=0)
    np.testing.assert_allclose(ap, sklearn_per_class(y, s, w), rtol=1e-13, atol=0)
    om, om_rev = omap(y, s, d, weights=w), omap(y[:, rev], s[:, rev], d[np.ix_(rev, rev)], weights=w)
    np.testing.assert_allclose(om_rev["ap_per_level"][:, rev], om["ap_per_level"], rtol=1e-14, atol=0)


def test_an_unlabeled_clip_of_weight_zero_is_left_out_and_errors_name_given_rows():
    d = tree_distances(4, np.random.default_rng(0))
    y = np.array([[0, 0, 0, 0], [1, 0, 0, 1], [0, 0, 0, 0], [0, 1, 1, 0]], float)
    s = np.random.default_rng(1).random(y.shape)
    kept = omap(y[[1, 3]], s[[1, 3]], d)
    left_out = omap(y, s, d, weights=np.array([0.0, 1.0, 0.0, 1.0]))
    # weights 0 drop the rows; the ones left give the unweighted bits (see test_weights_of_one_change_no_bit)
    np.testing.assert_array_equal(left_out["ap_per_level"], kept["ap_per_level"])
    with pytest.raises(ValueError, match=r"1 clip\(s\) have no label \(0-based rows 2\)"):
        omap(y, s, d, weights=np.array([0.0, 1.0, 0.5, 1.0]))  # row 2 as given, not as kept
    with pytest.raises(ValueError, match="no clip to evaluate"):
        omap(y, s, d, weights=np.zeros(4))


def test_weighted_batches_equal_one_call():
    rng = np.random.default_rng(3)
    y, s, w = (rng.random((500, 5)) < 0.2).astype(float), np.round(rng.random((500, 5)), 2), rng.random(500) * 3
    specs = ["map", {"name": "map_binned", "bins": 100}]
    whole = evalkit.Evaluator(metrics=specs).update(y, s, sample_weight=w).values()
    ev = evalkit.Evaluator(metrics=specs)
    for start in range(0, 500, 130):
        ev.update(y[start : start + 130], s[start : start + 130], sample_weight=w[start : start + 130])
    for measure, value in ev.values().items():
        assert value == pytest.approx(whole[measure], rel=1e-12), measure


# --------------------------------------------------------------------------- binned mAP


@st.composite
def binned_problems(draw, weights=WEIGHTS):
    """A problem and a number of bins; scores with ties, many on the bin edges k / bins."""
    bins = draw(st.sampled_from([2, 3, 7, 10, 64, 1000]))
    edges = st.integers(0, bins).map(lambda k: k / bins)
    y, s, w = draw(problems(max_clips=40, weights=weights, scores=TIED_SCORES | edges | st.floats(0, 1)))
    return y, s, w, bins


@settings(max_examples=examples(200), deadline=None)
@given(binned_problems(), st.booleans())
def test_each_class_exact_ap_lies_in_its_bound(problem, weighted):
    """Class by class, not only on average: lower <= scikit-learn's AP <= upper, and the binned AP
    lies between them, for any ties, bin edges and weights (zeros included)."""
    y, s, w, bins = problem
    w = w if weighted else None
    binned, lower, upper = binned_average_precision(histogram(y, s, bins, w))
    exact = sklearn_per_class(y, s, w)
    assert (lower - 1e-12 <= exact).all() and (exact <= upper + 1e-12).all(), (lower, exact, upper)
    assert (lower <= binned).all() and (binned <= upper).all()
    assert ((0 <= lower) & (upper <= 1 + 1e-15)).all()


@settings(max_examples=examples(100), deadline=None)
@given(binned_problems(weights=st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0])))
def test_one_distinct_score_per_bin_gives_the_exact_map(problem):
    """Scores on the grid (bin centres), so no bin holds two distinct scores: nothing is lost and
    the binned mAP is scikit-learn's, weights included."""
    y, s, w, bins = problem
    s = (np.minimum(np.floor(s * bins), bins - 1) + 0.5) / bins
    got = evalkit.evaluate(y, s, metrics=[{"name": "map_binned", "bins": bins}], sample_weight=w)["map_binned"]
    assert got == pytest.approx(sklearn_macro(y, s, w), rel=1e-12, abs=1e-15)


@settings(max_examples=examples(100), deadline=None)
@given(binned_problems(), st.booleans())
def test_the_bound_is_sharp(problem, first):
    """The upper bound is reached when each bin's positives share one score above its negatives,
    and the binned AP when they share one score below them (all negatives first): the bound cannot
    be narrowed without knowing more than the histogram holds."""
    y, s, w, bins = problem
    cell = np.minimum(np.floor(s * bins), bins - 1)
    offset = 0.75 if first else 0.25
    arranged = (cell + np.where(y > 0, offset, 1 - offset)) / bins  # same bins, positives tied
    binned, _, upper = binned_average_precision(histogram(y, arranged, bins, w))
    np.testing.assert_allclose(sklearn_per_class(y, arranged, w), upper if first else binned, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("m", [1, 10, 100, 1000])
def test_the_lower_bound_is_the_limit_of_finely_split_positives(m):
    """All negatives first, then positive weight 1 split into m clips of weight 1/m at distinct
    scores: the exact AP is a right Riemann sum of the increasing h(x) = x / (x + q), which exceeds
    its integral (the lower bound) by at most (1/m)(h(1) - h(0)) and tends to it."""
    q = 2.0  # the negatives' weight
    bins = 10
    scores = np.r_[np.full(3, 0.95), np.linspace(0.94, 0.9, m)]  # one bin, negatives ranked first
    y = np.r_[np.zeros(3), np.ones(m)]
    w = np.r_[np.full(3, q / 3), np.full(m, 1.0 / m)]
    _, lower, _ = binned_average_precision(histogram(y[:, None], scores[:, None], bins, w))
    exact = average_precision_score(y, scores, sample_weight=w)
    assert lower[0] == pytest.approx(1 - q * np.log((1 + q) / q), rel=1e-12)  # the integral of h on [0, 1]
    assert 0 < exact - lower[0] <= (1 / m) * (1 / (1 + q)) + 1e-12


@settings(max_examples=examples(60), deadline=None)
@given(binned_problems(weights=st.integers(0, 3)), st.data())
def test_the_state_is_a_sum(problem, data):
    """The state of integer weights is the state of the repeated clips, and any split into batches
    sums to the one-shot state: exactly, since the sums are of integers."""
    y, s, w, bins = problem
    metric = BinnedMAP(BinnedMAPParams(bins=bins))
    counts = w.astype(int)
    whole = metric.update(y, s, w)
    np.testing.assert_array_equal(whole, metric.update(np.repeat(y, counts, axis=0), np.repeat(s, counts, axis=0)))
    cuts = sorted(data.draw(st.lists(st.integers(1, len(y)), max_size=4)))
    parts = [metric.update(y[a:b], s[a:b], w[a:b]) for a, b in zip([0, *cuts], [*cuts, len(y)], strict=True) if b > a]
    merged = parts[0]
    for part in parts[1:]:
        merged = merged + part
    np.testing.assert_array_equal(merged, whole)
    assert merged.shape == (y.shape[1], bins, 2)
    assert metric.compute(merged) == metric.compute(whole)


def test_the_state_does_not_depend_on_the_number_of_clips():
    rng = np.random.default_rng(2)
    metric = BinnedMAP(BinnedMAPParams())  # 1000 bins by default
    sizes = {n: metric.update((rng.random((n, 7)) < 0.3), rng.random((n, 7))).nbytes for n in (1, 100, 20_000)}
    assert set(sizes.values()) == {7 * 1000 * 2 * 8}


def test_a_direct_update_checks_scores_and_weights():
    """A run checks predictions before any metric; ``update`` called directly checks them too,
    since a score outside [0, 1] would fall in another class's bins."""
    metric = BinnedMAP(BinnedMAPParams(bins=10))
    y = np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(DataError, match=r"memberships in \[0, 1\].*clip 0, class 1 \(value -0.1\)"):
        metric.update(y, np.array([[0.5, -0.1], [0.2, 0.3]]))
    with pytest.raises(DataError, match="finite"):
        metric.update(y, np.array([[0.5, np.nan], [0.2, 0.3]]))
    with pytest.raises(DataError, match="weights"):
        metric.update(y, np.array([[0.5, 0.1], [0.2, 0.3]]), np.array([1.0, -1.0]))
    with pytest.raises(DataError, match="shape"):
        metric.update(y, np.array([[0.5, 0.1]]))
    with pytest.raises(DataError, match="outside \\[0, 1\\]"):  # a run says so before the metric
        evalkit.evaluate(y, np.array([[1.5, 0.1], [0.2, 0.3]]), metrics=[{"name": "map_binned", "bins": 10}])
    with pytest.raises(ValueError, match="bins"):
        BinnedMAPParams(bins=1)


def test_no_positive_skip_counts_positive_weight_for_every_map():
    """A class whose only positive weighs 0 has no positive: ``skip`` leaves it out of ``map``,
    ``map_binned`` and ``omap`` alike, as it would the data without that clip."""
    y = np.array([[1, 0], [0, 1], [1, 0], [0, 0]], float)  # class 1: one positive, clip 1
    s = np.array([[0.9, 0.2], [0.8, 0.6], [0.3, 0.1], [0.1, 0.7]])
    w = np.array([1.0, 0.0, 1.0, 1.0])  # which weighs 0
    spec = [{"name": "map", "no_positive": "skip"}, {"name": "map_binned", "bins": 10, "no_positive": "skip"}]
    got = evalkit.evaluate(y, s, metrics=spec, sample_weight=w)
    only0 = average_precision_score(y[:, 0], s[:, 0], sample_weight=w)
    assert got["map"] == pytest.approx(only0, rel=1e-12)
    assert got["map_binned_lower"] <= only0 <= got["map_binned_upper"]
    result = omap(y, s, np.array([[0.0, 1.0], [1.0, 0.0]]), weights=w, no_positive="skip", unlabeled="skip")
    assert np.isnan(result["ap_per_level"][:, 1]).all() and not np.isnan(result["ap_per_level"][:, 0]).any()
