"""The snapshot of every bundled config's results that ``test_config_snapshot`` compares against.

``python tests/snapshots/take.py --check`` lists what differs from the snapshot beyond rounding;
``python tests/snapshots/take.py`` retakes it. Retake it only when a change of numbers is
intended and explained in its commit (CONTRIBUTING.md, "The results snapshot"); a refactor must
leave it untouched.

Names, notes, counts (ints) and missing values are compared exactly. Floats are compared to a
relative 1e-12: they come from sums of up to a few thousand terms and from ``exp``/``log``/
``power`` (Yager, Frank, Dombi, ...), whose last bits depend on the SIMD path numpy takes on the
machine (AVX-512 sums and transcendental functions differ from AVX2's in the last place), so
equal bits would hold only on the machine that took the snapshot. 1e-12 is some 5,000 times the
rounding of such sums and far below any printed digit. An absolute 1e-15 covers values that
cancel to about 0 (a difference of two equal systems).
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

import evalkit

HERE = Path(__file__).parent
CONFIGS = HERE.parents[1] / "configs"
SNAPSHOT = HERE / "config_results.json.gz"
#: What a run computed; provenance (timestamps, versions) and the config echo are left out.
KEYS = ("rows", "comparisons", "agreement", "notes")
REL, ABS = 1e-12, 1e-15


def results_of(config: Path) -> dict:
    document = evalkit.run(config, write_reports=False).as_dict()
    return json.loads(json.dumps({key: document[key] for key in KEYS}))


def taken() -> dict:
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def differences(got: object, want: object, where: str) -> Iterator[str]:
    """Where ``got`` and ``want`` (JSON documents) differ beyond rounding, one line per place."""
    if isinstance(want, float) and isinstance(got, float):
        same = (math.isnan(got) and math.isnan(want)) or math.isclose(got, want, rel_tol=REL, abs_tol=ABS)
        if not same:
            yield f"{where}: got {got!r}, want {want!r}"
    elif isinstance(want, dict) and isinstance(got, dict):
        if got.keys() != want.keys():
            yield f"{where}: keys {sorted(got)} differ from {sorted(want)}"
        for key in want.keys() & got.keys():
            yield from differences(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            yield f"{where}: {len(got)} entries, snapshot {len(want)}"
        for index, (a, b) in enumerate(zip(got, want)):
            yield from differences(a, b, f"{where}[{index}]")
    elif type(got) is not type(want) or got != want:  # names, notes, ints, bools, None: exact
        yield f"{where}: got {got!r}, want {want!r}"


def main(argv: list[str]) -> int:
    configs = sorted(CONFIGS.glob("*.yaml"))
    if argv == ["--check"]:
        expected = taken()
        found = [line for path in configs for line in differences(results_of(path), expected.get(path.name), path.name)]
        print("\n".join(found) or "the results equal the snapshot")
        return 1 if found else 0
    if argv:
        print(__doc__)
        return 2
    snapshot = {path.name: results_of(path) for path in configs}
    with gzip.open(SNAPSHOT, "wt", encoding="utf-8") as handle:
        json.dump(snapshot, handle, sort_keys=True, indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
