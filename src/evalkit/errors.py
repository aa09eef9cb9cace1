"""Every error evalkit raises on purpose: what went wrong, where, and how to fix it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def plural(kind: str) -> str:
    """``similarity`` -> ``similarities``, ``tnorm`` -> ``tnorms``: for messages and listings."""
    return kind[:-1] + "ies" if kind.endswith("y") else kind + "s"


class EvalkitError(Exception):
    """Root of evalkit's errors; the CLI prints these as one readable message."""


class ConfigError(EvalkitError):
    """A configuration (YAML or API arguments) that cannot be run."""


class DataError(EvalkitError):
    """Input data that is malformed, misaligned or out of range."""


class EngineError(EvalkitError):
    """An engine that cannot run: a Dask scheduler that cannot be reached, or memory that runs
    out while something is built (:func:`evalkit.budget.building` names it)."""


class UnknownComponentError(ConfigError):
    """A component name that no plugin registered."""

    def __init__(
        self, kind: str, name: str, known: Iterable[str], hint: str = "", where: str = "",
        suggest: bool = True,
    ) -> None:
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6) if suggest else []
        message = f"{where}: " if where else ""
        message += f"unknown {kind} {name!r}."
        if close:
            message += " Did you mean " + " or ".join(repr(c) for c in close) + "?"
        if hint:
            message += f" {hint}"
        message += f" Registered {plural(kind)}: {', '.join(known) or '(none)'} (see `evalkit plugins`)."
        super().__init__(message)
        self.kind, self.name, self.suggestions = kind, name, close


class ReportError(EvalkitError):
    """Report files (or standard output) that could not be written; the results they would have
    shown are kept, when there are results yet (a report file names the file instead)."""

    def __init__(self, message: str, results: Any = None) -> None:
        super().__init__(message)
        self.results = results


class PluginError(EvalkitError):
    """A plugin that failed to load, register, or keep its contract."""


class PluginLoadError(PluginError):
    """A plugin package that could not be imported or registered."""


class PluginContractError(PluginError):
    """A component whose output breaks its protocol (shape, range, NaN)."""


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out: a message built from
    a hostile input (a huge value, an error of a million lines) stays readable."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"
