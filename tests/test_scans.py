"""Scans that stand in for patterns on the start path give what the patterns give: the path of a script
or Python file at the end of a word (SCRIPT_PATH), a Kubernetes key in a YAML text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recovery_lint.flow.reach import NOT_IN_NAMES, _has_word
from recovery_lint.link.files import SCRIPT_PATH, script_path_at_end
from recovery_lint.span import SourceText, to_bytes

TEXT = st.text(alphabet="ab_./-=+~@%é\udc80 $\n\"'" + "pyshb/", max_size=14)
ENDING = st.sampled_from(["", ".py", ".sh", ".bash", ".py\n", "x.py", "/.py", "//a.sh", "\n"])


@settings(max_examples=800)
@given(TEXT, ENDING)
def test_the_scan_finds_what_the_pattern_finds(text, ending):
    text += ending
    match = SCRIPT_PATH.search(text)
    assert script_path_at_end(text) == (match.group(1) if match else None)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("/job/code/train.py", "job/code/train.py"),
        ("${CODE}/scripts/train_start.sh", "scripts/train_start.sh"),
        ("a//b.sh", "b.sh"),
        ("训练/run.bash", "训练/run.bash"),
        ("train.py\n", "train.py"),
        ("a/.py", None),
        ("train.pyc", None),
    ],
)
def test_paths_at_the_end_of_words(text, path):
    assert script_path_at_end(text) == path


# -- the Kubernetes-key test of a YAML text ------------------------------------------------------
KEY_PARTS = st.sampled_from(["apiVersion", "kind", " ", "\t", "-", '"', "'", ":", "\n", "\r", "a", "x: y", "#"])


@settings(max_examples=800)
@given(st.lists(KEY_PARTS, max_size=90))
def test_the_key_scan_agrees_with_the_pattern(parts):
    from recovery_lint.parse import _KUBERNETES_KEY, has_kubernetes_key

    text = "".join(parts)
    assert has_kubernetes_key(text) == (_KUBERNETES_KEY.search(text) is not None)


@given(st.text(alphabet=st.sampled_from("ab \n#é中文😀\udc80\udcff"), max_size=60))
def test_a_byte_offset_maps_to_the_character_holding_that_byte(text):
    """tree-sitter reports byte offsets: each maps to the character its byte belongs to (the end to
    the end), whatever mix of one- to four-byte characters and kept undecodable bytes precedes it."""
    source = SourceText("x.sh", text + "\n")
    owner = [i for i, ch in enumerate(source.text) for _ in to_bytes(ch)] + [len(source.text)]
    for byte, char in enumerate(owner):
        assert source.char_offset(byte) == char


WORDS = st.binary(max_size=24).map(lambda b: bytes(c for c in b if c in b"ab.-_/ \n;=$x\t#\x00"))


@settings(max_examples=800)
@given(WORDS, st.binary(min_size=1, max_size=3).map(lambda b: bytes(b"ab.x_-"[c % 6] for c in b)))
def test_a_name_is_a_word_of_a_launcher_as_the_split_has_it(text, name):
    """The search for a named file's name in a launcher's text, one place at a time, says what a
    split of the whole text into words says."""
    assert _has_word(text, name) == (name in NOT_IN_NAMES.split(text))
