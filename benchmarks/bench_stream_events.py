"""Benchmark: a streamed run of two large event lists, its peak memory, and its time against the
in-memory run on the same files.

Run as a script, not a test::

    python benchmarks/bench_stream_events.py [--files 1000000] [--compare 100000]

Writes (seeded) a reference and a system event list of ``files`` files, sorted by file id, about
10 events a file of 10 classes (the DESED labels), tab-separated, and runs ``evalkit run`` on
them with the representations, averagings and metrics of ``configs/sound_events.yaml`` (segment-
based at 1 s; event-based with onset and offset collars, and onset only) and ``data: {stream:
true}``, in a subprocess. It reports that run's peak RSS and wall time; then, on lists of
``compare`` files, the streamed run's time against the in-memory run's. Targets (issue 24):
peak RSS under 300 MB streamed at 1,000,000 files, and a streamed run within 2x of the
in-memory one on files that fit.

Each run is the ``evalkit`` command started by a small Python process of its own, which prints
``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the largest resident set of its children, measured in
a parent that holds nothing (the benchmark's own memory, the lists it wrote, does not count).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import yaml

#: The ten classes of DESED (DCASE task 4).
LABELS = ("Alarm_bell_ringing", "Blender", "Cat", "Dishes", "Dog", "Electric_shaver_toothbrush", "Frying",
          "Running_water", "Speech", "Vacuum_cleaner")
DURATION = 10.0  # seconds a clip
EVENTS = 10  # events a file, on average
BLOCK = 50_000  # files written at a time

#: One run in a parent of its own: wall time and the child's peak RSS (KiB on Linux).
MEASURE = """
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=sys.stderr)
took = time.perf_counter() - start
print(took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""


def write(folder: Path, files: int, seed: int) -> tuple[Path, Path]:
    """A reference and a system event list of ``files`` files, written a block of files at a time.
    The system finds 90% of the events, with boundaries jittered by about 0.2 s and one label in
    ten confused, and adds one or two false alarms a file (so every file is listed on both sides)."""
    rng = np.random.default_rng(seed)
    reference, system = folder / "reference.tsv", folder / "system.tsv"
    with reference.open("w") as ref, system.open("w") as sys_:
        for out in (ref, sys_):
            out.write("filename\tonset\toffset\tevent_label\n")
        for first in range(0, files, BLOCK):
            ids = np.arange(first, min(first + BLOCK, files))
            count = 1 + rng.poisson(EVENTS - 1, len(ids))  # every file has events on both sides
            file = np.repeat(ids, count)
            onset = rng.uniform(0, DURATION - 0.5, file.size)
            offset = np.minimum(onset + rng.uniform(0.2, 4.0, file.size), DURATION)
            label = rng.integers(0, len(LABELS), file.size)
            ref.write(_lines(file, onset, offset, label))
            found = rng.random(file.size) < 0.9
            confused = np.where(rng.random(file.size) < 0.1, rng.integers(0, len(LABELS), file.size), label)
            jitter = rng.normal(0, 0.2, (2, file.size))
            s_onset = np.clip(onset + jitter[0], 0, DURATION)
            s_offset = np.clip(np.maximum(offset + jitter[1], s_onset), 0, DURATION)
            alarms = 1 + rng.poisson(0.5, len(ids))
            a_file = np.repeat(ids, alarms)
            a_onset = rng.uniform(0, DURATION - 0.5, a_file.size)
            s_file = np.r_[file[found], a_file]
            order = np.argsort(s_file, kind="stable")  # sorted by file id, as the reference
            sys_.write(_lines(
                s_file[order], np.r_[s_onset[found], a_onset][order],
                np.r_[s_offset[found], a_onset + rng.uniform(0.2, 2.0, a_file.size)][order],
                np.r_[confused[found], rng.integers(0, len(LABELS), a_file.size)][order],
            ))
    return reference, system


def _lines(file: np.ndarray, onset: np.ndarray, offset: np.ndarray, label: np.ndarray) -> str:
    names = np.array(LABELS)[label]
    return "".join(f"Y{f:07d}.wav\t{a:.3f}\t{b:.3f}\t{c}\n" for f, a, b, c in zip(file.tolist(), onset.tolist(),
                                                                                  offset.tolist(), names.tolist()))


def config(folder: Path, reference: Path, system: Path, stream: bool) -> Path:
    """``configs/sound_events.yaml``'s axes on these lists (no report files)."""
    bundled = yaml.safe_load(Path(__file__).parents[1].joinpath("configs/sound_events.yaml").read_text())
    path = folder / f"{'streamed' if stream else 'in_memory'}.yaml"
    path.write_text(yaml.safe_dump({
        "name": "bench_stream_events",
        "data": {"reference": str(reference), "systems": {"system": str(system)}, "stream": stream},
        **{key: bundled[key] for key in ("representation", "averaging", "metrics")},
    }))
    return path


def run(path: Path) -> tuple[float, int]:
    """Wall time and peak RSS (bytes) of ``evalkit run path --format json``."""
    evalkit = Path(sys.executable).with_name("evalkit")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(MEASURE), str(evalkit), "run", str(path), "--format", "json"],
        capture_output=True, text=True, check=True,
    )
    took, peak = out.stdout.split()
    return float(took), int(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000_000, help="files of the streamed run (0: skip it)")
    parser.add_argument("--compare", type=int, default=100_000, help="files of the time comparison (0: skip it)")
    args = parser.parse_args()
    mib = 2**20
    for files, compare in ((args.compare, True), (args.files, False)):
        if not files:
            continue
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            reference, system = write(folder, files, seed=files)
            size = (reference.stat().st_size + system.stat().st_size) / mib
            events = sum(1 for _ in reference.open()) - 1, sum(1 for _ in system.open()) - 1
            print(f"{files:,} files: {events[0]:,} reference and {events[1]:,} system events ({size:,.0f} MiB of TSV)")
            took, peak = run(config(folder, reference, system, stream=True))
            print(f"  stream: true   {took:7.2f} s   peak RSS {peak / mib:6,.0f} MiB")
            if compare:
                base, base_peak = run(config(folder, reference, system, stream=False))
                print(f"  in memory      {base:7.2f} s   peak RSS {base_peak / mib:6,.0f} MiB")
                print(f"  streamed / in memory: {took / base:.2f}x the time")


if __name__ == "__main__":
    main()
