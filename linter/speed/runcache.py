"""What the lint flow keeps in the cache (``cache.py``) and takes back from it: the findings of a whole
run, keyed by a stat of every file and the run's scope, so that an unchanged repository is only
listed; and each file's parsed model, keyed by its content hash, so that after a change only the
changed files are parsed."""

from __future__ import annotations

import hashlib
import os
import pickle
from typing import TYPE_CHECKING

from ..parse import MAX_FILE_BYTES, ParsedFile
from ..span import to_bytes
from .cache import Cache

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..discover import Candidate


# -- the findings of a whole run ---------------------------------------------------------------
def run_key_of(
    cache: Cache, scope: tuple[object, ...], candidates: list[Candidate], overrides: dict[str, str]
) -> str | None:
    """The key of a run's findings: the stat of every file and what decides which of them are parsed
    and linked (``scope``); None when a file cannot be stat'ed (the run's findings are then neither
    looked up nor kept)."""
    signature = stat_signature(candidates, overrides)
    if signature is None:
        return None
    return cache.key("run", *scope, signature)


def stored_run(cache: Cache, key: str) -> tuple[object, ...] | None:
    """What ``store_run`` kept under ``key``, if the cache holds it."""
    hit = cache.get_run(key)
    return hit if isinstance(hit, tuple) else None


def store_run(cache: Cache, key: str, values: tuple[object, ...]) -> None:
    cache.put_run(key, values)


def stat_signature(candidates: list[Candidate], overrides: dict[str, str]) -> str | None:
    """A digest of the path, kind, size, modification and change times and mode of every candidate
    (a text given in place of a file by its hash): a stat per file, where hashing would read every
    file of the repository. Fed to the hash file by file: no list of every stat is built."""
    digest = hashlib.blake2b(digest_size=20)
    for c in candidates:
        text = overrides.get(c.display)
        if text is not None:
            line = f"{c.display}\0{c.kind}\0{Cache.digest(text.encode('utf-8', 'surrogatepass'))}\n"
        else:
            try:
                st = os.stat(c.location)
            except OSError:
                if c.unchecked_in is not None:
                    continue  # a dangling link a listing could not rule out: never read, so no part of the run
                return None
            # the mode and the change time too: a file made unreadable (chmod) keeps its size and mtime
            line = (
                f"{c.display}\0{c.kind}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{st.st_mode}\0{st.st_ctime_ns}\n"
            )
        digest.update(line.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


# -- the models of single files ----------------------------------------------------------------
def cached_models(
    cache, jobs: list[tuple[str, str, str, str | None]], digests: dict[str, str | None]
) -> tuple[dict[int, ParsedFile], Callable[[int, ParsedFile, bytes | None], None]]:
    """The models the cache holds for the files to parse (``jobs``: display path, absolute path,
    kind, text given), by index; and how to keep the model of the ``i``-th when it is parsed (with
    its pickle when a worker made one)."""
    keys: list[str | None] = [None] * len(jobs)
    found: dict[int, ParsedFile] = {}
    for i, (display, _, kind, _) in enumerate(jobs):
        keys[i], hit = cached_model(cache, display, kind, digests.get(display))
        if hit is not None:
            found[i] = hit

    def store(i: int, parsed: ParsedFile, blob: bytes | None) -> None:
        cache_parsed(cache, keys[i], parsed, digests.get(jobs[i][0]), blob)

    return found, store


def cached_model(cache, display: str, kind: str, digest: str | None) -> tuple[str | None, ParsedFile | None]:
    """A file's cache key (None without a cache or a digest) and the model stored under it, if any."""
    if cache is None or digest is None:
        return None, None
    key = cache.key("file", display, kind, digest)
    hit = cache.get_file(key)
    return key, hit if isinstance(hit, ParsedFile) else None


def cache_parsed(cache, key: str | None, parsed: ParsedFile, digest: str | None, blob: bytes | None = None) -> None:
    """Keep a model in the cache; ``blob`` is it pickled already (by a worker)."""
    if cache is None or key is None or not _cacheable(parsed, digest, cache):
        return
    cache.add_file(key, blob if blob is not None else pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL))


def _cacheable(parsed: ParsedFile, digest: str | None, cache) -> bool:
    """Store only a model of the very bytes that were hashed (the file may change in between)."""
    if digest is None or parsed.source is None or (not parsed.text and parsed.issues):
        return False
    return cache.digest(to_bytes(parsed.text)) == digest


def read_digests(candidates: list[Candidate], overrides: dict[str, str]) -> dict[str, str | None]:
    """A content hash of every candidate (None when it cannot be read), for the cache keys."""
    out: dict[str, str | None] = {}
    for c in candidates:
        text = overrides.get(c.display)
        if text is not None:
            out[c.display] = Cache.digest(to_bytes(text))
            continue
        try:
            with open(c.location, "rb") as handle:
                out[c.display] = Cache.digest(handle.read(MAX_FILE_BYTES + 1))
        except OSError:
            out[c.display] = None
    return out
