"""The built-in T-norms (src/evalkit_tnorms) and the author kit's T-norm checks.

Every family is checked over its whole parameter range, limits included: by the author kit
(evalkit.testing.check_tnorm), by hypothesis properties on floats in [0, 1], and against the
identities between families. Every expected value is derived in a comment, not measured.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import evalkit_tnorms as tn
from evalkit.discovery import build_registry, make_plugin_manager
from evalkit.errors import ConfigError
from evalkit.testing import (
    TNORM_CHECKS,
    TNormGrid,
    check_tnorm,
    check_tnorm_associative,
    check_tnorm_commutative,
    check_tnorm_float32,
    check_tnorm_monotone,
)

FIXED = [tn.Minimum, tn.Product, tn.Lukasiewicz, tn.Drastic, tn.NilpotentMinimum, tn.Einstein]
FAMILIES = [tn.Hamacher, tn.Yager, tn.Frank, tn.SchweizerSklar, tn.Dombi, tn.AczelAlsina]
NAMES = {
    "minimum", "product", "lukasiewicz", "drastic", "nilpotent_minimum", "einstein",
    "hamacher", "yager", "frank", "schweizer_sklar", "dombi", "aczel_alsina",
}
INF = math.inf
TOL = 1e-9  # the author kit's default tolerance


def make(cls, value=None):
    """An instance of ``cls``, with its one parameter (``s`` for Frank, else ``p``) if given."""
    if value is None:
        return cls(cls.Params())
    return cls(cls.Params(**{param_name(cls): value}))


def param_name(cls) -> str:
    (name,) = cls.Params.model_fields
    return name


def log10_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high).map(lambda e: 10.0**e)


# Each family's full valid range: named limits and members, tiny and huge values, ordinary ones.
PARAMETERS = {
    tn.Hamacher: st.one_of(
        st.sampled_from([0.0, 1.0, 2.0, INF, 5e-324, 1e-300, 1e300]),
        st.floats(0, 10),
        log10_uniform(-300, 300),
    ),
    tn.Yager: st.one_of(
        st.sampled_from([1.0, 2.0, INF, 1e-40, 1e-3, 1e8, 1e30, 1e300]),
        st.floats(0.05, 20),
        log10_uniform(-40, 40),
    ),
    tn.Frank: st.one_of(
        st.sampled_from([1.0, 1 - 1e-12, 1 + 1e-12, 5e-324, 1e-300, 1e300, INF, math.e, 1 / math.e]),
        st.floats(-1e-6, 1e-6).map(lambda d: 1.0 + d),
        st.floats(0.01, 100),
        log10_uniform(-323, 308),
    ),
    tn.SchweizerSklar: st.one_of(
        st.sampled_from([0.0, 1.0, -1.0, INF, -INF, 1e-3, -1e-3, 1e-40, -1e-40, 1e30, -1e30]),
        st.floats(-20, 20),
        st.tuples(st.sampled_from([-1.0, 1.0]), log10_uniform(-40, 40)).map(lambda t: t[0] * t[1]),
    ),
    tn.Dombi: st.one_of(
        st.sampled_from([1.0, INF, 1e-40, 1e-3, 1e8, 1e30]),
        st.floats(0.05, 20),
        log10_uniform(-40, 40),
    ),
    tn.AczelAlsina: st.one_of(
        st.sampled_from([1.0, INF, 1e-40, 1e-3, 1e8, 1e30]),
        st.floats(0.05, 20),
        log10_uniform(-40, 40),
    ),
}


@st.composite
def tnorms(draw):
    """Any built-in T-norm: a fixed one, or a family with a parameter from its whole range."""
    cls = draw(st.sampled_from(FIXED + FAMILIES))
    return make(cls) if cls in FIXED else make(cls, draw(PARAMETERS[cls]))


@st.composite
def unit_triples(draw, max_size=40):
    """Three equal-length float64 arrays of values in [0, 1] (0, 1 and subnormals included)."""
    n = draw(st.integers(1, max_size))
    unit = st.floats(0, 1)
    return tuple(draw(arrays(np.float64, n, elements=unit)) for _ in range(3))


# One grid for all author-kit runs: small enough that ~100 runs stay within a few seconds.
GRID = TNormGrid.build(samples=64, triples=2000)


# ---------------------------------------------------------------------------------------------
# Registration and parameters
# ---------------------------------------------------------------------------------------------


def registry():
    return build_registry(*make_plugin_manager(load_entrypoints=False, extra={"evalkit:tnorms": tn}))


def test_hook_registers_every_tnorm_class_under_its_name():
    reg = registry()
    assert not reg.failures and not reg.conflicts
    assert set(reg.names("tnorm")) == NAMES
    defined = {c.name: c for c in vars(tn).values() if isinstance(c, type) and hasattr(c, "name")}
    assert {n: reg.entry("tnorm", n).cls for n in NAMES} == defined


@pytest.mark.parametrize("cls", FIXED + FAMILIES, ids=lambda c: c.name)
def test_docstring_summary_and_parameter_schema(cls):
    """`evalkit plugins` shows the first docstring line; the schema explains the parameter."""
    summary, _, rest = cls.__doc__.partition("\n")
    assert summary.strip().endswith(".") and "T(a, b)" in rest
    properties = cls.Params.model_json_schema().get("properties", {})
    if cls in FIXED:
        assert properties == {}
    else:
        assert list(properties) == ["s" if cls is tn.Frank else "p"]
        assert properties[param_name(cls)]["description"]
        assert f"``{param_name(cls)}``" in rest  # the docstring names the parameter too


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"name": "hamacher", "p": -0.5}, "greater than or equal to 0"),
        ({"name": "yager", "p": 0}, "greater than 0"),
        ({"name": "frank", "s": 0}, "greater than 0"),
        ({"name": "frank", "p": 2}, "unknown parameter 'p'"),  # Frank's parameter is s
        ({"name": "dombi", "p": -1}, "greater than 0"),
        ({"name": "aczel_alsina", "p": math.nan}, "greater than 0"),
        ({"name": "schweizer_sklar", "p": math.nan}, "not NaN"),
        ({"name": "minimum", "p": 1}, "unknown parameter 'p'"),
    ],
)
def test_invalid_parameters_are_config_errors(spec, message):
    with pytest.raises(ConfigError, match=message):
        registry().create("tnorm", spec)


def test_every_tnorm_can_be_created_by_name_alone():
    """Configs may write `tnorm: yager`: every parameter has a default."""
    reg = registry()
    for name in NAMES:
        t = reg.create("tnorm", name)
        assert t.name == name and float(t(0.5, 1.0)) == 0.5


def test_infinite_parameters_are_accepted():
    assert registry().create("tnorm", {"name": "yager", "p": "inf"}).params.p == INF
    assert registry().create("tnorm", {"name": "schweizer_sklar", "p": "-inf"}).params.p == -INF


# ---------------------------------------------------------------------------------------------
# The author kit over every T-norm and the whole parameter range
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", FIXED, ids=lambda c: c.name)
def test_fixed_tnorms_pass_the_author_kit(cls):
    check_tnorm(make(cls), grid=TNormGrid.build())  # the default, denser grid


LIMITS = [
    (tn.Hamacher, 0.0), (tn.Hamacher, 1e300), (tn.Hamacher, INF),
    (tn.Yager, 1e-40), (tn.Yager, 1e-3), (tn.Yager, 1e8), (tn.Yager, INF),
    (tn.Frank, 5e-324), (tn.Frank, 1e-300), (tn.Frank, 1 - 1e-12), (tn.Frank, 1.0),
    (tn.Frank, 1 + 1e-12), (tn.Frank, 1 + 1e-7), (tn.Frank, 1e300), (tn.Frank, INF),
    (tn.SchweizerSklar, -INF), (tn.SchweizerSklar, -1e30), (tn.SchweizerSklar, -1e-40),
    (tn.SchweizerSklar, 0.0), (tn.SchweizerSklar, 1e-40), (tn.SchweizerSklar, 1e30),
    (tn.SchweizerSklar, INF),
    (tn.Dombi, 1e-40), (tn.Dombi, 1e-3), (tn.Dombi, 1e8), (tn.Dombi, INF),
    (tn.AczelAlsina, 1e-40), (tn.AczelAlsina, 1e-3), (tn.AczelAlsina, 1e8), (tn.AczelAlsina, INF),
]


@pytest.mark.parametrize("cls, value", LIMITS, ids=lambda x: getattr(x, "name", repr(x)))
def test_parameter_limits_pass_the_author_kit(cls, value):
    check_tnorm(make(cls, value), grid=GRID)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), cls=st.sampled_from(FAMILIES))
def test_families_pass_the_author_kit_over_their_parameter_range(data, cls):
    check_tnorm(make(cls, data.draw(PARAMETERS[cls], label=param_name(cls))), grid=GRID)


# ---------------------------------------------------------------------------------------------
# Hypothesis properties on floats in [0, 1]
# ---------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(t=tnorms(), abc=unit_triples())
def test_axioms_on_arbitrary_unit_floats(t, abc):
    a, b, c = abc
    out = t(a, b)
    # Values: finite, >= 0 and at most the minimum (the largest T-norm), exactly, even for
    # subnormal inputs (a ratio of sums of T to sums of memberships must not exceed 1).
    assert out.shape == a.shape and out.dtype == np.float64
    assert np.all(np.isfinite(out) & (out >= 0) & (out <= np.minimum(a, b))), t
    # Commutativity holds exactly: every formula is built on min(a, b) and max(a, b).
    np.testing.assert_array_equal(out, t(b, a), err_msg=repr(t))
    # Boundary: T(a, 1) = a and T(a, 0) = 0 exactly (both orders).
    one, zero = np.ones_like(a), np.zeros_like(a)
    np.testing.assert_array_equal(t(a, one), a, err_msg=repr(t))
    np.testing.assert_array_equal(t(one, a), a, err_msg=repr(t))
    np.testing.assert_array_equal(t(a, zero), zero, err_msg=repr(t))
    # Monotone in each argument (and so, by commutativity, in the other).
    low, high = np.minimum(a, c), np.maximum(a, c)
    assert np.all(t(low, b) <= t(high, b) + TOL), t
    # Associative up to the rounding of the inner value (the kit's comparison).
    check_tnorm_associative(t, TNormGrid(np.unique(a), (a, b, c)))


@settings(max_examples=60, deadline=None)
@given(t=tnorms(), abc=unit_triples(max_size=20))
def test_float32_inputs_stay_float32_and_agree_with_float64(t, abc):
    a, b, _ = (x.astype(np.float32) for x in abc)
    out = t(a, b)
    assert out.dtype == np.float32 and out.shape == a.shape
    assert np.all((out >= 0) & (out <= 1)), t
    # Against float64 on the same numbers, bracketed by monotonicity as the kit does.
    check_tnorm_float32(t, TNormGrid(np.unique(np.concatenate([a, b])).astype(np.float64), abc))


def test_a_large_float32_batch_is_not_upcast():
    rng = np.random.default_rng(0)
    a, b = rng.random((20_000, 17), dtype=np.float32), rng.random((20_000, 17), dtype=np.float32)
    for cls in FIXED + FAMILIES:
        out = make(cls)(a, b)
        assert out.dtype == np.float32 and out.shape == a.shape, cls.name


@pytest.mark.parametrize(
    "cls, value", [(c, None) for c in FIXED] + LIMITS, ids=lambda x: getattr(x, "name", repr(x))
)
def test_subnormal_memberships_never_exceed_the_minimum(cls, value):
    """The intersection of a tiny membership is at most that membership, bit for bit, else a
    soft precision (a ratio of sums) could exceed 1."""
    t = make(cls, value)
    tiny = np.array([5e-324, 1e-320, 2.2e-313, np.finfo(np.float64).tiny, 1e-300])
    for other in (0.5, 0.99, np.nextafter(1.0, 0.0)):
        for a, b in ((tiny, other), (other, tiny)):
            out = t(a, b)
            assert np.all((out >= 0) & (out <= tiny)), (t, a, b, out)


@pytest.mark.parametrize(
    "cls, value", [(c, None) for c in FIXED] + LIMITS, ids=lambda x: getattr(x, "name", repr(x))
)
def test_binary_inputs_give_logical_and_exactly(cls, value):
    """On 0/1 memberships every T-norm is the crisp intersection, in float64 and float32."""
    t = make(cls, value)
    for dtype in (np.float64, np.float32):
        a = np.array([0, 0, 1, 1], dtype)
        b = np.array([0, 1, 0, 1], dtype)
        np.testing.assert_array_equal(t(a, b), np.array([0, 0, 0, 1], dtype), err_msg=repr(t))


# ---------------------------------------------------------------------------------------------
# Identities between families and values derived by hand
# ---------------------------------------------------------------------------------------------

unit_pairs = unit_triples(max_size=30).map(lambda abc: abc[:2])


def lukasiewicz(a, b):
    return np.maximum(a + b - 1, 0)


def hamacher_product(a, b):
    # ab / (a + b − ab), with the 0/0 at a = b = 0 defined as 0
    den = a + b - a * b
    return np.divide(a * b, den, out=np.zeros_like(den), where=den > 0)


def close(x, y):
    np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(ab=unit_pairs)
def test_exact_limits_are_the_named_tnorms(ab):
    """Parameters at a limit take an explicit branch: the named T-norm, bit for bit."""
    a, b = ab
    minimum, product, drastic = make(tn.Minimum)(a, b), a * b, make(tn.Drastic)(a, b)
    luk = make(tn.Lukasiewicz)(a, b)
    for t, expected in [
        (make(tn.Frank, 1.0), product),
        (make(tn.Frank, INF), luk),
        (make(tn.SchweizerSklar, 0.0), product),
        (make(tn.SchweizerSklar, -INF), minimum),
        (make(tn.SchweizerSklar, INF), drastic),
        (make(tn.Hamacher, INF), drastic),
        (make(tn.Yager, INF), minimum),
        (make(tn.Dombi, INF), minimum),
        (make(tn.AczelAlsina, INF), minimum),
    ]:
        np.testing.assert_array_equal(t(a, b), expected, err_msg=repr(t))


@settings(max_examples=60, deadline=None)
@given(ab=unit_pairs)
def test_family_members_equal_the_named_tnorms(ab):
    a, b = ab
    product = a * b
    # Hamacher p = 1: the denominator (a + b − ab) + (1 − a)(1 − b) is 1, leaving ab.
    close(make(tn.Hamacher, 1.0)(a, b), product)
    # Hamacher p = 2: (a + b − ab) + 2(1 − a)(1 − b) = 1 + (1 − a)(1 − b), Einstein's denominator.
    close(make(tn.Hamacher, 2.0)(a, b), make(tn.Einstein)(a, b))
    # Einstein: ab / (1 + (1 − a)(1 − b)) by definition.
    close(make(tn.Einstein)(a, b), product / (1 + (1 - a) * (1 - b)))
    # Hamacher p = 0: ab / (a + b − ab).
    close(make(tn.Hamacher, 0.0)(a, b), hamacher_product(a, b))
    # Yager p = 1: 1 − ((1 − a) + (1 − b)) = a + b − 1, floored at 0: Łukasiewicz.
    close(make(tn.Yager, 1.0)(a, b), lukasiewicz(a, b))
    # Schweizer–Sklar p = 1: max(0, a + b − 1): Łukasiewicz.
    close(make(tn.SchweizerSklar, 1.0)(a, b), lukasiewicz(a, b))
    # Schweizer–Sklar p = −1: (1/a + 1/b − 1)^−1 = ab / (a + b − ab): the Hamacher product.
    close(make(tn.SchweizerSklar, -1.0)(a, b), hamacher_product(a, b))
    # Aczél–Alsina p = 1: exp(−(−ln a − ln b)) = ab.
    close(make(tn.AczelAlsina, 1.0)(a, b), product)
    # Dombi p = 1: 1 / (1 + (1 − a)/a + (1 − b)/b) = ab / (ab + b(1 − a) + a(1 − b)) = ab / (a + b − ab).
    close(make(tn.Dombi, 1.0)(a, b), hamacher_product(a, b))


@settings(max_examples=60, deadline=None)
@given(ab=unit_pairs, delta=st.sampled_from([1e-12, -1e-12, 1e-10, -1e-10]))
def test_frank_near_one_is_close_to_the_product(ab, delta):
    """With λ = ln s, T_s = ab − ab(1 − a)(1 − b) λ / 2 + O(λ²) (expand expm1 and log1p to
    second order). As ab(1 − a)(1 − b) <= 1/16, |T_s − ab| <= |λ| / 32 + O(λ²)."""
    a, b = ab
    s = 1 + delta
    lam = math.log(s)
    got = make(tn.Frank, s)(a, b)
    assert np.all(np.abs(got - a * b) <= abs(lam) / 32 + 1e-16)
    close(got, a * b * (1 - (1 - a) * (1 - b) * lam / 2))


@settings(max_examples=60, deadline=None)
@given(ab=unit_pairs, s=st.sampled_from([1e-300, 1e-100, 1e-20]))
def test_frank_towards_zero_approaches_the_minimum(ab, s):
    """With L = −ln s: T = (ln(1 − s) − ln N) / L where N = s^a + s^b − s − s^(a+b) <= 2 s^min(a,b),
    so T >= min(a, b) − (ln 2 − ln(1 − s)) / L; and T <= min(a, b), as for every T-norm."""
    a, b = ab
    big = -math.log(s)
    got, minimum = make(tn.Frank, s)(a, b), np.minimum(a, b)
    assert np.all(got <= minimum + 1e-15)
    assert np.all(got >= minimum - (math.log(2) - math.log1p(-s)) / big - 1e-15)


@settings(max_examples=60, deadline=None)
@given(ab=unit_pairs, s=st.sampled_from([1e20, 1e100, 1e300]))
def test_frank_towards_infinity_approaches_lukasiewicz(ab, s):
    """With λ = ln s: q = (s^a − 1)(s^b − 1)/(s − 1) <= s^(a+b−1) · s/(s − 1), so
    T = log(1 + q)/λ <= max(0, a + b − 1) + ln(1 + s/(s − 1))/λ. And T >= Łukasiewicz, the
    s → ∞ end of the Frank family, which decreases in s."""
    a, b = ab
    lam = math.log(s)
    got, luk = make(tn.Frank, s)(a, b), lukasiewicz(a, b)
    assert np.all(got >= luk - 1e-15)
    assert np.all(got <= luk + math.log(1 + s / (s - 1)) / lam + 1e-15)


@pytest.mark.parametrize(
    "cls, value, a, b, expected",
    [
        # Frank s = 2: log2(1 + (√2 − 1)²) = log2(4 − 2√2).
        (tn.Frank, 2.0, 0.5, 0.5, math.log2(4 - 2 * math.sqrt(2))),
        # Frank s = e: ln(1 + (e^0.5 − 1)² / (e − 1)).
        (tn.Frank, math.e, 0.5, 0.5, math.log1p(math.expm1(0.5) ** 2 / math.expm1(1))),
        # Frank s = 1/4: log_(1/4)(1 + (1/2 − 1)² / (1/4 − 1)) = log_(1/4)(2/3) = ln(3/2) / ln 4.
        (tn.Frank, 0.25, 0.5, 0.5, math.log(1.5) / math.log(4)),
        # Yager p = 2: 1 − √(0.5² + 0.5²) = 1 − √0.5.
        (tn.Yager, 2.0, 0.5, 0.5, 1 - math.sqrt(0.5)),
        # Yager p = 2 with a + b < 1 enough: 1 − √(0.9² + 0.8²) < 0, so 0.
        (tn.Yager, 2.0, 0.1, 0.2, 0.0),
        # Schweizer–Sklar p = 2: √(0.8² + 0.9² − 1) = √0.45.
        (tn.SchweizerSklar, 2.0, 0.8, 0.9, math.sqrt(0.45)),
        # Schweizer–Sklar p = 2: 0.5² + 0.5² − 1 < 0, so 0.
        (tn.SchweizerSklar, 2.0, 0.5, 0.5, 0.0),
        # Schweizer–Sklar p = −2: (0.5^−2 + 0.5^−2 − 1)^(−1/2) = 7^(−1/2).
        (tn.SchweizerSklar, -2.0, 0.5, 0.5, 1 / math.sqrt(7)),
        # Dombi p = 2: odds against (1 − 0.5)/0.5 = 1, so 1 / (1 + √2).
        (tn.Dombi, 2.0, 0.5, 0.5, 1 / (1 + math.sqrt(2))),
        # Dombi p = 2, a = 0.25, b = 0.5: odds 3 and 1, so 1 / (1 + √10).
        (tn.Dombi, 2.0, 0.25, 0.5, 1 / (1 + math.sqrt(10))),
        # Aczél–Alsina p = 2: exp(−√2 · ln 2) = 2^(−√2).
        (tn.AczelAlsina, 2.0, 0.5, 0.5, 2 ** -math.sqrt(2)),
        # Hamacher p = 0.5: 0.25 / (0.5 + 0.5 · 0.75) = 0.25 / 0.875 = 2/7.
        (tn.Hamacher, 0.5, 0.5, 0.5, 2 / 7),
        # Hamacher p = 0 at a = b = 0: the 0/0 is defined as 0.
        (tn.Hamacher, 0.0, 0.0, 0.0, 0.0),
        # Nilpotent minimum: 0.6 + 0.5 > 1 gives min = 0.5; 0.5 + 0.5 = 1 is not > 1, so 0.
        (tn.NilpotentMinimum, None, 0.6, 0.5, 0.5),
        (tn.NilpotentMinimum, None, 0.5, 0.5, 0.0),
        # Drastic: neither argument is 1, so 0.
        (tn.Drastic, None, 0.999, 0.999, 0.0),
        # Łukasiewicz: 0.75 + 0.5 − 1 (exact binary fractions, so exact).
        (tn.Lukasiewicz, None, 0.75, 0.5, 0.25),
    ],
)
def test_values_derived_by_hand(cls, value, a, b, expected):
    assert float(make(cls, value)(a, b)) == pytest.approx(expected, rel=1e-14, abs=1e-300)


# ---------------------------------------------------------------------------------------------
# The author kit catches broken T-norms, naming them and the offending values
# ---------------------------------------------------------------------------------------------


class Broken:
    """A T-norm-shaped object whose formula is a parameter, for testing the kit."""

    name = "broken"

    def __init__(self, formula, params=None):
        self.formula, self.params = formula, params

    def __call__(self, a, b):
        return self.formula(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize(
    "formula, message",
    [
        # Upcasts float32 batches to float64.
        (lambda a, b: (a * b).astype(np.float64), "float32 inputs give float64"),
        # Goes below 0 (ab − 0.01 < 0 for small ab).
        (lambda a, b: a * b - 0.01, "value outside \\[0, 1\\]"),
        # The arithmetic mean: T(0, 1) = 1/2, not 0 = 0 AND 1.
        (lambda a, b: (a + b) / 2, "not logical AND"),
        # min(a, b)²: right on 0/1 inputs, but T(a, 1) = a² != a.
        (lambda a, b: np.minimum(a, b) ** 2, "T\\(a, 1\\) != a"),
        # ab(1 + a(1 − a)b(1 − b)(a − b)): right on the boundary, but swapping a and b flips
        # the sign of the correction.
        (lambda a, b: a * b * (1 + a * (1 - a) * b * (1 - b) * (a - b)), "not commutative"),
        # The minimum plus 1e-300 inside the square: harmless in absolute terms, but T(a, b) >
        # min(a, b) for subnormal a, which would give a soft precision above 1.
        (lambda a, b: np.where((a > 0) & (a < 1) & (b > 0) & (b < 1), np.minimum(a, b) + 1e-300,
                               np.minimum(a, b)), "T\\(a, b\\) > min\\(a, b\\)"),
        # Product where a + b > 1.5, else minimum: T(0.9, 0.7) = 0.63 < T(0.7, 0.7) = 0.7.
        (lambda a, b: np.where(a + b > 1.5, a * b, np.minimum(a, b)), "not monotone"),
        # Mean of minimum and product: commutative, monotone, T(a, 1) = a, T(a, 0) = 0, but
        # T(T(0.5, 0.8), 0.9) = T(0.45, 0.9) = 0.4275 while T(0.5, T(0.8, 0.9)) = T(0.5, 0.76) = 0.44.
        (lambda a, b: (np.minimum(a, b) + a * b) / 2, "not associative"),
    ],
)
def test_author_kit_reports_the_broken_property(formula, message):
    broken = Broken(formula)
    with pytest.raises(AssertionError, match=f"T-norm broken: {message}"):
        check_tnorm(broken, grid=GRID)


def test_author_kit_names_parameters_and_first_offending_values():
    class Params:
        def model_dump(self):
            return {"p": 0.5}

    # a·b² is not commutative: T(0.5, 1) = 0.5 but T(1, 0.5) = 0.25.
    broken = Broken(lambda a, b: a * b * b, Params())
    grid = TNormGrid(np.array([0.0, 0.5, 1.0]), (np.zeros(1),) * 3)
    with pytest.raises(AssertionError) as info:
        check_tnorm_commutative(broken, grid)
    assert str(info.value) == (
        "T-norm broken(p=0.5): not commutative: T(a, b) != T(b, a) at "
        "a=0.5, b=1.0, T_ab=0.5, T_ba=0.25"
    )


def test_author_kit_monotone_message_names_both_pairs():
    # T(0.7, 0.7) = min = 0.7 (0.7 + 0.7 <= 1.5) but T(0.9, 0.7) = 0.9 · 0.7 (0.9 + 0.7 > 1.5).
    broken = Broken(lambda a, b: np.where(a + b > 1.5, a * b, np.minimum(a, b)))
    grid = TNormGrid(np.array([0.7, 0.9]), (np.zeros(1),) * 3)
    with pytest.raises(AssertionError, match=r"first argument: T\(0.7, 0.7\) = 0.7 > T\(0.9, 0.7\) = 0.63"):
        check_tnorm_monotone(broken, grid)


def test_author_kit_runs_every_listed_check():
    assert len(TNORM_CHECKS) == len(set(TNORM_CHECKS)) == 10
    assert all(check.__doc__ for check in TNORM_CHECKS)
