"""The interfaces components implement. Plugins inherit nothing; these are structural.

Every component class has ``name: ClassVar[str]``, ``Params: ClassVar[type[BaseModel]]`` (a pydantic
model with ``extra="forbid"``) and is constructed as ``cls(params)``. All methods work on whole
numpy batches: evalkit never calls a component per element.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo

if TYPE_CHECKING:
    from evalkit.data import LabelMatrix
    from evalkit.items import ItemSets
    from evalkit.results import Results
    from evalkit.table import CardinalityTable, Summary

Array = NDArray[np.floating]


class NoParams(BaseModel):
    """The parameter model of a component that takes none."""

    model_config = ConfigDict(extra="forbid")


def _against_config(path: Path, info: ValidationInfo) -> Path:
    base = (info.context or {}).get("base")
    path = path.expanduser()
    return base / path if base is not None and not path.is_absolute() else path


#: A parameter that is a file: a relative path is taken relative to the config file's folder
#: (from Python, the working directory).
ConfigPath = Annotated[Path, AfterValidator(_against_config)]


class BaseComponent:
    """An optional base for components: keeps the validated ``params`` (``NoParams`` unless a
    subclass sets ``Params``). Nothing requires it; it only saves writing ``__init__``.
    """

    Params: ClassVar[type[BaseModel]] = NoParams

    def __init__(self, params: BaseModel) -> None:
        self.params = params


@runtime_checkable
class Component(Protocol):
    name: ClassVar[str]
    Params: ClassVar[type[BaseModel]]


@runtime_checkable
class TNorm(Component, Protocol):
    """A fuzzy intersection T: [0,1]² → [0,1], commutative, associative, monotone, T(a,1)=a."""

    def __call__(self, a: Array, b: Array) -> Array: ...


@runtime_checkable
class Similarity(Component, Protocol):
    """A similarity in [0, 1] between items, computed for whole lists at once.

    ``matrix(xs, ys)`` is the (len(xs), len(ys)) matrix. Two optional methods make it faster or
    stricter, and the engine uses them when present:

    - ``pairs(xs, ys)``: element-wise similarities sim(xs[i], ys[i]), shape (len(xs),), so many
      small documents are scored in one call instead of one ``matrix`` per document;
    - ``check(samples)``: called once per run with ``{sample id: [items]}`` for every sample of
      both sides, to reject unusable items (e.g. words missing from a vector model) with the
      samples they occur in, before anything is computed.

    A class attribute ``symmetric = True`` promises sim(x, y) = sim(y, x) (and, as always,
    sim(x, x) = 1), so that soft cardinality scores each unordered pair once.
    """

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array: ...


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
class SetMetric(Component, Protocol):
    """A set ratio: returns (numerator, denominator) arrays from |G|, |P| and |G ∩ P|."""

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]: ...


@runtime_checkable
class DataMetric(Component, Protocol):
    """A metric on the raw data (not a set ratio), reduced chunk by chunk.

    ``update`` returns a state for one chunk; states of chunks are merged by ``+`` (a sum array,
    or a list, which ``+`` concatenates, for metrics that need all the data, like AP).
    ``compute`` returns a value, or a mapping of named values where an array means one value per
    level. An optional ``prepare(classes)`` is called once per system with the class names in
    column order (to resolve them, e.g. in an ontology). A class attribute ``ranks = True`` says
    the metric only ranks the predictions (AP): a run whose metrics all rank accepts any finite
    prediction scores, not only memberships in [0, 1].
    """

    def update(self, reference: Array, prediction: Array) -> Any: ...

    def compute(self, state: Any) -> float | dict[str, Any]: ...


@runtime_checkable
class Averaging(Component, Protocol):
    """Reduces a :class:`evalkit.table.Summary` to a value (or per-class array) for a set metric.

    ``sample_metrics`` names the set metrics whose per-sample sums the summary must keep for
    ``reduce`` (none for averagings over classes).
    """

    def sample_metrics(self, metrics: Sequence[SetMetric]) -> Sequence[SetMetric]: ...

    def reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> float | Array: ...


@runtime_checkable
class Loader(Component, Protocol):
    """Reads a file as ``kind`` data: "matrix" (:class:`evalkit.data.LabelMatrix`) or "items"
    (:class:`evalkit.items.ItemSets`); chosen by kind and file suffix (``"/"`` for a folder).
    ``role`` is "reference" or "prediction", for files that hold both sides. When loaders of one
    kind share a suffix, an optional ``sniff(path) -> bool`` says whether a file is theirs; a
    config can also name the loader: ``{path: events.tsv, loader: events}``.
    """

    kind: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]

    def load(self, path: Path, role: str) -> LabelMatrix | ItemSets: ...


@runtime_checkable
class ReportWriter(Component, Protocol):
    """Renders result rows as text in one format (its ``name``), written with ``suffix``.

    A writer of several files (one image per plot) also offers ``write(results, out) ->
    list[Path]``, which evalkit calls instead of writing ``render``'s text: ``out`` is the
    report path without suffix, and every file written starts with it.
    """

    suffix: ClassVar[str]

    def render(self, results: Results) -> str: ...


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
