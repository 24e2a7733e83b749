"""Each fuzz target runs a fixed set of inputs in the normal test run, the same on every run
(``python -m fuzz.run`` explores for new ones, for as long as it is given)."""

from __future__ import annotations

import pytest

from fuzz.run import run_fixed
from fuzz.targets import TARGETS


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz_target_finds_nothing_in_a_fixed_run(name):
    report = run_fixed(name, examples=EXAMPLES)
    assert report.failures == [], report.failures[0]
    assert report.executions >= EXAMPLES  # the target really ran (shrinking adds runs)


EXAMPLES = 150

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
    # NEL (U+0085) is a line break to YAML: folded into a plain scalar's value as a space
    ("manifest", "kind: Pod\napiVersion: v1\nspec:\n  containers:\n  - command: [/\x85in/bash, -c, cd /x]\n"),
    # huge digit runs in a pin: int() refused them
    ("pins", "torch==" + "1" * 5000 + "\n"),
]


@pytest.mark.parametrize(("name", "text"), REGRESSIONS)
def test_fuzz_regression(name, text):
    TARGETS[name][1](text)
