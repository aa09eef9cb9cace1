"""Benchmark: reading a sound-event list against pandas.read_csv on the same file.

Run as a script, not a test::

    python benchmarks/bench_events.py [--rows 1000000] [--files 10000] [--repeat 3]

Writes a tab-separated event list with a header (``filename, onset, offset, event_label``;
``files`` recordings, 10 labels, times to the millisecond) and times, best of ``repeat``:
``pandas.read_csv`` (the baseline: a parse with no checks, no merging), the ``events`` loader as a
run uses it (the columnar reader), and the row-by-row reader it falls back to (which names the
line of a bad row). The target is the loader within 2x the baseline.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from timing import best_time

from evalkit.discovery import default_registry
from evalkit_segments.loaders import _layout

LABELS = ["speech", "music", "dog", "car", "alarm", "bird", "footsteps", "door", "engine", "wind"]


def write(path: Path, rows: int, files: int) -> None:
    rng = np.random.default_rng(0)
    names = np.array([f"audio/file_{i:05d}.wav" for i in range(files)])[rng.integers(0, files, rows)]
    onset = np.round(rng.random(rows) * 60, 3)
    offset = np.round(onset + rng.random(rows) * 5 + 0.001, 3)
    label = np.array(LABELS)[rng.integers(0, len(LABELS), rows)]
    frame = pd.DataFrame({"filename": names, "onset": onset, "offset": offset, "event_label": label})
    frame.to_csv(path, sep="\t", index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    loader = default_registry().create("loader", "events")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.tsv"
        write(path, args.rows, args.files)
        baseline, _ = best_time(lambda p: pd.read_csv(p, sep="\t"), (path,), args.repeat)
        columnar, loaded = best_time(loader.load, (path, "reference"), args.repeat)
        order, header, *_ = _layout(path)
        rows, exact = best_time(loader._load_rows, (path, order, header), 1)
        assert loaded == exact, "the two readers must give the same item sets"
        events = sum(len(items) for sample in loaded.samples for items in sample)
        size = path.stat().st_size / 2**20
    print(f"{args.rows:,} rows ({size:.0f} MiB, {args.files:,} files; {events:,} intervals once merged)")
    print(f"pandas.read_csv       {baseline:6.2f} s   1.00x")
    print(f"events loader         {columnar:6.2f} s   {columnar / baseline:.2f}x   (columnar reader)")
    print(f"row-by-row reader     {rows:6.2f} s   {rows / baseline:.2f}x   (the fallback, and the loader before issue 14)")


if __name__ == "__main__":
    main()
