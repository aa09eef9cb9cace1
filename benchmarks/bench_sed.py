"""Benchmark: segment-based metrics at 1 s and event-based metrics against sed_eval, on many files.

Run as a script, not a test::

    python benchmarks/bench_sed.py [--files 100000] [--peer-files 2000] [--resolution 1.0]

Writes a reference and a system event list (``files`` recordings of 10 s to 60 s, four labels,
a few events per label and file) and times, in one run:

- evalkit: ``evalkit.run`` with ``segments`` at the resolution, then with ``event_based`` (collar
  0.2 s, 50% of the length for offsets), micro and per class, P, R, F and the error rates
  (reading both files included);
- sed_eval: ``SegmentBasedMetrics`` and ``EventBasedMetrics`` over the first ``peer_files``
  recordings (file by file, as sed_eval is used; the event lists already in memory as its
  dicts), scaled to all the files.

It checks that the two agree on those recordings (overall F and ER to 1e-9) and prints the ratios.
The target: at least 10x faster than sed_eval.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import evalkit

LABELS = ["alarm", "cat", "dog", "speech"]


def events(rng: np.random.Generator, files: int, shift: float) -> list[tuple[str, float, float, str]]:
    rows = []
    lengths = rng.uniform(10, 60, files)
    for f in range(files):
        for label in LABELS:
            for _ in range(rng.integers(1 if label == LABELS[0] else 0, 4)):  # every file has an event
                onset = round(float(rng.uniform(0, lengths[f] - 1)) + shift * float(rng.standard_normal()), 3)
                onset = max(onset, 0.0)
                rows.append((f"f{f:06d}.wav", onset, round(onset + float(rng.uniform(0.1, 5)), 3), label))
    return rows


def write(path: Path, rows: list[tuple[str, float, float, str]]) -> str:
    with path.open("w", encoding="utf-8") as handle:
        handle.write("filename\tonset\toffset\tevent_label\n")
        handle.writelines(f"{f}\t{a}\t{b}\t{c}\n" for f, a, b, c in rows)
    return str(path)


def by_file(rows: list[tuple[str, float, float, str]]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f, a, b, c in rows:
        out.setdefault(f, []).append({"filename": f, "onset": a, "offset": b, "event_label": c})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--peer-files", type=int, default=2_000)
    parser.add_argument("--resolution", type=float, default=1.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    reference, system = events(rng, args.files, 0.0), events(rng, args.files, 0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sed_eval
    kinds = {
        "segment-based": ({"name": "segments", "resolution": args.resolution},
                          lambda: sed_eval.sound_event.SegmentBasedMetrics(LABELS, time_resolution=args.resolution)),
        "event-based": ({"name": "event_based", "t_collar": 0.2, "percentage_of_length": 0.5},
                        lambda: sed_eval.sound_event.EventBasedMetrics(LABELS, t_collar=0.2, percentage_of_length=0.5)),
    }
    names = sorted({r[0] for r in reference})[: args.peer_files]
    kept = set(names)
    small_ref = [r for r in reference if r[0] in kept]
    small_sys = [r for r in system if r[0] in kept]
    ref_files, sys_files = by_file(small_ref), by_file(small_sys)
    print(f"{args.files:,} files, {len(reference):,} reference and {len(system):,} system events")
    with tempfile.TemporaryDirectory() as folder:
        data = {"reference": write(Path(folder) / "ref.tsv", reference),
                "systems": {"s": write(Path(folder) / "sys.tsv", system)}}
        small = {"reference": write(Path(folder) / "ref_small.tsv", small_ref),
                 "systems": {"s": write(Path(folder) / "sys_small.tsv", small_sys)}}
        for kind, (representation, make) in kinds.items():
            config = {"name": "sed", "data": data, "representation": representation, "averaging": ["micro", "none"],
                      "metrics": ["precision", "recall", "f1", "error_rate", "substitution_rate", "deletion_rate",
                                  "insertion_rate"]}
            evalkit.run(config)  # warm-up: imports, plugins
            start = time.perf_counter()
            evalkit.run(config)
            ours = time.perf_counter() - start
            got = {(r.averaging, r.metric, r.class_): r.value for r in evalkit.run({**config, "data": small}).rows}
            start = time.perf_counter()
            metrics = make()
            for name in names:
                metrics.evaluate(ref_files[name], sys_files.get(name, []))
            peer = (time.perf_counter() - start) * args.files / len(names)
            assert abs(got[("micro", "f1", None)] - metrics.overall_f_measure()["f_measure"]) < 1e-9
            assert abs(got[("micro", "error_rate", None)] - metrics.overall_error_rate()["error_rate"]) < 1e-9
            print(f"{kind:<14} evalkit {ours:7.2f} s   sed_eval ({len(names):,} files timed, scaled) {peer:8.2f} s   "
                  f"({peer / ours:.0f}x evalkit's time)")


if __name__ == "__main__":
    main()
