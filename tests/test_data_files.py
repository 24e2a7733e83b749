"""The package's data files are read as ``json`` reads them, without importing it."""

from __future__ import annotations

import json

import pytest


def test_the_package_data_reads_as_json_reads_it():
    from pathlib import Path

    from recovery_lint.schemas import _parse_json

    for path in sorted((Path(__file__).parent.parent / "schemas").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert _parse_json(text) == json.loads(text), path.name
    for text in ['{"a": NaN}', "[1e400]", " 1 ", '{"a": 1} x', "\ufeff{}", "", "["]:
        try:
            expected: object = json.loads(text)
        except ValueError as exc:
            with pytest.raises(type(exc)):
                _parse_json(text)
        else:
            assert repr(_parse_json(text)) == repr(expected)
