"""Benchmark: a streamed run and a Dask run over a pair of large files, their peak memory and time.

Run as a script, not a test::

    python benchmarks/bench_stream.py [--rows 20000000] [--classes 17] [--workers 2] [--paired 1000]

Writes a reference and a prediction of ``rows`` x ``classes`` float32 memberships as .npy and as
Parquet (a block at a time; no id column, so rows match by position as in the .npy) and runs
``evalkit.run`` on each pair (fuzzy, minimum, micro P/R/F1), each in a fresh process:

- with ``data: {stream: true}``, reporting its peak RSS (the process's high-water mark, VmHWM in
  /proc/self/status: getrusage's ru_maxrss survives exec and would report the parent's) and time;
- with ``engine: dask`` on a LocalCluster of ``workers`` processes started by the script, reporting
  the time (cluster start excluded), the client's peak RSS and each worker's;

and beside them, in another fresh process, the numpy floor: the same three per-class sums
(Σ min(μG, μP), Σ μG, Σ μP) with numpy on both arrays loaded into memory. The targets: streaming
peak RSS under 500 MB, streaming time within 2x the floor.

With ``--paired R``, only a streamed run of two systems (the prediction against the reference
itself as the baseline) with a keyed paired permutation test of R resamples, reading the .npy
files: its peak RSS (target: under 500 MB at 2e7 x 17 with 1,000 resamples; the replicates of a
chunk are what it holds, so the peak does not grow with the rows) and time.
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

DASK = """
import sys, time
import evalkit
from distributed import Client, LocalCluster

def peak():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024

if __name__ == "__main__":
    with LocalCluster(n_workers=int(sys.argv[3]), threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster:
        start = time.perf_counter()
        results = evalkit.run({"name": "big", "data": {"reference": sys.argv[1], "systems": {"s": sys.argv[2]}},
                               "engine": {"name": "dask", "address": cluster.scheduler_address},
                               "metrics": ["precision", "recall", "f1"]})
        took = time.perf_counter() - start
        with Client(cluster) as client:
            workers = ",".join(str(p) for p in client.run(peak).values())
    print(took, peak(), results.rows[2].value, workers)
"""

PAIRED = """
import sys, time
import evalkit
start = time.perf_counter()
results = evalkit.run({"name": "big",
                       "data": {"reference": sys.argv[1], "systems": {"same": sys.argv[1], "s": sys.argv[2]}, "stream": True},
                       "metrics": ["f1"], "statistics": {"test": {"method": "permutation", "resamples": int(sys.argv[3])}}})
took = time.perf_counter() - start
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(took, peak, results.comparisons[0].p_value)
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


def write(folder: Path, name: str, rows: int, classes: int, seed: int) -> tuple[Path, Path]:
    """The same array as .npy and as Parquet (row groups of a block)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    npy, parquet = folder / f"{name}.npy", folder / f"{name}.parquet"
    array = np.lib.format.open_memmap(npy, mode="w+", dtype=np.float32, shape=(rows, classes))
    schema = pa.schema([(f"c{i}", pa.float32()) for i in range(classes)])
    with pq.ParquetWriter(parquet, schema) as writer:
        for start in range(0, rows, BLOCK):
            block = rng.random((min(BLOCK, rows - start), classes), dtype=np.float32)
            array[start : start + len(block)] = block
            writer.write_table(pa.table({f"c{i}": block[:, i] for i in range(classes)}, schema=schema))
    array.flush()
    del array
    return npy, parquet


def measure(script: str, *args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True, check=True)
    return out.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--classes", type=int, default=17)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--paired", type=int, default=0, help="resamples of a streamed paired test (only that run)")
    args = parser.parse_args()
    mib = 2**20
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        ref = write(folder, "ref", args.rows, args.classes, 0)
        pred = write(folder, "pred", args.rows, args.classes, 1)
        sizes = [f"{path.stat().st_size / mib:,.0f} MiB" for path in ref]
        if args.paired:
            took, peak, p = (float(x) for x in measure(PAIRED, str(ref[0]), str(pred[0]), str(args.paired)))
            print(f"{args.rows:,} x {args.classes}, streamed, keyed permutation test of {args.paired:,} resamples: "
                  f"{took:.2f} s, peak RSS {peak / mib:,.0f} MiB (p = {p:.4f})")
            return
        took, peak, expected = (float(x) for x in measure(FLOOR, str(ref[0]), str(pred[0])))
        floor = took
        print(f"{args.rows:,} x {args.classes} float32 per side ({sizes[0]} each as .npy, {sizes[1]} as Parquet)")
        print(f"numpy floor (arrays in memory)        {floor:6.2f} s   peak RSS {peak / mib:6,.0f} MiB")
        for kind, (r, p) in zip(("npy", "parquet"), zip(ref, pred)):
            took, peak, f1 = (float(x) for x in measure(RUN, str(r), str(p)))
            assert abs(f1 - expected) < 1e-9, (f1, expected)
            print(f"stream: true, {kind:<8}               {took:6.2f} s   peak RSS {peak / mib:6,.0f} MiB   "
                  f"({took / floor:.2f}x the floor)")
        for kind, (r, p) in zip(("npy", "parquet"), zip(ref, pred)):
            took_text, peak_text, f1_text, workers = measure(DASK, str(r), str(p), str(args.workers))
            assert abs(float(f1_text) - expected) < 1e-9, (f1_text, expected)
            worker_peaks = ", ".join(f"{int(w) / mib:,.0f}" for w in workers.split(","))
            print(f"engine: dask, {kind:<8} ({args.workers} workers) {float(took_text):6.2f} s   client peak RSS "
                  f"{int(peak_text) / mib:6,.0f} MiB, workers {worker_peaks} MiB   ({float(took_text) / floor:.2f}x the floor)")


if __name__ == "__main__":
    main()
