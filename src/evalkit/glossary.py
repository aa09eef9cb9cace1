"""What the names in a table mean, in one line each, from the components' own descriptions.

A table says ``card_inter``, ``macro_pr`` or ``omap_lambda0``; a reader should not need the docs
to know what that is. The line comes from the metric or averaging that produced the name: a data
metric's ``glossary`` entry for a result it names itself, else the component's summary (the
first sentence of its docstring), so a plugin's metric is explained like a built-in one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from evalkit.optional import optional
from evalkit.registry import Entry, Registry

#: Names every reader of precision and recall knows (scikit-learn's averagings among them):
#: explaining them would only push the unfamiliar ones out of view.
WELL_KNOWN = frozenset({"precision", "recall", "f1", "micro", "macro", "weighted", "samples", "none"})

#: The kinds whose names say what a value is (the others say how it was computed, and a
#: comparison of T-norms or similarities names them on purpose).
KINDS = ("metric", "averaging")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def glossary(labels: Iterable[str], registry: Registry | None = None, *, kinds: Iterable[str] = KINDS,
             well_known: frozenset[str] = WELL_KNOWN) -> dict[str, str]:
    """``{name: one line}`` for each metric or averaging named in ``labels`` (table cells,
    headers, titles: ``macro(undefined=skip)`` or ``fuzzy · minimum · micro · f1`` name
    ``macro`` and ``micro``), in order of first appearance, except the :data:`WELL_KNOWN`.

    A name no installed component explains (results read back from another installation) is
    left out. ``kinds`` and ``well_known`` widen it: a report comparing T-norms explains each
    one it names, ``minimum`` too (``kinds=("tnorm",), well_known=frozenset()``).
    """
    if registry is None:
        from evalkit.discovery import default_registry

        registry = default_registry()
    explain = _explanations(registry, tuple(kinds))
    names = dict.fromkeys(name for label in dict.fromkeys(labels) for name in _NAME.findall(_unparameterized(label)))
    lines = {name: explain(name) for name in names if name not in well_known}
    return {name: line for name, line in lines.items() if line}


def _unparameterized(label: str) -> str:
    """A label without its components' parameters: ``hamacher(p=0.5)`` names ``hamacher`` only."""
    depth, kept = 0, []
    for char in label:
        depth += char == "("
        kept.append(char if depth == 0 else " ")
        depth -= char == ")" and depth > 0
    return "".join(kept)


def _explanations(registry: Registry, kinds: tuple[str, ...]):
    """name -> its line, or "" for a name nothing explains."""
    entries = [e for e in registry if e.kind in kinds]
    own: dict[str, str] = {}
    for entry in entries:
        if entry.kind == "metric":
            lines: Mapping[str, str] = optional(entry.cls, "glossary")
            own.update({name: line for name, line in lines.items() if name not in own})
    by_name = {e.name: e for e in entries}
    # A data metric's results are named after it (auroc_per_class): the longest metric name
    # that starts a result's name explains it when the metric has no line for it.
    prefixes = sorted((e for e in entries if e.kind == "metric"), key=lambda e: -len(e.name))

    def explain(name: str) -> str:
        if name in own:
            return own[name]
        entry: Entry | None = by_name.get(name) or next((e for e in prefixes if name.startswith(e.name + "_")), None)
        return entry.summary if entry is not None else ""

    return explain
