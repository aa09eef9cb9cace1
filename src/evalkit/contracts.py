"""Contracts at the plugin boundary: every component evalkit creates is handed out wrapped.

The wrapper passes attribute access through, and for each call of a component's method it turns
an unexpected exception into a :class:`~evalkit.errors.PluginError` that names the component,
its plugin and distribution, and checks the outputs the protocol promises (shape, range, NaN)
with one min and one max per returned array. Calls are per batch, never per element, so the
checks cost a pass over each output and nothing else. Errors evalkit raises on purpose
(:class:`~evalkit.errors.EvalkitError`) pass through unchanged: they already say what is wrong.
A loader's I/O and decode errors (a file that is not UTF-8, truncated or corrupt) become a
:class:`~evalkit.errors.DataError` naming the file (:func:`evalkit.loading.reading`): they are
about the file, not the plugin; so is an OSError naming a file that a component reads (a model,
an ontology) when it is created.

Built-in components are wrapped exactly like third-party ones; a component handed to another
(a T-norm to a representation) is the wrapped one, so its outputs are checked wherever it is
used.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from evalkit import budget
from evalkit.errors import DataError, EvalkitError, PluginContractError, PluginError
from evalkit.loading import reading

Check = Callable[["Guarded", Any, tuple, dict], Any]


class Guarded:
    """A component as evalkit hands it out: its attributes, with its methods' calls guarded."""

    #: method name -> check of its output, for the kind's protocol methods
    _checks: dict[str, Check] = {}
    #: method name -> check of the caller's arguments (a mistake of the caller, not the plugin)
    _before: dict[str, Callable[[Guarded, tuple, dict], None]] = {}

    def __init__(self, component: Any, who: str) -> None:
        object.__setattr__(self, "_target", component)
        object.__setattr__(self, "_who", who)

    def __getattr__(self, name: str) -> Any:  # only for names not defined on the wrapper
        if name in ("_target", "_who"):  # not set yet: a copy (copy.deepcopy) being rebuilt
            raise AttributeError(name)
        value = getattr(self._target, name)
        if name.startswith("_") or not callable(value) or isinstance(value, type):
            return value
        guarded = self._guarded(name, value)
        object.__setattr__(self, name, guarded)  # methods are stable: wrap each once
        return guarded

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)

    def __repr__(self) -> str:
        return f"<{self._who}: {self._target!r}>"

    def _guarded(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        check, before = self._checks.get(name), self._before.get(name)

        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            if before is not None:
                before(self, args, kwargs)
            out = self._call(name, method, *args, **kwargs)
            return out if check is None else check(self, out, args, kwargs)

        return call

    def _call(self, name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return calling(self._who, name, method, *args, **kwargs)

    def _fail(self, call: str, problem: str, expected: str) -> None:
        raise PluginContractError(f"{self._who}: {call} {problem}; expected {expected}")

    def _unit_interval(self, call: str, values: Any, shape: tuple[int, ...]) -> np.ndarray:
        """``values`` as a floating array of ``shape`` with every value in [0, 1] (NaN fails both
        comparisons)."""
        if not isinstance(values, np.ndarray):
            values = np.asarray(values)
        expected = f"an array of shape {shape} with values in [0, 1]"
        if values.shape != shape:
            self._fail(call, f"returned shape {values.shape}", expected)
        if values.dtype.kind not in "fiub":
            self._fail(call, f"returned dtype {values.dtype}", expected)
        if values.size:
            lo, hi = values.min(), values.max()
            if not (lo >= 0 and hi <= 1):
                bad = np.isnan(values) | (values < 0) | (values > 1)
                index = tuple(int(i) for i in np.argwhere(bad)[0])
                self._fail(
                    call, f"returned {float(values[index])!r} at index {index} ({int(bad.sum())} value(s) "
                    f"outside [0, 1] or NaN; range [{lo:g}, {hi:g}])", expected,
                )
        return values


def calling(who: str, name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``method(*args, **kwargs)``, with an unexpected exception turned into a PluginError that
    names the component (``who``) and the method."""
    try:
        return method(*args, **kwargs)
    except EvalkitError:
        raise
    except MemoryError:
        raise budget.out_of_memory(f"in {name}() of {who}", "the data it is given, or its parameters") from None
    except OSError as exc:
        if exc.filename is None:
            raise _bug(who, name, exc) from exc
        raise DataError(f"{who}: cannot read {exc.filename} ({exc.strerror or exc}); check the path") from exc
    except Exception as exc:
        raise _bug(who, name, exc) from exc


def _bug(who: str, name: str, exc: Exception) -> PluginError:
    return PluginError(
        f"{who} raised {type(exc).__name__} in {name}(): {exc}. This is a bug in the plugin "
        "(or input it cannot handle): report it to its authors with this message"
    )


def _tnorm_output(guard: Guarded, out: Any, args: tuple, kwargs: dict) -> np.ndarray:
    a, b = (*args, *kwargs.values())[:2]
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    return guard._unit_interval(f"T(a, b) of shapes {np.shape(a)} and {np.shape(b)}", out, shape)


def _matrix_output(guard: Guarded, out: Any, args: tuple, kwargs: dict) -> np.ndarray:
    xs, ys = (*args, *kwargs.values())[:2]
    shape = (len(xs), len(ys))
    return guard._unit_interval(f"matrix() of {shape[0]} x {shape[1]} items", out, shape).astype(np.float64, copy=False)


def _pairs_output(guard: Guarded, out: Any, args: tuple, kwargs: dict) -> np.ndarray:
    xs = (*args, *kwargs.values())[0]
    return guard._unit_interval(f"pairs() of {len(xs)} pairs", out, (len(xs),)).astype(np.float64, copy=False)


def _matrices_output(guard: Guarded, out: Any, args: tuple, kwargs: dict) -> np.ndarray:
    sizes = np.asarray((*args, *kwargs.values())[1], dtype=np.intp)
    call = f"matrices() of {len(sizes)} groups"
    return guard._unit_interval(call, out, (int((sizes**2).sum()),)).astype(np.float64, copy=False)


def _ratio_output(guard: Guarded, out: Any, args: tuple, kwargs: dict) -> tuple[np.ndarray, np.ndarray]:
    ref = (*args, *kwargs.values())[0]
    shape = np.shape(ref)
    expected = f"(numerator, denominator), each broadcastable to the cardinalities' shape {shape}"
    if not (isinstance(out, Sequence) and len(out) == 2):
        guard._fail("ratio()", f"returned {type(out).__name__}", expected)
    for part in out:
        try:
            np.broadcast_shapes(np.shape(part), shape)
        except ValueError:
            guard._fail("ratio()", f"returned a part of shape {np.shape(part)}", expected)
    return out


class GuardedTNorm(Guarded):
    """T-norms are called, so the wrapper must define ``__call__`` itself."""

    def __call__(self, a: Any, b: Any) -> np.ndarray:
        return _tnorm_output(self, self._call("__call__", self._target, a, b), (a, b), {})


def _same_length(guard: Guarded, args: tuple, kwargs: dict) -> None:
    xs, ys = (*args, *kwargs.values())[:2]
    if len(xs) != len(ys):
        raise ValueError(f"{guard._who}: pairs() needs two lists of equal length, got {len(xs)} and {len(ys)}")


class GuardedSimilarity(Guarded):
    _checks = {"matrix": _matrix_output, "pairs": _pairs_output, "matrices": _matrices_output}
    _before = {"pairs": _same_length}


class GuardedMetric(Guarded):
    _checks = {"ratio": _ratio_output}


class GuardedLoader(Guarded):
    """A file that cannot be read (not UTF-8, truncated, corrupt, malformed CSV) is a data error
    naming the file, whatever loader reads it; "a bug in the plugin" is kept for the rest. A
    ``stream`` is guarded chunk by chunk, as its file is read."""

    def _call(self, name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if name not in ("load", "sniff", "diagnose", "stream", "header_classes", "sample_ids"):
            return super()._call(name, method, *args, **kwargs)
        path = (*args, *kwargs.values())[0]

        def read(*args: Any, **kwargs: Any) -> Any:
            with reading(path):
                return method(*args, **kwargs)

        if name == "stream":  # the generator reads as it is advanced: guard each step
            return self._chunks(super()._call(name, read, *args, **kwargs), path)
        return super()._call(name, read, *args, **kwargs)

    def _chunks(self, chunks: Any, path: Any) -> Any:
        """Each chunk of a stream, read under the same guard as a whole file."""

        def advance() -> Any:
            with reading(path):
                return next(chunks, None)

        while (chunk := super()._call("stream", advance)) is not None:
            yield chunk


GUARDS: dict[str, type[Guarded]] = {
    "tnorm": GuardedTNorm,
    "similarity": GuardedSimilarity,
    "metric": GuardedMetric,
    "loader": GuardedLoader,
}


def guard(kind: str, component: Any, who: str) -> Guarded:
    """``component`` wrapped for ``kind``: every method call guarded, outputs checked."""
    return GUARDS.get(kind, Guarded)(component, who)


def who(component: Any, kind: str = "component") -> str:
    """How errors name ``component``: with its plugin and distribution when evalkit created it."""
    if isinstance(component, Guarded):
        return component._who
    return f"{kind} {getattr(component, 'name', type(component).__name__)!r}"


def unwrap(component: Any) -> Any:
    """The plugin's own object behind a wrapper (or ``component`` itself)."""
    return component._target if isinstance(component, Guarded) else component
