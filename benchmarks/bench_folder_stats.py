"""Benchmark: a bootstrap over a score folder read in chunks (in memory, 64 files at a time)
against the same folder read whole (``ScoreFiles.sample_ids`` deleted, as
tests/test_folder_chunks.py does). Issue 26, item 1.

Run as a script, not a test::

    python benchmarks/bench_folder_stats.py [--files 300] [--resamples 100] [--folder DIR]

Writes one system's folder of ``bench_psds.py``'s DCASE-size score files (``make``), then runs
PSDS scenario 1 and ``collar_fscore`` (threshold 0.5, DCASE's collars) with
``statistics: {bootstrap: {resamples: N}}``, each mode in a fresh process, and prints its CPU
time (user + system), its peak resident set, and whether the values and intervals are the same.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import bench_psds


def one(root: Path, mode: str, resamples: int) -> dict:
    import evalkit
    from evalkit_segments.score_files import ScoreFiles

    if mode == "whole":
        del ScoreFiles.sample_ids
    durations = str(root / "durations.tsv")
    config = {"name": "folder-stats", "data": {"reference": str(root / "reference.tsv"), "systems": {"a": str(root / "a")}},
              "metrics": [{"name": "psds", "durations": durations, **bench_psds.SCENARIOS["1"]},
                          {"name": "collar_fscore", "threshold": 0.5, "onset_collar": 0.2, "offset_collar": 0.2,
                           "offset_collar_rate": 0.2}]}
    if resamples:
        config["statistics"] = {"bootstrap": {"resamples": resamples}}
    start = time.process_time()
    rows = evalkit.run(config).rows
    return {"cpu": time.process_time() - start, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "values": [(r.metric, r.class_, r.value, r.ci_low, r.ci_high) for r in rows]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/bench_folder_stats"))
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = args.folder / f"{args.files}x1000d4"
    if args.one:
        print(json.dumps(one(root, args.one[0], int(args.one[1]))))
        return
    if not root.exists():
        root.mkdir(parents=True)
        bench_psds.make(root, args.files, 1000, 4)
    found = {}
    for mode in ("chunked", "whole"):
        done = subprocess.run([sys.executable, __file__, "--folder", str(args.folder), "--files", str(args.files),
                               "--one", mode, str(args.resamples)], capture_output=True, text=True, check=True)
        found[mode] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{mode:8s} {found[mode]['cpu']:8.2f} s CPU  peak {found[mode]['peak'] / 2**30:5.2f} GiB", flush=True)
    ratio = found["chunked"]["cpu"] / found["whole"]["cpu"]
    same = found["chunked"]["values"] == found["whole"]["values"]
    print(f"chunked / whole CPU: {ratio:.2f}; values and intervals {'identical' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
