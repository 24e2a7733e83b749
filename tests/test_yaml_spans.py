"""A YAML scalar's span is its written value: a tag or an anchor before it is not part of it (the fuzz
target's property, pinned here with the input it first failed on)."""

from __future__ import annotations

import pytest

from recovery_lint.parse import parse_source
from recovery_lint.span import SourceText

HEAD = "apiVersion: v1\nkind: Pod\n"


def values(text: str) -> dict[str, tuple[str, str]]:
    parsed = parse_source(SourceText("job.yaml", text), "manifest")
    root = parsed.model.docs[0].root
    return {k.value: (v.value, text[v.span.start : v.span.end]) for k, v in root.items}


@pytest.mark.parametrize(
    ("line", "value", "written"),
    [
        ("a: !!int 2", "2", "2"),
        ("a: &x !!str  x y", "x y", "x y"),
        ("a: !custom 3", "3", "3"),
        ("a: &q 'quoted'", "quoted", "'quoted'"),
        ("a: !!str |\n  block", "block\n", "|\n  block\n"),
        ("a: !!str", "", "!!str"),  # nothing after the tag: the span stays on it
        ("a: plain", "plain", "plain"),
    ],
)
def test_a_scalar_span_leaves_out_its_tag_and_anchor(line, value, written):
    assert values(HEAD + line + "\n")["a"] == (value, written)


def test_a_key_after_a_lone_carriage_return_and_a_tag():
    text = "apiVersion: v1\r\nkind: AscendJob\r\nmetadata:\r\n  labels: {a: b}  #c\r!  annotations:\r\n    x: y\r\n"
    parsed = parse_source(SourceText("job.yaml", text), "manifest")
    root = parsed.model.docs[0].root  # the lone CR ends the line: the key is at the top level
    keys = [(k.value, text[k.span.start : k.span.end]) for k, _ in root.items]
    assert ("annotations", "annotations") in keys
