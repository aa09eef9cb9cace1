"""Benchmark: what each report figure costs to draw, against another tree's drawing code (issue 25, item 4).

Run as a script, not a test::

    python benchmarks/bench_figures.py --before TREE [--configs quickstart tnorms] [--repeat 5]
    python benchmarks/bench_figures.py --before TREE --same [--configs ...]
    python benchmarks/bench_figures.py --before TREE --calls [--configs ...]

For each config (run from configs/, results computed once), every figure of its gallery drawn as
a PNG (``plots.image``) by this tree's ``evalkit_reports/plots.py`` and by TREE's, in this one
process, interleaved: the CPU seconds (``time.process_time``, steadier than wall time on a
shared machine) of each, best of ``repeat`` after a warm-up round, with no ``gc.collect()`` between
(``timing.interleaved``'s made the figures' times noisier: each draw then refilled freed memory).
Both trees draw from the same results, so only the drawing differs. ``--same`` instead says, for every
figure of every bundled config (or those named), whether the two trees' PNGs are byte-identical:
a change meant to make drawing cheaper must not change a pixel. ``--calls`` instead counts the
Python function calls (cProfile) of one drawing of each figure by each tree: a measure of the work
that load on a shared machine does not blur.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import os
import pstats
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
    parser.add_argument("--calls", action="store_true", help="instead: the function calls of each drawing")
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
            if args.calls:
                count = {"before": _calls(partial(before.image, old, "png")), "after": _calls(partial(plots.image, new, "png"))}
                total = {tree: total[tree] + count[tree] for tree in total}
                print(f"{name:<12} {new.name:<28} before {count['before']:>9,.0f}   after {count['after']:>9,.0f} calls   "
                      f"({count['after'] / count['before'] - 1:+.0%})")
                continue
            best = _best({"before": partial(before.image, old, "png"), "after": partial(plots.image, new, "png")},
                         args.repeat)
            total = {tree: total[tree] + best[tree] for tree in total}
            print(f"{name:<12} {new.name:<28} before {best['before']:.3f} s   after {best['after']:.3f} s   "
                  f"({best['after'] / best['before'] - 1:+.0%})")
        unit = ("{:>9,.0f}", " calls") if args.calls else ("{:.3f}", " s")
        print(f"{name:<12} {'(all)':<28} before {unit[0].format(total['before'])}{unit[1]}   "
              f"after {unit[0].format(total['after'])}{unit[1]}   ({total['after'] / total['before'] - 1:+.0%})")
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


def _calls(draw) -> int:
    """The Python function calls of one ``draw()``, after an uncounted one."""
    draw()
    profiler = cProfile.Profile()
    profiler.runcall(draw)
    return sum(stat[1] for stat in pstats.Stats(profiler).stats.values())


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
