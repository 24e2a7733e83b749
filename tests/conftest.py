from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings


def pytest_configure(config: pytest.Config) -> None:
    """The property tests draw the same inputs on every run and machine, and no input fails for
    taking long on a busy one: a failure in the suite is then the code's and reproducible. New
    inputs are looked for by ``python -m fuzz.run`` (which imports test helpers, not this profile)."""
    settings.register_profile("suite", derandomize=True, deadline=None, database=None)
    settings.load_profile("suite")


# Runs of the suite do not leave a cache in the repositories they lint (tests/test_cache.py turns it on).
os.environ["RECOVERY_LINT_NO_CACHE"] = "1"

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
FIXTURES = ROOT / "fixtures"


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None, text: bool = True):
    """Run the installed command line as a user would; returns the CompletedProcess (its output in
    bytes with ``text=False``: a file name that is not UTF-8 is printed as the bytes it is)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "recovery_lint", *args],
        cwd=cwd or ROOT,
        input=stdin,
        capture_output=True,
        text=text,
        env=full_env,
        timeout=120,
    )


@pytest.fixture
def cli():
    return run_cli
