"""Benchmark: the keyed random draws of the statistics against numpy's own generator.

Run as a script, not a test::

    python benchmarks/bench_keyed_draws.py [--repeat 5] [--resamples 1000] [--chunk 16384] [--rows 1000000]

What the engine asks of :mod:`evalkit.stats` in a run with keyed statistics, timed interleaved
(one call of each contender per round, best of the rounds: the 2-core machine is shared):

- ``poisson_weights(keys, resamples, seed)`` on a chunk of keys (the engine's ``block(part)``:
  every replicate of a chunk of up to 16,384 samples), against the floor
  ``np.random.default_rng(seed).poisson(1.0, (resamples, chunk))``;
- ``keyed_masks(keys, resamples, seed)`` on the same chunk, against
  ``rng.integers(0, 2, (resamples, chunk), dtype=bool)``;
- one replicate over ``--rows`` samples (the engine's ``row(b)``, for data metrics), both kinds,
  against the same floors of that shape.

Each time is printed per draw (nanoseconds per count or coin). The target (issue 25, item 1):
Poisson counts within about 1.5x of numpy's Poisson generator per draw, masks far below it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import interleaved

from evalkit import stats


def contenders(resamples: int, chunk: int, rows: int, seed: int) -> dict[str, tuple[int, Callable[[], Any]]]:
    """Name -> (draws per call, the call)."""
    keys = stats.sample_keys([f"clip{i}" for i in range(chunk)], chunk)
    every = np.arange(rows, dtype=np.uint64)
    rng = np.random.default_rng(seed)
    block, row = resamples * chunk, rows
    return {
        "poisson_weights, block": (block, lambda: stats.poisson_weights(keys, resamples, seed)),
        "numpy poisson, block": (block, lambda: rng.poisson(1.0, (resamples, chunk))),
        "keyed_masks, block": (block, lambda: stats.keyed_masks(keys, resamples, seed)),
        "numpy integers bool, block": (block, lambda: rng.integers(0, 2, (resamples, chunk), dtype=bool)),
        "poisson_weights, row": (row, lambda: stats.poisson_weights(every, 1, seed, 7)),
        "numpy poisson, row": (row, lambda: rng.poisson(1.0, rows)),
        "keyed_masks, row": (row, lambda: stats.keyed_masks(every, 1, seed, 7)),
        "numpy integers bool, row": (row, lambda: rng.integers(0, 2, rows, dtype=bool)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--chunk", type=int, default=16_384, help="samples per block (the engine's chunk)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="samples of one replicate's row")
    parser.add_argument("--seed", type=int, default=20251126)
    args = parser.parse_args()
    fns = contenders(args.resamples, args.chunk, args.rows, args.seed)
    best = interleaved({name: fn for name, (_, fn) in fns.items()}, args.repeat)
    print(f"best of {args.repeat} interleaved rounds; block = {args.resamples:,} resamples x {args.chunk:,} "
          f"samples, row = 1 replicate x {args.rows:,} samples\n")
    print("| call | ms | ns per draw | / numpy's |")
    print("|---|---:|---:|---:|")
    names = list(fns)
    for ours, floor in zip(names[::2], names[1::2]):
        for name in (ours, floor):
            draws = fns[name][0]
            ratio = f"{best[ours] / best[floor]:.2f}x" if name == ours else ""
            print(f"| {name} | {best[name] * 1e3:.1f} | {best[name] / draws * 1e9:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
