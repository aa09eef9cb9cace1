"""Benchmark: a run with ``per_sample: true`` against the same run without it.

Run as a script, not a test::

    python benchmarks/bench_per_sample.py [--files 5000] [--repeat 3]

Writes a reference and a system event list of ``files`` recordings (10 labels, 1 to 3 events per
label and file, the system's onsets shifted), and times, interleaved and best of ``repeat``,
``evalkit.run`` of one config (segment-based at 1 s and event-based F1 and error rate; micro and
samples averaging) with ``per_sample`` off and on. Per-file values come from the tables the run
fills anyway, so the switch should cost little beyond keeping the values.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from timing import interleaved

import evalkit

LABELS = ["speech", "music", "dog", "car", "alarm", "bird", "footsteps", "door", "engine", "wind"]


def write(path: Path, files: int, shift: float, seed: int) -> str:
    rng = np.random.default_rng(seed)
    lines = ["filename\tonset\toffset\tevent_label"]
    for f in range(files):
        for label in LABELS:
            for _ in range(rng.integers(1, 4)):
                onset = max(round(rng.random() * 20 + shift * rng.standard_normal(), 3), 0.0)
                lines.append(f"f{f:05d}.wav\t{onset}\t{round(onset + rng.random() * 4, 3)}\t{label}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        reference = write(Path(folder) / "ref.tsv", args.files, 0.0, 0)
        system = write(Path(folder) / "sys.tsv", args.files, 0.4, 1)
        config = {"data": {"reference": reference, "systems": {"s": system}},
                  "representation": [{"name": "segments", "resolution": 1.0}, {"name": "event_based", "t_collar": 0.2}],
                  "averaging": ["micro", "samples"], "metrics": ["f1", "error_rate"]}
        best = interleaved({"off": lambda: evalkit.run({**config, "per_sample": False}),
                            "on": lambda: evalkit.run({**config, "per_sample": True})}, args.repeat)
    print(f"{args.files:,} files, best of {args.repeat}: per_sample off {best['off']:.3f} s, on {best['on']:.3f} s "
          f"({best['on'] / best['off']:.2f}x)")


if __name__ == "__main__":
    main()
