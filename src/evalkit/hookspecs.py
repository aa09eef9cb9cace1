"""The hook specifications: the whole contract between evalkit and its plugins.

Every hook is a registration hook, called once when the plugin manager is built. A plugin
receives a ``register`` callback and hands it the component classes it provides::

    from evalkit.plugin import Register, hookimpl

    @hookimpl
    def evalkit_register_tnorms(register: Register) -> None:
        register(Hamacher)

A component class has a ``name`` (``[a-z][a-z0-9_]*``), a pydantic ``Params`` model with
``extra="forbid"`` for its YAML parameters, and is constructed as ``cls(params)``. The methods
each kind must provide are the protocols in :mod:`evalkit.protocols` (importable from
:mod:`evalkit.plugin`); the members it may provide are declared there too, and read with
``evalkit.plugin.optional``. No hook is ever called per element: after registration, evalkit
calls the components' vectorized methods directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from evalkit.registry import Register

#: The version of the plugin contract: the hooks below, the protocols and optional members of
#: :mod:`evalkit.protocols`, and the names :mod:`evalkit.plugin` and :mod:`evalkit.testing`
#: export. A new minor version only adds (a hook, an optional member, a name), so a plugin
#: written for 1.0 works with every 1.x. A new major version removes or changes something a
#: plugin may rely on (a signature, a required member, what a name means), so a plugin written
#: for 1.x may need changes for 2.0; it comes with a new major release of evalkit (a new minor
#: one while evalkit is 0.x), which is what a plugin's dependency range can pin. 2.0 removed
#: names of :mod:`evalkit.plugin` that no plugin needs; 2.1 added a report writer's optional
#: ``start()``, an averaging's optional ``undefined_for(metric)`` and
#: :attr:`evalkit.plugin.ItemSets.notes`; 2.2 added :data:`evalkit.plugin.SAMPLE_COLUMNS`, the
#: columns of per-sample values, the findings a report opens with (``opening_lines``, ``floor_note``,
#: ...), a loader's optional ``diagnose(path)``, ``hashes_as_read`` and ``sample_ids(path)``, and a report writer's
#: optional ``results_ready(results)`` and ``stop()`` (CHANGELOG.md).
CONTRACT_VERSION = "2.2"

hookspec = pluggy.HookspecMarker("evalkit")
#: Marks a plugin's implementation of a hook: ``@evalkit.plugin.hookimpl``.
hookimpl = pluggy.HookimplMarker("evalkit")


@hookspec
def evalkit_register_set_representations(register: Register) -> None:
    """Register set representations (:class:`evalkit.protocols.SetRepresentation`).

    A representation turns a batch of (reference, prediction) data into a cardinality table:
    ``|G|``, ``|P|`` and ``|G ∩ P|`` for each (sample, class) cell. Example: ``register(Fuzzy)``.
    """


@hookspec
def evalkit_register_similarities(register: Register) -> None:
    """Register similarities (:class:`evalkit.protocols.Similarity`).

    A similarity computes a whole pairwise matrix in [0, 1] in one call. Example:
    ``register(Levenshtein)``.
    """


@hookspec
def evalkit_register_tnorms(register: Register) -> None:
    """Register T-norms (:class:`evalkit.protocols.TNorm`), the fuzzy intersections.

    A T-norm is an element-wise, broadcasting ``__call__(a, b)`` on arrays in [0, 1]. Example:
    ``register(Minimum)``.
    """


@hookspec
def evalkit_register_averagings(register: Register) -> None:
    """Register averaging schemes (:class:`evalkit.protocols.Averaging`).

    An averaging reduces the summed cardinality table to one value (or one per class) for a set
    metric. Example: ``register(Macro)``.
    """


@hookspec
def evalkit_register_metrics(register: Register) -> None:
    """Register metrics: set metrics (:class:`evalkit.protocols.SetMetric`), ratios of the three
    cardinalities, or data metrics (:class:`evalkit.protocols.DataMetric`) that read the raw data.
    Example: ``register(F1)``.
    """


@hookspec
def evalkit_register_loaders(register: Register) -> None:
    """Register data loaders (:class:`evalkit.protocols.Loader`), chosen by file suffix.
    Example: ``register(CsvLoader)``.
    """


@hookspec
def evalkit_register_report_writers(register: Register) -> None:
    """Register report writers (:class:`evalkit.protocols.ReportWriter`), chosen by format name.
    Example: ``register(MarkdownWriter)``.
    """
