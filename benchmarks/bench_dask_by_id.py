"""Benchmark: the Dask engine's by-id path against the number of blocks, its time and client memory.

Run as a script, not a test::

    python benchmarks/bench_dask_by_id.py [--samples 300] [--systems 3] [--rows 300,60,20,5,2] [--workers 2]

Writes a reference and ``systems`` systems of ``samples`` x 3 memberships with sample ids, as
Parquet (each system's rows in another order, so the run must group by id), the size of
quickstart (300 samples, 3 systems), and starts a LocalCluster of ``workers`` processes. Then,
for each ``partition_rows``, a fresh client process runs ``evalkit.run`` on it and reports its
time (client start-up excluded) and its peak RSS (VmHWM in /proc/self/status: the scheduler and
the workers are other processes). Blocks are per file: ``ceil(samples / partition_rows)``; the
groups are as many. Parquet, since a CSV block is parsed from the file's start (that cost grows
with the blocks before it, whatever the engine does).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

RUN = """
import sys, time
import evalkit
config = {"name": "by-id", "data": {"reference": sys.argv[1], "systems": dict(s.split("=") for s in sys.argv[4:])},
          "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"], "averaging": ["micro", "macro"],
          "metrics": ["precision", "recall", "f1"]}
local = evalkit.run(config)
start = time.perf_counter()
results = evalkit.run({**config, "engine": {"name": "dask", "address": sys.argv[2], "partition_rows": int(sys.argv[3])}})
took = time.perf_counter() - start
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
worst = max(abs(a.value - b.value) / abs(b.value) for a, b in zip(results.rows, local.rows) if b.value)
print(took, peak, worst)
"""


def write(path: Path, ids: np.ndarray, values: np.ndarray) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ids, **{f"c{i}": values[:, i] for i in range(values.shape[1])}}), path)
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--systems", type=int, default=3)
    parser.add_argument("--rows", default="300,60,20,5,2", help="the partition_rows to try, comma-separated")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    from distributed import LocalCluster

    rng = np.random.default_rng(0)
    ids = np.array([f"clip{i:06d}" for i in range(args.samples)])
    with tempfile.TemporaryDirectory() as name, LocalCluster(
        n_workers=args.workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
    ) as cluster:
        folder = Path(name)
        reference = write(folder / "ref.parquet", ids, (rng.random((args.samples, 3)) < 0.3).astype(float))
        systems = []
        for s in range(args.systems):
            order = rng.permutation(args.samples)
            systems.append(f"s{s}=" + write(folder / f"s{s}.parquet", ids[order], rng.random((args.samples, 3)).round(3)))
        print(f"{args.samples:,} samples, a reference and {args.systems} system(s) (Parquet), "
              f"a LocalCluster of {args.workers} workers")
        print("partition_rows  blocks/file  time      client peak RSS  max rel. difference to local")
        for rows in (int(r) for r in args.rows.split(",")):
            out = subprocess.run([sys.executable, "-c", textwrap.dedent(RUN), reference, cluster.scheduler_address,
                                  str(rows), *systems], capture_output=True, text=True, check=True).stdout.split()
            took, peak, worst = float(out[0]), int(out[1]), float(out[2])
            print(f"{rows:>14,}  {math.ceil(args.samples / rows):>11,}  {took:6.2f} s  {peak / 2**20:10,.0f} MiB  {worst:.1e}")


if __name__ == "__main__":
    main()
