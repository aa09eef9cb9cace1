"""Benchmark: a streamed run and a Dask run over a pair of large files, their peak memory and time.

Run as a script, not a test::

    python benchmarks/bench_stream.py [--rows 20000000] [--classes 17] [--workers 2] [--paired 1000] [--data DIR]
                                      [--only stream|dask]

Writes a reference and a prediction of ``rows`` x ``classes`` float32 memberships as .npy and as
Parquet (a block at a time; no id column, so rows match by position as in the .npy) and runs
``evalkit.run`` on each pair (fuzzy, minimum, micro P/R/F1), each in a fresh process:

- with ``data: {stream: true}``, reporting its peak RSS (the process's high-water mark, VmHWM in
  /proc/self/status: getrusage's ru_maxrss survives exec and would report the parent's) and time;
- with ``engine: dask`` on a LocalCluster of ``workers`` processes started by the script (with
  the workers' malloc settings of the LocalCluster evalkit starts, ``WORKER_MALLOC``, when the
  evalkit run has them), reporting the time (cluster start excluded), the client's peak RSS and
  each worker's;

each with its CPU time (every thread of the process; of a Dask run, the client's and the
workers' apart: on a shared machine CPU time moves less with the load than wall time); the
start-up of a streamed run (the first ``evalkit.run`` of a process: plugins, registry, imports)
timed apart on a 1,000-row pair (after an untimed one, which caches evalkit's bytecode:
``timing.with_bytecode``), and each streamed run's CPU ratio to the floor less the
start-up's CPU (wall times less a wall time taken apart are noise on a shared machine); and
beside them, each in another fresh process, two numpy floors of the same three per-class
sums (Σ min(μG, μP), Σ μG, Σ μP): a chunked loop over the .npy files (each chunk read with
``np.fromfile``, cast to float64 and summed: the floor of a streamed run, which reads the files
too) and the sums over both arrays loaded into memory (reading not timed). Ratios are to the
chunked loop. The targets: streaming peak RSS under 500 MB, a streamed .npy run within 1.5x the
chunked loop (issue 25, item 5).

``--data DIR`` keeps the files in DIR (written when absent, read again when there), so that runs
of two versions can be interleaved over the same files.

With ``--paired R``, only a streamed run of two systems (the prediction against the reference
itself as the baseline) with a keyed paired permutation test of R resamples, reading the .npy
files: its peak RSS (target: under 500 MB at 2e7 x 17 with 1,000 resamples; the replicates of a
chunk are what it holds, so the peak does not grow with the rows) and time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from timing import with_bytecode

BLOCK = 1_000_000

RUN = """
import sys, time
import evalkit
start, cpu = time.perf_counter(), time.process_time()
results = evalkit.run({"name": "big", "data": {"reference": sys.argv[1], "systems": {"s": sys.argv[2]}, "stream": True},
                       "metrics": ["precision", "recall", "f1"]})
took, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(took, peak, results.rows[2].value, cpu)
"""

DASK = """
import os, sys, time
import evalkit
from distributed import Client, LocalCluster
try:  # the workers' malloc settings of the LocalCluster evalkit starts (issue 25), given to this one
    from evalkit.dask_engine import WORKER_MALLOC
except ImportError:  # an evalkit before them: Dask's own
    WORKER_MALLOC = {}

def peak():
    return int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024

if __name__ == "__main__":
    os.environ.update(WORKER_MALLOC)  # Dask's nanny takes them from the environment first
    with LocalCluster(n_workers=int(sys.argv[3]), threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster:
        with Client(cluster) as client:
            busy = sum(client.run(time.process_time).values())
        start, cpu = time.perf_counter(), time.process_time()
        results = evalkit.run({"name": "big", "data": {"reference": sys.argv[1], "systems": {"s": sys.argv[2]}},
                               "engine": {"name": "dask", "address": cluster.scheduler_address},
                               "metrics": ["precision", "recall", "f1"]})
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        with Client(cluster) as client:
            workers = ",".join(str(p) for p in client.run(peak).values())
            busy = sum(client.run(time.process_time).values()) - busy
    print(took, peak(), results.rows[2].value, workers, cpu, busy)
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

CHUNKED = """
import sys, time
import numpy as np
start, cpu = time.perf_counter(), time.process_time()
with open(sys.argv[1], "rb") as ref, open(sys.argv[2], "rb") as pred:
    for handle in (ref, pred):  # to the first value
        shape, _, dtype = np.lib.format.read_array_header_1_0(handle) if np.lib.format.read_magic(handle) == (1, 0) \
            else np.lib.format.read_array_header_2_0(handle)
    inter = np.zeros(shape[1]); total_ref = np.zeros(shape[1]); total_pred = np.zeros(shape[1])
    for s in range(0, shape[0], 16384):  # float64 sums of float32 chunks, as evalkit takes them
        count = min(16384, shape[0] - s) * shape[1]
        r = np.fromfile(ref, dtype, count).reshape(-1, shape[1]).astype(np.float64)
        p = np.fromfile(pred, dtype, count).reshape(-1, shape[1]).astype(np.float64)
        inter += np.minimum(r, p).sum(axis=0); total_ref += r.sum(axis=0); total_pred += p.sum(axis=0)
took, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(took, peak, 2 * inter.sum() / (total_ref.sum() + total_pred.sum()), cpu)
"""


def write(folder: Path, name: str, rows: int, classes: int, seed: int) -> tuple[Path, Path]:
    """The same array as .npy and as Parquet (row groups of a block)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    npy, parquet = folder / f"{name}.npy", folder / f"{name}.parquet"
    if npy.exists() and parquet.exists() and np.load(npy, mmap_mode="r").shape == (rows, classes):
        return npy, parquet  # written by an earlier run (--data)
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
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True,
                         check=True, env=with_bytecode(os.environ))
    return out.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--classes", type=int, default=17)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--paired", type=int, default=0, help="resamples of a streamed paired test (only that run)")
    parser.add_argument("--data", type=Path, help="keep the files in this folder (reused when there)")
    parser.add_argument("--only", choices=["stream", "dask"], help="the floors and these runs alone")
    args = parser.parse_args()
    mib = 2**20
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name) if args.data is None else args.data
        folder.mkdir(parents=True, exist_ok=True)
        ref = write(folder, "ref", args.rows, args.classes, 0)
        pred = write(folder, "pred", args.rows, args.classes, 1)
        sizes = [f"{path.stat().st_size / mib:,.0f} MiB" for path in ref]
        if args.paired:
            took, peak, p = (float(x) for x in measure(PAIRED, str(ref[0]), str(pred[0]), str(args.paired)))
            print(f"{args.rows:,} x {args.classes}, streamed, keyed permutation test of {args.paired:,} resamples: "
                  f"{took:.2f} s, peak RSS {peak / mib:,.0f} MiB (p = {p:.4f})")
            return
        print(f"{args.rows:,} x {args.classes} float32 per side ({sizes[0]} each as .npy, {sizes[1]} as Parquet)")
        took, peak, expected = (float(x) for x in measure(FLOOR, str(ref[0]), str(pred[0])))
        print(f"numpy floor (arrays in memory)        {took:6.2f} s   peak RSS {peak / mib:6,.0f} MiB")
        floor, peak, chunked, floor_cpu = (float(x) for x in measure(CHUNKED, str(ref[0]), str(pred[0])))
        assert abs(chunked - expected) < 1e-12, (chunked, expected)
        print(f"numpy floor (chunked loop over .npy)  {floor:6.2f} s   peak RSS {peak / mib:6,.0f} MiB   "
              f"CPU {floor_cpu:5.2f} s")
        small = [folder / f"start-{side}.npy" for side in ("ref", "pred")]
        for seed, path in enumerate(small):
            np.save(path, np.random.default_rng(seed).random((1_000, args.classes), dtype=np.float32))
        measure(RUN, *map(str, small))  # untimed: evalkit's bytecode cached, as a user's is
        start, _, _, start_cpu = (float(x) for x in measure(RUN, *map(str, small)))
        print(f"start-up (stream: true, 1,000 rows)   {start:6.2f} s                      CPU {start_cpu:5.2f} s")
        for kind, (r, p) in zip(("npy", "parquet"), zip(ref, pred)):
            if args.only == "dask":
                break
            took, peak, f1, cpu = (float(x) for x in measure(RUN, str(r), str(p)))
            assert abs(f1 - expected) < 1e-9, (f1, expected)
            print(f"stream: true, {kind:<8}               {took:6.2f} s   peak RSS {peak / mib:6,.0f} MiB   "
                  f"CPU {cpu:5.2f} s   ({took / floor:.2f}x the floor; CPU {cpu / floor_cpu:.2f}x, "
                  f"{(cpu - start_cpu) / floor_cpu:.2f}x less the start-up's)")
        for kind, (r, p) in zip(("npy", "parquet"), zip(ref, pred)):
            if args.only == "stream":
                break
            took_text, peak_text, f1_text, workers, cpu_text, busy_text = measure(DASK, str(r), str(p), str(args.workers))
            assert abs(float(f1_text) - expected) < 1e-9, (f1_text, expected)
            worker_peaks = ", ".join(f"{int(w) / mib:,.0f}" for w in workers.split(","))
            print(f"engine: dask, {kind:<8} ({args.workers} workers) {float(took_text):6.2f} s   client peak RSS "
                  f"{int(peak_text) / mib:6,.0f} MiB, workers {worker_peaks} MiB   CPU client {float(cpu_text):5.2f} s, "
                  f"workers {float(busy_text):5.2f} s   ({float(took_text) / floor:.2f}x the floor)")


if __name__ == "__main__":
    main()
