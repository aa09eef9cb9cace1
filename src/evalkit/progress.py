"""How long work reports its progress (the CLI shows it as bars; the Python API passes None)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Receives progress: ``start`` once per piece of work with its total, then ``advance``."""

    def start(self, label: str, total: int) -> None: ...

    def advance(self, rows: int) -> None: ...
