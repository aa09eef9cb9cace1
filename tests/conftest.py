"""Shared by the tests: the checkout's root, and the quick default run that leaves out the tests
marked slow unless EVALKIT_TESTS=all (tests/run_depth.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from run_depth import ALL, HOW

ROOT = Path(__file__).resolve().parent.parent


SLOW_LEFT_OUT = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)  # after -k and -m: count only the slow tests that would have run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ALL:
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
        config.stash[SLOW_LEFT_OUT] = len(slow)
        if hasattr(config, "workeroutput"):  # a pytest-xdist worker: tell the controller, which prints the summary
            config.workeroutput["slow_left_out"] = len(slow)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """pytest-xdist's controller hears from a worker (each collects every test)."""
    node.config.stash[SLOW_LEFT_OUT] = node.workeroutput.get("slow_left_out", 0)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    left_out = config.stash.get(SLOW_LEFT_OUT, 0)
    if left_out:
        tests = "test" if left_out == 1 else "tests"
        terminalreporter.write_line(f"{left_out} slow {tests} left out; run everything (as CI does) with: {HOW}")


@pytest.fixture
def root() -> Path:
    return ROOT
