"""The JSON schemas and the knowledge data files, shipped inside the package."""

import json
import os

_HERE = os.path.dirname(__file__)


def read_text(name: str) -> str:
    """One of the data files next to this module, read by path."""
    with open(os.path.join(_HERE, name), encoding="utf-8") as handle:
        return handle.read()


def read_json(name: str) -> dict:
    """One of the JSON data files next to this module, parsed."""
    return json.loads(read_text(name))
