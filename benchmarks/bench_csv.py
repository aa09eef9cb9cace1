"""Benchmark: the memory and time of the CSV matrix loader against the matrix it produces and
against ``pandas.read_csv`` alone.

Run as a script, not a test::

    python benchmarks/bench_csv.py [--rows 1000000] [--classes 17] [--repeat 3] [--no-ids]

It writes a CSV of ``rows`` x ``classes`` memberships (three decimals, with a leading column of
sample ids unless ``--no-ids``), then, each in a fresh Python process:

- loads it with evalkit's ``csv`` loader as ``evalkit run`` does (the registry's guarded loader);
- reads it with ``pandas.read_csv(path)`` alone (no dtype, no checks), the floor.

Peak memory is the process's peak resident set during the first load (Linux ``VmHWM``, reset
after importing the libraries and building the registry) minus its resident set then, against
the size of the float64 matrix (rows x classes x 8 bytes); the target for the loader is at most
2x, ids included. Time is the best of ``repeat`` loads in that process.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PROBE = """
import json, sys, time
from pathlib import Path
import numpy, pandas
from evalkit.discovery import default_registry

path, how, repeat = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
loader = default_registry().create("loader", "csv")

def status(key):
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) * 1024 for line in handle if line.startswith(key + ":"))

def load():
    if how == "evalkit":
        return loader.load(path, "reference").values.shape
    return pandas.read_csv(path).shape

with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")  # reset the peak resident set to the current one: the imports' peak is not the load's
baseline = status("VmRSS")
times = []
for _ in range(repeat):
    start = time.perf_counter()
    shape = load()
    times.append(time.perf_counter() - start)
    if len(times) == 1:
        first = status("VmHWM") - baseline
print(json.dumps({"peak": first, "time": min(times), "shape": list(shape)}))
"""


def write_csv(path: Path, rows: int, classes: int, ids: bool) -> None:
    """Memberships in [0, 1] with three decimals, written a block of rows at a time."""
    rng = np.random.default_rng(0)
    block = 100_000
    with path.open("w") as handle:
        handle.write(("id," if ids else "") + ",".join(f"class_{c}" for c in range(classes)) + "\n")
        for start in range(0, rows, block):
            values = rng.random((min(block, rows - start), classes)).round(3).tolist()
            lines = [
                (f"s{start + i:08d}," if ids else "") + ",".join(map(str, row)) for i, row in enumerate(values)
            ]
            handle.write("\n".join(lines) + "\n")


def measure(path: Path, how: str, repeat: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), how, str(repeat)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--classes", type=int, default=17)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-ids", dest="ids", action="store_false", help="no leading column of sample ids")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "matrix.csv"
        start = time.perf_counter()
        write_csv(path, args.rows, args.classes, args.ids)
        matrix = args.rows * args.classes * 8
        print(
            f"{args.rows:,} x {args.classes} CSV{' with ids' if args.ids else ''}: {path.stat().st_size / 2**20:.0f} MiB "
            f"(written in {time.perf_counter() - start:.1f} s); float64 matrix {matrix / 2**20:.0f} MiB"
        )
        results = {how: measure(path, how, args.repeat) for how in ("evalkit", "pandas")}
    assert results["evalkit"]["shape"] == [args.rows, args.classes], results["evalkit"]["shape"]
    floor = results["pandas"]["time"]
    print(f"{'':28} {'time (s)':>9} {'/ pandas':>9} {'peak memory':>12} {'/ matrix':>9}")
    for how, label in (("evalkit", "evalkit csv loader"), ("pandas", "pandas.read_csv alone")):
        r = results[how]
        print(f"{label:28} {r['time']:9.2f} {r['time'] / floor:9.2f} {r['peak'] / 2**20:8.0f} MiB {r['peak'] / matrix:9.2f}")


if __name__ == "__main__":
    main()
