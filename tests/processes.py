"""Processes seen from /proc: whether one still runs, and a run's figure workers."""

from __future__ import annotations

from pathlib import Path


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (not gone, and not ended waiting to be reaped: ``Z``)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def workers_of(pid: int) -> set[int]:
    """The live child processes of ``pid`` (the figure workers of a run), from /proc."""
    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except OSError:  # ended meanwhile
            continue
        if int(parent) == pid and state != "Z":
            children.add(int(stat.parent.name))
    return children
