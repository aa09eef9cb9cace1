"""Benchmark: an Evaluator updated batch by batch against one call on all the data.

Run as a script, not a test::

    python benchmarks/bench_update.py [--batches 1000] [--rows 1000] [--classes 17] [--repeat 3]

``batches`` updates of ``rows`` x ``classes`` soft labels (the training-loop case) against one
update with the concatenated matrix, for the default fuzzy P/R/F1 (micro) and for micro + macro
+ samples averaging; the target is at most 1.5x the one call. Also prints the size of the
pickled state and of its JSON, which do not depend on the number of samples.
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

SETTINGS = {
    "P/R/F1 micro": {},
    "P/R/F1 micro+macro+samples": {"averaging": ["micro", "macro", "samples"]},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--classes", type=int, default=17)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    shape = (args.batches * args.rows, args.classes)
    ref, pred = rng.random(shape), rng.random(shape)
    print(f"{args.batches:,} batches of {args.rows:,} x {args.classes} against one call on {shape[0]:,} x {shape[1]}")
    print(f"{'':30} {'one call':>9} {'batches':>9} {'ratio':>7} {'pickled':>9} {'JSON':>9}")
    for label, settings in SETTINGS.items():
        def one_call(settings=settings):
            return evalkit.Evaluator(**settings).update(ref, pred)

        def batched(settings=settings):
            ev = evalkit.Evaluator(**settings)
            for start in range(0, shape[0], args.rows):
                ev.update(ref[start : start + args.rows], pred[start : start + args.rows])
            return ev

        whole, single = best_time(one_call, (), args.repeat)
        parts, many = best_time(batched, (), args.repeat)
        got, expected = many.values(), single.values()
        assert all(abs(got[k] - v) <= 1e-12 * abs(v) for k, v in expected.items()), "batches differ from one call"
        state = many.state()
        print(
            f"{label:30} {whole:8.2f}s {parts:8.2f}s {parts / whole:6.2f}x "
            f"{len(pickle.dumps(state)):7,} B {len(state.to_json()):7,} B"
        )


if __name__ == "__main__":
    main()
