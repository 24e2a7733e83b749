"""The JSON schemas and the knowledge data file, shipped inside the package."""

import os

_HERE = os.path.dirname(__file__)


def read_text(name: str) -> str:
    """One of the data files next to this module. Read by path: importlib.resources would add a
    tenth to the start-up of a one-file run (it imports zipfile, tempfile and their dependencies)."""
    with open(os.path.join(_HERE, name), encoding="utf-8") as handle:
        return handle.read()


def read_json(name: str) -> dict:
    """One of the JSON data files next to this module, parsed (kept parsed between runs: datacache)."""
    from recovery_lint.datacache import load

    return load(os.path.join(_HERE, name), _parse_json)  # type: ignore[return-value]


def _parse_json(text: str) -> object:
    import json

    return json.loads(text)
