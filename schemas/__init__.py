"""The JSON schemas and the knowledge data file, shipped inside the package."""

from pathlib import Path


def read_text(name: str) -> str:
    """One of the data files next to this module. Read by path: importlib.resources would add a
    tenth to the start-up of a one-file run (it imports zipfile, tempfile and their dependencies)."""
    return (Path(__file__).parent / name).read_text(encoding="utf-8")


def read_json(name: str) -> dict:
    """One of the JSON data files next to this module, parsed."""
    import json

    return json.loads(read_text(name))
