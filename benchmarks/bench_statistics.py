"""Benchmark: the statistics' time and peak memory against the number of samples.

Run as a script, not a test::

    python benchmarks/bench_statistics.py [--samples 10000 100000 1000000] [--resamples 1000] [--classes 17]

For each size n, a reference and two systems of n x ``classes`` float32 memberships (.npy, no
ids: samples are keyed by position) and, each in a fresh process, ``evalkit.run`` of fuzzy
minimum micro and macro precision, recall and F1:

- without statistics (the scoring time);
- with the defaults of a run that asks for statistics: BCa bootstrap intervals of
  ``resamples`` and a paired permutation test of as many against the first system.

It prints each run's time (``evalkit.run`` alone, after the imports and a warm-up run on 100
samples), its CPU time (every thread's: on a shared machine, the work done) and the process's
peak RSS (VmHWM), the ratio of the two times, and over the sizes the
fitted exponent of time against n (1: linear) and the memory the statistics add per sample (the
growth of the peak they add between the two largest sizes: a chunk of draws is 16,384 samples,
so sizes below that hold less). Targets (issue 25): at 1e6 x 17 under 20x the scoring time and
under 1 GB; the peak flat in n.

``--breakdown`` instead runs the statistics once per size in this process, on one replicate
thread (``evalkit.engine.REPLICATE_THREADS = 1``), and prints where its CPU time goes: each
part's thread CPU time, measured around the functions that do it (the products and their casts
are what the replicate batches take less the parts timed inside them).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

CONFIG = """
import json, sys, time
import evalkit

def config(n, statistics):
    folder = sys.argv[1]
    run = {"name": "stats", "data": {"reference": f"{folder}/ref{n}.npy",
                                     "systems": {"a": f"{folder}/a{n}.npy", "b": f"{folder}/b{n}.npy"}},
           "averaging": ["micro", "macro"], "metrics": ["precision", "recall", "f1"]}
    if statistics:
        resamples = int(sys.argv[4])
        run["statistics"] = {"bootstrap": {"resamples": resamples}, "test": {"method": "permutation", "resamples": resamples}}
    return run
"""

RUN = CONFIG + """
evalkit.run(config(100, sys.argv[3] == "1"), write_reports=False)  # imports, plugins, first-call costs
start, cpu = time.perf_counter(), time.process_time()
results = evalkit.run(config(int(sys.argv[2]), sys.argv[3] == "1"), write_reports=False)
took, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(took, cpu, peak)
"""


def write(folder: Path, n: int, classes: int) -> None:
    """A crisp-ish reference and two noisy systems of n samples."""
    rng = np.random.default_rng(n)
    reference = (rng.random((n, classes)) < 0.3).astype(np.float32)
    np.save(folder / f"ref{n}.npy", reference)
    for name, noise in (("a", 0.4), ("b", 0.5)):
        noisy = reference * (1 - noise) + rng.random((n, classes), dtype=np.float32) * noise
        np.save(folder / f"{name}{n}.npy", noisy.astype(np.float32))


def measure(folder: Path, n: int, statistics: bool, resamples: int) -> tuple[float, float, int]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RUN), str(folder), str(n), "1" if statistics else "0", str(resamples)],
        capture_output=True, text=True, check=True,
    )
    took, cpu, peak = out.stdout.split()
    return float(took), float(cpu), int(peak)


#: The parts :func:`breakdown` times, (module, function, label): the first two run inside the
#: replicate batches, the last two make a chunk's draws.
PARTS = [
    ("evalkit.engine", "_distinct_columns", "distinct columns"),
    ("evalkit.engine", "_resummed", "exact-zero resum"),
    ("evalkit.engine", "_replicate_batches", "replicate batches"),
    ("evalkit.stats", "poisson_weights", "keyed Poisson counts"),
    ("evalkit.stats", "keyed_masks", "permutation swaps"),
]


def breakdown(folder: Path, n: int, resamples: int) -> None:
    """Where one run's CPU time goes, on one replicate thread (see the module's docstring)."""
    import functools
    import importlib
    import time

    spent = {label: 0.0 for *_, label in PARTS}

    def timed(function: Any, label: str) -> Any:
        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] += time.thread_time() - start
        return call

    modules = [(importlib.import_module(module), name, label) for module, name, label in PARTS]
    originals = [(module, name, getattr(module, name)) for module, name, _ in modules]
    for module, name, label in modules:
        setattr(module, name, timed(getattr(module, name), label))
    namespace: dict[str, Any] = {}
    exec(textwrap.dedent(CONFIG), namespace)
    engine = importlib.import_module("evalkit.engine")
    threads, engine.REPLICATE_THREADS = engine.REPLICATE_THREADS, 1
    sys.argv = ["", str(folder), str(n), "1", str(resamples)]  # what config() reads
    run = namespace["evalkit"].run
    try:
        run(namespace["config"](100, True), write_reports=False)  # imports, plugins, first-call costs
        spent.update({label: 0.0 for label in spent})
        start = time.process_time()
        run(namespace["config"](n, True), write_reports=False)
        total = time.process_time() - start
    finally:
        engine.REPLICATE_THREADS = threads
        for module, name, function in originals:
            setattr(module, name, function)
    batches, drawn = spent["replicate batches"], spent["keyed Poisson counts"] + spent["permutation swaps"]
    parts = {"products and their casts": batches - spent["distinct columns"] - spent["exact-zero resum"],
             **{label: seconds for label, seconds in spent.items() if label != "replicate batches"},
             "the rest (tables, loading, scoring, bounds)": total - batches - drawn}
    print(f"{n:>10,} samples, one replicate thread: CPU {total:.2f} s")
    for label, seconds in parts.items():
        print(f"  {label:44s} {seconds:6.2f} s  {seconds / total:4.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--classes", type=int, default=17)
    parser.add_argument("--breakdown", action="store_true", help="where the statistics' CPU time goes, in this process")
    args = parser.parse_args()
    mib = 2**20
    rows = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write(folder, 100, args.classes)
        for n in args.samples:
            write(folder, n, args.classes)
            if args.breakdown:
                breakdown(folder, n, args.resamples)
                continue
            plain, plain_cpu, plain_peak = measure(folder, n, False, args.resamples)
            took, cpu, peak = measure(folder, n, True, args.resamples)
            rows.append((n, plain, took, plain_peak, peak))
            print(f"{n:>10,} x {args.classes}: scoring {plain:7.2f} s (CPU {plain_cpu:6.2f} s), {plain_peak / mib:6,.0f} MiB; "
                  f"with statistics {took:7.2f} s ({took / plain:5.1f}x; CPU {cpu:6.2f} s, {cpu / plain_cpu:5.1f}x), "
                  f"{peak / mib:6,.0f} MiB (+{(peak - plain_peak) / mib:,.0f})", flush=True)
    if len(rows) > 1:
        n, plain, took, plain_peak, peak = (np.array(column, dtype=np.float64) for column in zip(*rows))
        exponent = np.polyfit(np.log(n), np.log(took), 1)[0]
        added = peak - plain_peak
        per_sample = (added[-1] - added[-2]) / (n[-1] - n[-2])
        print(f"time with statistics ~ n^{exponent:.2f}; from {n[-2]:,.0f} to {n[-1]:,.0f} samples the statistics' "
              f"memory grows by {per_sample:,.1f} bytes per sample")


if __name__ == "__main__":
    main()
