"""How much memory a piece of work allocates, as the bound a hostile input must stay within.

The suites bound the memory a hostile config or file makes evalkit allocate rather than the
time it takes: traced allocations are the same on every machine and under any load, so the
bound never fails by chance, and a refusal that came after the work would show in it.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager


class Peak:
    """The peak of traced allocations in bytes, known once the ``with`` block ends."""

    bytes: int = 0

    @property
    def mib(self) -> float:
        return self.bytes / 2**20


@contextmanager
def allocation_peak() -> Iterator[Peak]:
    peak = Peak()
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak.bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
