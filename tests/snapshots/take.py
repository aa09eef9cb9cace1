"""Write the snapshot of every bundled config's results that ``test_config_snapshot`` compares
against: ``python tests/snapshots/take.py``. Take it only when a change of numbers is intended
and explained in its commit; a refactor must leave it untouched."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import evalkit

HERE = Path(__file__).parent
CONFIGS = HERE.parents[1] / "configs"
SNAPSHOT = HERE / "config_results.json.gz"
#: What a run computed; provenance (timestamps, versions) and the config echo are left out.
KEYS = ("rows", "comparisons", "agreement", "notes")


def results_of(config: Path) -> dict:
    document = evalkit.run(config, write_reports=False).as_dict()
    return json.loads(json.dumps({key: document[key] for key in KEYS}))


def main() -> None:
    snapshot = {path.name: results_of(path) for path in sorted(CONFIGS.glob("*.yaml"))}
    with gzip.open(SNAPSHOT, "wt", encoding="utf-8") as handle:
        json.dump(snapshot, handle, sort_keys=True, indent=0)


if __name__ == "__main__":
    main()
