"""An inline command line of plain words joined by ; && || is read without the bash grammar, into
the model tree-sitter gives; anything else is left to tree-sitter."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recovery_lint.sources.shell import _blank, _parse, parse_embedded, plain_commands
from recovery_lint.span import SourceText

PREFIX = 'a: 1\n        command: ["/bin/bash", "-c", "'
# plain characters and the ones next to them that tree-sitter reads its own way
WORD = st.text(alphabet="az09_./:,-=+@%AZ", min_size=1, max_size=6)
SEPARATOR = st.sampled_from([" ", "  ", "\t", " && ", "&&", " || ", "||", "; ", ";", " ;"])


def by_tree_sitter(src: SourceText, start: int, end: int):
    text = src.text
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    masked = _blank(text[line_start:start]) + text[start:end] + _blank(text[end : line_end + 1])
    return _parse(src, SourceText(src.path, masked), line_start)


def both(inner: str):
    text = PREFIX + inner + '"]\n'
    start = len(PREFIX)
    plain = parse_embedded(SourceText("job.yaml", text), start, start + len(inner))
    return plain, by_tree_sitter(SourceText("job.yaml", text), start, start + len(inner))


@settings(max_examples=600)
@given(st.lists(st.tuples(WORD, SEPARATOR), min_size=1, max_size=8), st.sampled_from(["", ";", " "]))
def test_a_plain_line_reads_as_tree_sitter_reads_it(parts, end):
    inner = "".join(w + s for w, s in parts)[: -len(parts[-1][1])] + end
    if plain_commands(inner) is None:
        return
    plain, parsed = both(inner)
    assert parsed.issues == []
    assert plain.events == parsed.events
    assert plain.comments == parsed.comments == []


@pytest.mark.parametrize(
    "inner",
    [
        "python train.py",
        "cd /job/code && bash train_start.sh --nnodes=2 --master_addr=10.0.0.1:29500",
        "cd /job/code; torchrun --nproc_per_node 8 pretrain.py || exit 1",
        "mkdir -p /ckpt;",
    ],
)
def test_common_inline_commands_are_plain_and_read_as_tree_sitter_reads_them(inner):
    assert plain_commands(inner) is not None
    plain, parsed = both(inner)
    assert plain.events == parsed.events and parsed.issues == []
    assert [c.conditional for c in plain.commands] == [c.conditional for c in parsed.commands]


@pytest.mark.parametrize(
    "inner",
    [
        "export HCCL_ASYNC_ERROR_HANDLING=0; torchrun train.py",  # an assignment
        "A=1 python train.py",
        "python train.py > log 2>&1",
        "bash $HOME/run.sh",
        "python 'train.py'",
        "python train.py &",
        "python train.py | tee log",
        "if true; then python train.py; fi",
        "python train.py &&",
        "; python train.py",
        "python train.py # a comment",
        "test a == b",
        "",
    ],
)
def test_anything_else_goes_to_tree_sitter(inner):
    assert plain_commands(inner) is None
