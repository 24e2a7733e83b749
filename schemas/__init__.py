"""The JSON schemas and the knowledge data file, shipped inside the package."""

import os

_HERE = os.path.dirname(__file__)


def read_text(name: str) -> str:
    """One of the data files next to this module. Read by path: importlib.resources would add a
    tenth to the start-up of a one-file run (it imports zipfile, tempfile and their dependencies)."""
    with open(os.path.join(_HERE, name), encoding="utf-8") as handle:
        return handle.read()


def read_json(name: str) -> dict:
    """One of the JSON data files next to this module, parsed."""
    return _parse_json(read_text(name))  # type: ignore[return-value]


def _parse_json(text: str) -> object:
    """``json.loads(text)``. A data file of the package is read with the C decoder that ``json`` itself
    uses, without importing ``json`` (its decoder and encoder modules and their patterns were a
    thirtieth of a one-manifest run); anything it does not read whole goes to ``json``, which
    reads it the same way or says what is wrong."""
    try:
        from _json import make_scanner  # CPython's accelerator of json.scanner
    except ImportError:
        make_scanner = None
    if make_scanner is not None:
        body = text.strip(" \t\n\r")  # what json.loads skips around the value
        try:
            value, end = make_scanner(_Decoding)(body, 0)
        except Exception:  # json gives the error, or reads what this does not
            value, end = None, -1
        if end == len(body):
            return value
    import json

    return json.loads(text)


class _Decoding:
    """What ``json.loads`` decodes with, as the scanner asks for it (NaN and Infinity go to json)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = None
