"""The kinds of run the bundled configs hold, and each run's data reordered for the other engines:
sorted by sample id for a streamed run, shuffled for a Dask run (tests/test_engines_agree.py).

A case's config is a bundled one (its report left out), changed only where no bundled config has
the feature (sample weights, several runs of a system). Their statistics draw as every run does by
default, keyed by sample id (BCa intervals of Poisson counts, keyed paired tests), which a split
or reordered run draws alike.
Data paths are relative to ``configs/`` (run with it as the working folder) until reordered,
when they become the rewritten files' absolute paths.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
QUICKSTART = "data/quickstart"
BOOTSTRAP = {"resamples": 200, "seed": 2023}
Config = dict[str, Any]
#: The keys of inline data that hold one entry per sample (``classes`` holds one per column).
SAMPLE_KEYS = ("ids", "values", "items")
#: The rows of a source in another order: their ids -> the row indices, in their new order.
Order = Callable[[list[str]], list[int]]


def bundled(name: str) -> Config:
    """A bundled config as a mapping, without its reports (a test writes none)."""
    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
    config.pop("report", None)
    return config


def with_bootstrap(name: str) -> Config:
    """A bundled config with bootstrap intervals (BCa, the default)."""
    return {**bundled(name), "statistics": {"bootstrap": dict(BOOTSTRAP)}}


def tested(name: str, test: str) -> Config:
    """A bundled config's statistics with its paired test's method ``test`` (its other settings
    kept)."""
    config = bundled(name)
    config["statistics"]["test"]["method"] = test
    return config


def agreement(name: str) -> Config:
    """A bundled config's rank agreement with bootstrap intervals, and no paired test."""
    config = with_bootstrap(name)
    config["statistics"]["agreement"] = True
    return config


def score_files(folder: Path) -> Config:
    """desed's score folders (files named by their audio file's stem) against its event list,
    with samples only a system lists empty in the reference, and bootstrap intervals: PSDS in
    both scenarios among them (a replicate finds each file's duration by its id)."""
    config = with_bootstrap("desed")
    config["data"]["missing"] = "empty"
    return config


def psds_folders(folder: Path) -> Config:
    """desed as it is bundled (PSDS in both scenarios beside the thresholded measures, no
    intervals), with samples only a system lists empty in the reference."""
    config = bundled("desed")
    config["data"]["missing"] = "empty"
    return config


def collar_folders(folder: Path) -> Config:
    """desed with sed_scores_eval's collar-based metrics over every threshold in place of PSDS:
    F and error rate at 0.5 and at each class's best threshold."""
    config = psds_folders(folder)
    collars = {"onset_collar": 0.2, "offset_collar": 0.2, "offset_collar_rate": 0.2}
    config["metrics"] = [m for m in config["metrics"] if not isinstance(m, dict)] + [
        {"name": "collar_fscore", "threshold": 0.5, **collars}, {"name": "collar_best_fscore", **collars},
        {"name": "collar_error_rate", "threshold": 0.5, **collars}, {"name": "collar_best_error_rate", **collars},
    ]
    return config


def weighted(folder: Path) -> Config:
    """quickstart with Poisson intervals and a weights file (an id column and a weight per
    sample, seeded, some 0) in the reference's order."""
    config = with_bootstrap("quickstart")
    ids = pd.read_csv(CONFIGS / QUICKSTART / "reference.csv", dtype=str)["segment"]
    weights = np.random.default_rng(24).integers(0, 7, len(ids)) / 2
    path = folder / "weights.csv"
    pd.DataFrame({"segment": ids, "weight": weights}).to_csv(path, index=False)
    config["data"]["weights"] = str(path)
    return config


def several_runs(folder: Path) -> Config:
    """quickstart with a system of two runs (reported as their jackknife mean and interval)
    beside a plain one, which gets Poisson intervals."""
    config = with_bootstrap("quickstart")
    config["data"]["systems"] = {
        "dwsnet": f"{QUICKSTART}/dwsnet.csv",
        "retrained": {"runs": [f"{QUICKSTART}/baseline.csv", f"{QUICKSTART}/tiny.csv"]},
    }
    return config


@dataclass(frozen=True)
class Case:
    """A kind of run: its in-memory config (``build(folder)``, files it needs written there),
    and what its results hold besides rows."""

    build: Callable[[Path], Config]
    parts: tuple[str, ...] = ("rows",)


CASES = {
    "matrices": Case(lambda folder: with_bootstrap("quickstart")),
    "items_keywords": Case(lambda folder: bundled("soft_keywords")),
    "items_ontology": Case(lambda folder: with_bootstrap("ontology_labels")),
    "items_files": Case(lambda folder: with_bootstrap("countries")),
    "events": Case(lambda folder: with_bootstrap("events")),
    "sound_events": Case(lambda folder: with_bootstrap("sound_events")),
    "sweep": Case(lambda folder: with_bootstrap("figure1")),
    "score_files": Case(score_files),
    "psds_folders": Case(psds_folders),
    "collar_folders": Case(collar_folders),
    "weights": Case(weighted),
    "runs": Case(several_runs),
    "agreement": Case(lambda folder: agreement("tnorms"), ("rows", "agreement")),
    "paired_permutation": Case(lambda folder: tested("tnorms", "permutation"), ("rows", "comparisons", "agreement")),
    "paired_bootstrap": Case(lambda folder: tested("tnorms", "bootstrap"), ("rows", "comparisons", "agreement")),
}


def by_id(ids: list[str]) -> list[int]:
    """Sorted by id as text, a stable sort: the rows of one id (a file's events) stay together
    in their order."""
    return sorted(range(len(ids)), key=ids.__getitem__)


def shuffled(seed: int) -> Order:
    """Seeded random orders, never the order given (one that comes out unchanged is rotated)."""
    rng = np.random.default_rng(seed)

    def order(ids: list[str]) -> list[int]:
        rows = rng.permutation(len(ids))
        return np.roll(rows, 1).tolist() if (rows == np.arange(len(ids))).all() else rows.tolist()

    return order


def reordered(config: Config, folder: Path, order: Order) -> Config:
    """A copy of ``config`` whose data sources list their rows in ``order``: each file rewritten
    once into ``folder``, inline data with ids reordered in place (inline data without ids is
    matched by position, and stays as it is)."""
    config = copy.deepcopy(config)
    folder.mkdir(exist_ok=True)
    written: dict[Path, str] = {}

    def source(value: Any) -> Any:
        if isinstance(value, str):
            path = CONFIGS / value  # an absolute path stays itself
            if path.is_dir():  # a folder of a file per sample (score files): no order to change
                return str(path)
            if path not in written:
                written[path] = str(rewritten(path, folder / f"{len(written)}_{path.name}", order))
            return written[path]
        if isinstance(value, dict) and "ids" in value:
            rows = order([str(i) for i in value["ids"]])
            return {key: [given[i] for i in rows] if key in SAMPLE_KEYS else given for key, given in value.items()}
        return value

    data = config["data"]
    data["reference"] = source(data["reference"])
    data["systems"] = {
        name: {"runs": [source(run) for run in given["runs"]]} if isinstance(given, dict) and "runs" in given
        else source(given)
        for name, given in data["systems"].items()
    }
    if "weights" in data:
        data["weights"] = source(data["weights"])
    return config


def rewritten(path: Path, out: Path, order: Order) -> Path:
    """The lines of a CSV (header, then a row per sample), tab-separated event list (a header or
    none, then a row per event) or JSON Lines file (an object per sample) written to ``out`` in
    ``order`` of their ids (the first field; a JSON object's ``id``), the text of each unchanged."""
    lines = path.read_text(encoding="utf-8").splitlines()
    head = lines[:1] if _has_header(path, lines[0]) else []
    rows = lines[len(head):]
    ids = [_sample_id(path, line) for line in rows]
    out.write_text("".join(f"{line}\n" for line in head + [rows[i] for i in order(ids)]), encoding="utf-8")
    return out


def _has_header(path: Path, first: str) -> bool:
    assert path.suffix in (".csv", ".tsv", ".jsonl"), f"{path}: no rule for its rows here"
    if path.suffix != ".tsv":
        return path.suffix == ".csv"  # a matrix (or weights) CSV names its columns
    fields = first.split("\t")  # an event list: file, onset, offset, label; or a file alone (no events)
    if len(fields) < 2:
        return False
    try:
        float(fields[1])
    except ValueError:
        return True  # "onset" or the like
    return False


def _sample_id(path: Path, line: str) -> str:
    if path.suffix == ".jsonl":
        return str(json.loads(line)["id"])
    first = line.split("\t" if path.suffix == ".tsv" else ",", 1)[0]
    assert '"' not in first, f"{path}: a quoted id is not read here"
    return first


def reference_rows(config: Config) -> int:
    """How many rows (samples, events) the reference lists."""
    reference = config["data"]["reference"]
    if isinstance(reference, str):
        path = CONFIGS / reference
        lines = path.read_text(encoding="utf-8").splitlines()
        return len(lines) - _has_header(path, lines[0])
    if isinstance(reference, dict):
        return len(reference["ids"])
    return len(reference)


def streamed(config: Config, folder: Path) -> Config:
    """The run streamed: every data source sorted by sample id."""
    config = reordered(config, folder, by_id)
    config["data"]["stream"] = True
    return config


def on_dask(config: Config, folder: Path, address: str) -> Config:
    """The run on the Dask cluster at ``address``: every data source shuffled, read in blocks
    of a third of the reference's rows, so that samples meet only when grouped by id."""
    rows = max(1, reference_rows(config) // 3)
    config = reordered(config, folder, shuffled(24))
    config["engine"] = {"name": "dask", "address": address, "partition_rows": rows}
    return config
