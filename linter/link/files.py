"""The repository's files by path, parsed on demand, and how a path written in a script or a manifest
resolves to one of them."""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..kinds import MAYBE_SHELL, SHELL, SHELL_KINDS
from ..lazyre import LazyPattern
from ..parse import ParsedFile
from ..paths import folder_and_ancestors, join, under

if TYPE_CHECKING:
    from ..discover import Candidate, ListedFiles


# a path's characters: word characters of any script (a Chinese file name), the bytes of a name that
# is not UTF-8 (kept as U+DC80..U+DCFF), and . + @ % ~ = -; shell syntax ($, quotes, ;) ends it
_NAME = r"[\w.+@%~=\udc80-\udcff-]+"

SCRIPT_PATH = LazyPattern(rf"({_NAME}(?:/{_NAME})*\.(?:sh|bash|py))$")  # what script_path_at_end finds

_NAME_PUNCTUATION = frozenset(".+@%~=-")


def script_path_at_end(text: str) -> str | None:
    """The script or Python file path ``text`` ends with (``SCRIPT_PATH.search``'s group, found by a
    scan from the end, so that a run that never asks does not compile the pattern's Unicode classes)."""
    end = len(text) - 1 if text.endswith("\n") else len(text)  # where '$' matches
    body = text[:end]
    suffix = next((s for s in (".sh", ".bash", ".py") if body.endswith(s)), None)
    if suffix is None or len(body) == len(suffix) or not _name_char(body[-len(suffix) - 1]):
        return None
    start = len(body) - len(suffix) - 1  # a name character: the leftmost so far
    at = start - 1
    while at >= 0:
        char = body[at]
        if _name_char(char):
            start = at
        elif char != "/" or body[at + 1] == "/":
            break  # a '/' joins two names; anything else ends the path
        at -= 1
    return body[start:]


def _name_char(char: str) -> bool:
    return char.isalnum() or char == "_" or char in _NAME_PUNCTUATION or "\udc80" <= char <= "\udcff"


Loader = Callable[[str], "ParsedFile | None"]


class FileIndex:
    """The repository's files by path. Parsed files are there from the start; the others (Python)
    are parsed by ``loader`` the first time a link asks for them.

    References are resolved on absolute locations, so a file is found the same way whatever folder
    the run started in (its display path may be ``../job.yaml`` or ``scripts/train.sh``). A file of
    ``later`` (a run over named files: the Python files of git's listing) joins the files not parsed
    when a reference first resolves to it.
    """

    def __init__(
        self,
        files: list[ParsedFile],
        pending: dict[str, str] | None = None,
        loader: Loader | None = None,
        locations: dict[str, str] | None = None,
        aside: list[ParsedFile] | None = None,
        later: ListedFiles | None = None,
    ):
        self.by_path = {f.path: f for f in files}
        self.later = later
        # files read that no job holds (a YAML config, a hostfile): found only by ``resolve_any``
        self.aside = {f.path: f for f in aside or ()}
        self.pending = dict(pending or {})  # path -> kind, not parsed yet
        self.loader = loader
        self.loaded: list[ParsedFile] = []
        where = locations or {}
        location = {p: where.get(p, p) for p in self.by_path}  # display path -> absolute
        location.update({p: where.get(p, p) for p in self.pending})
        location.update({p: where.get(p, p) for p in self.aside})
        # discovery's locations are normal already: the few others are made so (one pass, no call each)
        odd = [p for p, at in location.items() if "/." in at or "//" in at or not at.startswith("/")]
        for p in odd:
            location[p] = posixpath.normpath(location[p])
        self.location = location
        self.display = {loc: p for p, loc in self.location.items()}
        self._resolved: dict[tuple[str, str, str, str | None], ParsedFile | None] = {}
        self._imports: dict[str, list[str]] = {}  # path -> module-level imports (module_imports)

    @functools.cached_property
    def folders(self) -> set[str]:
        """Every folder holding a file, and their ancestors (only a container path asks)."""
        folders: set[str] = set()
        # each file's folder first (one pass in C), then the ancestors of the few distinct ones
        leaves = {loc.rpartition("/")[0] or ("/" if loc[:1] == "/" else "") for loc in self.display}
        if self.later is not None:
            leaves |= self.later.folders()
        for folder in leaves:
            while folder not in folders:
                folders.add(folder)
                if folder in ("", "/", "."):
                    break
                folder = _parent(folder)
        return folders

    def exists(self, path: str) -> bool:
        return path in self.by_path or path in self.pending

    def may_contain(self, path: str, needles: tuple[bytes, ...]) -> bool:
        """Whether a file not parsed yet can hold one of ``needles`` (a byte scan, cheaper than a
        parse); True for a parsed file, or when there is no way to scan."""
        return self._scan("contains", path, needles)

    def holds(self, path: str, needles: tuple[bytes, ...]) -> bool:
        """Like ``may_contain``, in a run over named files too: for what a linked file's own meaning
        depends on (a setting its imports make), which must not change with the files named."""
        return self._scan("holds", path, needles)

    def module_imports(self, path: str) -> list[str]:
        """The modules a Python file imports at module level (relative ones with their dots; see
        ``module_level_imports``), read from its statements alone."""
        known = self._imports.get(path)
        if known is None:
            parsed = self.by_path.get(path)
            if parsed is not None and parsed.source is not None:
                from ..sources.python_parse import module_level_imports

                known = module_level_imports(parsed.source.text.encode("utf-8", "surrogateescape"))
            elif path in self.pending and hasattr(self.loader, "imports_of"):
                known = self.loader.imports_of(path)  # type: ignore[union-attr]
            else:
                known = []
            self._imports[path] = known
        return known

    def _scan(self, how: str, path: str, needles: tuple[bytes, ...]) -> bool:
        scan = getattr(self.loader, how, None)
        if path not in self.pending or scan is None:
            return True
        return scan(path, needles)

    def display_at(self, location: str) -> str | None:
        """The display path of the file at an absolute, normal location; None when the run has none."""
        path = self.display.get(location)
        if path is None and self.later is not None:
            found = self.later.at(location)
            if found is not None and found.display not in self.location:
                self._join(found)
                path = found.display
        return path

    def _join(self, candidate: Candidate) -> None:
        path = candidate.display
        self.pending[path] = candidate.kind
        self.location[path] = candidate.location
        self.display[candidate.location] = path

    def unread(self) -> list[tuple[str, str]]:
        """Every file not parsed (display path, kind), ``later``'s too: a report of every file asks."""
        out = list(self.pending.items())
        if self.later is not None:
            out += [(c.display, c.kind) for c in self.later.unmade(self.location)]
        return out

    def kinds(self) -> dict[str, str]:
        """Every file's kind, parsed or not (of ``later``, those a reference reached)."""
        out = {p: f.kind for p, f in self.by_path.items()}
        out.update(self.pending)
        return out

    def open_kinds(self) -> dict[str, str]:
        """The kinds of the files this run may look into: a run over named files looks only where
        links reach, so the files it has not parsed stay closed."""
        if getattr(self.loader, "named", False):
            return {p: f.kind for p, f in self.by_path.items()}
        return self.kinds()

    def get(self, path: str, kind: str | None = None) -> ParsedFile | None:
        found = self.by_path.get(path)
        if found is None and path in self.pending and self.loader is not None:
            pending = self.pending[path]
            if kind is not None and pending != kind and not (pending == MAYBE_SHELL and kind == SHELL):
                return None
            del self.pending[path]
            found = self.loader(path)  # None: not readable after all (a FIFO, a link out of the tree)
            if found is not None:
                self.by_path[path] = found
                self.loaded.append(found)
        if found is None or (kind is not None and found.kind != kind):
            return None
        return found

    def _at(self, location: str, kind: str | None) -> ParsedFile | None:
        path = self.display_at(location)
        if path is None:
            return None
        found = self.get(path, kind)
        return found if found is not None or kind is not None else self.aside.get(path)

    def folder_of(self, path: str) -> str:
        """The absolute folder of a display path."""
        return posixpath.dirname(self.location.get(path, path))

    def map_folder(self, written: str, near: str) -> str | None:
        """A folder as a container names it (``/job/code/scripts``) as a repository folder: the
        longest tail of it below the referring file's folder or one of its ancestors."""
        parts = [p for p in posixpath.normpath(written).split("/") if p not in ("", ".", "..")]
        for k in range(len(parts)):
            tail = "/".join(parts[k:])
            for folder in folder_and_ancestors(self.folder_of(near)):
                candidate = under(folder, tail)
                if candidate in self.folders:
                    return candidate
        return None

    def resolve(self, reference: str, near: str, kind: str, cwd: str | None = None) -> ParsedFile | None:
        """Match a path as written in a script or manifest to a repository file.

        Tried in order: relative to the launch's working directory when known (``cwd``, an absolute
        repository folder), then to the referring file's folder; then the longest tail of the path
        under that folder or one of its ancestors (an absolute container path such as
        ``/job/code/train.py`` maps onto the repository this way). A name is never looked up
        elsewhere in the repository: a file of the same name in another project is not this one.
        """
        key = (reference, self.folder_of(near), kind, cwd)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(reference, near, kind, cwd)
        return self._resolved[key]

    def resolve_any(self, reference: str, near: str, cwd: str | None = None) -> ParsedFile | None:
        """A file of any kind a launch names by its relative path (a hostfile, a config file), from
        the launch's working folder, else the script's own folder or one above it (a script is
        often run from the repository's root: ``--config_file examples/fsdp.json``). Unlike a
        script, a data file is never matched by the tail of its path: ``/etc/hostfile`` or another
        checkout's ``config/runtime_env.yaml`` is not the repository's file of the same name."""
        path = reference.strip("\"'")
        if not path or "$" in path or "`" in path or path.startswith("/"):
            return None
        key = (reference, self.folder_of(near), "", cwd)
        if key not in self._resolved:
            ref = posixpath.normpath(path)
            bases = [cwd] if cwd is not None else folder_and_ancestors(self.folder_of(near))
            self._resolved[key] = next((f for f in (self._at(join(b, ref), None) for b in bases) if f), None)
        return self._resolved[key]

    def _resolve(self, reference: str, near: str, kind: str, cwd: str | None) -> ParsedFile | None:
        path = reference.strip("\"'")
        if " " in path and path.endswith((".sh", ".bash", ".py")):
            # one quoted word naming a file whose name holds a space ('scripts/train start.sh')
            whole = self._lookup(posixpath.normpath(path), near, kind, cwd)
            if whole is not None:
                return whole
        found = script_path_at_end(path)
        if found is None:
            return None
        return self._lookup(posixpath.normpath(found), near, kind, cwd)

    def _lookup(self, ref: str, near: str, kind: str | None, cwd: str | None) -> ParsedFile | None:
        near_dir = self.folder_of(near)
        if not ref.startswith("/"):
            for base in ([cwd] if cwd is not None else []) + [near_dir]:
                direct = self._at(join(base, ref), kind)
                if direct is not None:
                    return direct
        parts = [p for p in ref.split("/") if p not in ("", ".", "..")]
        ancestors = folder_and_ancestors(near_dir)
        for k in range(len(parts)):
            tail = "/".join(parts[k:])
            for folder in ancestors:
                hit = self._at(under(folder, tail), kind)
                if hit is not None:
                    return hit
        return None


class Sharing:
    """Which shell scripts, other than a job's own, name a file: those in the file's folder and below it
    and in the folder above (where a test or CI script that runs an entry lives), found by a byte scan
    of the scripts not read (CI and test folders are not read for recovery advice). Asked only by a fix
    that would add an unconditional import to the file; pickled with the answers given so far, and a
    question it cannot answer any more counts as shared."""

    def __init__(self, index: FileIndex | None = None) -> None:
        self.index = index
        self.answers: dict[tuple[str, frozenset[str]], list[str]] = {}
        self._folders: dict[str, list[str]] | None = None

    def others(self, path: str, own: frozenset[str]) -> list[str] | None:
        """Scripts naming ``path`` that are not in ``own``; None when this cannot be told."""
        key = (path, own)
        if key in self.answers:
            return self.answers[key]
        if self.index is None:
            return None
        index = self.index
        name = posixpath.basename(path)
        needle = (name.encode("utf-8", "surrogateescape"),)
        folder = index.folder_of(path)
        found = []
        for script in self._near(folder):
            if script in own or script == path:
                continue
            parsed = index.by_path.get(script)
            text_has = name in parsed.text if parsed is not None else index.holds(script, needle)
            if text_has:
                found.append(script)
        self.answers[key] = found
        return found

    def _near(self, folder: str) -> list[str]:
        if self._folders is None:
            assert self.index is not None
            self._folders = {}
            for display, kind in self.index.kinds().items():
                if kind in SHELL_KINDS:
                    self._folders.setdefault(self.index.folder_of(display), []).append(display)
        out: list[str] = list(self._folders.get(posixpath.dirname(folder), ()))
        for where, scripts in self._folders.items():
            if where == folder or where.startswith(folder + "/"):
                out.extend(scripts)
        return out

    def __reduce__(self):
        return (_restore_sharing, (self.answers,))


def _restore_sharing(answers: dict) -> Sharing:
    found = Sharing()
    found.answers = answers
    return found


def _parent(path: str) -> str:
    """``posixpath.dirname`` for the normal paths of the index (no trailing or doubled slash)."""
    head = path.rpartition("/")[0]
    return head if head or not path.startswith("/") else "/"
