"""T-norms: the fuzzy intersections T(a, b) of membership degrees in [0, 1].

Every T-norm is element-wise and broadcasting, works on whole numpy arrays at once and keeps the
floating dtype of its inputs (float32 stays float32). The parametric families reach their limits
through explicit branches, and the formulas are evaluated in log space where a direct evaluation
would overflow or divide by zero, so no floating-point warning escapes. On the boundary
T(a, 1) = a, T(a, 0) = 0 holds exactly, hence so does T = logical AND on 0/1 data.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, TypeVar

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from evalkit.plugin import Array, BaseComponent, NoParams, hookimpl


@hookimpl
def evalkit_register_tnorms(register):
    for cls in (
        Minimum,
        Product,
        Lukasiewicz,
        Drastic,
        NilpotentMinimum,
        Hamacher,
        Einstein,
        Yager,
        Frank,
        SchweizerSklar,
        Dombi,
        AczelAlsina,
    ):
        register(cls)


# ---------------------------------------------------------------------------------------------
# Shared numerics
# ---------------------------------------------------------------------------------------------


def _inputs(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs as arrays of one floating dtype: float32 stays float32, integers become float64."""
    a, b = np.asarray(a), np.asarray(b)
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype.kind != "f":
        dtype = np.dtype(np.float64)
    elif dtype.itemsize < 4:
        dtype = np.dtype(np.float32)
    return a.astype(dtype, copy=False), b.astype(dtype, copy=False)


def _regime(p: float, dtype: np.dtype) -> str:
    """Where a one-parameter family stands for ``dtype``: ``"small"``, ``"large"`` or ``"normal"``.

    Below eps² (about 5e-32 in float64) a family equals its p → 0 limit to the last bit; above
    4096 / eps (about 2e19) its p → ∞ limit. Between the two, p times a logarithm and 1/p stay
    finite, so the log-space formulas cannot overflow.
    """
    eps = float(np.finfo(dtype).eps)
    if abs(p) < eps * eps:
        return "small"
    if abs(p) > 4096.0 / eps:
        return "large"
    return "normal"


def _interior(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a and b with 0 raised to the smallest subnormal and 1 lowered to 1 − eps/2, so that
    logarithms and ratios stay finite. :func:`_finish` then sets the results at 0 and 1 exactly.
    """
    info = np.finfo(a.dtype)
    top = np.nextafter(a.dtype.type(1), a.dtype.type(0))
    return np.clip(a, info.smallest_subnormal, top), np.clip(b, info.smallest_subnormal, top)


def _finish(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Keep 0 <= T <= min(a, b) exactly despite rounding (a soft precision divides by sums of
    memberships, which may be tiny), and make T(a, 1) = a and T(a, 0) = 0 exact, both orders."""
    out = np.asarray(out)
    np.maximum(out, 0, out=out)
    np.minimum(out, np.minimum(a, b), out=out)
    np.copyto(out, a, where=b == 1)
    np.copyto(out, b, where=a == 1)
    np.copyto(out, 0, where=(a == 0) | (b == 0))
    return out


def _log1mexp(z: np.ndarray) -> np.ndarray:
    """log(1 − e^z) for z < 0, accurate both near 0 and far below it."""
    cut = z.dtype.type(-math.log(2.0))
    near = np.log(-np.expm1(np.maximum(z, cut)))
    far = np.log1p(-np.exp(np.minimum(z, cut)))
    return np.where(z > cut, near, far)


def _log1pexp(t: np.ndarray) -> np.ndarray:
    """log(1 + e^t) (softplus) without overflow."""
    return np.maximum(t, 0) + np.log1p(np.exp(-np.abs(t)))


def _logaddexp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log(e^x + e^y) for finite x, y (several times faster than np.logaddexp)."""
    return np.maximum(x, y) + np.log1p(np.exp(-np.abs(x - y)))


def _lohi(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min(a, b) and max(a, b): building formulas on them makes commutativity exact."""
    return np.minimum(a, b), np.maximum(a, b)


def _constant(value: float, dtype: np.dtype) -> np.floating:
    """A parameter as a scalar of the computation's dtype (so float32 arrays stay float32)."""
    return dtype.type(value)


def _minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.minimum(a, b)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * b


def _lukasiewicz(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lo, hi = _lohi(a, b)
    # lo - (1 - hi) is correctly rounded wherever it is positive (then hi > 1/2, so 1 - hi is
    # exact), and gives T(a, 1) = a exactly, unlike (a + b) - 1.
    return np.maximum(lo - (1 - hi), 0)


def _drastic(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lo, hi = _lohi(a, b)
    return np.where(hi == 1, lo, 0).astype(lo.dtype, copy=False)


def _not_nan(value: float) -> float:
    if math.isnan(value):
        raise ValueError("the parameter must be a number, not NaN")
    return value


Real = Annotated[float, AfterValidator(_not_nan)]


#: The parameter model of a T-norm.
P = TypeVar("P", bound=BaseModel)


class _TNorm(BaseComponent[P]):
    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self.params.model_dump().items())
        return f"{type(self).__name__}({given})"


# ---------------------------------------------------------------------------------------------
# Parameter-free T-norms
# ---------------------------------------------------------------------------------------------


class Minimum(_TNorm[NoParams]):
    """Minimum (Gödel) T-norm: the largest T-norm, the standard fuzzy intersection.

    T(a, b) = min(a, b). No parameters.
    """

    name = "minimum"

    def __call__(self, a: Array, b: Array) -> Array:
        return _minimum(*_inputs(a, b))


class Product(_TNorm[NoParams]):
    """Product (probabilistic) T-norm: independent events.

    T(a, b) = a·b. No parameters.
    """

    name = "product"

    def __call__(self, a: Array, b: Array) -> Array:
        return _product(*_inputs(a, b))


class Lukasiewicz(_TNorm[NoParams]):
    """Łukasiewicz (bounded difference) T-norm: nilpotent, zero unless a + b > 1.

    T(a, b) = max(0, a + b − 1). No parameters.
    """

    name = "lukasiewicz"

    def __call__(self, a: Array, b: Array) -> Array:
        return _lukasiewicz(*_inputs(a, b))


class Drastic(_TNorm[NoParams]):
    """Drastic T-norm: the smallest T-norm, nonzero only when one argument is 1.

    T(a, b) = b if a = 1, a if b = 1, else 0. No parameters.
    """

    name = "drastic"

    def __call__(self, a: Array, b: Array) -> Array:
        return _drastic(*_inputs(a, b))


class NilpotentMinimum(_TNorm[NoParams]):
    """Nilpotent minimum (Fodor) T-norm: the minimum where a + b > 1, else 0.

    T(a, b) = min(a, b) if a + b > 1, else 0. No parameters.
    """

    name = "nilpotent_minimum"

    def __call__(self, a: Array, b: Array) -> Array:
        lo, hi = _lohi(*_inputs(a, b))
        # lo > 1 - hi is the exact test of a + b > 1 (1 - hi is exact whenever it can matter),
        # so the result does not depend on the rounding of a + b and stays associative.
        return np.where(lo > 1 - hi, lo, 0).astype(lo.dtype, copy=False)


class Einstein(_TNorm[NoParams]):
    """Einstein product T-norm: the Hamacher T-norm with p = 2.

    T(a, b) = a·b / (1 + (1 − a)(1 − b)). No parameters.
    """

    name = "einstein"

    def __call__(self, a: Array, b: Array) -> Array:
        a, b = _inputs(a, b)
        return a * b / (1 + (1 - a) * (1 - b))


# ---------------------------------------------------------------------------------------------
# Parametric families
# ---------------------------------------------------------------------------------------------


class HamacherParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    p: float = Field(
        0.0,
        ge=0,
        description="Hamacher parameter p >= 0: 0 = Hamacher product, 1 = product, 2 = Einstein, "
        "inf = drastic.",
    )


class Hamacher(_TNorm[HamacherParams]):
    """Hamacher T-norm family, from the Hamacher product (p = 0) to drastic (p → ∞).

    T(a, b) = a·b / (p + (1 − p)(a + b − a·b)), parameter ``p`` >= 0 (default 0): 0 is the
    Hamacher product (with T(0, 0) = 0), 1 the product, 2 Einstein, inf the drastic T-norm.
    """

    name = "hamacher"
    Params = HamacherParams

    def __call__(self, a: Array, b: Array) -> Array:
        a, b = _inputs(a, b)
        p = self.params.p
        if p == math.inf:
            return _drastic(a, b)
        p_ = _constant(min(p, float(np.finfo(a.dtype).max)), a.dtype)
        x, y = _interior(a, b)  # a + b − ab > 0: no 0/0 at a = b = 0 (set to 0 by _finish)
        num = x * y
        # p + (1 − p)(a + b − ab) = (a + b − ab) + p(1 − a)(1 − b): no cancellation for p > 1.
        return _finish(a, b, num / ((x + y - num) + p_ * ((1 - x) * (1 - y))))


#: The parameter model of an ℓp-norm family: each has the exponent ``p``.
PNormP = TypeVar("PNormP", bound="YagerParams | DombiParams | AczelAlsinaParams")


class _PNormFamily(_TNorm[PNormP]):
    """Families T = outer(‖(u, v)‖_p) of an ℓp norm of transformed arguments (Yager, Dombi,
    Aczél–Alsina): drastic as p → 0, minimum as p → ∞, and in between the norm is taken in log
    space, log‖·‖ = log max + log1p((min/max)^p)/p, which cannot overflow for any p.
    """

    def log_terms(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def outer(self, log_norm: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, a: Array, b: Array) -> Array:
        a, b = _inputs(a, b)
        p = self.params.p
        regime = "large" if p == math.inf else _regime(p, a.dtype)
        if regime == "large":
            return _minimum(a, b)
        if regime == "small":
            return _drastic(a, b)
        lo, hi = _lohi(*self.log_terms(*_interior(a, b)))
        p_, inv = _constant(p, a.dtype), _constant(1 / p, a.dtype)
        log_norm = hi + np.log1p(np.exp(p_ * (lo - hi))) * inv
        return _finish(a, b, self.outer(log_norm))


class YagerParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    p: float = Field(
        2.0,
        gt=0,
        description="Yager exponent p > 0: p → 0 = drastic, 1 = Łukasiewicz, inf = minimum.",
    )


class Yager(_PNormFamily[YagerParams]):
    """Yager T-norm family, an ℓp ball from drastic (p → 0) to minimum (p → ∞).

    T(a, b) = max(0, 1 − ((1 − a)^p + (1 − b)^p)^(1/p)), parameter ``p`` > 0 (default 2):
    1 is Łukasiewicz, inf the minimum. Evaluated in log space, so any large p is safe.
    """

    name = "yager"
    Params = YagerParams

    def log_terms(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.log(1 - x), np.log(1 - y)

    def outer(self, log_norm: np.ndarray) -> np.ndarray:
        return -np.expm1(np.minimum(log_norm, 0))  # 1 − norm, floored at 0


class FrankParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    s: float = Field(
        2.0,
        gt=0,
        description="Frank base s > 0 (named s, not p): s → 0 = minimum, 1 = product, "
        "inf = Łukasiewicz.",
    )


class Frank(_TNorm[FrankParams]):
    """Frank T-norm family, from minimum (s → 0) through product (s = 1) to Łukasiewicz (s → ∞).

    T(a, b) = log_s(1 + (s^a − 1)(s^b − 1) / (s − 1)), parameter ``s`` > 0 (default 2; this
    family's parameter is named s, not p): s = 1 is exactly the product, s = inf Łukasiewicz.
    """

    name = "frank"
    Params = FrankParams

    def __call__(self, a: Array, b: Array) -> Array:
        a, b = _inputs(a, b)
        s = self.params.s
        if s == 1:
            return _product(a, b)
        if s == math.inf:
            return _lukasiewicz(a, b)
        lam = math.log(s)  # finite: s is a positive finite float
        x, y = _interior(a, b)
        if abs(lam) < math.sqrt(float(np.finfo(a.dtype).eps)):
            out = _frank_near_product(x, y, lam)
        elif abs(lam) <= 1:
            out = _frank_direct(x, y, lam)
        elif lam > 0:
            out = _frank_near_lukasiewicz(x, y, lam)
        else:
            out = _frank_near_minimum(x, y, -lam)
        return _finish(a, b, out)


def _frank_near_product(a: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray:
    """|ln s| < sqrt(eps): the expansion ab(1 − (1 − a)(1 − b) ln(s) / 2), error O(ln² s) < eps."""
    half = _constant(lam / 2, a.dtype)
    return a * b * (1 - (1 - a) * (1 - b) * half)


def _frank_direct(a: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray:
    """1/e <= s <= e: the formula itself, log1p(E(aλ)E(bλ)/E(λ)) / λ with λ = ln s and E = expm1.

    Every factor is relative-accurate and 1 + q >= min(1, s), so nothing cancels.
    """
    lam_ = _constant(lam, a.dtype)
    q = np.expm1(a * lam_) * np.expm1(b * lam_) / _constant(math.expm1(lam), a.dtype)
    return np.log1p(q) / lam_


def _frank_near_lukasiewicz(a: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray:
    """s > e, in log space, since E(aλ)E(bλ) overflows for large s:
    T = log(1 + e^lq) / λ with lq = log E(aλ) + log E(bλ) − log E(λ), log E(x) = x + log(1 − e^−x).
    """
    lam_ = _constant(lam, a.dtype)
    log_den = _constant(lam + math.log(-math.expm1(-lam)), a.dtype)
    lq = _log_expm1(a * lam_) + _log_expm1(b * lam_) - log_den
    return _log1pexp(lq) / lam_


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """log(e^x − 1) for x > 0, without overflow."""
    return x + np.log(-np.expm1(-x))


def _frank_near_minimum(a: np.ndarray, b: np.ndarray, big: float) -> np.ndarray:
    """s < 1/e, with L = −ln s: T = (log(1 − e^−L) − log N) / L in log space, where
    N = e^(−lo·L)(1 − e^(−hi·L)) + e^(−hi·L)(1 − e^(−(1−hi)·L)) is a sum of non-negative terms."""
    lo, hi = _lohi(a, b)
    big_ = _constant(big, a.dtype)
    first = -lo * big_ + np.log(-np.expm1(-hi * big_))
    second = -hi * big_ + np.log(-np.expm1(-(1 - hi) * big_))
    log_den = _constant(math.log(-math.expm1(-big)), a.dtype)
    return (log_den - _logaddexp(first, second)) / big_


class SchweizerSklarParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    p: Real = Field(
        2.0,
        description="Schweizer–Sklar exponent p (any real, or ±inf): -inf = minimum, "
        "-1 = Hamacher product, 0 = product, 1 = Łukasiewicz, inf = drastic.",
    )


class SchweizerSklar(_TNorm[SchweizerSklarParams]):
    """Schweizer–Sklar T-norm family, covering minimum (p → −∞) to drastic (p → +∞).

    T(a, b) = (max(0, a^p + b^p − 1))^(1/p), parameter ``p`` real (default 2): −inf is the
    minimum, −1 the Hamacher product, 0 exactly the product, 1 Łukasiewicz, +inf drastic.
    """

    name = "schweizer_sklar"
    Params = SchweizerSklarParams

    def __call__(self, a: Array, b: Array) -> Array:
        a, b = _inputs(a, b)
        p = self.params.p
        if p == 0:
            return _product(a, b)
        regime = "large" if math.isinf(p) else _regime(p, a.dtype)
        if regime == "small":
            return _product(a, b)
        if regime == "large":
            return _drastic(a, b) if p > 0 else _minimum(a, b)
        lo, hi = _lohi(*_interior(a, b))
        out = _sklar_positive(lo, hi, p) if p > 0 else _sklar_negative(lo, hi, -p)
        return _finish(a, b, out)


def _sklar_positive(lo: np.ndarray, hi: np.ndarray, p: float) -> np.ndarray:
    """p > 0: T^p = lo^p (1 − e^z) with z = log(1 − hi^p) − p·log(lo), and T = 0 where z >= 0."""
    p_, inv = _constant(p, lo.dtype), _constant(1 / p, lo.dtype)
    d = -np.expm1(p_ * np.log(hi))  # 1 − hi^p > 0, accurate for small p
    z = np.log(d) - p_ * np.log(lo)
    below = np.minimum(z, -np.finfo(lo.dtype).tiny)  # z >= 0 is replaced by 0 below
    return np.where(z < 0, lo * np.exp(_log1mexp(below) * inv), 0)


def _sklar_negative(lo: np.ndarray, hi: np.ndarray, q: float) -> np.ndarray:
    """p = −q < 0: with M = −log lo >= m = −log hi,
    T = lo · exp(−log1p(e^(q(m − M)) (1 − e^(−q·m))) / q), which never overflows."""
    q_, inv = _constant(q, lo.dtype), _constant(1 / q, lo.dtype)
    big, small = -np.log(lo), -np.log(hi)
    r = np.exp(q_ * (small - big)) * -np.expm1(-q_ * small)
    return lo * np.exp(-np.log1p(r) * inv)


class DombiParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    p: float = Field(
        2.0,
        gt=0,
        description="Dombi exponent p (often written λ) > 0: p → 0 = drastic, "
        "1 = Hamacher product, inf = minimum.",
    )


class Dombi(_PNormFamily[DombiParams]):
    """Dombi T-norm family, from drastic (p → 0) to minimum (p → ∞).

    T(a, b) = 1 / (1 + (((1 − a)/a)^p + ((1 − b)/b)^p)^(1/p)), parameter ``p`` > 0 (the λ of the
    literature, default 2): 1 is the Hamacher product, inf the minimum; T = 0 if a or b is 0.
    """

    name = "dombi"
    Params = DombiParams

    def log_terms(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # logs of the odds against, log((1 − x)/x), finite inside (0, 1)
        return np.log1p(-x) - np.log(x), np.log1p(-y) - np.log(y)

    def outer(self, log_norm: np.ndarray) -> np.ndarray:
        return np.exp(-_log1pexp(log_norm))  # 1 / (1 + norm)


class AczelAlsinaParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    p: float = Field(
        2.0,
        gt=0,
        description="Aczél–Alsina exponent p > 0: p → 0 = drastic, 1 = product, inf = minimum.",
    )


class AczelAlsina(_PNormFamily[AczelAlsinaParams]):
    """Aczél–Alsina T-norm family, from drastic (p → 0) through product (p = 1) to minimum (p → ∞).

    T(a, b) = exp(−((−ln a)^p + (−ln b)^p)^(1/p)), parameter ``p`` > 0 (default 2): 1 is the
    product, inf the minimum; T = 0 if a or b is 0.
    """

    name = "aczel_alsina"
    Params = AczelAlsinaParams

    def log_terms(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.log(-np.log(x)), np.log(-np.log(y))  # −ln of an interior value is positive

    def outer(self, log_norm: np.ndarray) -> np.ndarray:
        cap = _constant(math.log(float(np.finfo(log_norm.dtype).max)) - 1, log_norm.dtype)
        return np.exp(-np.exp(np.minimum(log_norm, cap)))  # exp(cap) is finite
