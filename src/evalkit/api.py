"""The Python API: :func:`evaluate` for one computation, :func:`run` for a whole config."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]

from evalkit.config import EngineConfig, RunConfig, Spec, load_config
from evalkit.discovery import default_registry
from evalkit.errors import ConfigError, ReportError
from evalkit.evaluator import Evaluator
from evalkit.execute import execute
from evalkit.keywords import suggest_keywords
from evalkit.plan import Plan, build_plan
from evalkit.progress import Progress
from evalkit.registry import Registry
from evalkit.reporting import write_reports
from evalkit.results import Results, config_record
from evalkit.version import __version__
from evalkit.weights import none_counts

__all__ = ["evaluate", "plan", "results_of", "run", "write_plan_reports"]


@suggest_keywords
def evaluate(
    reference: Any,
    prediction: Any,
    *,
    representation: Spec = "fuzzy",
    tnorm: Spec = "minimum",
    similarity: Spec | None = None,
    averaging: Spec = "micro",
    metrics: Spec | Sequence[Spec] = ("precision", "recall", "f1"),
    zero_division: float = 0.0,
    classes: Sequence[str] | None = None,
    clip: bool = False,
    missing: str = "error",
    sample_weight: Any | None = None,
    registry: Registry | None = None,
) -> dict[str, float | pd.Series]:
    """One computation: metric label -> value; per-class values (``averaging="none"``) and
    per-level values (OmAP's) are a pandas Series named by class or level, which works as an
    array (``np.asarray``, arithmetic) and says which value is whose.

    ``reference`` and ``prediction`` are what the representation reads: for memberships, (samples
    x classes) array-likes (a 1-D array is one class) or :class:`~evalkit.data.LabelMatrix`; for
    item representations (``soft_cardinality``, ...), a list of samples, each a list of items (or
    a mapping class -> items), or :class:`~evalkit.items.ItemSets`. Components are names or
    ``{"name": ..., **params}``. It is one :class:`~evalkit.evaluator.Evaluator` update; use an
    evaluator to compare several components or to accumulate batches.
    """
    for key, value in (("representation", representation), ("tnorm", tnorm), ("averaging", averaging)):
        if isinstance(value, (list, tuple)):
            raise ConfigError(f"evaluate(): {key} takes one component; use evalkit.Evaluator to compare several")
    evaluator = Evaluator(
        representation=representation, tnorm=tnorm, similarity=similarity, averaging=averaging, metrics=metrics,
        classes=classes, zero_division=zero_division, clip=clip, missing=missing, registry=registry,
        _caller="evaluate()",
    )
    evaluator.update(reference, prediction, sample_weight=sample_weight)
    if sample_weight is not None and evaluator.state().n_samples == 0:  # the weights' sum: none counts
        raise none_counts("sample_weight")
    values = evaluator.values()
    out: dict[str, Any] = {}
    for measure, value in values.items():
        if measure.single:
            out[measure.metric] = value
        else:
            label = measure.class_ if measure.class_ is not None else measure.level
            out.setdefault(measure.metric, {})[label] = value
    return {k: _series(k, v) if isinstance(v, dict) else v for k, v in out.items()}


def _series(metric: str, values: dict[Any, float]) -> pd.Series:
    """Per-class (or per-level) values as a Series named by class (or level)."""
    import pandas as pd  # imported when asked for: `import evalkit` stays light

    return pd.Series(values, name=metric, dtype=np.float64).rename_axis("class" if _named(values) else "level")


def _named(values: dict[Any, float]) -> bool:
    """Whether per-part values are keyed by class name (not by level number)."""
    return all(isinstance(key, str) for key in values)


def plan(
    config: str | Path | dict[str, Any] | RunConfig, registry: Registry | None = None, writes: bool = True,
    engine: str | None = None,
) -> Plan:
    """Check a config without reading a data value (what ``evalkit validate`` does); without
    ``writes``, for a run that writes no report, its folder is not made. ``engine`` replaces
    the config's: ``local``, ``dask`` or ``dask=ADDRESS`` (the CLI's ``--engine``)."""
    loaded = load_config(config)
    if engine is not None:
        loaded.config = loaded.config.model_copy(update={"engine": engine_of(engine, loaded.config.engine)})
        loaded.overrides["engine"] = f"--engine {engine}"
    return build_plan(loaded, registry or default_registry(), writes=writes)


def engine_of(given: str, configured: EngineConfig) -> EngineConfig:
    """``local``, ``dask`` or ``dask=ADDRESS`` as an engine (the config's other settings, and its
    address when none is given, kept)."""
    name, _, address = given.partition("=")
    if name not in ("local", "dask") or (address and name != "dask"):
        raise ConfigError(f"--engine {given}: give `local`, `dask` or `dask=ADDRESS` (tcp://host:8786)")
    return configured.model_copy(update={"name": name, "address": address or configured.address})


def results_of(plan: Plan, progress: Progress | None = None) -> Results:
    """Execute a plan: the results, with what produced them."""
    loaded, cfg = plan.loaded, plan.config
    scored = execute(plan, progress)
    provenance = {
        "evalkit_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config_file": str(loaded.document.file) if loaded.document else None,
        "config_text": loaded.document.text if loaded.document else None,
        "data": scored.files,
    }
    return Results(
        scored.rows, cfg.name, scored.notes, config_record(cfg),
        scored.comparisons, scored.agreement, provenance, curves=scored.curves,
        lower_is_better=plan.axes.lower_is_better,
        sample_values=scored.sample_values, timelines=scored.timelines, ceilings=scored.ceilings,
    )


def write_plan_reports(plan: Plan, results: Results, progress: Progress | None = None) -> list[str]:
    """Write the reports a plan asks for; the failures, one message each (the rest is written)."""
    if plan.report is None:
        return []
    written = write_reports(results, plan.report.writers, plan.report.out, progress)
    results.reports = [os.path.relpath(os.path.normpath(path)) for path in written.paths]
    return written.failures


def run(
    config: str | Path | dict[str, Any] | RunConfig,
    *,
    registry: Registry | None = None,
    progress: Progress | None = None,
    write_reports: bool = False,
) -> Results:
    """A whole run from a YAML file (or its mapping): every system, every combination.

    The report files of the config's ``report:`` section are written only with
    ``write_reports=True`` (as ``evalkit run`` does): from Python the results are the returned
    value, and a run in a notebook or a test leaves no files behind. The section is checked
    either way, as ``evalkit validate`` checks it. A report writer that fails raises
    :class:`~evalkit.errors.ReportError` after the others have written; its ``results``
    attribute holds the results, which are never lost.
    """
    checked = plan(config, registry, writes=write_reports)
    results = results_of(checked, progress)
    if write_reports:
        failures = write_plan_reports(checked, results, progress)
        if failures:
            raise ReportError("\n".join(failures), results)
    return results
