"""Nodes keep their offsets in compact form (a start as ``start >> 8`` and ``start & 255``, a mapping's
entries in one flat tuple, a plain word's value as its text): what a rule reads must not change,
also past 64 KiB, where the high part is no longer a small shared int."""

from __future__ import annotations

import pickle

import pytest

from recovery_lint.parse import parse_source
from recovery_lint.sources.shell import Word
from recovery_lint.sources.yamlnodes import YMap, YScalar
from recovery_lint.span import SourceText, Span

PAD = "# " + "x" * 97 + "\n"  # a 100-character comment line


@pytest.mark.parametrize("offset", [0, 255, 256, 65_535, 65_536, 300_001])
def test_a_span_gives_back_the_offsets_it_was_made_with(offset):
    src = SourceText("f.txt", "a" * (offset + 10))
    span = Span(src, offset, offset + 7)
    assert (span.start, span.end) == (offset, offset + 7)
    assert pickle.loads(pickle.dumps(span)) == span


@pytest.mark.parametrize("lines", [0, 3, 700, 2_000])  # up to 200 KB before the keys
def test_manifest_nodes_far_into_a_file_keep_their_place(lines):
    text = PAD * lines + 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "job-1"\n  labels: {a: b}\n'
    root = parse_source(SourceText("job.yaml", text), "manifest").model.docs[0].root
    assert isinstance(root, YMap)
    assert [k.value for k in root.key_nodes()] == ["apiVersion", "kind", "metadata"]
    name = root.map("metadata").get("name")
    assert isinstance(name, YScalar)
    assert name.value == "job-1"
    assert text[name.span.start : name.span.end] == '"job-1"'
    assert name.start == text.index('"job-1"')
    labels = root.map("metadata").map("labels")
    assert text[labels.span.start : labels.content_end] == "{a: b}"
    assert pickle.loads(pickle.dumps(root)).map("metadata").text("name") == "job-1"


def test_a_mapping_answers_as_its_pairs_do():
    text = "apiVersion: v1\nkind: Pod\n'quoted key': 1\nempty: {}\n"
    root = parse_source(SourceText("job.yaml", text), "manifest").model.docs[0].root
    pairs = root.items
    assert [k.value for k, _ in pairs] == ["apiVersion", "kind", "quoted key", "empty"]
    assert len(root) == 4 and root.key_at(2).value == "quoted key" and root.value_at(1).value == "Pod"
    assert root.index_of("quoted key") == 2 and root.index_of("missing") == -1
    assert root.get("quoted key").value == "1" and root.entry("kind") == pairs[1]
    empty = root.map("empty")
    assert empty is not None and len(empty) == 0 and bool(empty)  # an empty mapping is still a node
    assert root.key_at(2).is_text("quoted key") and not root.key_at(2).is_text("'quoted key'")


def test_a_word_whose_value_is_its_text_reads_it_from_the_file():
    script = "#!/bin/bash\n" + PAD * 700 + "torchrun --nproc_per_node 8 \"$ENTRY\" 'a b' train.py\n"
    parsed = parse_source(SourceText("run.sh", script), "shell").model
    (command,) = parsed.commands
    assert [(w.text, w.value) for w in command.words] == [
        ("torchrun", "torchrun"),
        ("--nproc_per_node", "--nproc_per_node"),
        ("8", "8"),
        ('"$ENTRY"', None),
        ("'a b'", "a b"),
        ("train.py", "train.py"),
    ]
    word = command.words[-1]
    assert script[word.span.start : word.span.end] == "train.py"
    again = pickle.loads(pickle.dumps(word))
    assert (again.text, again.value, again.span) == (word.text, word.value, word.span)


def test_a_word_given_its_text_keeps_it_when_moved():
    src = SourceText("run.sh", "echo hi\n")
    word = Word("torchrun", "torchrun", src.span(0, 4))
    assert word.value == "torchrun"  # its own text, not the file's "echo"
    word.span = src.span(5, 7)
    assert (word.text, word.value, word.span.start) == ("torchrun", "torchrun", 5)
