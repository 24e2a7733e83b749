"""Call arguments are read as ``ast.literal_eval`` reads them: the same value, or no value where it refuses."""

from __future__ import annotations

import ast
import gc

import pytest

from recovery_lint.sources.python import DYNAMIC
from recovery_lint.sources.python_parse import literal, parse_python
from recovery_lint.span import SourceText

EXPRESSIONS = [
    "1",
    "-1",
    "+2.5",
    "-(1)",
    "--1",
    "not 1",
    "'a'",
    "b'x'",
    "None",
    "True",
    "-True",
    "1+2j",
    "-1-2j",
    "1+2",
    "2j+1",
    "1j",
    "-1j",
    "(1, [2, {3}], {'a': (4,)})",
    "{**a}",
    "{1: 2, 'b': [None]}",
    "{[1]: 2}",
    "{[1]}",
    "set()",
    "set([1])",
    "frozenset()",
    "x.set()",
    "[a, 1]",
    "1 * 2",
    "(1, -2.0, +3)",
    "{'lr': 1e-4, 'betas': (0.9, 0.999)}",
    "...",
]


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_literal_reads_what_literal_eval_reads(text):
    node = ast.parse(text, mode="eval").body
    try:
        expected = ast.literal_eval(node)
    except (ValueError, TypeError):
        expected = DYNAMIC
    try:
        got = literal(node)
    except (ValueError, TypeError):
        got = DYNAMIC
    assert got == expected or (got is expected is DYNAMIC)
    assert type(got) is type(expected)


def test_reading_arguments_leaves_no_cyclic_garbage():
    source = ("f(" + ", ".join(EXPRESSIONS) + ")\n") * 50
    gc.collect()
    gc.disable()
    try:
        parsed = parse_python(SourceText("t.py", "import os\n" + source))
        assert parsed.calls and len(parsed.calls[0].positional) == len(EXPRESSIONS)
        assert gc.collect() == 0
    finally:
        gc.enable()
