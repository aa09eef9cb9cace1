"""The command line run in this process: what ``python -m evalkit ARGS`` prints and exits with,
through click's CliRunner against ``evalkit.cli.main``, without starting Python and importing
evalkit's dependencies again (a second or more a call on a loaded machine).

Tests of what the commands compute and say use it; the few that test the process itself (the
entry point, exit status, a closed pipe, the console script) still start a real one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from evalkit.cli import main


@dataclass(frozen=True)
class Finished:
    """The parts of a finished ``subprocess.run`` the tests read."""

    returncode: int
    stdout: str
    stderr: str


def evalkit_cli(*args: str | Path, env: dict[str, str] | None = None, check: bool = False) -> Finished:
    """``evalkit ARGS`` with ``env`` added to the environment; ``check`` as for subprocess.run.

    An exception that escapes the command group propagates with its traceback, as it would
    end a real process (the group turns every expected one into a message and an exit status).
    """
    result = CliRunner(env=env).invoke(main, [str(a) for a in args], catch_exceptions=False)
    done = Finished(result.exit_code, result.stdout, result.stderr)
    if check:
        assert done.returncode == 0, f"evalkit {' '.join(map(str, args))} exited {done.returncode}:\n{done.stderr}"
    return done
