"""evalkit: precision, recall and F-score beyond exact matching.

Importing evalkit is cheap: the pipeline (and scipy, matplotlib, networkx behind it) is imported
only when :func:`evaluate` or :func:`run` is first used. Plugins import from
:mod:`evalkit.plugin`, the stable plugin API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.hookspecs import hookimpl
from evalkit.version import __version__

if TYPE_CHECKING:
    from evalkit.api import evaluate, run
    from evalkit.evaluator import Evaluator
    from evalkit.protocols import BaseComponent, ConfigPath, NoParams
    from evalkit.results import Results
    from evalkit.state import State

#: name -> the module that defines it, imported on first use
_LAZY = {
    "evaluate": "evalkit.api", "run": "evalkit.api", "Evaluator": "evalkit.evaluator", "State": "evalkit.state",
    "Results": "evalkit.results",
    "BaseComponent": "evalkit.protocols", "ConfigPath": "evalkit.protocols", "NoParams": "evalkit.protocols",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'evalkit' has no attribute {name!r}")


__all__ = [
    "BaseComponent", "ConfigPath", "Evaluator", "NoParams", "Results", "State", "evaluate", "hookimpl", "run", "__version__",
]
