"""Data files are parsed once and kept parsed beside them; a changed, damaged or unwritable copy
never gives a wrong value."""

from __future__ import annotations

import json
import os

import pytest

from recovery_lint import datacache


def never(text: str) -> object:
    raise AssertionError("parsed again: the kept value was not used")


def test_the_second_load_takes_the_kept_value(tmp_path):
    data = tmp_path / "facts.json"
    data.write_text('{"a": [1, 2.5, null, true, "x"]}', encoding="utf-8")
    first = datacache.load(str(data), json.loads)
    assert first == {"a": [1, 2.5, None, True, "x"]}
    assert (tmp_path / "__pycache__").is_dir()
    assert datacache.load(str(data), never) == first


def test_a_changed_file_is_parsed_again(tmp_path):
    data = tmp_path / "facts.json"
    data.write_text('{"a": 1}', encoding="utf-8")
    datacache.load(str(data), json.loads)
    data.write_text('{"a": 22}', encoding="utf-8")
    assert datacache.load(str(data), json.loads) == {"a": 22}
    stat = data.stat()  # same size, another time: parsed again as well
    data.write_text('{"a": 23}', encoding="utf-8")
    os.utime(data, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert datacache.load(str(data), json.loads) == {"a": 23}


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_a_damaged_kept_file_is_parsed_again(tmp_path, damage):
    data = tmp_path / "facts.json"
    data.write_text('{"a": [1, 2]}', encoding="utf-8")
    datacache.load(str(data), json.loads)
    (kept,) = (tmp_path / "__pycache__").iterdir()
    if damage is None:  # cut short after a current stamp
        kept.write_bytes(kept.read_bytes()[:-3])
    else:
        kept.write_bytes(damage)
    assert datacache.load(str(data), json.loads) == {"a": [1, 2]}


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_folder_that_cannot_be_written_is_parsed_every_time(tmp_path):
    data = tmp_path / "facts.json"
    data.write_text('{"a": 1}', encoding="utf-8")
    tmp_path.chmod(0o555)
    try:
        assert datacache.load(str(data), json.loads) == {"a": 1}
        assert datacache.load(str(data), json.loads) == {"a": 1}
        assert not (tmp_path / "__pycache__").exists()
    finally:
        tmp_path.chmod(0o755)


def test_no_temporary_file_is_left(tmp_path):
    data = tmp_path / "facts.json"
    data.write_text("[1]", encoding="utf-8")
    datacache.load(str(data), json.loads)
    assert [p.suffix for p in (tmp_path / "__pycache__").iterdir()] == [".marshal"]
