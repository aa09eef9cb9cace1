"""The Python API: :func:`evaluate` for one computation, :func:`run` for a whole config."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.config import LoadedConfig, RunConfig, Spec, as_list, load_config
from evalkit.data import LabelMatrix, align
from evalkit.engine import Plan, Progress, resolve, score_system
from evalkit.items import ItemSets
from evalkit.results import Results, Row
from evalkit.errors import ConfigError
from evalkit.plugins import default_registry
from evalkit.registry import Registry
from evalkit.sources import load_source


def evaluate(
    reference: Any,
    prediction: Any,
    *,
    representation: Spec = "fuzzy",
    tnorm: Spec = "minimum",
    similarity: Spec | None = None,
    averaging: Spec = "micro",
    metrics: Sequence[Spec] = ("precision", "recall", "f1"),
    zero_division: float = 0.0,
    classes: Sequence[str] | None = None,
    clip: bool = False,
    missing: str = "error",
    registry: Registry | None = None,
) -> dict[str, float | np.ndarray]:
    """One computation: metric label -> value (a per-class array for ``averaging="none"``).

    ``reference`` and ``prediction`` are what the representation reads: for memberships, (samples
    x classes) array-likes (a 1-D array is one class) or :class:`~evalkit.data.LabelMatrix`; for
    item representations (``soft_cardinality``, ...), a list of samples, each a list of items (or
    a mapping class -> items), or :class:`~evalkit.items.ItemSets`. Components are names or
    ``{"name": ..., **params}``.
    """
    for key, value in (("representation", representation), ("tnorm", tnorm), ("averaging", averaging)):
        if isinstance(value, list):
            raise ConfigError(f"evaluate(): {key} takes one component; use evalkit.run() to compare several")
    registry = registry or default_registry()
    config = RunConfig.model_validate({
        "data": {"reference": reference, "systems": {"prediction": prediction}, "classes": classes,
                 "clip": clip, "missing": missing},
        "representation": representation, "tnorm": tnorm, "similarity": similarity,
        "averaging": averaging, "metrics": list(metrics), "zero_division": zero_division,
    })
    loaded = LoadedConfig(config, None, Path.cwd())
    rows, _ = score(loaded, registry, lambda *path: path[-1] if path[0] == "data" else f"evaluate(): {path[0]}")
    values: dict[str, Any] = {}
    for row in rows:
        if row.class_ is None and row.level is None:
            values[row.metric] = row.value
        else:
            values.setdefault(row.metric, []).append(row.value)
    return {k: np.array(v) if isinstance(v, list) else v for k, v in values.items()}


def make_plan(config: RunConfig, registry: Registry, where, base: Path | None = None) -> Plan:
    def axis(kind: str, key: str, specs) -> list:
        listed = isinstance(specs, list)
        return resolve(registry, kind, as_list(specs), lambda i: where(key, i) if listed else where(key), base)

    return Plan(
        representations=axis("representation", "representation", config.representation),
        tnorms=axis("tnorm", "tnorm", config.tnorm),
        similarities=axis("similarity", "similarity", config.similarity),
        averagings=axis("averaging", "averaging", config.averaging),
        metrics=axis("metric", "metrics", config.metrics),
        zero_division=config.zero_division,
    )


def score(
    loaded: LoadedConfig, registry: Registry, where=None, progress: Progress | None = None
) -> tuple[list[Row], list[str]]:
    """Rows of every system of a config, and notes on what was done to the data (clipping)."""
    where = where or loaded.where
    cfg, data = loaded.config, loaded.config.data
    plan = make_plan(cfg, registry, where, loaded.base)
    kind = plan.data_kind

    def load(source: Any, role: str, *path: str) -> Any:
        return load_source(
            source, base=loaded.base, where=where("data", *path), registry=registry,
            classes=data.classes, kind=kind, role=role,
        )

    reference = load(data.reference, "reference", "reference")
    if isinstance(reference, LabelMatrix):
        reference, _ = reference.check_memberships()
    rows, notes = [], []
    for system, source in data.systems.items():
        prediction = align(reference, load(source, "prediction", "systems", system), data.missing)
        if isinstance(prediction, LabelMatrix) and plan.ranks_only:
            prediction = prediction.check_scores()
        elif isinstance(prediction, LabelMatrix):
            prediction, clipped = prediction.check_memberships(clip=data.clip)
            if clipped:
                notes.append(f"{system}: {clipped} prediction value(s) outside [0, 1] were clipped (clip: true)")
        rows += score_system(system, _rows_of(reference), _rows_of(prediction), plan, reference.classes, progress)
    return rows, notes


def _rows_of(data: LabelMatrix | ItemSets) -> np.ndarray | ItemSets:
    """What the engine slices into chunks: the values array of a matrix, item sets as they are."""
    return data.values if isinstance(data, LabelMatrix) else data


def run(
    config: str | Path | dict[str, Any] | RunConfig,
    *,
    registry: Registry | None = None,
    progress: Progress | None = None,
    write_reports: bool = True,
) -> Results:
    """A whole run from a YAML file (or its mapping): every system, every combination."""
    registry = registry or default_registry()
    loaded = load_config(config)
    cfg = loaded.config
    rows, notes = score(loaded, registry, progress=progress)
    results = Results(rows, cfg.name, notes, cfg.model_dump(mode="json", fallback=_describe_value))
    if write_reports and cfg.report:
        write_report(results, cfg.report.formats, loaded.base / cfg.report.out, registry, loaded.where("report", "formats"))
    return results


def _describe_value(value: Any) -> str:
    """How in-memory data given from Python appears in a report's config."""
    return f"<{type(value).__name__} of shape {getattr(value, 'shape', '?')}>"


def write_report(results: Results, formats: Sequence[str], out: Path, registry: Registry, where: str = "") -> list[Path]:
    writers = [registry.create("report_writer", name, where) for name in formats]
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for writer in writers:
        if hasattr(writer, "write"):  # writers of several files (one image per plot)
            written += writer.write(results, out)
            continue
        path = out.with_name(out.name + writer.suffix)
        path.write_text(writer.render(results), encoding="utf-8")
        written.append(path)
    return written
