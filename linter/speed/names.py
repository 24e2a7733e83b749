"""The file names each launcher (manifest or script) writes, kept in the cache from one run over
named files to the next.

A run over named files (pre-commit, an editor) looks for the named files' names in the text of every
manifest and script of the repository (``flow/reach.py``): in a model zoo that is reading some
18,000 files, more than the rest of such a run costs. Kept here: for each launcher, the names its
text holds (what the caller's ``names_of`` gives) with the stat of the file they were read under. A
later run stats each launcher and reads only those whose stat changed, or that are new.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence

from .cache import NAMES, Cache

Stat = tuple[int, int, int, int, int]


def kept_names(
    cache: Cache,
    locations: Sequence[str],
    names_of: Callable[[int], tuple[bytes, ...]],
    also_keep: Collection[str] = (),
) -> list[tuple[bytes, ...]]:
    """``names_of(i)`` for the launcher at each of ``locations``: from the cache where the file's
    stat is the one its names were read under, else read (and kept for the next run). The entries of
    ``also_keep`` (launchers this run does not look in: the named files) are kept as they were; those
    of files in neither list are dropped."""
    key = cache.key("launcher-names")
    stored = cache.get_entry(NAMES, key)
    kept: dict[str, tuple[Stat, tuple[bytes, ...]]] = stored if isinstance(stored, dict) else {}
    out: list[tuple[bytes, ...]] = []
    fresh: dict[str, tuple[Stat, tuple[bytes, ...]]] = {}
    for i, location in enumerate(locations):
        seen = _stat(location)
        entry = kept.get(location)
        if entry is not None and seen is not None and entry[0] == seen:
            out.append(entry[1])
            continue
        names = names_of(i)  # read after the stat: a change in between shows as another stat next time
        out.append(names)
        if seen is not None:
            fresh[location] = (seen, names)
    listed = set(locations).union(also_keep)
    if fresh or any(location not in listed for location in kept):
        cache.put_entry(NAMES, key, {**{k: v for k, v in kept.items() if k in listed}, **fresh})
    return out


def _stat(location: str) -> Stat | None:
    """What tells a changed file: its size, modification and change times, inode and mode (a file made
    unreadable keeps its size and times); None when it cannot be stat'ed."""
    try:
        st = os.stat(location)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)
