"""Timing helpers shared by the benchmark scripts (run from the repository root)."""

from __future__ import annotations

import cProfile
import gc
import io
import pstats
import time
import tracemalloc
from collections.abc import Callable, Mapping
from typing import Any


def with_bytecode(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without PYTHONDONTWRITEBYTECODE, for the Python processes a benchmark starts: a
    user's evalkit has its bytecode (pip compiles it at install; an editable install caches it
    at the first import), but with the variable set, as in this project's shells, and no cache
    yet (a fresh checkout or ``git archive``), every process compiles evalkit's 87 modules (a run's)
    again: about 0.15 s of CPU in each start-up (docs/benchmarks.md, issue 25, items 4 and 5)."""
    return {name: value for name, value in env.items() if name != "PYTHONDONTWRITEBYTECODE"}


def best_time(fn: Callable[..., Any], args: tuple, repeat: int) -> tuple[float, Any]:
    """Best of ``repeat`` wall times after one untimed warm-up call (imports, plugin registry,
    page faults), and the last result."""
    result = fn(*args)
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return min(times), result


def interleaved(
    fns: dict[str, Callable[[], Any]], repeat: int, rounds: dict[str, int] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Best wall time (or ``clock``'s: ``time.process_time`` for CPU time, steadier on a shared
    machine) of each, one call of each per round after one untimed warm-up round; a name in
    ``rounds`` is timed in that many rounds only (a slow peer)."""
    best = dict.fromkeys(fns, float("inf"))
    for round_ in range(repeat + 1):
        for name, fn in fns.items():
            if round_ > (rounds or {}).get(name, repeat):
                continue
            gc.collect()
            start = clock()
            fn()
            if round_:
                best[name] = min(best[name], clock() - start)
    return best


def profile(fn: Callable[..., Any], args: tuple, top: int = 15) -> str:
    """The ``top`` functions by own time of one call, as cProfile prints them."""
    profiler = cProfile.Profile()
    profiler.enable()
    fn(*args)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    return text[text.index("   ncalls"):].rstrip() if "   ncalls" in text else text


def peak_memory(fn: Callable[..., Any], args: tuple) -> int:
    """Peak bytes allocated (and traced) during one call, above what existed before it."""
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        fn(*args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


def met(flag: bool) -> str:
    return "yes" if flag else "**NO**"
