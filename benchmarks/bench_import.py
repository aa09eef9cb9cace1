"""Benchmark: what starting evalkit costs, as ratios against its own dependencies in one run.

Run as a script, not a test::

    python benchmarks/bench_import.py [--repeat K]

Each command below is a fresh Python process, run K times interleaved with the others (so load on
the machine hits all alike); the median wall time of each is compared with the baseline, the
import of the libraries every evalkit command needs anyway::

    baseline            python -c "import numpy, pydantic, pluggy, yaml"
    import evalkit      python -c "import evalkit"                 target: within 2x
    evalkit --version   the installed console script               target: within 3x
    evalkit plugins     the console script (every plugin imported; reported, no target)

It also lists the heavy modules (scipy, matplotlib, networkx, gensim, rich) each evalkit command
imported, which must be none for ``import evalkit`` and ``--version``.

``--startup [--before TREE]`` instead times where the start-up of a run goes (issue 25, items 4
and 5): in K fresh processes (interleaved with TREE's, a source tree put ahead on PYTHONPATH, e.g.
``git archive`` of main), the CPU seconds (user + system of every thread: steadier than wall time
on a shared machine) after each step of a first ``evalkit.run`` of a streamed 1,000 x 17 .npy
pair, as ``benchmarks/bench_stream.py`` times it: the interpreter started, its dependencies
imported (numpy, pydantic, pluggy), ``evalkit.api`` imported, the plugin registry built (every
plugin imported), the run done. Medians of the CPU since the process started. Bytecode is cached
first, as a user's is (``timing.with_bytecode``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import with_bytecode

HEAVY = ("scipy", "matplotlib", "networkx", "gensim", "rich", "sklearn")
CHECK = "import sys, json; print(json.dumps(sorted(m for m in {heavy} if m in sys.modules)))"


def commands() -> dict[str, list[str]]:
    script = shutil.which("evalkit")
    cli = [script] if script else [sys.executable, "-m", "evalkit"]
    return {
        "baseline: import numpy, pydantic, pluggy, yaml": [sys.executable, "-c", "import numpy, pydantic, pluggy, yaml"],
        "import evalkit": [sys.executable, "-c", "import evalkit"],
        "evalkit --version": [*cli, "--version"],
        "evalkit plugins": [*cli, "plugins", "--format", "json"],
    }


def heavy_modules(code: str) -> list[str]:
    """The heavy modules a Python snippet leaves imported."""
    probe = f"{code}\n{CHECK.format(heavy=HEAVY)}"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


#: The steps of a first streamed ``evalkit.run``, each printing the process's CPU seconds so far.
STARTUP = """import sys, time
steps = [time.process_time()]
import numpy, pydantic.main, pluggy
steps.append(time.process_time())
import evalkit.api
steps.append(time.process_time())
from evalkit.discovery import default_registry
default_registry()
steps.append(time.process_time())
evalkit.api.run({"data": {"reference": sys.argv[1], "systems": {"s": sys.argv[2]}, "stream": True},
                 "metrics": ["precision", "recall", "f1"]})
steps.append(time.process_time())
print(*steps)
"""
STEPS = (
    "Python started (site)", "numpy, pydantic, pluggy imported", "evalkit.api imported",
    "registry built (plugins imported)", "first run done",
)


def startup(repeat: int, before: Path | None) -> None:
    """Median CPU seconds after each step of a run's start-up, per tree (see the module's docstring)."""
    trees = {"after": None} if before is None else {"before": before.resolve(), "after": None}
    cpu: dict[str, list[list[float]]] = {tree: [] for tree in trees}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        pair = [str(Path(folder) / f"{side}.npy") for side in ("ref", "pred")]
        for seed, path in enumerate(pair):
            np.save(path, np.random.default_rng(seed).random((1_000, 17), dtype=np.float32))
        for round_ in range(repeat + 1):  # round 0 caches the bytecode, untimed
            for tree, path in trees.items():
                env = with_bytecode(os.environ)
                if path is not None:
                    env["PYTHONPATH"] = str(path / "src")
                done = subprocess.run([sys.executable, "-c", STARTUP, *pair], capture_output=True, text=True,
                                      check=True, env=env)
                if round_:
                    cpu[tree].append([float(x) for x in done.stdout.split()])
    print(f"{os.cpu_count()} cores; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after (1 min)")
    print(f"| step (CPU seconds so far, median of {repeat}) | {' | '.join(trees)} |")
    print("|---|" + "---:|" * len(trees))
    for index, step in enumerate(STEPS):
        values = [statistics.median(run[index] for run in cpu[tree]) for tree in trees]
        print(f"| {step} | {' | '.join(f'{value:.3f}' for value in values)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--startup", action="store_true", help="instead: where a run's start-up goes")
    parser.add_argument("--before", type=Path, help="with --startup: a source tree to time in the same rounds")
    args = parser.parse_args()
    if args.startup:
        startup(args.repeat, args.before)
        return
    timed = commands()
    times: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(args.repeat):
        for name, command in timed.items():
            start = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    baseline = next(iter(medians.values()))
    targets = {"import evalkit": 2.0, "evalkit --version": 3.0}
    print(f"| command | median of {args.repeat} | ratio to the baseline | target |")
    print("|---|---:|---:|---|")
    for name, median in medians.items():
        target = targets.get(name)
        verdict = "" if target is None else f"≤ {target:g}x: {'met' if median / baseline <= target else 'MISSED'}"
        print(f"| {name} | {median * 1000:.0f} ms | {median / baseline:.2f}x | {verdict} |")
    print()
    for name, code in (
        ("import evalkit", "import evalkit"),
        ("evalkit --version (evalkit.cli)", "import evalkit.cli"),
        ("the plugin registry", "from evalkit.discovery import default_registry; default_registry()"),
    ):
        print(f"- {name} imports of {', '.join(HEAVY)}: {', '.join(heavy_modules(code)) or 'none'}")


if __name__ == "__main__":
    main()
