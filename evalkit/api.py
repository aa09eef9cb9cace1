"""The Python API: :func:`evaluate` for one computation, :func:`run` for a whole config."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from evalkit import __version__
from evalkit.config import LoadedConfig, RunConfig, Spec, load_config
from evalkit.engine import Progress
from evalkit.errors import ConfigError
from evalkit.plugins import default_registry
from evalkit.registry import Registry
from evalkit.results import Results
from evalkit.scoring import make_plan, score

__all__ = ["evaluate", "make_plan", "run", "write_report"]


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
    rows = score(loaded, registry, lambda *path: path[-1] if path[0] == "data" else f"evaluate(): {path[0]}").rows
    values: dict[str, Any] = {}
    for row in rows:
        if row.class_ is None and row.level is None:
            values[row.metric] = row.value
        else:
            values.setdefault(row.metric, []).append(row.value)
    return {k: np.array(v) if isinstance(v, list) else v for k, v in values.items()}


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
    scored = score(loaded, registry, progress=progress)
    provenance = {
        "evalkit_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config_file": str(loaded.document.file) if loaded.document else None,
        "config_text": loaded.document.text if loaded.document else None,
        "data": scored.files,
    }
    results = Results(
        scored.rows, cfg.name, scored.notes, cfg.model_dump(mode="json", fallback=_describe_value),
        scored.comparisons, scored.agreement, provenance,
    )
    if write_reports and cfg.report:
        if progress:
            progress.start("writing reports", len(cfg.report.formats))
        written = write_report(
            results, cfg.report.formats, loaded.base / cfg.report.out, registry, loaded.where("report", "formats"), progress
        )
        results.reports = [os.path.relpath(os.path.normpath(path)) for path in written]
    return results


def _describe_value(value: Any) -> str:
    """How in-memory data given from Python appears in a report's config."""
    return f"<{type(value).__name__} of shape {getattr(value, 'shape', '?')}>"


def write_report(
    results: Results, formats: Sequence[str], out: Path, registry: Registry, where: str = "",
    progress: Progress | None = None,
) -> list[Path]:
    """Write the report files of ``formats`` (``out`` plus each writer's suffix); their paths."""
    writers = [registry.create("report_writer", name, where) for name in formats]
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for writer in writers:
        if hasattr(writer, "write"):  # writers of several files (one image per plot)
            written += writer.write(results, out)
        else:
            path = out.with_name(out.name + writer.suffix)
            path.write_text(writer.render(results), encoding="utf-8")
            written.append(path)
        if progress:
            progress.advance(1)
    return written
