"""Fresh virtual environments for the tests that install packages as a user does, with pip from
local paths and offline: this environment's packages (numpy, pytest, a setuptools new enough to
build evalkit, ...) are seen through a .pth file, after the new environment's own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: ``python -m pip install`` offline, building with the packages at hand.
PIP = ("-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation")


def environment(plugins: str) -> dict[str, str]:
    """This process's environment for one that runs in the new one, loading only the built-ins
    and the distributions ``plugins`` (whatever other plugins the machine has installed)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "EVALKIT_BLOCK_PLUGINS")}
    return {**env, "EVALKIT_LOAD_PLUGINS": plugins}


def run(*args: str | Path, plugins: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=environment(plugins))
    assert done.returncode == 0, f"{' '.join(map(str, args))}\n{done.stdout}\n{done.stderr}"
    return done


def source_copy(source: Path, target: Path) -> Path:
    """A copy of a source tree to build from: pip builds in the tree, leaving build/ behind."""
    skip = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache",
                                  "results", "site")
    shutil.copytree(source, target, ignore=skip)
    return target


def fresh_venv(home: Path) -> Path:
    """A new virtual environment at ``home`` that sees this one's packages; its bin folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", home], check=True)
    python = home / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    parents = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (Path(site) / "_evalkit_test_parent.pth").write_text("\n".join(parents) + "\n")
    # `pip` on PATH must install here, not where the test runs: this one's pip, run by the new python
    pip = home / "bin" / "pip"
    pip.write_text(f'#!/bin/sh\nexec "{python}" -m pip "$@"\n')
    pip.chmod(0o755)
    return home / "bin"
