"""Print the SIMD features numpy dispatches to on this machine beyond its baseline (AVX2,
AVX-512, ...), space-separated, for ``NPY_DISABLE_CPU_FEATURES``: ``.ci/run`` runs the snapshot
and peer-parity tests again with them off, so that a comparison demanding the bits of one
machine's instruction set fails here, not on a user's machine."""

from __future__ import annotations

try:
    from numpy._core import _multiarray_umath as umath
except ImportError:  # numpy < 2
    from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]

print(" ".join(f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)))
