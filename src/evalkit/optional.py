"""The optional members of each component kind, declared in one place with their defaults.

evalkit reads every optional member through :func:`optional`, registration rejects a near miss
of one of these names (``symetric = True``), and the plugin guide's table is generated from
:data:`OPTIONAL`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OptionalMember:
    """A member a component of some kind may offer, and what evalkit assumes when it does not.

    Declared here, in one place, so that evalkit reads every optional member the same way
    (:func:`optional`), registration can reject a near miss of its name (``symetric = True``),
    and the plugin guide's table of them is generated rather than written by hand.
    """

    name: str
    #: the value evalkit assumes when the component lacks the member (None: an absent method)
    default: Any
    #: what offering it means, in one line (Markdown)
    meaning: str
    #: ``(xs, ys)`` for a method, None for a class attribute
    args: str | None = None

    @property
    def signature(self) -> str:
        """``pairs(xs, ys)`` for a method, the name for an attribute."""
        return self.name if self.args is None else f"{self.name}{self.args}"


#: kind name -> the optional members of its components. A name means the same in every kind.
OPTIONAL: dict[str, tuple[OptionalMember, ...]] = {
    "representation": (
        OptionalMember(
            "check_reference", None, "called on a representation or a data metric once at plan time with the "
            "reference's file (None: inline data), "
            "to refuse now what reading the data would refuse later, such as a column it reads from the reference "
            "that the file's header lacks (`validate` then refuses what `run` would)", "(path)",
        ),
    ),
    "similarity": (
        OptionalMember(
            "symmetric", False, "promises sim(x, y) = sim(y, x) (and sim(x, x) = 1), so soft "
            "cardinality scores each unordered pair once",
        ),
        OptionalMember(
            "pairs", None, "element-wise sim(xs[i], ys[i]), shape (len(xs),): many small documents "
            "are scored in one call instead of one `matrix` each", "(xs, ys)",
        ),
        OptionalMember(
            "block_items", None, "cells of at least this many items (G ⧺ P) are scored one `matrix` "
            "each, smaller ones in one batched `pairs` call (None: 64); a similarity whose `matrix` "
            "costs little per call (rapidfuzz's `cdist`) sets 1",
        ),
        OptionalMember(
            "matrices", None, "`matrix(g, g)` of every consecutive group of `sizes` items, flattened "
            "row-major and concatenated: the cells scored as matrices are scored in one call per "
            "chunk instead of one each", "(items, sizes)",
        ),
        OptionalMember(
            "check", None, "called once per system with `{sample id: [items]}` of both sides, to "
            "reject unusable items with the samples they occur in before anything is computed",
            "(samples)",
        ),
    ),
    "tnorm": (),
    "averaging": (
        OptionalMember(
            "batched", False, "`reduce` also takes a summary with a leading replicate axis, so "
            "bootstrap and jackknife replicates are reduced in one call, not one by one",
        ),
        OptionalMember(
            "undefined_for", None, "why the averaging gives a set metric no value (None: it gives one); "
            "its `reduce` then returns an empty per-class array (no row), and a run that asks for the "
            "metric under no other averaging is refused with that reason: a substitution rate per "
            "class, where a class alone has no substitutions", "(metric)",
        ),
    ),
    "metric": (
        OptionalMember(
            "prepare", None, "called on a data metric once per system with the class names in "
            "column order, to resolve them (e.g. in an ontology)", "(classes)",
        ),
        OptionalMember(
            "ranks", False, "a data metric only ranks the predictions (AP): a run whose metrics "
            "all rank accepts any finite scores, not only memberships in [0, 1]",
        ),
        OptionalMember(
            "data", "matrix", "what a data metric reads: \"matrix\" (a row of memberships or scores per "
            "sample) or \"items\" (item sets, such as event lists and score series)",
        ),
        OptionalMember(
            "weighted", False, "a data metric's `update` also takes `weights`, one per sample of the "
            "chunk (float64, >= 0), as a third argument, so samples can be weighted "
            "(`sample_weight`); without it, weighted evaluations refuse the metric",
        ),
        OptionalMember(
            "keeps_data", "", "a data metric's state keeps the data it is given (an exact ranking's scores), so it "
            "grows with the data: the text says what a streamed or Dask run, which holds bounded sums, should use "
            "instead (\"use map_binned, ...\"); such runs refuse the metric with it",
        ),
        OptionalMember(
            "kept_per_byte", 0.0, "bytes a data metric's state keeps to the end of a run per byte of a data "
            "folder's text, when its state holds a part per file (which grows with the files, streamed or not): "
            "the plan's memory estimate adds them for every folder",
        ),
        OptionalMember(
            "lower_is_better", False, "a metric improves as it decreases (a divergence, a loss): True; or, for "
            "a data metric that reports results under names of its own, the names of those that do (its error "
            "rates, not the thresholds beside them). Rank agreement, the summary, the paired tests' verdicts and "
            "the worst files orient them",
        ),
        OptionalMember(
            "glossary", {}, "a data metric's one-line explanation of each result it reports under a "
            "name of its own (`{\"omap_lambda0\": \"OmAP at λ = 0: ...\"}`), for the glossary under "
            "tables and in reports; without it, such a result is explained by the metric's summary",
        ),
        OptionalMember(
            "reads_cells", False, "a set metric's `ratio` also takes `cells`, the number of (sample, "
            "class) cells summed (sample-weighted), as a fourth argument: a rate per cell, such as "
            "the Hamming loss",
        ),
        OptionalMember(
            "reads_cardinalities", False, "a set metric reports a cardinality itself, so it is "
            "computed from the table's columns even when the representation gives per-side "
            "matched masses",
        ),
        OptionalMember(
            "substitutions", 0, "an error rate's coefficient of the substitutions S in its "
            "numerator (error rate, deletions and insertions -1, substitutions +1): a sample's "
            "S is the mass both missed and falsely predicted in one unit, min(FN, FP) over its "
            "classes (or the table's `substitutions`); micro and samples averagings take it, "
            "per-class averagings count none (Mesaros et al. 2016)",
        ),
    ),
    "loader": (
        OptionalMember(
            "sniff", None, "whether a file is this loader's, when loaders of one kind share a "
            "suffix", "(path)",
        ),
        OptionalMember(
            "diagnose", None, "why a file that no loader of its suffix recognised is not this loader's, "
            "in the words `load` would use (\"its header names the columns ...; expected ...\"), or None when the "
            "file looks nothing like this loader's: the error shows it and names this loader as the likely fix",
            "(path)",
        ),
        OptionalMember(
            "header_classes", None, "the class names a file declares before its values (a CSV header, an .npz's "
            "`classes`), read without the values, so that a system whose classes differ from the reference's is "
            "refused before anything is read; None when only the values name them",
            "(path)",
        ),
        OptionalMember(
            "stream", None, "yields the file's rows from row `start` on (0 is the first) as matrices of about "
            "`rows` rows each, reading one part at a time, for streamed and Dask runs (without it the file "
            "is read whole); a reader that cannot seek drops the rows before `start` with `rows_from`",
            "(path, role, rows, start)",
        ),
        OptionalMember(
            "sample_ids", None, "the sample ids of a file or folder in the order `load` gives its rows, known without "
            "reading a value (a folder's file names): with `stream`, an in-memory run then reads a folder's samples "
            "a chunk of files at a time, in the reference's order, instead of all at once",
            "(path)",
        ),
        OptionalMember(
            "hashes_as_read", False, "its `stream` reads the file through `evalkit.plugin.opened`, from its first "
            "byte to its last in order, so a streamed run takes the file's sha256 (for the provenance) from that "
            "reading instead of reading the file a second time (a file it reads otherwise is read again after the run)",
        ),
    ),
    "report_writer": (
        OptionalMember(
            "write", None, "writes the report's files itself (one image per plot) and returns "
            "their paths, each starting with `out`; called instead of writing `render`'s text",
            "(results, out)",
        ),
        OptionalMember(
            "start", None, "starts what the report will need whatever the results are (worker "
            "processes, imports) when `evalkit run` has checked the config, so that it runs while "
            "the run is scored",
            "()",
        ),
        OptionalMember(
            "results_ready", None, "starts the report's work that needs only the results (the figures, drawn "
            "by what `start` started) as soon as `evalkit run` has them, so that it runs while the tables "
            "print and the other reports are written",
            "(results)",
        ),
        OptionalMember(
            "stop", None, "stops what `start` and `results_ready` started; `evalkit run` calls it once the reports "
            "are written, or when the run fails or is interrupted before",
            "()",
        ),
    ),
}

_OPTIONAL_BY_NAME = {member.name: member for members in OPTIONAL.values() for member in members}


def optional(component: Any, name: str) -> Any:
    """``component``'s optional member ``name``, or the default :data:`OPTIONAL` declares (None
    for an absent method).

    ``component`` is a class, an instance or the wrapper evalkit hands out (its attribute access
    passes through). A name that no kind declares raises ``ValueError``: evalkit reads no
    optional member that is not declared, so none can be misspelt unnoticed.
    """
    member = _OPTIONAL_BY_NAME.get(name)
    if member is None:
        raise ValueError(f"{name!r} is not an optional member of any component kind (see evalkit.protocols.OPTIONAL)")
    return getattr(component, name, member.default)
