"""Each fuzz target runs for a few seconds in the normal test run (``python -m fuzz.run`` for longer)."""

from __future__ import annotations

import pytest

from fuzz.run import run_target
from fuzz.targets import TARGETS


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz_target_finds_nothing_in_a_short_run(name):
    report = run_target(name, seconds=3, save=False)
    assert report.failures == [], report.failures[0]
    assert report.executions > 5  # the target really ran
