"""Benchmark: a streamed run over a pair of large .npy files, its peak memory and throughput.

Run as a script, not a test::

    python benchmarks/bench_stream.py [--rows 20000000] [--classes 17]

Writes a reference and a prediction of ``rows`` x ``classes`` float32 memberships as .npy (a
chunk at a time) and runs ``evalkit run`` on them with ``data: {stream: true}`` (fuzzy, minimum,
micro P/R/F1) in a fresh process, reporting its peak RSS (the process's high-water mark, VmHWM in
/proc/self/status: getrusage's ru_maxrss survives exec and would report the parent's) and its
time; beside it, in another fresh process, the numpy floor: the same three
per-class sums (Σ min(μG, μP), Σ μG, Σ μP) with numpy on both arrays loaded into memory. The
targets: peak RSS under 500 MB, time within 2x the floor.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

BLOCK = 1_000_000

RUN = """
import sys, time
import evalkit
start = time.perf_counter()
results = evalkit.run({"name": "big", "data": {"reference": sys.argv[1], "systems": {"s": sys.argv[2]}, "stream": True},
                       "metrics": ["precision", "recall", "f1"]})
took = time.perf_counter() - start
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(took, peak, results.rows[2].value)
"""

FLOOR = """
import sys, time
import numpy as np
ref, pred = np.load(sys.argv[1]), np.load(sys.argv[2])
start = time.perf_counter()
inter = np.zeros(ref.shape[1]); total_ref = np.zeros(ref.shape[1]); total_pred = np.zeros(ref.shape[1])
for s in range(0, len(ref), 16384):  # float64 sums of float32 chunks, as evalkit takes them
    r, p = ref[s:s + 16384].astype(np.float64), pred[s:s + 16384].astype(np.float64)
    inter += np.minimum(r, p).sum(axis=0); total_ref += r.sum(axis=0); total_pred += p.sum(axis=0)
took = time.perf_counter() - start
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(took, peak, 2 * inter.sum() / (total_ref.sum() + total_pred.sum()))
"""


def write(path: Path, rows: int, classes: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    array = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, classes))
    for start in range(0, rows, BLOCK):
        array[start : start + BLOCK] = rng.random((min(BLOCK, rows - start), classes), dtype=np.float32)
    array.flush()
    del array


def measure(script: str, *args: str) -> tuple[float, int, float]:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True, check=True)
    took, peak, f1 = out.stdout.split()
    return float(took), int(peak), float(f1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--classes", type=int, default=17)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ref, pred = Path(folder) / "ref.npy", Path(folder) / "pred.npy"
        write(ref, args.rows, args.classes, 0)
        write(pred, args.rows, args.classes, 1)
        size = ref.stat().st_size / 2**20
        floor, floor_peak, floor_f1 = measure(FLOOR, str(ref), str(pred))
        took, peak, f1 = measure(RUN, str(ref), str(pred))
    assert abs(f1 - floor_f1) < 1e-9, (f1, floor_f1)
    print(f"{args.rows:,} x {args.classes} float32 per side ({size:,.0f} MiB each as .npy)")
    print(f"numpy floor (arrays in memory)   {floor:6.2f} s   peak RSS {floor_peak / 2**20:6,.0f} MiB")
    print(f"evalkit run, stream: true        {took:6.2f} s   peak RSS {peak / 2**20:6,.0f} MiB   "
          f"({took / floor:.2f}x the floor)")


if __name__ == "__main__":
    main()
