"""The plugin API: everything a plugin may import from evalkit, in one module.

This is evalkit's stable surface for plugin code (and :mod:`evalkit.testing`, the author kit,
for plugin tests). Every other module of evalkit is internal: it may change in any release.
What may change here, and how, is stated by :data:`CONTRACT_VERSION` (see
:mod:`evalkit.hookspecs`). evalkit's own plugins under ``plugins/`` import from nothing else,
so a third party can do whatever they do.

Importing it is cheap: it imports neither the run pipeline nor scipy, matplotlib or networkx,
because building the registry imports every plugin module (``evalkit plugins``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.cells import Cells, cross_blocks, pair_similarities
from evalkit.contracts import who
from evalkit.control_chars import visible
from evalkit.data import LabelMatrix, rows_from
from evalkit.errors import ConfigError, DataError, EvalkitError, PluginContractError, PluginError
from evalkit.glossary import glossary
from evalkit.hookspecs import CONTRACT_VERSION, hookimpl
from evalkit.items import DEFAULT_CLASS, Intervals, ItemSets
from evalkit.loading import (
    check_header,
    check_memory,
    clean_ids,
    clean_items,
    clean_text,
    csv_rows,
    parse_json,
    read_parquet,
    reading,
    text_lines,
    unique_ids,
)
from evalkit.measures import Curve, CurvePerClass, Measure, PerClass, PerLevel
from evalkit.pivot import comparison_table, how_tested, level_differences, markdown, p_value_text, tables
from evalkit.protocols import (
    OPTIONAL,
    Array,
    Averaging,
    BaseComponent,
    ConfigPath,
    DataMetric,
    Loader,
    NoParams,
    OptionalMember,
    ReportWriter,
    SetMetric,
    SetRepresentation,
    Similarity,
    TNorm,
    optional,
)
from evalkit.reporting import atomic_write
from evalkit.results import COLUMNS, CurveRow, Results, Row
from evalkit.score_series import ScoreSeries
from evalkit.table import CardinalityTable, Summary, divide, metric_of_pr, metric_value
from evalkit.version import __version__


def create_component(kind: str, spec: str | Mapping[str, Any], *, where: str = "", registry: Any = None) -> Any:
    """A component of ``kind`` from a config spec (``"levenshtein"`` or ``{name: ..., **params}``),
    created and wrapped as evalkit creates the components a config names.

    For a component built on another one its parameters name (word2vec's ``fallback``
    similarity). ``registry`` defaults to the installed plugins; ``where`` prefixes error
    messages.
    """
    if registry is None:
        from evalkit.discovery import default_registry

        registry = default_registry()
    return registry.create(kind, spec, where)


__all__ = [
    "COLUMNS",
    "CONTRACT_VERSION",
    "DEFAULT_CLASS",
    "OPTIONAL",
    "Array",
    "Averaging",
    "BaseComponent",
    "CardinalityTable",
    "Cells",
    "Curve",
    "CurvePerClass",
    "CurveRow",
    "ConfigError",
    "ConfigPath",
    "DataError",
    "DataMetric",
    "EvalkitError",
    "Intervals",
    "ItemSets",
    "LabelMatrix",
    "Loader",
    "Measure",
    "NoParams",
    "OptionalMember",
    "PerClass",
    "PerLevel",
    "PluginContractError",
    "PluginError",
    "ReportWriter",
    "Results",
    "Row",
    "ScoreSeries",
    "SetMetric",
    "SetRepresentation",
    "Similarity",
    "Summary",
    "TNorm",
    "__version__",
    "atomic_write",
    "check_header",
    "check_memory",
    "clean_ids",
    "clean_items",
    "clean_text",
    "comparison_table",
    "create_component",
    "cross_blocks",
    "csv_rows",
    "divide",
    "glossary",
    "hookimpl",
    "how_tested",
    "level_differences",
    "markdown",
    "metric_of_pr",
    "metric_value",
    "optional",
    "p_value_text",
    "pair_similarities",
    "parse_json",
    "read_parquet",
    "reading",
    "rows_from",
    "tables",
    "text_lines",
    "unique_ids",
    "visible",
    "who",
]
