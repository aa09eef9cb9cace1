"""What a run read: every data file with its size and sha256, for the report's provenance."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

#: Bytes hashed at a time: data files may be large.
BLOCK = 1 << 20


def described_file(path: Path, shown: str, role: str, system: str | None) -> dict[str, Any]:
    """A file (or a folder, its files in order with their names) with its sha256 and size."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest, size = hashlib.sha256(), 0
    for file in files:
        if path.is_dir():
            digest.update(str(file.relative_to(path)).encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(BLOCK), b""):
                digest.update(block)
                size += len(block)
    return {"role": role, "system": system, "path": shown, "sha256": digest.hexdigest(), "bytes": size}
