"""A content-hash cache of parsed files and of whole-run results.

Two kinds of entries, both keyed by a hash that covers the tool version, the tool's own files,
the Python version and the effective configuration (config values and the selected rules):

- ``runs/``: the findings of a whole run, keyed by every linted file's path, kind and content hash.
  A re-run on an unchanged repository reads and hashes the files and returns the stored findings.
- ``files/*.pack``: parsed models, one per file, keyed by its display path, kind and content hash.
  A run that changed a few files parses only those and loads the others' models, then links every
  job and runs every rule afresh, so cross-file findings always see the current files. Models are
  packed, one pack per run that parsed something (creating a file costs more than parsing one).
- ``names/``: the file names each manifest and script of the repository writes (``names.py``),
  for the next run over named files, each trusted while its file's stat is unchanged.

Every file is written atomically (a temporary file renamed over it). A missing, unreadable, corrupt
or foreign entry (another tool version, a stale format, a bad signature) is ignored and recomputed.
Entries are pickles, so each is signed with a per-user secret kept outside the repository: a cache
folder that came with a checkout is never unpickled.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac  # compare_digest
import json
import os
import pickle
import sys
import time
from pathlib import Path

from .. import __version__
from ..atomic import replace_file

CACHE_DIR_NAME = ".recovery-lint_cache"
FORMAT = 1
MAGIC = b"RLC1"
PACK_MAGIC = b"RLP1"
MAX_PACKS = 8  # past this a run writes every model it used into one pack and drops the others
MAX_RUNS = 8  # whole-run entries kept (the most recent ones): the cache does not grow without bound
MAX_NAMES = 2  # launchers' names entries kept: one per configuration in use
RUNS = "runs"
NAMES = "names"
SIGNATURE_SIZE = 32


def _secret() -> bytes | None:
    """A random per-user key in the user's cache directory; None when it cannot be made."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "recovery-lint" / "cache-key"
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, os.urandom(32), 0o600)
        return path.read_bytes()  # whoever won a race, everyone uses the same key
    except OSError:
        return None


def code_fingerprint() -> str:
    """Size and modification time of every file of the tool itself, so that a changed rule, parser
    or data file (an upgrade, or a working copy being edited) never meets entries of the old code."""
    import importlib.util

    folders = [Path(__file__).parents[1]]  # the package, whose subfolders are globbed below
    for package in ("recovery_lint.rules", "recovery_lint.schemas"):
        spec = importlib.util.find_spec(package)
        folders += [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    parts = []
    for folder in folders:
        for path in sorted([*folder.glob("*.py"), *folder.glob("*/*.py"), *folder.glob("*.json")]):
            try:
                stat = path.stat()
            except OSError:
                continue
            parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


class Cache:
    header_size = len(MAGIC) + SIGNATURE_SIZE  # what precedes the pickle of (key, value) in an entry

    def __init__(self, directory: Path, salt: str, secret: bytes) -> None:
        self.directory = directory
        self.salt = salt
        self.secret = secret
        self._ready = False
        self._packs: list[tuple[Path, memoryview, dict[str, tuple[int, int, bytes]]]] | None = None
        self._used: dict[str, bytes] = {}  # key -> pickled model, of models loaded from packs
        self._new: dict[str, bytes] = {}  # key -> pickled model, parsed in this run

    @classmethod
    def open(cls, directory: Path, config_fingerprint: str, rule_codes: list[str]) -> Cache | None:
        """A cache in ``directory`` for runs with this configuration; None when no key can be kept."""
        secret = _secret()
        if secret is None:
            return None
        salt = json.dumps(
            [FORMAT, __version__, sys.version, code_fingerprint(), config_fingerprint, sorted(rule_codes)]
        )
        return cls(directory, salt, secret)

    # -- keys -----------------------------------------------------------------------------------
    @staticmethod
    def digest(data: bytes) -> str:
        return hashlib.blake2b(data, digest_size=20).hexdigest()

    def key(self, *parts: object) -> str:
        text = json.dumps([self.salt, *parts], separators=(",", ":"), default=str)
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()

    def _sign(self, payload: bytes | memoryview) -> bytes:
        return hashlib.blake2b(payload, key=self.secret[:64], digest_size=SIGNATURE_SIZE).digest()

    # -- whole entries: a run's findings, the launchers' names -----------------------------------
    def get_run(self, key: str) -> object | None:
        return self.get_entry(RUNS, key)

    def put_run(self, key: str, value: object) -> None:
        self.put_entry(RUNS, key, value)

    def get_entry(self, folder: str, key: str) -> object | None:
        """The value kept under ``key`` in ``folder`` (``RUNS`` or ``NAMES``), if any."""
        try:
            data = (self.directory / folder / key).read_bytes()
        except OSError:
            return None
        head = self.header_size
        if len(data) < head or not data.startswith(MAGIC):
            return None
        payload = memoryview(data)[head:]
        if not hmac.compare_digest(data[len(MAGIC) : head], self._sign(payload)):
            return None
        try:
            stored_key, value = pickle.loads(payload)
        except Exception:  # a truncated or otherwise broken entry is only a miss
            return None
        return value if stored_key == key else None

    def put_entry(self, folder: str, key: str, value: object) -> None:
        """Keep ``value`` under ``key`` in ``folder``, and only the most recent entries there."""
        payload = pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
        if self._write(self.directory / folder / key, [MAGIC, self._sign(payload), payload]):
            self._prune(self.directory / folder, MAX_RUNS if folder == RUNS else MAX_NAMES)

    @staticmethod
    def _prune(folder: Path, keep: int) -> None:
        """Remove all but the ``keep`` most recently written entries of a folder."""
        try:
            entries = sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        except OSError:
            return
        for path in entries[keep:]:
            with contextlib.suppress(OSError):
                path.unlink()

    # -- parsed models --------------------------------------------------------------------------
    def get_file(self, key: str) -> object | None:
        if self._packs is None:
            self._packs = self._open_packs()
        for _path, data, index in self._packs:
            found = index.get(key)
            if found is None:
                continue
            offset, length, signature = found
            blob = data[offset : offset + length]
            if not hmac.compare_digest(signature, self._sign(blob)):
                continue
            try:
                value = pickle.loads(blob)
            except Exception:
                continue
            self._used[key] = bytes(blob)
            return value
        return None

    def add_file(self, key: str, blob: bytes) -> None:
        """Remember a model pickled in this run; written by ``flush``."""
        self._new[key] = blob

    def flush(self) -> None:
        """Write this run's new models as one pack (with every model it used, when there are many packs)."""
        if not self._new:
            return
        packs = self._packs if self._packs is not None else self._open_packs()
        entries = dict(self._new)
        compact = len(packs) + 1 > MAX_PACKS
        if compact:
            entries = {**self._used, **entries}
        index: dict[str, tuple[int, int, bytes]] = {}
        offset = 0
        blobs = []
        for key, blob in entries.items():
            index[key] = (offset, len(blob), self._sign(blob))
            blobs.append(blob)
            offset += len(blob)
        head = pickle.dumps(index, protocol=pickle.HIGHEST_PROTOCOL)
        name = f"{time.time_ns():020d}-{os.getpid()}.pack"
        parts = [PACK_MAGIC, self._sign(head), len(head).to_bytes(8, "little"), head, *blobs]
        if self._write(self.directory / "files" / name, parts) and compact:
            for path, _data, _index in packs:
                with contextlib.suppress(OSError):
                    path.unlink()
        self._new = {}

    def _open_packs(self) -> list[tuple[Path, memoryview, dict[str, tuple[int, int, bytes]]]]:
        """Every readable pack, newest first, with its (verified) index."""
        import mmap

        out = []
        try:
            paths = sorted((self.directory / "files").glob("*.pack"), reverse=True)
        except OSError:
            return out
        for path in paths:
            try:
                with open(path, "rb") as handle:
                    data = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
            except (OSError, ValueError):
                continue
            start = len(PACK_MAGIC) + SIGNATURE_SIZE + 8
            if len(data) < start or bytes(data[: len(PACK_MAGIC)]) != PACK_MAGIC:
                continue
            size = int.from_bytes(data[start - 8 : start], "little")
            head = data[start : start + size]
            if not hmac.compare_digest(bytes(data[len(PACK_MAGIC) : start - 8]), self._sign(head)):
                continue
            try:
                index = pickle.loads(head)
            except Exception:
                continue
            base = start + size
            index = {k: (base + o, n, sig) for k, (o, n, sig) in index.items() if base + o + n <= len(data)}
            out.append((path, data, index))
        return out

    # -- writing --------------------------------------------------------------------------------
    def _write(self, path: Path, parts: list[bytes]) -> bool:
        """Write a file atomically; a cache that cannot be written is silently skipped."""
        try:
            if not self._ready:
                self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, b"".join(parts), 0o600, durable=False)
        except OSError:
            return False
        return True

    def _prepare(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# written by recovery-lint: the cache is never committed\n*\n", encoding="utf-8")
        self._ready = True
