"""The interfaces components implement. Plugins inherit nothing; these are structural.

Every component class has ``name: ClassVar[str]``, ``Params: ClassVar[type[BaseModel]]`` (a pydantic
model with ``extra="forbid"``) and is constructed as ``cls(params)``. All methods work on whole
numpy batches: evalkit never calls a component per element.

The protocols hold what a kind must provide; what it may provide is declared in
:data:`OPTIONAL`, each member with the default evalkit assumes without it, and read with
:func:`optional`.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from evalkit.components import (
    Array,
    BaseComponent,
    Component,
    ConfigPath,
    NoParams,
    SetMetric,
    Similarity,
    TNorm,
)
from evalkit.data import LabelMatrix
from evalkit.items import ItemSets
from evalkit.optional import OPTIONAL, OptionalMember, optional
from evalkit.results import Results
from evalkit.table import CardinalityTable, Summary

__all__ = [
    "KINDS", "OPTIONAL", "Array", "Averaging", "BaseComponent", "Component", "ConfigPath", "DataMetric",
    "Loader", "NoParams", "OptionalMember", "ReportWriter", "SetMetric", "SetRepresentation", "Similarity",
    "TNorm", "optional",
]


@runtime_checkable
class SetRepresentation(Component, Protocol):
    """Fills the cardinality table for a batch of aligned (reference, prediction) data: rows of
    two :class:`~evalkit.data.LabelMatrix` values arrays, or two :class:`~evalkit.items.ItemSets`.

    ``uses`` names the other components it needs ("tnorm", "similarity"); the engine passes
    ``None`` for the others and does not vary them in the comparison grid.
    """

    uses: ClassVar[frozenset[str]]
    data: ClassVar[str]  # the data it reads: "matrix" (memberships) or "items" (item lists)

    def cardinalities(
        self, reference: Any, prediction: Any, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable: ...


@runtime_checkable
class DataMetric(Component, Protocol):
    """A metric on the raw data (not a set ratio), reduced chunk by chunk.

    ``update`` returns a state for one chunk; states of chunks are merged by ``+`` (a sum array,
    or a list, which ``+`` concatenates, for metrics that need all the data, like AP).
    ``compute`` returns a number, or a mapping of named results, each a number,
    :class:`~evalkit.measures.PerClass` (one value per class, in column order) or
    :class:`~evalkit.measures.PerLevel` (one per level, e.g. per ontology distance λ); a bare
    array is refused, since it would not say which. Optional: ``prepare``, ``ranks``,
    ``lower_is_better`` (:data:`OPTIONAL`).
    """

    def update(self, reference: Array, prediction: Array) -> Any: ...

    def compute(self, state: Any) -> float | dict[str, Any]: ...


@runtime_checkable
class Averaging(Component, Protocol):
    """Reduces a :class:`evalkit.table.Summary` to a value (or per-class array) for a set metric.

    ``sample_metrics`` names the set metrics whose per-sample sums the summary must keep for
    ``reduce`` (none for averagings over classes). Optional: ``batched`` (:data:`OPTIONAL`).
    """

    def sample_metrics(self, metrics: Sequence[SetMetric]) -> Sequence[SetMetric]: ...

    def reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> float | Array: ...


@runtime_checkable
class Loader(Component, Protocol):
    """Reads a file as ``kind`` data: "matrix" (:class:`evalkit.data.LabelMatrix`) or "items"
    (:class:`evalkit.items.ItemSets`); chosen by kind and file suffix (``"/"`` for a folder).
    ``role`` is "reference" or "prediction", for files that hold both sides. When loaders of one
    kind share a suffix, the optional ``sniff`` (:data:`OPTIONAL`) says whether a file is theirs;
    a config can also name the loader: ``{path: events.tsv, loader: events}``.
    """

    kind: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]

    def load(self, path: Path, role: str) -> LabelMatrix | ItemSets: ...


@runtime_checkable
class ReportWriter(Component, Protocol):
    """Renders result rows as text in one format (its ``name``), written with ``suffix``.

    A writer of several files (one image per plot) also offers the optional ``write``
    (:data:`OPTIONAL`): ``out`` is the report path without suffix.
    """

    suffix: ClassVar[str]

    def render(self, results: Results) -> str: ...


def report_file(out: Path, writer: ReportWriter) -> Path:
    """The file ``writer`` writes for ``out`` (the report path without suffix)."""
    return out.with_name(out.name + writer.suffix)


def report_pattern(out: Path, writer: ReportWriter) -> str:
    """The names of the files ``writer`` writes in ``out``'s folder, as a glob pattern: its
    :func:`report_file`, or ``out-*`` plus its suffix for a writer of several files (``write``),
    which may write its :func:`report_file` beside them (csv, parquet: the rows, then companions).
    Here, beside the writer's interface, because the plan checks them before anything is written."""
    several = optional(writer, "write") is not None
    return glob.escape(out.name) + ("-*" if several else "") + writer.suffix


#: kind name -> (protocol, registration hook)
KINDS: dict[str, tuple[type, str]] = {
    "representation": (SetRepresentation, "evalkit_register_set_representations"),
    "similarity": (Similarity, "evalkit_register_similarities"),
    "tnorm": (TNorm, "evalkit_register_tnorms"),
    "averaging": (Averaging, "evalkit_register_averagings"),
    "metric": (Component, "evalkit_register_metrics"),
    "loader": (Loader, "evalkit_register_loaders"),
    "report_writer": (ReportWriter, "evalkit_register_report_writers"),
}
