"""The one way a file is written: a temporary file in the same folder, renamed over the target, so a
reader (a shell running the script, a CI step reading the report, a concurrent run reading the
cache) sees the old content or the new one, never half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .interrupts import signals_held


def replace_file(
    path: Path, data: bytes, mode: int | None = None, owner: tuple[int, int] | None = None, durable: bool = True
) -> None:
    """Write ``data`` as the content of ``path`` in one rename. ``mode`` (else the current file's,
    else what the umask gives a new file) and ``owner`` (when the process may set it) are the
    written file's; ``durable`` syncs the data to disk before the rename (a cache entry, which is
    recomputed when lost, does without). Ctrl-C waits until the file is written or left untouched;
    on any failure the temporary file is removed and the error raised."""
    if mode is None:
        mode = _mode_of(path)
    tmp = None
    try:
        with signals_held():
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            if owner is not None:
                with contextlib.suppress(OSError):  # before chmod: chown clears the set-user/group-ID bits
                    os.chown(tmp, *owner)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def _mode_of(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
