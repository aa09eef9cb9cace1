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
    env = dict(os.environ)
    if tree is not None:
        # a tree of the src layout, or an export from before it (the core at the top, plugins/)
        paths = [tree / "src"] if (tree / "src").is_dir() else [tree, tree / "plugins"]
        env["PYTHONPATH"] = os.pathsep.join(map(str, paths))
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--before", type=Path, help="a source tree to time in the same rounds")
    args = parser.parse_args()
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
