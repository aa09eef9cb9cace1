"""Benchmark: PSDS against sed_scores_eval on DESED-sized score files.

Run as a script, not a test::

    python benchmarks/bench_psds.py [--files 2000] [--classes 10] [--frames 156]

Writes ``files`` score files of 10 s (``frames`` frames of 64 ms, as the DCASE task 4 baseline
outputs them, scores rounded to 3 decimals), a reference event list (one to three classes per
file, one or two events each) and a durations table, then times, in one run, each from the
files on disk (reading included) and each best of three after a warm-up:

- evalkit: ``evalkit.run`` with ``psds`` in both DCASE scenarios (scenario 2 counts cross-triggers);
- sed_scores_eval: ``intersection_based.psds`` with the same settings, on the same folder.

It checks that the two agree (PSDS to 1e-12) and prints the ratios. The target: no slower than
sed_scores_eval.
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path

import numpy as np
from timing import best_time

import evalkit

SCENARIOS = {
    "scenario 1": {"dtc_threshold": 0.7, "gtc_threshold": 0.7, "alpha_st": 1.0, "max_efpr": 100.0},
    "scenario 2": {"dtc_threshold": 0.1, "gtc_threshold": 0.1, "cttc_threshold": 0.3, "alpha_ct": 0.5,
                   "alpha_st": 1.0, "max_efpr": 100.0},
}


def make(root: Path, files: int, classes: int, frames: int) -> None:
    """Score files with a rise over each reference event, noise and false alarms."""
    rng = np.random.default_rng(0)
    names = [f"c{k}" for k in range(classes)]
    (root / "scores").mkdir()
    hop = 10.0 / frames
    times = np.round(np.arange(frames + 1) * hop, 6)
    centre = (times[:-1] + times[1:]) / 2
    header = "\t".join(("onset", "offset", *names))
    events, durations = ["filename\tonset\toffset\tevent_label"], ["filename\tduration"]
    for f in range(files):
        clip = f"Y{f:06d}"
        score = rng.random((frames, classes)) * 0.6
        for c in rng.choice(classes, size=int(rng.integers(1, 4)), replace=False):
            t = float(rng.uniform(0, 3))
            for _ in range(int(rng.integers(1, 3))):
                onset, offset = round(t, 3), round(min(t + float(rng.uniform(0.5, 4)), 10.0), 3)
                events.append(f"{clip}.wav\t{onset}\t{offset}\t{names[c]}")
                score[:, c] = np.maximum(score[:, c], ((centre >= onset + 0.1) & (centre < offset + 0.1)) * rng.uniform(0.4, 1))
                t = offset + float(rng.uniform(0.5, 2))
                if t > 9:
                    break
        body = "\n".join("\t".join(map(repr, (float(a), float(b), *row))) for a, b, row in
                         zip(times[:-1], times[1:], np.round(score, 3).tolist()))
        (root / "scores" / f"{clip}.tsv").write_text(f"{header}\n{body}\n")
        durations.append(f"{clip}.wav\t10.0")
    (root / "reference.tsv").write_text("\n".join(events) + "\n")
    (root / "durations.tsv").write_text("\n".join(durations) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--frames", type=int, default=156)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sed_scores_eval import intersection_based
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make(root, args.files, args.classes, args.frames)
        print(f"{args.files:,} files x {args.frames} frames x {args.classes} classes")
        durations = str(root / "durations.tsv")
        for scenario, settings in SCENARIOS.items():
            config = {"name": "psds", "metrics": [{"name": "psds", "durations": durations, **settings}],
                      "data": {"reference": str(root / "reference.tsv"), "systems": {"s": str(root / "scores")}}}

            def ours(config: dict = config) -> float:
                return next(r.value for r in evalkit.run(config).rows if r.metric == "psds")

            def peer(settings: dict = settings) -> float:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return float(intersection_based.psds(
                        str(root / "scores"), str(root / "reference.tsv"), durations, **settings)[0])

            t_ours, value = best_time(ours, (), args.repeat)
            t_peer, expected = best_time(peer, (), args.repeat)
            assert abs(value - expected) < 1e-12, (value, expected)
            print(f"{scenario}: PSDS {value:.4f}   evalkit {t_ours:6.2f} s   sed_scores_eval {t_peer:6.2f} s   "
                  f"({t_peer / t_ours:.1f}x evalkit's time)")


if __name__ == "__main__":
    main()
