"""Benchmark: PSDS against sed_scores_eval on score folders the size of a DCASE task 4 system's.

Run as a script, not a test::

    python benchmarks/bench_psds.py [--files 1168] [--copies 1] [--repeat 1] [--folder DIR]

Writes, once per folder, two systems' score folders like a DCASE task 4 system's on DESED
validation: ``files`` files of 10 s at a 10 ms hop (1,000 frames), 10 classes, smooth posteriors
with noise written to ``decimals`` decimals (so hundreds of distinct scores per file and class), a
reference event list like DESED's (one to four events per file, several classes) and a durations
table; ``--copies N`` writes N copies of every file under new ids (hard links); ``--shuffled`` lists
the reference's files in a random order (streamed runs need it sorted). Then times, each in
a fresh process and interleaved (evalkit, sed_scores_eval, evalkit, ...), with the process's CPU
time (user + system, all threads: the figure to compare on a shared machine), wall time and
peak resident set (``VmHWM``), both DCASE scenarios over both systems:

- evalkit: ``evalkit.run`` of ``psds`` over the two systems, in memory and streamed
  (``data: {stream: true}``); both read the folders a chunk of files at a time;
- sed_scores_eval: ``intersection_based.psds`` of each system on its folder path (which it reads
  lazily, a file at a time).

It checks that they agree (PSDS to 1e-12) and prints the ratios. Target: both scenarios at least
2x faster than sed_scores_eval, with a lower peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

CLASSES = ("Alarm_bell_ringing", "Blender", "Cat", "Dishes", "Dog", "Electric_shaver_toothbrush", "Frying",
           "Running_water", "Speech", "Vacuum_cleaner")
SYSTEMS = ("a", "b")
SCENARIOS = {
    "1": {"dtc_threshold": 0.7, "gtc_threshold": 0.7, "alpha_st": 1.0, "max_efpr": 100.0},
    "2": {"dtc_threshold": 0.1, "gtc_threshold": 0.1, "cttc_threshold": 0.3, "alpha_ct": 0.5,
          "alpha_st": 1.0, "max_efpr": 100.0},
}


def make(root: Path, files: int, frames: int, decimals: int) -> None:
    """Two systems' score folders over one reference: each event a smooth rise of the class's
    posterior (its edges blurred, a system-dependent lag), false alarms on other classes, and
    frame noise; the reference one to four events per file of one to three classes, none of one
    class overlapping."""
    rng = np.random.default_rng(0)
    hop = 10.0 / frames
    times = np.round(np.arange(frames + 1) * hop, 6)
    centre = (times[:-1] + times[1:]) / 2
    header = "\t".join(("onset", "offset", *CLASSES)) + "\n"
    events, durations = ["filename\tonset\toffset\tevent_label"], ["filename\tduration"]
    for system in SYSTEMS:
        (root / system).mkdir()
    for f in range(files):
        clip = f"Y{f:07d}"
        placed = []
        for c in rng.choice(len(CLASSES), size=int(rng.integers(1, 4)), replace=False):
            t = float(rng.uniform(0, 4))
            for _ in range(int(rng.integers(1, 3))):
                onset, offset = round(t, 3), round(min(t + float(rng.uniform(0.3, 5)), 10.0), 3)
                placed.append((onset, offset, int(c)))
                t = offset + float(rng.uniform(0.3, 3))
                if t > 9.5 or len(placed) == 4:
                    break
            if len(placed) == 4:
                break
        events += [f"{clip}.wav\t{a}\t{b}\t{CLASSES[c]}" for a, b, c in placed]
        durations.append(f"{clip}.wav\t10.0")
        for system in SYSTEMS:
            score = np.zeros((frames, len(CLASSES)))
            for onset, offset, c in placed + [(float(a), float(a) + float(rng.uniform(0.2, 2)), int(k)) for a, k in
                                              zip(rng.uniform(0, 9, 2), rng.integers(0, len(CLASSES), 2))]:
                lag, edge = rng.normal(0.1, 0.1), rng.uniform(0.05, 0.4)
                rise = 1 / (1 + np.exp(-(centre - onset - lag) / edge)) * (1 / (1 + np.exp((centre - offset - lag) / edge)))
                score[:, c] = np.maximum(score[:, c], rise * rng.uniform(0.3, 1))
            score += np.abs(rng.normal(0, 0.03, score.shape))
            score = np.clip(score, 0, 1)
            rows = np.column_stack([times[:-1], times[1:], score])
            with open(root / system / f"{clip}.tsv", "w") as out:
                out.write(header)
                np.savetxt(out, rows, fmt=["%.6g", "%.6g"] + [f"%.{decimals}f"] * len(CLASSES), delimiter="\t")
    (root / "reference.tsv").write_text("\n".join(events) + "\n")
    (root / "durations.tsv").write_text("\n".join(durations) + "\n")


def copies(root: Path, n: int) -> Path:
    """``root`` with every file ``n`` times under new ids (``<id>_<k>``): hard links of the score
    files, the reference and durations repeated."""
    out = root / f"x{n}"
    if out.exists():
        return out
    out.mkdir()
    for system in SYSTEMS:
        (out / system).mkdir()
        for file in sorted((root / system).iterdir()):
            for k in range(n):
                os.link(file, out / system / f"{file.stem}_{k:02d}.tsv")
    for table in ("reference.tsv", "durations.tsv"):  # sorted by file id, as a streamed run reads them
        head, *rows = (root / table).read_text().splitlines()
        by_file: dict[str, list[str]] = {}
        for row in rows:
            by_file.setdefault(row.split("\t", 1)[0], []).append(row)
        lines = [head] + [row.replace(".wav", f"_{k:02d}.wav", 1) for file in sorted(by_file) for k in range(n)
                          for row in by_file[file]]
        (out / table).write_text("\n".join(lines) + "\n")
    return out


def shuffled(root: Path) -> Path:
    """``root`` with its reference listing the files in a seeded random order (its events of a
    file together), the score folders and durations linked: an in-memory run must not depend
    on the reference's order."""
    out = root / "shuffled"
    if out.exists():
        return out
    out.mkdir()
    for name in (*SYSTEMS, "durations.tsv"):
        (out / name).symlink_to(root / name)
    head, *rows = (root / "reference.tsv").read_text().splitlines()
    by_file: dict[str, list[str]] = {}
    for row in rows:
        by_file.setdefault(row.split("\t", 1)[0], []).append(row)
    files = list(by_file)
    np.random.default_rng(0).shuffle(files)
    (out / "reference.tsv").write_text("\n".join([head, *(row for file in files for row in by_file[file])]) + "\n")
    return out


def one(tool: str, root: Path, scenario: str) -> None:
    """In this (fresh) process: PSDS of both systems by one tool; prints the values, seconds and
    peak resident set as JSON."""
    settings = SCENARIOS[scenario]
    durations = str(root / "durations.tsv")
    start = time.perf_counter()
    if tool == "sed_scores_eval":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from sed_scores_eval import intersection_based

            values = [float(intersection_based.psds(str(root / system), str(root / "reference.tsv"), durations,
                                                    **settings)[0]) for system in SYSTEMS]
    else:
        import evalkit

        config = {"name": "psds", "metrics": [{"name": "psds", "durations": durations, **settings}],
                  "data": {"reference": str(root / "reference.tsv"), "stream": tool == "evalkit streamed",
                           "systems": {system: str(root / system) for system in SYSTEMS}}}
        rows = evalkit.run(config).rows
        values = [next(r.value for r in rows if r.metric == "psds" and r.system == system) for system in SYSTEMS]
    seconds = time.perf_counter() - start
    used = resource.getrusage(resource.RUSAGE_SELF)
    peak = int(Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0]) * 1024
    print(json.dumps({"values": values, "seconds": seconds, "cpu": used.ru_utime + used.ru_stime, "peak": peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1_168)
    parser.add_argument("--frames", type=int, default=1_000)
    parser.add_argument("--decimals", type=int, default=4)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/bench_psds"), help="where the folders are written")
    parser.add_argument("--scenarios", default="12")
    parser.add_argument("--tools", default="evalkit,evalkit streamed,sed_scores_eval")
    parser.add_argument("--shuffled", action="store_true", help="the reference lists the files in a random order")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # tool, scenario: the child process
    args = parser.parse_args()
    if args.one:
        one(args.one[0], args.folder, args.one[1])
        return
    root = args.folder / f"{args.files}x{args.frames}d{args.decimals}"
    if not root.exists():
        root.mkdir(parents=True)
        make(root, args.files, args.frames, args.decimals)
    if args.copies > 1:
        root = copies(root, args.copies)
    if args.shuffled:
        root = shuffled(root)
    print(f"{args.files:,} files x {args.copies} copies x {args.frames} frames x {len(CLASSES)} classes, 2 systems")
    tools = args.tools.split(",")
    for scenario in args.scenarios:
        found: dict[str, list[dict]] = {tool: [] for tool in tools}
        for _ in range(args.repeat):
            for tool in tools:
                done = subprocess.run([sys.executable, __file__, "--one", tool, scenario, "--folder", str(root)],
                                      capture_output=True, text=True, check=True)
                found[tool].append(json.loads(done.stdout.strip().splitlines()[-1]))
        peer = found.get("sed_scores_eval")
        for tool, runs in found.items():
            best = min(runs, key=lambda r: r["cpu"])
            line = (f"scenario {scenario}: {tool:16s} {best['cpu']:7.2f} s CPU  {best['seconds']:7.2f} s wall  "
                    f"peak {best['peak'] / 2**30:5.2f} GiB")
            if peer and tool != "sed_scores_eval":
                theirs = min(peer, key=lambda r: r["cpu"])
                assert np.allclose(best["values"], theirs["values"], rtol=1e-12, atol=0), (best, theirs)
                line += f"  ({theirs['cpu'] / best['cpu']:.2f}x faster in CPU, PSDS equal to 1e-12)"
            print(line, flush=True)


if __name__ == "__main__":
    main()
