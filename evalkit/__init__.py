"""evalkit: precision, recall and F-score beyond exact matching."""

from __future__ import annotations

import pluggy

hookimpl = pluggy.HookimplMarker("evalkit")

__version__ = "0.1.0"

from evalkit.api import evaluate, run  # noqa: E402  (after hookimpl, which plugins import)
from evalkit.protocols import BaseComponent, ConfigPath, NoParams  # noqa: E402

__all__ = ["BaseComponent", "ConfigPath", "NoParams", "evaluate", "hookimpl", "run", "__version__"]
