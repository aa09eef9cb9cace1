"""The BLAS threads of the reduction's matrix products: one.

The reduction's products are small (a chunk of at most 16,384 rows against a few columns, or a
resamples x chunk block against them): a BLAS that splits each over every core spends more on
waking and joining its threads than on the product, and on a loaded machine each wait is longer
still. With one BLAS thread, `configs/tnorms.yaml` (bootstrap, permutation test, 12 T-norms) runs
in 0.83-0.87 s against 3.61-3.95 s with two (in-process, two cores, other work running; issue 25).
Drivers that want cores use processes (Dask workers) or their own threads.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@functools.cache
def _controller() -> Any:
    """The process's BLAS libraries, found once (finding them takes about 0.3 ms; limiting them
    with the found controller, about 5 us)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def one_thread() -> Iterator[None]:
    """BLAS on one thread within, as it was after."""
    with _controller().limit(limits=1, user_api="blas"):
        yield
