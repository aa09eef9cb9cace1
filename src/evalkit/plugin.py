"""The plugin API: everything a plugin may import from evalkit, in one module.

This is evalkit's stable surface for plugin code (and :mod:`evalkit.testing`, the author kit,
for plugin tests). Every other module of evalkit is internal: it may change in any release.
What may change here, and how, is stated by :data:`CONTRACT_VERSION` (see
:mod:`evalkit.hookspecs`). evalkit's own plugins (the ``evalkit_*`` packages under ``src/``) import from nothing else,
so a third party can do whatever they do.

It holds what a plugin needs, no more: what a component implements, receives and raises
(exported whether or not a built-in uses it), and the helpers the built-ins use, since a third
party writing the same kind of component needs them too (report writers are plugins, so the
helpers that render results are here). What evalkit does with plugins (the declaration of
optional members, the errors it raises about plugins) stays inside.

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
from evalkit.errors import ConfigError, DataError, PluginContractError
from evalkit.findings import MARK, agreement_note, floor_note, glossary_of, marked, opening_lines, unit_note
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
)
from evalkit.measures import Curve, CurvePerClass, Measure, PerClass, PerLevel
from evalkit.pivot import comparison_table, how_tested, level_differences, markdown, p_value_text, tables
from evalkit.protocols import (
    Array,
    Averaging,
    BaseComponent,
    ConfigPath,
    DataMetric,
    Loader,
    NoParams,
    ReportWriter,
    SetMetric,
    SetRepresentation,
    Similarity,
    TNorm,
    optional,
)
from evalkit.provenance import opened
from evalkit.registry import Register
from evalkit.reporting import atomic_write
from evalkit.results import COLUMNS, SAMPLE_COLUMNS, CurveRow, Results, Row
from evalkit.score_series import ScoreSeries
from evalkit.table import CardinalityTable, Summary, metric_of_pr, metric_value
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
    # the contract: the hooks, what a component implements, and what it raises
    "CONTRACT_VERSION",
    "hookimpl",
    "Register",
    "BaseComponent",
    "NoParams",
    "ConfigPath",
    "Array",
    "TNorm",
    "Similarity",
    "SetRepresentation",
    "Averaging",
    "SetMetric",
    "DataMetric",
    "Loader",
    "ReportWriter",
    "optional",
    "ConfigError",
    "DataError",
    "PluginContractError",
    # the data components receive and return
    "LabelMatrix",
    "ItemSets",
    "Intervals",
    "ScoreSeries",
    "DEFAULT_CLASS",
    "CardinalityTable",
    "Summary",
    "Measure",
    "PerClass",
    "PerLevel",
    "Curve",
    "CurvePerClass",
    # helpers of loaders, representations, averagings and components built on others
    "check_header",
    "check_memory",
    "clean_ids",
    "clean_items",
    "clean_text",
    "csv_rows",
    "parse_json",
    "read_parquet",
    "opened",
    "reading",
    "text_lines",
    "rows_from",
    "Cells",
    "cross_blocks",
    "pair_similarities",
    "metric_of_pr",
    "metric_value",
    "create_component",
    "who",
    # for report writers: the results, and how evalkit shows them
    "Results",
    "Row",
    "CurveRow",
    "COLUMNS",
    "SAMPLE_COLUMNS",
    "tables",
    "comparison_table",
    "how_tested",
    "p_value_text",
    "level_differences",
    "markdown",
    "visible",
    "glossary",
    # what the terminal and the reports say before and under their tables (evalkit.findings)
    "opening_lines",
    "floor_note",
    "agreement_note",
    "unit_note",
    "glossary_of",
    "marked",
    "MARK",
    "atomic_write",
    "__version__",
]
