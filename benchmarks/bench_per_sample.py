"""Benchmark: a run with ``per_sample: true`` against the same run without it.

Run as a script, not a test::

    python benchmarks/bench_per_sample.py [--files 5000] [--repeat 3]

Writes a reference and a system event list of ``files`` recordings (10 labels, 1 to 3 events per
label and file, the system's onsets shifted), and times, interleaved and best of ``repeat``,
``evalkit.run`` of one config (segment-based at 1 s and event-based F1 and error rate; micro and
samples averaging) with ``per_sample`` off and on, in memory and streamed. Per-file values come from the tables the run
fills anyway, so the switch should cost little beyond keeping the values.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from timing import interleaved, peak_memory

import evalkit
from evalkit.api import plan

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
    parser.add_argument("--memory-only", action="store_true", help="no streamed runs (evalkit before issue 26.3 refused them)")
    parser.add_argument("--peak", action="store_true", help="also the peak memory each run allocates (tracemalloc), and "
                        "the plan's estimate of the per-sample values")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        reference = write(Path(folder) / "ref.tsv", args.files, 0.0, 0)
        system = write(Path(folder) / "sys.tsv", args.files, 0.4, 1)
        config: dict[str, Any] = {"data": {"reference": reference, "systems": {"s": system}},
                  "representation": [{"name": "segments", "resolution": 1.0}, {"name": "event_based", "t_collar": 0.2}],
                  "averaging": ["micro", "samples"], "metrics": ["f1", "error_rate"]}
        streamed = {**config, "data": {"reference": reference, "systems": {"s": system}, "stream": True}}
        runs: dict[str, Callable[[], Any]] = {f"{how} {switch}": functools.partial(evalkit.run, {**given, "per_sample": switch})
                for how, given in (("in memory", config), ("streamed", streamed)) for switch in (False, True)}
        hows = ["in memory"] + ([] if args.memory_only else ["streamed"])
        timed = {name: run for name, run in runs.items() if name.rsplit(" ", 1)[0] in hows}
        for what, clock in (("wall", time.perf_counter), ("CPU", time.process_time)):
            best = interleaved(timed, args.repeat, clock=clock)
            for how in hows:
                off, on = best[f"{how} False"], best[f"{how} True"]
                print(f"{args.files:,} files {how}, best of {args.repeat} ({what}): per_sample off {off:.3f} s, "
                      f"on {on:.3f} s ({on / off:.2f}x)")
        if args.peak:
            estimate = next(need.bytes for need in plan({**config, "per_sample": True}).needs if need.key == ("per_sample",))
            print(f"the plan's estimate of the per-sample values: {estimate / 2**20:.1f} MiB")
            for name, run in runs.items():
                if name.rsplit(" ", 1)[0] in hows:
                    print(f"peak, {name.replace('True', 'on').replace('False', 'off')}: {peak_memory(run, ()) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
