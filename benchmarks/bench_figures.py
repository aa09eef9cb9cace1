"""Benchmark: what each report figure costs to draw, against another tree's drawing code (issue 25, item 4).

Run as a script, not a test::

    python benchmarks/bench_figures.py --before TREE [--configs quickstart tnorms] [--repeat 5]
    python benchmarks/bench_figures.py --before TREE --same [--configs ...]

For each config (run from configs/, results computed once), every figure of its gallery drawn as
a PNG (``plots.image``) by this tree's ``evalkit_reports/plots.py`` and by TREE's, in this one
process, interleaved: the CPU seconds (``time.process_time``, steadier than wall time on a
shared machine) of each, best of ``repeat`` after a warm-up round, with no ``gc.collect()`` between
(``timing.interleaved``'s made the figures' times noisier: each draw then refilled freed memory).
Both trees draw from the same results, so only the drawing differs. ``--same`` instead says, for every
figure of every bundled config (or those named), whether the two trees' PNGs are byte-identical:
a change meant to make drawing cheaper must not change a pixel.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from functools import partial
from pathlib import Path

import evalkit
from evalkit_reports import plots

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a source tree to compare with")
    parser.add_argument("--configs", nargs="+")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--same", action="store_true", help="instead: are the PNGs byte-identical?")
    args = parser.parse_args()
    before = _module(args.before.resolve() / "src" / "evalkit_reports" / "plots.py")
    os.chdir(CONFIGS)
    names = args.configs or (sorted(p.stem for p in CONFIGS.glob("*.yaml")) if args.same else ["quickstart", "tnorms"])
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)")
    for name in names:
        results = evalkit.run(f"{name}.yaml", write_reports=False)
        pairs = list(zip(before.gallery(results).plots, plots.gallery(results).plots))
        if args.same:
            differ = [new.name for old, new in pairs if before.image(old, "png") != plots.image(new, "png")]
            print(f"{name:<16} {len(pairs)} figures, {len(pairs) - len(differ)} byte-identical"
                  + (f"; differ: {', '.join(differ)}" if differ else ""))
            continue
        total = dict.fromkeys(("before", "after"), 0.0)
        for old, new in pairs:
            best = _best({"before": partial(before.image, old, "png"), "after": partial(plots.image, new, "png")},
                         args.repeat)
            total = {tree: total[tree] + best[tree] for tree in total}
            print(f"{name:<12} {new.name:<28} before {best['before']:.3f} s   after {best['after']:.3f} s   "
                  f"({best['after'] / best['before'] - 1:+.0%})")
        print(f"{name:<12} {'(all)':<28} before {total['before']:.3f} s   after {total['after']:.3f} s   "
              f"({total['after'] / total['before'] - 1:+.0%})")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)")


def _best(draws: dict, repeat: int) -> dict[str, float]:
    """Best CPU seconds of each draw, one of each per round, after an untimed round."""
    best = dict.fromkeys(draws, float("inf"))
    for round_ in range(repeat + 1):
        for name, draw in draws.items():
            start = time.process_time()
            draw()
            if round_:
                best[name] = min(best[name], time.process_time() - start)
    return best


def _module(path: Path):
    """``path`` (another tree's plots.py) imported under its own name, beside this tree's."""
    spec = importlib.util.spec_from_file_location("plots_before", path)
    assert spec is not None and spec.loader is not None, f"no module at {path}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    main()
