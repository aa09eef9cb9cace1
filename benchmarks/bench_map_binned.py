"""Benchmark: the binned mAP against the exact mAP — its bound, its state and its time.

Run as a script, not a test::

    python benchmarks/bench_map_binned.py [--clips 20000] [--classes 50] [--repeat 3]

Random tagging data (10 % positives, scores raised by 0.3 for positives): for 100, 1,000 and
10,000 bins, the binned mAP, the width of its bound on the exact mAP, the pickled state's size
(which does not depend on the number of clips) and the time of one update + compute, each beside
the exact mAP in the same run (whose state is every score).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from timing import best_time

import evalkit


def run(spec, y, s):
    ev = evalkit.Evaluator(metrics=[spec]).update(y, s)
    return ev.values(), len(pickle.dumps(ev.state()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=20000)
    parser.add_argument("--classes", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    y = (rng.random((args.clips, args.classes)) < 0.1).astype(np.float64)
    s = np.clip(0.3 * y + 0.7 * rng.random(y.shape), 0, 1)
    took, (values, size) = best_time(run, ("map", y, s), args.repeat)
    (exact,) = values.values()
    print(f"{args.clips:,} clips x {args.classes} classes; exact mAP {exact:.5f}: {took * 1000:.0f} ms, state {size:,} B")
    for bins in (100, 1000, 10000):
        took_b, (values, size) = best_time(run, ({"name": "map_binned", "bins": bins}, y, s), args.repeat)
        got = {m.metric: v for m, v in values.items()}
        low, high = got["map_binned_lower"], got["map_binned_upper"]
        assert low <= exact <= high
        print(f"{bins:>6} bins: binned {got['map_binned']:.5f}, bound [{low:.5f}, {high:.5f}] (width {high - low:.5f}); "
              f"{took_b * 1000:.0f} ms ({took_b / took:.2f}x the exact), state {size:,} B")


if __name__ == "__main__":
    main()
