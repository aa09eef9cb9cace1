"""How much of the suite runs: ``EVALKIT_TESTS=quick`` (the default, a couple of minutes) or
``all`` (CI): the tests marked slow, and every example of the long property tests."""

from __future__ import annotations

import os

import pytest

TESTS = os.environ.get("EVALKIT_TESTS", "quick")
if TESTS not in ("quick", "all"):
    raise pytest.UsageError(f"EVALKIT_TESTS={TESTS!r}: choose quick (the default) or all")
ALL = TESTS == "all"
#: The one switch, as the summary of a quick run prints it.
HOW = "EVALKIT_TESTS=all python -m pytest"


def examples(n: int) -> int:
    """Hypothesis examples for a property test that takes seconds: all ``n`` in a full run, a
    quarter (at least 20) in a quick one, so that every property is still checked."""
    return n if ALL else max(20, n // 4)
