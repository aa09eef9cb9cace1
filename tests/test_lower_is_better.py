"""Error rates rank lowest-first everywhere: a data metric that reports several results under
names of its own lists the ones that improve as they fall (``lower_is_better``), so the summary,
the paired tests' verdicts, rank agreement and the worst files orient each of them, with or
without parameters (a review found the noisy system named best on every error rate)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_psds import make

import evalkit
from evalkit.findings import best_systems

RATES = ("_error_rate", "_insertion_rate", "_deletion_rate")


def oracle_folder(root: Path) -> Path:
    """``root/oracle``: 1 inside the reference events (at each frame's middle), 0 elsewhere,
    beside make()'s random scores."""
    gt = pd.read_csv(root / "gt.tsv", sep="\t").dropna()
    (root / "oracle").mkdir()
    for path in (root / "scores").iterdir():
        table = pd.read_csv(path, sep="\t")
        middle = (table.onset + table.offset) / 2
        for name in table.columns[2:]:
            events = gt[(gt.filename == path.stem + ".wav") & (gt.event_label == name)]
            inside = [(middle >= on) & (middle < off) for on, off in zip(events.onset, events.offset)]
            table[name] = np.any(inside, axis=0).astype(float) if inside else 0.0
        table.to_csv(root / "oracle" / path.name, sep="\t", index=False)
    return root / "oracle"


COLLAR = {"onset_collar": 0.2, "offset_collar": 0.2}
INTERSECTION = {"dtc_threshold": 0.5, "gtc_threshold": 0.5}


@pytest.mark.parametrize(("metrics", "n_rates"), [
    ([{"name": "segment_error_rate", "threshold": 0.5}, {"name": "intersection_error_rate", **INTERSECTION, "threshold": 0.5},
      {"name": "collar_error_rate", **COLLAR, "threshold": 0.5}, {"name": "collar_best_error_rate", **COLLAR}], 18),
    (["segment_error_rate", {"name": "intersection_error_rate", **INTERSECTION}], 6),
], ids=["with parameters", "by name"])
def test_the_oracle_is_best_on_every_error_rate(tmp_path, metrics, n_rates):
    make(tmp_path, 1, files=8)
    results = evalkit.run({"name": "rates", "metrics": metrics, "data": {
        "reference": str(tmp_path / "gt.tsv"), "systems": {"oracle": str(oracle_folder(tmp_path)),
                                                          "noise": str(tmp_path / "scores")}}})
    single = [r for r in results.rows if r.measure.single and not math.isnan(r.value)]
    rates = {r.metric for r in single if r.metric.endswith(RATES)}
    assert len(rates) == n_rates and rates <= set(results.lower_is_better)
    assert not any(name.endswith("_threshold") for name in results.lower_is_better)
    value = {(r.system, r.metric): r.value for r in single}
    assert all(value["oracle", m] <= value["noise", m] for m in rates), "the oracle's rates are never higher"
    lower = {m for m in rates if value["oracle", m] < value["noise", m]}
    assert {m for m in rates if m.endswith("_error_rate")} <= lower
    found = best_systems(results)
    assert found is not None and set(found.wins) == {"oracle"}
    assert {m.metric for m in found.wins["oracle"]} >= lower
