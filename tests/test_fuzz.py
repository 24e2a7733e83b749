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


# inputs the fuzzers found, each fixed where it failed
REGRESSIONS = [
    # Python ends a line at a lone "\r": every position after one pointed at the wrong text
    ("python", "\rimport os\n\n\ndef train(model, path):\n    torch.save(\n        model.state_dict(),  # c\n    )\n"),
    ("python", "a = 1\rimport torch\r\ntorch.save(x)\r"),
    # tree-sitter-bash read a character above U+FFFF out of bounds after '<{' (a segfault)
    ("shell", "cat <{\U000d0000\n&>{\U0010ffff x\n"),
    # a second BOM: libyaml skipped it and counted its marks from after it, every span one character early
    ("manifest", "\ufeff\ufeff---\napiVersion: 0\rkind: 0"),
    ("manifest", "\ufeff\ufeff\ufeffkind: Pod\napiVersion: v1\n"),
    # huge digit runs in a pin: int() refused them
    ("pins", "torch==" + "1" * 5000 + "\n"),
]


@pytest.mark.parametrize(("name", "text"), REGRESSIONS)
def test_fuzz_regression(name, text):
    TARGETS[name][1](text)
