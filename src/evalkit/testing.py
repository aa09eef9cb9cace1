"""The plugin author kit: reusable checks that a plugin's own tests call.

Each public ``check_*`` function takes one component instance, runs every property its kind
must satisfy on whole numpy arrays, and raises :class:`AssertionError` at the first failure,
naming the component (its name and parameters), the property and the first offending inputs::

    from evalkit.testing import check_tnorm

    def test_my_tnorm_is_a_tnorm():
        check_tnorm(MyTNorm(MyTNorm.Params(p=0.5)))

The checks of one kind are small functions listed in a tuple (``TNORM_CHECKS``); a new
property is a new function added there, and a new kind gets its own ``check_<kind>`` and tuple.
:func:`plugin_registry` registers a plugin the way evalkit does, installed or not.

This module is the stable surface for plugin tests, as :mod:`evalkit.plugin` is for plugin code;
the rest of evalkit is internal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from evalkit.components import describe
from evalkit.protocols import optional

if TYPE_CHECKING:
    from evalkit.registry import Registry

__all__ = [
    "SIMILARITY_CHECKS", "TNORM_CHECKS", "SimilarityCase", "TNormGrid", "check_averaging", "check_data_metric",
    "check_loader", "check_metric", "check_report_writer",
    "check_representation", "check_similarity", "check_tnorm", "describe", "plugin_registry",
]


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


def plugin_registry(extra: Mapping[str, object] | None = None) -> Registry:
    """The components of the installed plugins, and of ``extra``, registered as evalkit does.

    Args:
        extra: plugins to register without installing them, by name
            ``"<distribution>:<entry point>"``: a module (or any object) with hook
            implementations, e.g. ``{"evalkit-mine:mine": evalkit_mine}``.

    Returns:
        A new registry: ``entry(kind, name)`` says where a component came from,
        ``create(kind, spec)`` makes one as a config would, ``failures`` and ``conflicts`` list
        the problems ``evalkit plugins`` would show. Pass it as ``registry=`` to
        ``evalkit.evaluate`` to run a plugin under test.
    """
    from evalkit.discovery import build_registry, make_plugin_manager

    return build_registry(*make_plugin_manager(extra=dict(extra or {})))


def _first(bad: np.ndarray, **arrays: np.ndarray) -> str:
    """``key=value, ...`` of the first element where ``bad`` is true, from broadcastable arrays."""
    index = tuple(np.argwhere(bad)[0])
    shape = np.shape(bad)
    values = {k: np.broadcast_to(v, shape)[index] for k, v in arrays.items()}
    return ", ".join(f"{k}={float(v)!r}" for k, v in values.items())


def _fail(component: Any, kind: str, message: str) -> NoReturn:
    raise AssertionError(f"{kind} {describe(component)}: {message}")


# ---------------------------------------------------------------------------------------------
# T-norms
# ---------------------------------------------------------------------------------------------

#: Values every T-norm check includes: the bounds, the smallest normal and subnormal numbers,
#: the neighbours of 0 and 1, and a few ordinary points.
SPECIAL_VALUES = np.array(
    [
        0.0,
        1.0,
        0.5,
        5e-324,
        np.finfo(np.float64).tiny,
        1e-300,
        np.finfo(np.float64).eps,
        1e-8,
        0.1,
        0.25,
        1 / 3,
        2 / 3,
        0.75,
        0.9,
        1 - 1e-8,
        np.nextafter(1.0, 0.0),
    ]
)


@dataclass(frozen=True)
class TNormGrid:
    """The inputs of the T-norm checks.

    Attributes:
        values: sorted distinct values in [0, 1], exact 0 and 1 included; the pairwise checks
            evaluate T on all ``values × values``.
        triples: three equal-length arrays (a, b, c) for associativity: every triple of
            :data:`SPECIAL_VALUES` and random triples of ``values``.
        atol: the tolerance of the approximate properties: an absolute error (T-norm values
            are in [0, 1]), except for T <= min(a, b), where it is relative.
        atol32: the tolerance of a float32 evaluation against the float64 one.
    """

    values: np.ndarray
    triples: tuple[np.ndarray, np.ndarray, np.ndarray]
    atol: float = 1e-9
    atol32: float = 1e-5

    @classmethod
    def build(
        cls, *, samples: int = 256, triples: int = 20_000, seed: int = 0, atol: float = 1e-9,
        atol32: float = 1e-5,
    ) -> TNormGrid:
        """Random values dense in [0, 1] and clustered near 0 and 1, plus the special values.

        Args:
            samples: how many random values to add to the special ones (a third uniform, a
                third log-uniform towards 0, a third towards 1).
            triples: how many random (a, b, c) triples to add for associativity.
            seed: seed of the random generator, so that a failure is reproducible.
            atol: see the class attributes.
            atol32: see the class attributes.
        """
        rng = np.random.default_rng(seed)
        third = max(samples // 3, 1)
        spread = 10.0 ** -rng.uniform(0, 17, third)
        values = np.unique(
            np.concatenate([SPECIAL_VALUES, rng.random(samples - 2 * third), spread, 1 - spread])
        )
        cube = np.meshgrid(SPECIAL_VALUES, SPECIAL_VALUES, SPECIAL_VALUES, indexing="ij")
        picks = rng.choice(values, size=(3, triples))
        a, b, c = (np.concatenate([axis.ravel(), pick]) for axis, pick in zip(cube, picks))
        return cls(values, (a, b, c), atol, atol32)


TNormCheck = Callable[[Any, TNormGrid], None]


def check_tnorm(tnorm: Any, *, grid: TNormGrid | None = None, **build: Any) -> None:
    """Check that ``tnorm`` is a vectorized T-norm; raise AssertionError at the first failure.

    The properties: shape broadcasting, dtype (float64 stays float64, float32 stays float32),
    values finite and in [0, 1], logical AND on 0/1 inputs (exactly), T(a, 1) = a and
    T(a, 0) = 0, commutativity, T <= minimum, monotonicity in each argument, associativity, and
    a float32 evaluation consistent with the float64 one.

    Args:
        tnorm: an instance, called as ``tnorm(a, b)`` on numpy arrays.
        grid: the inputs and tolerances; built from ``build`` when not given.
        **build: keyword arguments of :meth:`TNormGrid.build` (``samples``, ``triples``,
            ``seed``, ``atol``, ``atol32``).

    Raises:
        AssertionError: naming the T-norm, the property and the first offending (a, b).
    """
    if grid is not None and build:
        raise TypeError("give either a grid or the arguments to build one, not both")
    grid = grid or TNormGrid.build(**build)
    for check in TNORM_CHECKS:
        check(tnorm, grid)


def _pairs(tnorm: Any, grid: TNormGrid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, T(a, b)) over ``values × values``: a varies along axis 0, b along axis 1."""
    a, b = grid.values[:, None], grid.values[None, :]
    return a, b, np.asarray(tnorm(a, b))


def check_tnorm_shapes(tnorm: Any, grid: TNormGrid) -> None:
    """Broadcasting: an (n, 1) and a (1, m) input give (n, m), equal to the explicit broadcast;
    0-d inputs give a 0-d result."""
    a, b, out = _pairs(tnorm, grid)
    expected = (a.size, b.size)
    if out.shape != expected:
        _fail(tnorm, "T-norm", f"T(a[:, None], b[None, :]) has shape {out.shape}, expected {expected}")
    full = np.asarray(tnorm(*np.broadcast_arrays(a, b)))
    bad = ~((full == out) | (np.isnan(full) & np.isnan(out)))
    if bad.any():
        _fail(tnorm, "T-norm", f"broadcast and explicit inputs disagree at {_first(bad, a=a, b=b)}")
    scalar = np.shape(tnorm(np.float64(0.5), np.float64(0.25)))
    if scalar != ():
        _fail(tnorm, "T-norm", f"0-d inputs give shape {scalar}, expected ()")


def check_tnorm_dtype(tnorm: Any, grid: TNormGrid) -> None:
    """float64 inputs give float64, and float32 inputs float32 (a large batch is not upcast)."""
    for dtype in (np.float64, np.float32):
        values = grid.values.astype(dtype)
        got = np.asarray(tnorm(values[:, None], values[None, :])).dtype
        if got != dtype:
            _fail(tnorm, "T-norm", f"{np.dtype(dtype).name} inputs give {got.name}")


def check_tnorm_range(tnorm: Any, grid: TNormGrid) -> None:
    """Every value is finite and in [0, 1] (exactly: rounding must not leave the interval)."""
    a, b, out = _pairs(tnorm, grid)
    bad = ~(np.isfinite(out) & (out >= 0) & (out <= 1))
    if bad.any():
        _fail(tnorm, "T-norm", f"value outside [0, 1] or not finite at {_first(bad, a=a, b=b, T=out)}")


def check_tnorm_binary(tnorm: Any, grid: TNormGrid) -> None:
    """On 0/1 inputs T is logical AND exactly, so crisp data gives crisp intersections."""
    for dtype in (np.float64, np.float32):
        a = np.array([[0], [1]], dtype)
        b = np.array([[0, 1]], dtype)
        out = np.asarray(tnorm(a, b))
        bad = out != np.logical_and(a, b)
        if bad.any():
            _fail(tnorm, "T-norm", f"not logical AND on 0/1 {np.dtype(dtype).name} inputs at "
                  f"{_first(bad, a=a, b=b, T=out)}")


def check_tnorm_boundary(tnorm: Any, grid: TNormGrid) -> None:
    """T(a, 1) = a and T(a, 0) = 0, in both argument orders, within ``atol``."""
    a = grid.values
    one, zero = np.ones_like(a), np.zeros_like(a)
    for label, out, expected in (
        ("T(a, 1) != a", tnorm(a, one), a),
        ("T(1, a) != a", tnorm(one, a), a),
        ("T(a, 0) != 0", tnorm(a, zero), zero),
        ("T(0, a) != 0", tnorm(zero, a), zero),
    ):
        bad = ~(np.abs(np.asarray(out) - expected) <= grid.atol)
        if bad.any():
            _fail(tnorm, "T-norm", f"{label} at {_first(bad, a=a, T=np.asarray(out))}")


def check_tnorm_commutative(tnorm: Any, grid: TNormGrid) -> None:
    """T(a, b) = T(b, a) within ``atol``."""
    a, b, out = _pairs(tnorm, grid)
    bad = ~(np.abs(out - out.T) <= grid.atol)
    if bad.any():
        _fail(tnorm, "T-norm", f"not commutative: T(a, b) != T(b, a) at "
              f"{_first(bad, a=a, b=b, T_ab=out, T_ba=out.T)}")


def check_tnorm_below_minimum(tnorm: Any, grid: TNormGrid) -> None:
    """T(a, b) <= min(a, b) up to a relative ``atol`` (the minimum is the largest T-norm).

    The tolerance is relative, not absolute: soft precision and recall divide sums of T by sums
    of memberships, so T(a, b) > b by even 1e-300 turns a tiny b into a precision above 1.
    """
    a, b, out = _pairs(tnorm, grid)
    bound = np.minimum(a, b)
    bad = ~(out <= bound + grid.atol * bound)
    if bad.any():
        _fail(tnorm, "T-norm", f"T(a, b) > min(a, b) at {_first(bad, a=a, b=b, T=out)}")


def check_tnorm_monotone(tnorm: Any, grid: TNormGrid) -> None:
    """a <= a' implies T(a, b) <= T(a', b), and likewise in b, within ``atol``."""
    a, b, out = _pairs(tnorm, grid)  # values are sorted, so neighbours along an axis are ordered
    for axis, name in ((0, "first"), (1, "second")):
        bad = ~(np.diff(out, axis=axis) >= -grid.atol)
        if bad.any():
            index = tuple(np.argwhere(bad)[0])
            step = tuple(i + (k == axis) for k, i in enumerate(index))
            pair = (float(a[index[0], 0]), float(b[0, index[1]]))
            after = (float(a[step[0], 0]), float(b[0, step[1]]))
            _fail(tnorm, "T-norm", f"not monotone in its {name} argument: T{pair} = "
                  f"{float(out[index])!r} > T{after} = {float(out[step])!r}")


def check_tnorm_associative(tnorm: Any, grid: TNormGrid) -> None:
    """T(T(a, b), c) = T(a, T(b, c)) within ``atol``, up to the rounding of the inner value.

    A steep T-norm (a large Hamacher p, a small Yager p) amplifies the unavoidable rounding of
    an inner value near 1 far beyond ``atol``. So where the two sides differ, each inner value
    may move by ``INNER_ULPS`` float64 ulps: the check fails only if the two resulting ranges
    (widened by ``atol``), both bracketed by monotonicity, do not overlap.
    """
    a, b, c = grid.triples
    ab, bc = np.asarray(tnorm(a, b)), np.asarray(tnorm(b, c))
    left, right = np.asarray(tnorm(ab, c)), np.asarray(tnorm(a, bc))
    bad = ~(np.abs(left - right) <= grid.atol)
    if not bad.any():
        return
    a, b, c, ab, bc, left, right = (x[bad] for x in (a, b, c, ab, bc, left, right))
    (ab_low, ab_high), (bc_low, bc_high) = _nudge(ab), _nudge(bc)
    left_low, left_high = np.asarray(tnorm(ab_low, c)), np.asarray(tnorm(ab_high, c))
    right_low, right_high = np.asarray(tnorm(a, bc_low)), np.asarray(tnorm(a, bc_high))
    bad = (left_low - grid.atol > right_high) | (right_low - grid.atol > left_high)
    if bad.any():
        _fail(tnorm, "T-norm", f"not associative: T(T(a, b), c) != T(a, T(b, c)) at "
              f"{_first(bad, a=a, b=b, c=c, left=left, right=right)}")


#: How far (in float64 ulps of the value) the associativity check lets an inner value move.
INNER_ULPS = 16


def _nudge(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` moved down and up by :data:`INNER_ULPS` relative ulps, kept in [0, 1]."""
    step = INNER_ULPS * np.finfo(np.float64).eps * np.abs(x)
    return np.clip(x - step, 0, 1), np.clip(x + step, 0, 1)


def check_tnorm_float32(tnorm: Any, grid: TNormGrid) -> None:
    """On float32 inputs T agrees with its float64 values on the same (rounded) inputs.

    The bound allows for rounding inside the float32 computation twice over: as a perturbation
    of the inputs by a few float32 ulps (which moves T by at most the float64 values at the
    perturbed inputs, T being monotone, so discontinuous T-norms are covered), and as an
    absolute error ``atol32`` of the result.
    """
    values32 = grid.values.astype(np.float32)
    a32, b32 = values32[:, None], values32[None, :]
    out = np.asarray(tnorm(a32, b32)).astype(np.float64)
    a, b = a32.astype(np.float64), b32.astype(np.float64)
    shift = 4 * float(np.finfo(np.float32).eps)
    low = np.asarray(tnorm(np.clip(a - shift, 0, 1), np.clip(b - shift, 0, 1))) - grid.atol32
    high = np.asarray(tnorm(np.clip(a + shift, 0, 1), np.clip(b + shift, 0, 1))) + grid.atol32
    bad = ~((low <= out) & (out <= high))
    if bad.any():
        _fail(tnorm, "T-norm", f"float32 result far from the float64 one at "
              f"{_first(bad, a=a, b=b, T32=out, T64_low=low, T64_high=high)}")


#: The T-norm checks, in the order :func:`check_tnorm` runs them (cheap structural ones first).
TNORM_CHECKS: tuple[TNormCheck, ...] = (
    check_tnorm_shapes,
    check_tnorm_dtype,
    check_tnorm_range,
    check_tnorm_binary,
    check_tnorm_boundary,
    check_tnorm_commutative,
    check_tnorm_below_minimum,
    check_tnorm_monotone,
    check_tnorm_associative,
    check_tnorm_float32,
)


# ---------------------------------------------------------------------------------------------
# Similarities
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimilarityCase:
    """The inputs of the similarity checks: ``xs`` (the items given) and ``ys`` (the same,
    reversed and one shorter: lists of different lengths and orders), and the tolerance."""

    xs: list[Any]
    ys: list[Any]
    atol: float


SimilarityCheck = Callable[[Any, SimilarityCase], None]


def check_similarity(
    similarity: Any, items: list[Any], *, symmetric: bool = True, atol: float = 1e-12
) -> None:
    """Check that ``similarity`` keeps the Similarity protocol on ``items``; raise AssertionError
    at the first failure.

    The properties (:data:`SIMILARITY_CHECKS`): ``matrix(xs, ys)`` has shape
    (len(xs), len(ys)) for xs and ys of different lengths, empty lists included; the values are
    finite floats in [0, 1]; the inputs are not modified; passing the same list object twice
    gives the same matrix as passing a copy; equal items (by ``==``) have similarity 1 (within
    ``atol``); with ``symmetric``, ``matrix(ys, xs)`` is the transpose of ``matrix(xs, ys)``; if
    the similarity has ``pairs``, it equals the matrix on every (x, y) pair, with shape
    (len(xs),) (also for empty lists); if it has ``matrices``, it equals the concatenated
    ``matrix(g, g)`` of each group (an empty group included).

    Args:
        similarity: an instance with ``matrix`` (and optionally ``pairs``, ``matrices``).
        items: at least two items it accepts; include duplicates and edge cases (for strings:
            the empty string, non-ASCII text) to exercise more.
        symmetric: also check that sim(x, y) = sim(y, x).
        atol: the absolute tolerance of the comparisons between values.

    Raises:
        AssertionError: naming the similarity, the property and the first offending items.
    """
    items = list(items)
    if len(items) < 2:
        raise ValueError("check_similarity needs at least two items")
    case = SimilarityCase(items, items[::-1][: len(items) - 1], atol)
    for check in SIMILARITY_CHECKS:
        if symmetric or check is not check_similarity_symmetric:
            check(similarity, case)


def _matrix(similarity: Any, a: list[Any], b: list[Any]) -> np.ndarray:
    """``similarity.matrix(a, b)``, failing unless it is a float array of shape (len(a), len(b))."""
    out = similarity.matrix(a, b)
    if not isinstance(out, np.ndarray) or out.dtype.kind != "f":
        _fail(similarity, "similarity", f"matrix() returned {type(out).__name__} "
              f"{getattr(out, 'dtype', '')}, expected a floating numpy array")
    if out.shape != (len(a), len(b)):
        _fail(similarity, "similarity", f"matrix() of {len(a)} × {len(b)} items has shape "
              f"{out.shape}, expected {(len(a), len(b))}")
    return out


def _at(bad: np.ndarray, a: list[Any], b: list[Any]) -> str:
    """The items of the first true cell of ``bad``, a (len(a), len(b)) mask."""
    i, j = (int(k) for k in np.argwhere(bad)[0])
    return f"x={a[i]!r}, y={b[j]!r}"


def check_similarity_shapes(similarity: Any, case: SimilarityCase) -> None:
    for a, b in (([], case.ys), (case.xs, []), ([], []), (case.xs, case.ys)):
        _matrix(similarity, a, b)


def check_similarity_range(similarity: Any, case: SimilarityCase) -> None:
    m = _matrix(similarity, case.xs, case.ys)
    bad = ~(np.isfinite(m) & (m >= 0) & (m <= 1))
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        _fail(similarity, "similarity", f"value {float(m[i, j])!r} outside [0, 1] or not finite at "
              f"{_at(bad, case.xs, case.ys)}")


def check_similarity_inputs_kept(similarity: Any, case: SimilarityCase) -> None:
    xs, ys = list(case.xs), list(case.ys)
    _matrix(similarity, xs, ys)
    if (xs, ys) != (case.xs, case.ys):
        _fail(similarity, "similarity", "matrix() modified its input lists")


def check_similarity_same_list(similarity: Any, case: SimilarityCase) -> None:
    xs = case.xs
    bad = ~(np.abs(_matrix(similarity, xs, xs) - _matrix(similarity, xs, list(xs))) <= case.atol)
    if bad.any():
        _fail(similarity, "similarity", f"matrix(xs, xs) differs from matrix(xs, list(xs)) at {_at(bad, xs, xs)}")


def check_similarity_identity(similarity: Any, case: SimilarityCase) -> None:
    xs = case.xs
    same = _matrix(similarity, xs, list(xs))
    equal = np.array([[x == y for y in xs] for x in xs], dtype=bool)
    bad = equal & ~(np.abs(same - 1) <= case.atol)
    if bad.any():
        _fail(similarity, "similarity", f"equal items have similarity {float(same[bad][0])!r}, not 1, at "
              f"{_at(bad, xs, xs)}")


def check_similarity_symmetric(similarity: Any, case: SimilarityCase) -> None:
    m = _matrix(similarity, case.xs, case.ys)
    bad = ~(np.abs(m - _matrix(similarity, case.ys, case.xs).T) <= case.atol)
    if bad.any():
        _fail(similarity, "similarity", f"not symmetric: sim(x, y) != sim(y, x) at {_at(bad, case.xs, case.ys)}")


def check_similarity_pairs(similarity: Any, case: SimilarityCase) -> None:
    pairs = optional(similarity, "pairs")
    if pairs is None:
        return
    m = _matrix(similarity, case.xs, case.ys)
    left = [x for x in case.xs for _ in case.ys]
    right = [y for _ in case.xs for y in case.ys]
    got = np.asarray(pairs(left, right))
    if got.shape != (len(left),):
        _fail(similarity, "similarity", f"pairs() of {len(left)} pairs has shape {got.shape}, expected {(len(left),)}")
    bad = ~(np.abs(got - m.ravel()) <= case.atol)
    if bad.any():
        k = int(np.argwhere(bad)[0][0])
        _fail(similarity, "similarity", f"pairs() gives {float(got[k])!r} but matrix() "
              f"{float(m.ravel()[k])!r} at x={left[k]!r}, y={right[k]!r}")
    empty = np.asarray(pairs([], [])).shape
    if empty != (0,):
        _fail(similarity, "similarity", f"pairs([], []) has shape {empty}, expected (0,)")


def check_similarity_matrices(similarity: Any, case: SimilarityCase) -> None:
    matrices = optional(similarity, "matrices")
    if matrices is None:
        return
    groups = [case.xs, [], case.ys, case.xs[:1]]
    want = np.concatenate([_matrix(similarity, g, g).ravel() for g in groups])
    got = np.asarray(matrices([x for g in groups for x in g], [len(g) for g in groups]))
    if got.shape != want.shape:
        _fail(similarity, "similarity", f"matrices() of groups of {[len(g) for g in groups]} items has "
              f"shape {got.shape}, expected {want.shape}")
    bad = ~(np.abs(got - want) <= case.atol)
    if bad.any():
        k = int(np.argwhere(bad)[0][0])
        _fail(similarity, "similarity", f"matrices() gives {float(got[k])!r} where matrix() of each "
              f"group gives {float(want[k])!r} (value {k} of the concatenation)")


#: Every property of a similarity, in the order they are checked (the first failure is reported).
SIMILARITY_CHECKS: tuple[SimilarityCheck, ...] = (
    check_similarity_shapes,
    check_similarity_range,
    check_similarity_inputs_kept,
    check_similarity_same_list,
    check_similarity_identity,
    check_similarity_symmetric,
    check_similarity_pairs,
    check_similarity_matrices,
)


# ---------------------------------------------------------------------------------------------
# Set representations
# ---------------------------------------------------------------------------------------------


#: The columns of a cardinality table, in :meth:`evalkit.table.CardinalityTable.columns` order.
COLUMNS = ("ref", "pred", "inter", "matched_ref", "matched_pred")


def _rows(data: Any, index: Any) -> Any:
    """Samples ``index`` (a slice or an index array) of a membership array or item sets."""
    if isinstance(data, np.ndarray) or not hasattr(data, "take"):
        return np.asarray(data)[index]
    return data[index] if isinstance(index, slice) else data.take(np.asarray(index))


def check_representation(
    representation: Any, reference: Any, prediction: Any, *, tnorm: Any = None,
    similarity: Any = None, symmetric: bool = True, atol: float = 1e-9, seed: int = 0,
) -> None:
    """Check that ``representation`` fills a valid cardinality table from ``reference`` and
    ``prediction``; raise AssertionError at the first failure.

    The properties: ``cardinalities`` returns a table whose columns are floating arrays of shape
    (samples, classes), finite and >= 0; samples are independent — a permutation of the samples
    permutes the table's rows, and the two halves computed separately give the whole (so chunked
    runs equal whole ones); and, with ``symmetric``, the two sides are treated alike: the
    reference against itself gives |G| = |P|, and swapping the sides swaps |G| and |P| and keeps
    |G ∩ P| (or swaps the per-side matched masses, when the table has them); true for
    commutative T-norms and symmetric similarities; pass ``symmetric=False`` for, e.g.,
    different thresholds per side.

    Args:
        representation: an instance with ``cardinalities``.
        reference, prediction: a batch it reads, at least two samples: (samples, classes)
            membership arrays, or :class:`evalkit.items.ItemSets` for item representations.
        tnorm, similarity: the components it uses (``None`` if it uses none).
        symmetric: also check that the sides are treated alike.
        atol: the absolute tolerance of the comparisons.
        seed: seed of the sample permutation.

    Raises:
        AssertionError: naming the representation and the property.
    """
    kind = "representation"
    n = len(reference)
    if n < 2 or len(prediction) != n:
        raise ValueError("check_representation needs two sides with the same number (>= 2) of samples")

    def table(ref: Any, pred: Any, what: str) -> list[np.ndarray]:
        out = representation.cardinalities(ref, pred, tnorm=tnorm, similarity=similarity)
        columns = out.columns() if hasattr(out, "columns") else None
        if columns is None:
            _fail(representation, kind, f"cardinalities() on {what} returned {type(out).__name__}, "
                  "expected an evalkit.table.CardinalityTable")
        shape = (len(ref), len(getattr(ref, "classes", ())) or np.shape(ref)[1])
        for name, column in zip(COLUMNS, columns):
            if not isinstance(column, np.ndarray) or column.dtype.kind != "f" or column.shape != shape:
                _fail(representation, kind, f"{name} on {what} is {type(column).__name__} "
                      f"{getattr(column, 'dtype', '')} of shape {np.shape(column)}, expected floats "
                      f"of shape {shape} (samples x classes)")
            if not (np.isfinite(column).all() and (column >= 0).all()):
                _fail(representation, kind, f"{name} on {what} has negative, NaN or infinite values")
        return [c.astype(np.float64) for c in columns]

    def same(a: list[np.ndarray], b: list[np.ndarray], what: str, names: Sequence[str] = COLUMNS) -> None:
        for name, x, y in zip(names, a, b):
            bad = ~(np.abs(x - y) <= atol)
            if bad.any():
                row, col = (int(i) for i in np.argwhere(bad)[0])
                _fail(representation, kind, f"{what}: {name} differs at sample {row}, class {col} "
                      f"({float(x[row, col])!r} vs {float(y[row, col])!r})")

    whole = table(reference, prediction, "the batch")
    order = np.random.default_rng(seed).permutation(n)
    permuted = table(_rows(reference, order), _rows(prediction, order), "permuted samples")
    same([c[order] for c in whole], permuted, "permuting the samples does not permute the table")
    half = n // 2
    first = table(_rows(reference, slice(0, half)), _rows(prediction, slice(0, half)), "the first half")
    second = table(_rows(reference, slice(half, n)), _rows(prediction, slice(half, n)), "the second half")
    same(whole, [np.vstack(parts) for parts in zip(first, second)], "the halves do not give the whole")
    if symmetric:
        itself = table(reference, reference, "the reference against itself")
        same([itself[0]], [itself[1]], "the reference against itself has |G| != |P|")
        swapped = table(prediction, reference, "swapped sides")
        # Per-side matched masses swap too (|G ∩ P| is then one of them).
        kept = (0, 1, 3, 4) if len(whole) == 5 else (0, 1, 2)
        mirror = {0: 1, 1: 0, 2: 2, 3: 4, 4: 3}
        same([whole[i] for i in kept], [swapped[mirror[i]] for i in kept],
             "swapping the sides does not swap |G| and |P|", [COLUMNS[i] for i in kept])


# ---------------------------------------------------------------------------------------------
# Set metrics and averagings
# ---------------------------------------------------------------------------------------------


def _valid_cardinalities(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Random (ref, pred, inter) with 0 <= inter <= min(ref, pred), exact zeros and full overlaps
    included."""
    ref = rng.choice([0.0, 0.5, 1.0, 2.0, 3.5, 10.0], size=shape)
    pred = rng.choice([0.0, 0.25, 1.0, 2.0, 4.0, 10.0], size=shape)
    share = rng.choice([0.0, 0.3, 0.5, 1.0], size=shape)
    return ref, pred, np.minimum(ref, pred) * share


def check_metric(metric: Any, *, bounded: bool = True, seed: int = 0) -> None:
    """Check that a set metric's ``ratio(ref, pred, inter)`` is a vectorized ratio of the three
    cardinalities; raise AssertionError at the first failure.

    The properties: it returns (numerator, denominator) broadcastable to the inputs' shape, with
    a non-negative denominator; element-wise results equal those of one cell at a time; and,
    with ``bounded`` (every ratio of a set's overlap, like precision or Jaccard), the value lies
    in [0, 1] whenever 0 <= |G ∩ P| <= min(|G|, |P|), is 1 for a full overlap
    (|G| = |P| = |G ∩ P| > 0) and 0 without overlap. Pass ``bounded=False`` for metrics that
    report a cardinality itself. A metric with ``lower_is_better`` (a loss) is checked the other
    way round: 0 for a full overlap, above 0 without overlap. A metric with ``reads_cells`` gets
    ``cells`` = |G| + |P|, a valid cell count (no side holds more than one unit per cell).

    Raises:
        AssertionError: naming the metric, the property and the first offending cardinalities.
    """
    kind = "metric"
    reads_cells, loss = optional(metric, "reads_cells"), optional(metric, "lower_is_better")

    def ratio(ref: np.ndarray, pred: np.ndarray, inter: np.ndarray) -> Any:
        return metric.ratio(ref, pred, inter, ref + pred) if reads_cells else metric.ratio(ref, pred, inter)

    ref, pred, inter = _valid_cardinalities(np.random.default_rng(seed), (200,))
    out = ratio(ref, pred, inter)
    if not (isinstance(out, tuple | list) and len(out) == 2):
        _fail(metric, kind, f"ratio() returned {type(out).__name__}, expected (numerator, denominator)")
    num, den = (np.broadcast_to(np.asarray(x, dtype=np.float64), ref.shape) for x in out)
    if (den < 0).any() or np.isnan(num).any() or np.isnan(den).any():
        _fail(metric, kind, f"negative or NaN denominator or NaN numerator at "
              f"{_first((den < 0) | np.isnan(num) | np.isnan(den), ref=ref, pred=pred, inter=inter)}")
    for k in range(0, ref.size, 37):
        one = [np.asarray(x, dtype=np.float64) for x in ratio(ref[k : k + 1], pred[k : k + 1], inter[k : k + 1])]
        if not np.allclose([np.broadcast_to(x, (1,))[0] for x in one], [num[k], den[k]], rtol=1e-12, atol=0):
            _fail(metric, kind, f"one cell gives {one} but the vectorized call {num[k]}, {den[k]} at "
                  f"ref={ref[k]!r}, pred={pred[k]!r}, inter={inter[k]!r}")
    if not bounded:
        return
    defined = den > 0
    value = np.divide(num, den, out=np.zeros_like(num), where=defined)
    bad = defined & ~((value >= -1e-12) & (value <= 1 + 1e-12))
    if bad.any():
        _fail(metric, kind, f"value outside [0, 1] at {_first(bad, ref=ref, pred=pred, inter=inter)}")
    full = np.array([1.0, 2.5, 7.0])
    best, worst = (0.0, "above 0") if loss else (1.0, "0")
    got = np.divide(*(np.asarray(x, dtype=np.float64) for x in ratio(full, full, full)))
    if not np.allclose(got, best, rtol=0, atol=1e-12):
        _fail(metric, kind, f"a full overlap |G| = |P| = |G ∩ P| = {full.tolist()} gives {got.tolist()}, not {best:g}")
    got = np.divide(*(np.asarray(x, dtype=np.float64) for x in ratio(full, full, 0 * full)))
    if not ((got > 1e-12).all() if loss else np.allclose(got, 0.0, rtol=0, atol=1e-12)):
        _fail(metric, kind, f"no overlap (|G ∩ P| = 0) gives {got.tolist()}, not {worst}")


def check_data_metric(
    metric: Any, reference: Any = None, prediction: Any = None, *, classes: Sequence[str] | None = None,
    seed: int = 0, atol: float = 1e-9,
) -> None:
    """Check that a data metric's state reduces chunk by chunk; raise AssertionError at the first
    failure.

    The properties: ``update`` leaves its inputs as they were; ``compute`` returns a number or a
    mapping of names to numbers, :class:`~evalkit.measures.PerClass` (one value per class) and
    :class:`~evalkit.measures.PerLevel`, never a bare array; the states of chunks merged by ``+``
    give the value of the whole, whatever the chunks and the order they are merged in (within
    ``atol``: summation order); every result named other than the metric has a ``glossary`` line;
    and, for a ``weighted`` metric, weights of 1 equal no weights, an integer weight k equals the
    sample repeated k times, and a weight of 0 equals the sample left out.

    Args:
        metric: an instance (``prepare(classes)``, if it has one, is called with ``classes``).
        reference, prediction: the data it reads, of one length: (samples x classes) arrays, or
            :class:`~evalkit.plugin.ItemSets` for a metric that reads items; by default 60 x 4
            seeded random arrays, the reference crisp with each class present, the prediction in
            [0, 1].
        classes: the class names, in column order (default ``class_0``, ``class_1``, ...).
        seed: seed of the defaults, the chunks and their order.
        atol: the tolerance of values computed in another order.

    Raises:
        AssertionError: naming the metric, the property and the chunks or weights concerned.
    """
    kind = "data metric"
    rng = np.random.default_rng(seed)
    if reference is None or prediction is None:
        reference = (rng.random((60, 4)) < 0.4).astype(np.float64)
        reference[:4] = np.eye(4)  # every class present and absent somewhere
        reference[4:8] = 1 - np.eye(4)
        prediction = rng.random(reference.shape)
    n = len(reference)
    if (prepare := optional(metric, "prepare")) is not None:
        prepare(list(classes) if classes is not None else [f"class_{k}" for k in range(np.shape(reference)[1])])

    def value(rows: list[np.ndarray], weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
        states = []
        for chunk in rows:
            given = (_rows(reference, chunk), _rows(prediction, chunk))
            kept = [np.array(side, copy=True) if isinstance(side, np.ndarray) else None for side in given]
            states.append(metric.update(*given, weights[chunk]) if weights is not None else metric.update(*given))
            if any(k is not None and not np.array_equal(k, side, equal_nan=True) for k, side in zip(kept, given)):
                _fail(metric, kind, "update() modified its input arrays")
        total = states[0]
        for state in states[1:]:
            total = total + state
        return _named_values(metric, kind, metric.compute(total))

    whole = value([np.arange(n)])
    for chunks in (2, 5):
        parts = np.array_split(rng.permutation(n), chunks)
        for order in (parts, parts[::-1]):
            got = value([np.sort(part) for part in order])
            _same(metric, kind, got, whole, atol, f"the states of {chunks} chunks merged by + (in this order)")
    glossary = optional(metric, "glossary")
    for name in whole:
        if name != metric.name and not str(glossary.get(name, "")).strip():
            _fail(metric, kind, f"result {name!r} has no glossary line (the optional `glossary`)")
    if not optional(metric, "weighted"):
        return
    _same(metric, kind, value([np.arange(n)], np.ones(n)), whole, atol, "weights of 1")
    counts = rng.integers(0, 3, n)
    counts[0] = 0  # one sample left out, at least
    repeated = value([np.repeat(np.arange(n), counts)])
    _same(metric, kind, value([np.arange(n)], counts.astype(np.float64)), repeated, atol,
          "integer weights (against each sample repeated as many times; 0 left out)")


def _named_values(metric: Any, kind: str, out: Any) -> dict[str, np.ndarray]:
    """``compute``'s output as arrays by name; a bare array is refused, as evalkit refuses it."""
    from evalkit.measures import Curve, CurvePerClass, PerClass, PerLevel

    named = out if isinstance(out, Mapping) else {metric.name: out}
    values: dict[str, np.ndarray] = {}
    for name, given in named.items():
        if isinstance(given, PerClass | PerLevel):
            values[name] = given.values
        elif isinstance(given, Curve | CurvePerClass):
            continue  # drawn, not compared: its points follow from the same state
        elif isinstance(given, np.ndarray) and given.ndim:
            _fail(metric, kind, f"compute() returned a bare array for {name!r}; wrap it in PerClass or PerLevel")
        else:
            try:
                values[name] = np.asarray(float(given))
            except (TypeError, ValueError):
                _fail(metric, kind, f"compute() returned {type(given).__name__} for {name!r}, expected a number, "
                      "PerClass or PerLevel")
    return values


def _same(metric: Any, kind: str, got: dict[str, np.ndarray], want: dict[str, np.ndarray], atol: float,
          how: str) -> None:
    if got.keys() != want.keys():
        _fail(metric, kind, f"{how} give the results {sorted(got)}, the whole data {sorted(want)}")
    for name in want:
        if np.shape(got[name]) != np.shape(want[name]) or not np.allclose(
                got[name], want[name], rtol=0, atol=atol, equal_nan=True):
            _fail(metric, kind, f"{how} give {name} = {got[name]}, the whole data {want[name]}")


class _Ratio:
    """A set metric for the averaging checks, independent of any plugin."""

    def __init__(self, name: str, ratio: Callable[..., tuple[np.ndarray, np.ndarray]]) -> None:
        self.name, self._ratio = name, ratio

    def ratio(self, ref: np.ndarray, pred: np.ndarray, inter: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._ratio(ref, pred, inter)


_AVERAGING_METRICS = (
    _Ratio("precision", lambda ref, pred, inter: (inter, pred)),
    _Ratio("recall", lambda ref, pred, inter: (inter, ref)),
    _Ratio("f1", lambda ref, pred, inter: (2 * inter, ref + pred)),
)


def check_averaging(averaging: Any, *, n_samples: int = 40, n_classes: int = 5, seed: int = 0) -> None:
    """Check that ``averaging`` reduces cardinality tables sensibly; raise AssertionError at the
    first failure.

    It builds summaries the way the engine does (:meth:`evalkit.table.Summary.of`, with the
    per-sample sums the averaging asks for through ``sample_metrics``) from random valid tables,
    and checks for precision, recall and F1: ``reduce`` returns a float or one value per class;
    values lie in [0, 1] for valid tables; a perfect table (|G| = |P| = |G ∩ P|) gives 1; a table
    summed in two chunks gives the value of the whole; permuting the classes permutes per-class
    values and leaves a single value unchanged; and an empty table gives ``zero_division``
    (0, 1, or NaN).

    Raises:
        AssertionError: naming the averaging, the metric and the property.
    """
    from evalkit.table import CardinalityTable, Summary

    kind = "averaging"
    rng = np.random.default_rng(seed)
    shape = (n_samples, n_classes)
    tables = {
        "a random table": _valid_cardinalities(rng, shape),
        "a perfect table": (np.full(shape, 2.0),) * 3,
        "an empty table": (np.zeros(shape),) * 3,
    }
    wanted = list(averaging.sample_metrics(list(_AVERAGING_METRICS)))

    def reduce(columns: tuple[np.ndarray, ...], metric: Any, zero_division: float, chunks: int = 1) -> np.ndarray:
        parts = [
            Summary.of(CardinalityTable(*(c[rows] for c in columns)), wanted, zero_division)
            for rows in np.array_split(np.arange(n_samples), chunks)
        ]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        value = np.asarray(averaging.reduce(total, metric, zero_division), dtype=np.float64)
        if value.shape not in ((), (n_classes,)):
            _fail(averaging, kind, f"reduce() for {metric.name} returned shape {value.shape}, expected "
                  f"a float or one value per class ({n_classes},)")
        return value

    for metric in _AVERAGING_METRICS:
        random = tables["a random table"]
        value = reduce(random, metric, 0.0)
        if not ((value >= -1e-12) & (value <= 1 + 1e-12)).all():
            _fail(averaging, kind, f"{metric.name} of a random valid table is {value}, outside [0, 1]")
        if not np.allclose(reduce(random, metric, 0.0, chunks=3), value, rtol=1e-12, atol=1e-12):
            _fail(averaging, kind, f"{metric.name} differs when the table is summed in three chunks")
        order = rng.permutation(n_classes)
        shuffled = reduce(tuple(c[:, order] for c in random), metric, 0.0)
        if not np.allclose(shuffled, value[order] if value.ndim else value, rtol=1e-12, atol=1e-12):
            _fail(averaging, kind, f"{metric.name} changes when the classes are permuted")
        perfect = reduce(tables["a perfect table"], metric, 0.0)
        if not np.allclose(perfect, 1.0, rtol=0, atol=1e-12):
            _fail(averaging, kind, f"{metric.name} of a perfect table is {perfect}, not 1")
        for zero_division in (0.0, 1.0, float("nan")):
            empty = reduce(tables["an empty table"], metric, zero_division)
            if not np.allclose(empty, zero_division, rtol=0, atol=0, equal_nan=True):
                _fail(averaging, kind, f"{metric.name} of an empty table is {empty} with "
                      f"zero_division={zero_division}, expected {zero_division}")


# The checks of loaders and report writers drive evalkit's file handling: their own module.
from evalkit.file_checks import check_loader, check_report_writer  # noqa: E402
