"""Path arithmetic on the '/'-separated locations the linker and the speed wing work with."""

from __future__ import annotations

import functools
import posixpath


@functools.lru_cache(maxsize=8192)  # asked again for every file of a folder, by every job
def folder_and_ancestors(folder: str) -> tuple[str, ...]:
    """The folder and each of its parents, nearest first, ending with the root ("")."""
    out = []
    while folder not in ("", ".", "/"):
        out.append(folder)
        folder = posixpath.dirname(folder)
    out.append("/" if folder == "/" else "")
    return tuple(out)


def under(folder: str, relative: str) -> str:
    """``posixpath.join(folder, relative)`` for a folder as ``folder_and_ancestors`` gives it (no
    trailing '/' but the root's) and a relative path."""
    if not folder:
        return relative
    return folder + relative if folder == "/" else f"{folder}/{relative}"


def join(folder: str, ref: str) -> str:
    """``ref`` below ``folder``, normalised; '' for the folder itself."""
    joined = posixpath.normpath(posixpath.join(folder, ref)) if folder else posixpath.normpath(ref)
    return "" if joined == "." else joined


def depth(path: str) -> int:
    """How many folders deep ``path`` is (0 for the root)."""
    return 0 if path in ("", ".", "/") else path.count("/") + 1
