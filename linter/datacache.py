"""Parsed data files kept beside them in marshal form, as Python keeps compiled modules.

A run reads the rule index and the knowledge files (JSON) on every start. Parsing them meant
importing ``json`` and decoding 70 KB: a twentieth of a one-manifest run. ``load`` returns the
parsed value from ``__pycache__/<name>.<python tag>.marshal`` when that file was written from the
data file as it is now (same size and modification time), and otherwise parses the data file and
writes the marshal file for the next run (atomically; where the folder is not writable, every run
parses). Only values JSON can hold are stored, which marshal writes and reads exactly.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time (see record.py)
if TYPE_CHECKING:
    from collections.abc import Callable


def load(path: str, parse: Callable[[str], object]) -> object:
    """The value ``parse`` makes of the text of ``path``, from the marshal file when it is current."""
    stat = os.stat(path)
    stamp = f"{stat.st_size}:{stat.st_mtime_ns}\n".encode()
    kept = _kept_path(path)
    value = _read_kept(kept, stamp)
    if value is not None:
        return value[0]
    with open(path, encoding="utf-8") as handle:
        value = parse(handle.read())
    _keep(kept, stamp, value)
    return value


def _kept_path(path: str) -> str:
    folder, name = os.path.split(path)
    return os.path.join(folder, "__pycache__", f"{name}.{sys.implementation.cache_tag}.marshal")


def _read_kept(kept: str, stamp: bytes) -> tuple[object] | None:
    try:
        with open(kept, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if not data.startswith(stamp):
        return None
    try:
        return (marshal.loads(data[len(stamp) :]),)
    except (EOFError, ValueError, TypeError):
        return None  # cut short or from another interpreter: parsed again


def _keep(kept: str, stamp: bytes, value: object) -> None:
    try:
        data = stamp + marshal.dumps(value)
    except ValueError:
        return  # a value marshal cannot write
    temporary = f"{kept}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, kept)  # whole or not at all, whoever writes it at the same time
    except OSError:
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(temporary)
