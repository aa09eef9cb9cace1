"""Benchmark: what writing the reports costs against scoring, for the bundled configs.

Run as a script, not a test::

    python benchmarks/bench_reports.py [--configs quickstart tnorms] [--repeat 3] [--no-pool] [--cli] [--figures] [--handed]

For each config (run from configs/, in this process, after a warm-up run that pays the imports
and matplotlib's font cache), the best of ``repeat`` times of: scoring (``evalkit.run`` without
reports) and writing every report its ``report:`` section asks for, into a temporary folder
(``write_plan_reports`` on the same results). Issue 16's targets: quickstart's report writing
under 1 s, and tnorms' whole run (scoring and reports) under 4 s, on 2 cores. The first line
says how many cores the process may use and the load average before the run: the HTML
report's figures are drawn by one worker process per core, so other work on the machine
shows in the figures. ``--no-pool`` draws them all in this process, to measure what the
workers save. ``--cli`` also times the command a user types, in a new process each time: what
the in-process figures leave out (Python's start, imports, matplotlib's first figure, the
printed tables, the exit). ``--figures`` also gives the CPU time (``time.process_time``, best of
``repeat``) of drawing each figure as a PNG in this process: what a figure worker spends on it,
and what the load on a shared machine inflates least. ``--handed`` times what `evalkit run` waits
for once its results exist: the figure worker started ahead (``start_pool``, its matplotlib import
awaited), the figures handed over (``submit``) and collected (``drawn``), with the worker's CPU
less that of a worker that only imports (best of ``repeat``). With ``PYTHONPATH`` set to another
source tree (and its ``plugins``) it measures that tree's figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from timing import best_time

from evalkit import api
from evalkit.results import Results
from evalkit_reports import plots

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["quickstart", "tnorms"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-pool", action="store_true", help="draw every figure in this process")
    parser.add_argument("--cli", action="store_true", help="also time `evalkit run` itself, in a new process")
    parser.add_argument("--figures", action="store_true", help="also the CPU time of each figure, drawn here")
    parser.add_argument("--handed", action="store_true", help="also the wait for the figures handed to the worker")
    args = parser.parse_args()
    if args.no_pool:
        plots.POOL_FIGURES = sys.maxsize
    os.chdir(CONFIGS)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cores {cores}, load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} (1, 5, 15 min)")
    for name in args.configs:
        with tempfile.TemporaryDirectory() as folder:
            checked = api.plan(f"{name}.yaml", writes=True)
            assert checked.report is not None, f"{name}.yaml writes no reports"
            checked.report = replace(checked.report, out=Path(folder) / name)
            scoring, results = best_time(api.results_of, (checked,), args.repeat)
            writing, _ = best_time(api.write_plan_reports, (checked, results), args.repeat)
        formats = ", ".join(checked.report.writers)
        print(f"{name:<12} scoring {scoring:6.2f} s   reports ({formats}) {writing:6.2f} s   "
              f"whole run {scoring + writing:6.2f} s")
        if args.figures:
            _figure_times(results, args.repeat)
        if args.handed:
            _handed_times(results, args.repeat)
        if args.cli:
            print(f"{'':<12} `evalkit run {name}.yaml -q` in a new process (imports, tables, reports, exit): "
                  f"{_command_time(name, args.repeat):.2f} s")


def _figure_times(results: Results, repeat: int) -> None:
    """CPU seconds of each figure of ``results`` drawn as a PNG here, best of ``repeat`` after
    one untimed drawing (matplotlib's import, fonts and caches)."""
    total = 0.0
    for plot in plots.gallery(results).plots:
        plots.image(plot, "png")
        times = []
        for _ in range(repeat):
            start = time.process_time()
            plots.image(plot, "png")
            times.append(time.process_time() - start)
        total += min(times)
        print(f"{'':<12} figure {plot.name:<32} CPU {min(times):6.3f} s")
    print(f"{'':<12} figure {'(all)':<32} CPU {total:6.3f} s")


def _handed_times(results: Results, repeat: int) -> None:
    """Wall seconds from handing the figures of ``results`` to the worker to having their bytes,
    and the worker's CPU seconds less its import's, best of ``repeat``: drawn by the worker alone
    and on its own pool of one helper per core (what it chooses by the load, ``_idle_core``),
    interleaved."""
    ways = {"alone": False, "on both cores": True} if hasattr(plots, "_idle_core") else {"": None}
    waits: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for _ in range(repeat):
        for way, idle in ways.items():
            if idle is not None:
                plots._idle_core = lambda idle=idle: idle  # the worker forked below inherits it
            cpu = _children_cpu()
            plots.start_pool()
            plots.stop_pool()  # a worker that only imports matplotlib
            imports, cpu = _children_cpu() - cpu, _children_cpu()
            plots.start_pool()
            if plots._ready is not None:  # its import done, as by the time a run's results exist
                plots._ready.pool.submit(int).result()
            start = time.perf_counter()
            plots.submit(results, "png")
            plots.drawn(results, "png")
            waits.setdefault(way, []).append(time.perf_counter() - start)
            plots.stop_pool()
            cpus.setdefault(way, []).append(_children_cpu() - cpu - imports)
    for way in ways:
        print(f"{'':<12} figures handed to the worker{' ' if way else ''}{way}: drawn {min(waits[way]):5.2f} s later, "
              f"its CPU {min(cpus[way]):5.2f} s besides its import (load {os.getloadavg()[0]:.2f})")


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _command_time(name: str, repeat: int) -> float:
    """Best of ``repeat`` wall times of the command a user types, reports written to a
    temporary copy of the config's folder."""
    with tempfile.TemporaryDirectory() as folder:
        copy = shutil.copytree(CONFIGS, Path(folder) / "configs")
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "evalkit", "run", f"{name}.yaml", "-q"], cwd=copy, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
    return min(times)


if __name__ == "__main__":
    main()
