"""Scans that stand in for patterns on the start path give what the patterns give: the path of a script
or Python file at the end of a word (SCRIPT_PATH), a Kubernetes key in a YAML text."""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recovery_lint.discover import Candidate
from recovery_lint.flow import reach
from recovery_lint.flow.reach import NOT_IN_NAMES, RUNNABLE_SUFFIXES, _has_word, _WordIndex, runnable_names
from recovery_lint.kinds import SHELL
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


NAME_BYTES = b"ab.-_/ \n;=$x\t#\x00"  # name characters, and bytes that end a name
WORDS = st.binary(max_size=24).map(lambda b: bytes(NAME_BYTES[c % len(NAME_BYTES)] for c in b))


@settings(max_examples=800)
@given(WORDS, st.binary(min_size=1, max_size=3).map(lambda b: bytes(b"ab.x_-"[c % 6] for c in b)))
def test_a_name_is_a_word_of_a_launcher_as_the_split_has_it(text, name):
    """The search for a named file's name in a launcher's text, one place at a time, says what a
    split of the whole text into words says."""
    assert _has_word(text, name) == (name in NOT_IN_NAMES.split(text))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(WORDS, max_size=5),
    st.lists(st.binary(min_size=1, max_size=3).map(lambda b: bytes(b"ab.x_-/ "[c % 8] for c in b)), max_size=4),
)
def test_the_launchers_naming_a_file_are_those_whose_words_hold_its_name(texts, names):
    """The search of the launchers' texts for a few names gives, for each name, the launchers a
    word-by-word reading gives: a name as a word of its own, or one with a blank or a '/' anywhere."""
    with tempfile.TemporaryDirectory() as folder:
        found = _WordIndex(_scripts(Path(folder), texts)).files_naming(names)
    assert found == _naming(texts, names)


def _scripts(folder: Path, texts: list[bytes]) -> list[Candidate]:
    """A launch script in ``folder`` for each text."""
    launchers = []
    for i, text in enumerate(texts):
        path = folder / f"run{i}.sh"
        path.write_bytes(text)
        launchers.append(Candidate(path, path.name, SHELL))
    return launchers


def _naming(texts: list[bytes], names: list[bytes]) -> list[tuple[int, list[bytes]]]:
    """Each text (by index) holding one of ``names``, read word by word: a name as a word of its
    own, or one with a blank or a '/' anywhere."""
    holders: dict[int, list[bytes]] = {}
    for name in names:
        for i, text in enumerate(texts):
            plain = not NOT_IN_NAMES.search(name)
            if (name in NOT_IN_NAMES.split(text)) if plain else (name in text):
                holders.setdefault(i, []).append(name)
    return sorted(holders.items())


RUNNABLE_WORDS = st.lists(
    st.sampled_from([b"a", b"b.", b".sh", b".py", b".bash", b"/", b" ", b";", b"\n", b"sh", b"x"]), max_size=20
)


@settings(max_examples=800)
@given(RUNNABLE_WORDS.map(b"".join), st.integers(min_value=3, max_value=12))
def test_the_runnable_names_of_a_text_are_its_words_ending_like_a_script(text, longest):
    """The names a launcher writes that end like a script or a Python file, found where such an
    ending occurs, are the words of a split of the whole text that end so, up to the longest a
    file name can be (made short here, to meet it)."""
    with mock.patch.object(reach, "NAME_MAX", longest):
        found = runnable_names(text)
    words = {w for w in NOT_IN_NAMES.split(text) if w.endswith(RUNNABLE_SUFFIXES) and len(w) <= longest}
    assert found == tuple(sorted(words))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(RUNNABLE_WORDS.map(b"".join), min_size=1, max_size=4),
    st.lists(st.sampled_from([b"a.sh", b"b.py", b".sh", b"ab.bash", b"a", b"b.sh.py", b"x y.sh"]), max_size=4),
)
def test_the_names_kept_in_the_cache_find_the_launchers_a_search_finds(texts, names):
    """With a cache, the launchers naming a file are those a search of their texts finds: on the run
    that keeps the names, on the next that takes them back, and after a launcher changed."""
    from recovery_lint.speed.cache import Cache

    with tempfile.TemporaryDirectory() as folder:
        cache = Cache(Path(folder) / "cache", "salt", b"k" * 32)
        launchers = _scripts(Path(folder), texts)
        assert _WordIndex(launchers, cache).files_naming(names) == _naming(texts, names)
        assert _WordIndex(launchers, cache).files_naming(names) == _naming(texts, names)
        texts = [texts[0] + b" a.sh b.py", *texts[1:]]
        Path(launchers[0].location).write_bytes(texts[0])
        assert _WordIndex(launchers, cache).files_naming(names) == _naming(texts, names)
