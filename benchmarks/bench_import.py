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
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
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
