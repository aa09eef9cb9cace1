"""Benchmark: the collar-based best F of a score folder against sed_scores_eval's.

Run as a script, not a test::

    python benchmarks/bench_collar.py [--files 800] [--repeat 1] [--folder DIR]

On the folders of ``bench_psds.py`` (``files`` score files of 1,000 frames x 10 classes at 4
decimals, DESED-like events), times in fresh processes, interleaved, the CPU time (user +
system), wall time and peak resident set (``VmHWM``) of ``collar_best_fscore`` (DCASE's collars:
0.2 s, 0.2 s, 20 %) on system ``a``: evalkit in memory and streamed, and sed_scores_eval's
``collar_based.best_fscore`` on the folder path. Checks that they agree (to 1e-12) and prints the
ratios, and the peak of a 20-file run (what the interpreter and the libraries take).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

from bench_psds import make

COLLARS = {"onset_collar": 0.2, "offset_collar": 0.2, "offset_collar_rate": 0.2}


def one(tool: str, root: Path) -> None:
    """In this (fresh) process: the collar-based best F of system a by one tool, as JSON."""
    start = time.perf_counter()
    if tool == "sed_scores_eval":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from sed_scores_eval import collar_based

            value = float(collar_based.best_fscore(str(root / "a"), str(root / "reference.tsv"), **COLLARS)[0]["macro_average"])
    else:
        import evalkit

        rows = evalkit.run({"name": "collar", "metrics": [{"name": "collar_best_fscore", **COLLARS}],
                            "data": {"reference": str(root / "reference.tsv"), "stream": tool == "evalkit streamed",
                                     "systems": {"a": str(root / "a")}}}).rows
        value = next(r.value for r in rows if r.metric == "collar_best_fscore")
    used = resource.getrusage(resource.RUSAGE_SELF)
    peak = int(Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0]) * 1024
    print(json.dumps({"value": value, "seconds": time.perf_counter() - start, "cpu": used.ru_utime + used.ru_stime,
                      "peak": peak}))


def small(root: Path, files: int = 20) -> Path:
    """The first ``files`` files of system a and their events: a run of the libraries alone."""
    part = root.parent / f"{root.name}-first{files}"
    if not part.exists():
        (part / "a").mkdir(parents=True)
        names = sorted(f.name for f in (root / "a").iterdir())[:files]
        for name in names:
            shutil.copy(root / "a" / name, part / "a" / name)
        lines = (root / "reference.tsv").read_text().splitlines()
        ids = {name.removesuffix(".tsv") for name in names}
        kept = [line for line in lines[1:] if line.split("\t")[0].rsplit(".", 1)[0] in ids]
        (part / "reference.tsv").write_text("\n".join([lines[0], *kept]) + "\n")
    return part


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=800)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/bench_collar"), help="where the folders are written")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # tool: the child process
    args = parser.parse_args()
    if args.one:
        one(args.one, args.folder)
        return
    root = args.folder / f"{args.files}x1000d4"
    if not root.exists():
        root.mkdir(parents=True)
        make(root, args.files, 1000, 4)

    def run(tool: str, folder: Path) -> dict:
        done = subprocess.run([sys.executable, __file__, "--one", tool, "--folder", str(folder)],
                              capture_output=True, text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    text = sum(f.stat().st_size for f in (root / "a").iterdir())
    base = run("evalkit", small(root))["peak"]
    print(f"{args.files:,} files x 1000 frames x 10 classes, {text / 2**20:.0f} MiB of text; a 20-file run peaks "
          f"{base / 2**20:.0f} MiB")
    tools = ("evalkit", "evalkit streamed", "sed_scores_eval")
    found: dict[str, list[dict]] = {tool: [] for tool in tools}
    for _ in range(args.repeat):
        for tool in tools:
            found[tool].append(run(tool, root))
    theirs = min(found["sed_scores_eval"], key=lambda r: r["cpu"])
    for tool, runs in found.items():
        best = min(runs, key=lambda r: r["cpu"])
        assert abs(best["value"] - theirs["value"]) <= 1e-12 * abs(theirs["value"]), (best, theirs)
        print(f"{tool:16s} {best['cpu']:7.2f} s CPU  {best['seconds']:7.2f} s wall  peak {best['peak'] / 2**20:5.0f} MiB "
              f"({(best['peak'] - base) / text:.1f} per byte of text above the 20-file run)  "
              f"{theirs['cpu'] / best['cpu']:.2f}x sed_scores_eval's CPU")


if __name__ == "__main__":
    main()
