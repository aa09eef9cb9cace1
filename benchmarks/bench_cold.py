"""Benchmark: the commands a person types, cold (issue 25, item 4).

Run as a script, not a test::

    python benchmarks/bench_cold.py [--repeat N] [--before TREE]

Each command is a fresh Python process (``python -m evalkit …``, stdout to /dev/null, reports
written to a temporary copy of ``configs/``), run N times interleaved with the others so that load
on the machine hits all alike; after one untimed round, so bytecode caches are warm (a user's
second command). Printed: the median wall time, the fastest and slowest, the median CPU time
(user + system, the figure workers' included: what load on a shared machine inflates least),
for ``run`` split into the command's own process and its figure workers (the CPU of the
children it waited for, which the command writes at exit through a small ``-c`` wrapper around
``evalkit.cli.main``), and the load average before and after. Targets on 2 cores: ``run
tnorms.yaml`` under 2.5 s, ``run quickstart.yaml`` under 1.2 s, ``plugins`` under 1.5x the bare
imports (``import evalkit`` and every plugin package).

``--before TREE`` times a second source tree in the same rounds (e.g. ``git archive`` of main
into a folder), imported ahead of the installed one through PYTHONPATH.

``--phases CONFIG`` runs ``evalkit run CONFIG`` once instead, printing on stderr where its wall and
CPU time go (imports, plan, scoring, tables, reports) and when the figure worker's CPU is counted;
with ``--before TREE``, that tree's command (a tree without the step misses its line).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path

from timing import with_bytecode

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"run tnorms.yaml": 2.5, "run quickstart.yaml": 1.2}
#: ``evalkit`` as ``python -m evalkit`` runs it, writing at exit the CPU seconds of the children
#: it waited for (the figure workers) to the file BENCH_COLD_WORKERS names.
WORKERS_CPU = """import atexit, os, resource, sys
def workers():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.environ["BENCH_COLD_WORKERS"], "w") as file:
        file.write(str(used.ru_utime + used.ru_stime))
atexit.register(workers)
from evalkit.cli import main
main(sys.argv[1:])
"""


#: ``evalkit run`` with a line on stderr at each step of the command: wall seconds since the
#: process started timing, this process's CPU seconds, and its waited-for children's (the figure
#: worker's, counted once it has ended).
PHASES = """import atexit, resource, sys, time
start = time.perf_counter()
def mark(what):
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{what:<26} wall {time.perf_counter() - start:5.2f} s  CPU {time.process_time():5.2f} s  "
          f"worker {children.ru_utime + children.ru_stime:5.2f} s", file=sys.stderr)
atexit.register(mark, "exit")
from evalkit import api, cli, reporting
mark("imported (cli, api)")
def timed(module, name):
    function = getattr(module, name)
    def steps(*args, **kwargs):
        mark("> " + name)
        try:
            return function(*args, **kwargs)
        finally:
            mark("< " + name)
    setattr(module, name, steps)
for module, names in ((api, ("plan", "results_of", "write_plan_reports")), (cli, ("_print",)),
                      (reporting, ("start_reports", "prepare_reports", "stop_reports"))):
    for name in filter(lambda name: hasattr(module, name), names):  # an older tree lacks some
        timed(module, name)
cli.main(sys.argv[1:])
"""


def commands() -> dict[str, list[str]]:
    plugins = ", ".join(sorted({e.value.partition(":")[0] for e in entry_points(group="evalkit")}))
    evalkit = [sys.executable, "-m", "evalkit"]
    run = [sys.executable, "-c", WORKERS_CPU, "run"]
    return {
        "run tnorms.yaml": [*run, "tnorms.yaml"],
        "run quickstart.yaml": [*run, "quickstart.yaml"],
        "plugins": [*evalkit, "plugins"],
        "bare imports": [sys.executable, "-c", f"import evalkit, {plugins}"],
    }


def environment(tree: Path | None) -> dict[str, str]:
    env = with_bytecode(os.environ)  # so that round 0 warms the bytecode caches
    if tree is not None:
        # a tree of the src layout, or an export from before it (the core at the top, plugins/)
        paths = [tree / "src"] if (tree / "src").is_dir() else [tree, tree / "plugins"]
        env["PYTHONPATH"] = os.pathsep.join(map(str, paths))
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--before", type=Path, help="a source tree to time in the same rounds")
    parser.add_argument("--phases", metavar="CONFIG", help="instead: one `run CONFIG`, step by step")
    args = parser.parse_args()
    if args.phases:
        with tempfile.TemporaryDirectory() as folder:
            configs = shutil.copytree(ROOT / "configs", Path(folder) / "configs")
            subprocess.run([sys.executable, "-c", PHASES, "run", args.phases, "-q"], cwd=configs, check=True,
                           env=environment(args.before), stdout=subprocess.DEVNULL)
        return
    trees = {"after": None} if args.before is None else {"before": args.before.resolve(), "after": None}
    load = os.getloadavg()
    times: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    workers: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        configs = shutil.copytree(ROOT / "configs", Path(folder) / "configs")
        written = Path(folder) / "workers"
        for round_ in range(args.repeat + 1):  # round 0 warms the bytecode caches, untimed
            for tree, path in trees.items():
                env = {**environment(path), "BENCH_COLD_WORKERS": str(written)}
                for name, command in commands().items():
                    written.unlink(missing_ok=True)
                    cpu, start = _children_cpu(), time.perf_counter()
                    subprocess.run(command, cwd=configs, env=env, check=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    if round_:
                        times.setdefault((tree, name), []).append(time.perf_counter() - start)
                        cpus.setdefault((tree, name), []).append(_children_cpu() - cpu)
                        if written.exists():
                            workers.setdefault((tree, name), []).append(float(written.read_text()))
    print(f"{os.cpu_count()} cores; load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after (1 min)")
    print(f"| tree | command | median of {args.repeat} | fastest – slowest | CPU (median) | "
          "of it: command + workers | target |")
    print("|---|---|---:|---:|---:|---:|---|")
    for (tree, name), values in times.items():
        median = statistics.median(values)
        bare = statistics.median(times[(tree, "bare imports")])
        if name == "plugins":
            target = f"{median / bare:.2f}x the bare imports (≤ 1.5x)"
        else:
            target = f"≤ {TARGETS[name]} s" if name in TARGETS else ""
        split = ""
        if (tree, name) in workers:  # medians of the per-run splits
            pairs = zip(cpus[(tree, name)], workers[(tree, name)])
            split = (f"{statistics.median(total - theirs for total, theirs in pairs):.2f} + "
                     f"{statistics.median(workers[(tree, name)]):.2f} s")
        print(f"| {tree} | {name} | {median:.2f} s | {min(values):.2f} – {max(values):.2f} s | "
              f"{statistics.median(cpus[(tree, name)]):.2f} s | {split} | {target} |")


def _children_cpu() -> float:
    """User and system time of every child process waited for so far (and of theirs)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


if __name__ == "__main__":
    main()
