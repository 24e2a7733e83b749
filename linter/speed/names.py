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
    kept = _Kept(cache.get_entry(NAMES, key))
    out: list[tuple[bytes, ...]] = []
    fresh = _Kept(None)
    read = False
    for i, location in enumerate(locations):
        try:
            st = os.stat(location)
        except OSError:
            out.append(names_of(i))  # nothing to tell a change by: read each time, never kept
            continue
        seen = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)
        j = kept.at.get(location)
        if j is None or kept.stats[j] != seen:
            # read after the stat: a change in between shows as another stat next time
            fresh.add(location, seen, names_of(i))
            read = True
        else:
            fresh.add(location, seen, kept.names[j])
        out.append(fresh.names[-1])
    for location in also_keep:
        j = kept.at.get(location)
        if j is not None:
            fresh.add(location, kept.stats[j], kept.names[j])
    # nothing read again and as many entries: the same entries, maybe in another order
    if read or len(fresh.locations) != len(kept.locations):
        cache.put_entry(NAMES, key, (fresh.locations, fresh.stats, fresh.names))
    return out


class _Kept:
    """The cache's entry as three columns (one object per launcher would cost more to unpickle than
    the rest of the lookup): each launcher's location, the stat its names were read under, its names."""

    def __init__(self, stored: object) -> None:
        columns = stored if isinstance(stored, tuple) and len(stored) == 3 else ([], [], [])
        self.locations: list[str] = columns[0]
        self.stats: list[Stat] = columns[1]
        self.names: list[tuple[bytes, ...]] = columns[2]
        self.at = {location: j for j, location in enumerate(self.locations)}

    def add(self, location: str, stat: Stat, names: tuple[bytes, ...]) -> None:
        self.locations.append(location)
        self.stats.append(stat)
        self.names.append(names)
