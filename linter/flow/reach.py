"""Which files a run parses up front, and which only when a link asks for them.

A run over folders parses every manifest, script and version declaration up front. A run over
named files (pre-commit, an editor) parses those files and the manifests and scripts that can reach
them: the launchers whose text names them (through an index of the launchers' words when many files
are named), the launches below a named version file, the manifests the configuration maps to them.
The flow asks ``split_candidates``; nothing here parses a file but a named README, read for its
version table."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import JobSpec
from ..discover import Candidate
from ..kinds import BY_SUFFIX, LAUNCHING_KINDS, LAZY_KINDS, MAYBE_SHELL, PIN_KINDS, README, RUNNABLE_KINDS, SHELL_KINDS
from ..lazyre import LazyPattern
from ..link.versions import DECLARATION_FOLDERS
from ..parse import read_and_parse, shell_shebang
from ..roles import ci_path, vendored
from .request import LintRequest

if TYPE_CHECKING:
    from ..config import Config


def job_specs(config: Config, cwd: Path) -> list[JobSpec]:
    """The ``[[jobs]]`` of the configuration, their paths as the run displays them."""
    root = config.root or cwd
    out = []
    for spec in config.jobs:

        def rel(p: str) -> str:
            path = (root / p.split("#", 1)[0]).resolve()
            try:
                shown = path.relative_to(cwd.resolve()).as_posix()
            except ValueError:
                shown = path.as_posix()
            return shown + ("#" + p.split("#", 1)[1] if "#" in p else "")

        out.append(JobSpec(rel(spec.manifest), [rel(s) for s in spec.scripts], rel(spec.entry) if spec.entry else None))
    return out


def split_candidates(candidates: list[Candidate], request: LintRequest) -> tuple[list[Candidate], list[Candidate]]:
    """The files parsed up front, and the files parsed only when a link reaches them.

    A run over folders parses every manifest, script and version declaration up front, and Python
    files when a launch or a manifest reaches them. A run over named files (pre-commit, an editor)
    parses the named files and the manifests and scripts that can reach them (those whose text
    names them, transitively); everything else only when a link asks for it."""
    named = request.named
    if not named and request.folders:
        # folders inside a larger repository: their files, and what can reach them from outside
        inside = request.report_only or set()
        outside = [c for c in candidates if c.display not in inside]
        reaching = _reaching_folders(outside, request.folders)
        wanted = inside | reaching
        return _split(candidates, lambda c: c.display in wanted and _up_front(c))
    if not named:
        return _split(candidates, _up_front)
    declaring = {c.display for c in candidates if c.display in named and _declares_now(c, request)}
    cache = request.cache if request.speed else None
    wanted = named | _reaching(candidates, named, declaring, cache) | _configured_manifests(request, named)
    # a README is read when a job asks for the versions of its folder, named or not (read up front it
    # would be no file of the index, which holds only what a run lints)
    wanted -= {c.display for c in candidates if c.kind == README}
    # two passes without a call per file: most of a large repository's listing goes to the second
    return [c for c in candidates if c.display in wanted], [c for c in candidates if c.display not in wanted]


def _configured_manifests(request: LintRequest, named: set[str]) -> set[str]:
    """The manifests the configuration links to a named file (``[[jobs]]``: a manifest whose command
    names no file of the repository, and the scripts and entry it runs)."""
    out: set[str] = set()
    for spec in job_specs(request.config, request.cwd):
        linked = {*spec.scripts, *([spec.entry] if spec.entry else [])}
        if linked & named:
            out.add(spec.manifest.split("#", 1)[0])
    return out


def _split(candidates: list[Candidate], eager: Callable[[Candidate], bool]) -> tuple[list[Candidate], list[Candidate]]:
    """The candidates parsed up front, and the rest, in one pass."""
    first: list[Candidate] = []
    rest: list[Candidate] = []
    for c in candidates:
        (first if eager(c) else rest).append(c)
    return first, rest


def _up_front(candidate: Candidate) -> bool:
    # Python files and READMEs are read when a job reaches them (an entry, versions of its folder)
    return candidate.kind not in LAZY_KINDS and not _aside(candidate)


def _reaching_folders(outside: list[Candidate], folders: list[Path]) -> set[str]:
    """Manifests and scripts outside the given folders that can run something inside them: a
    reference from outside has to name the folder (see ``_reaching``)."""
    names = {os.fsencode(f.name) for f in folders}
    found: set[str] = set()
    for c in outside:
        if c.kind not in LAUNCHING_KINDS:
            continue
        data = launcher_text(c)  # read once, whatever the number of folders
        if any(name in data for name in names):
            found.add(c.display)
    return found


def _aside(candidate: Candidate) -> bool:
    """A script of vendored third-party code or of a test suite: no job of its own, so it is parsed
    only when a training launch reaches it (ESPnet recipes alone are thousands of scripts)."""
    return candidate.kind in SHELL_KINDS and (
        vendored(candidate.display) is not None or ci_path(candidate.display) is not None
    )


# what ends a file name in a script or manifest: blanks, path separators, quotes and shell or YAML syntax
# (compiled on first use: a folder run never looks for names)
NOT_IN_NAMES = LazyPattern(rb"[\s/'\"`;&|()<>=$,\[\]{}:*?!#\\]+")
# how the names of the files a launcher can run by name end (a file without a suffix is searched for)
RUNNABLE_SUFFIXES = tuple(b"." + suffix.encode() for suffix, kind in BY_SUFFIX.items() if kind in RUNNABLE_KINDS)
NAME_MAX = 255  # bytes in a file name, at most (Linux, macOS)
BLANK = b" "  # what every byte that ends a name becomes, to find where a word starts
REACH_DEPTH = 4  # manifest -> script -> sourced script -> entry: a longer chain is not linked either


def _declares_now(candidate: Candidate, request: LintRequest) -> bool:
    """Whether a named file is a version declaration its jobs read. A README counts only with a
    version table in it: a model zoo's READMEs change with every documentation edit, and the root
    README of a repository would bring in every launch of a model zoo. One whose table this very
    change deleted is not followed (the folder run sees it). The README read here is the one the
    run uses."""
    if candidate.kind not in PIN_KINDS:
        return False
    if candidate.kind != README:
        return True
    text = request.overrides.get(candidate.display)
    parsed = read_and_parse(candidate.display, candidate.location, candidate.kind, text)
    if text is None:
        request.earlier.setdefault(candidate.display, parsed)
    return bool(getattr(parsed.model, "pins", None))


def _reaching(
    candidates: list[Candidate], named: set[str], declaring: set[str], cache: object | None = None
) -> set[str]:
    """Manifests and scripts that can run one of the named files, and those that can run them.

    A reference resolves against the referring file's folder and its ancestors (``jobs.FileIndex``),
    so a file in folder F can reach T only by naming T's path relative to the deepest folder the
    two share: that text is searched for in each manifest and script. A named version file in
    ``declaring`` reaches every manifest and script below the folder it declares for (its own, or
    for ``docker/Dockerfile`` the folder holding ``docker/``). With a ``cache``, the names each
    launcher writes are kept there for the next run."""
    launchers = [c for c in candidates if c.kind in LAUNCHING_KINDS and c.display not in named]
    found: set[str] = set()
    pin_folders = [_declared_for(c.location) for c in candidates if c.display in declaring]
    if pin_folders:
        # as a folder run has it: a test suite's or vendored script is read only when a job reaches it
        found.update(c.display for c in launchers if c.location.startswith(tuple(pin_folders)) and not _aside(c))
    # what a launcher can run: a named script or entry, and the launchers found so far (a README, a
    # version file or a manifest is run by nothing; its name in a script's text is an echo or a path)
    targets = [
        c.location for c in candidates if (c.display in named and c.kind in RUNNABLE_KINDS) or c.display in found
    ]
    if not targets:
        return found  # a manifest or a version file alone: nothing to look for in other files
    # the named launchers' kept names stay for a later run that looks in them
    also = [c.location for c in candidates if c.kind in LAUNCHING_KINDS and c.display in named] if cache else []
    words = _WordIndex(launchers, cache, also)
    for _ in range(REACH_DEPTH):
        # the files whose text has a target's name, then the precise needles of the targets of that
        # name only (a model zoo has hundreds of env_npu.sh)
        by_name: dict[bytes, list[tuple[bytes, ...]]] = {}
        for target in targets:
            parts = _parts(target)
            by_name.setdefault(parts[-1], []).append(parts)
        more: list[str] = []
        for i, present in words.files_naming(by_name):
            c = launchers[i]
            if c.display in found:
                continue
            data = words.text(i)
            folder = _parts(c.location)[:-1]
            if any(_names(data, folder, target) for name in present for target in by_name[name]):
                found.add(c.display)
                more.append(c.location)
        if not more:
            break
        targets = more
    return found


class _WordIndex:
    """Which launchers' texts hold a name as a word of their own (split where no file name goes on:
    ``${dir}/train.sh;`` has ``train.sh``, ``my_train.sh`` has not). With a cache, the names that end
    like a script or a Python file are looked up among those each launcher writes, kept from the last
    run (``speed/names.py``: a stat of each launcher instead of a read). Otherwise a few names are
    searched for in each text; many (a commit of hundreds of files, or the launchers found in an
    earlier round) are looked up in an index of every text's words, made once (a search of every
    text per name grows with names times texts; the index with the texts alone). A name with such a
    character in it is searched for in the texts themselves."""

    FEW = 8  # names up to which a search of the texts beats making the index

    def __init__(
        self, launchers: list[Candidate], cache: object | None = None, also_keep: Collection[str] = ()
    ) -> None:
        self.launchers = launchers
        self.cache = cache
        self.also_keep = also_keep
        self.by_word: dict[bytes, list[int]] | None = None
        self.by_runnable: dict[bytes, list[int]] | None = None
        self._texts: dict[int, bytes] = {}

    def files_naming(self, names: Collection[bytes]) -> list[tuple[int, list[bytes]]]:
        """Each file (by index, in order) whose text has one of ``names``, with those it has."""
        plain = {name for name in names if not NOT_IN_NAMES.search(name)}
        kept = {name for name in plain if self.cache is not None and name.endswith(RUNNABLE_SUFFIXES)}
        if kept and self.by_runnable is None:
            self.by_runnable = self._kept_index()
        if len(plain) - len(kept) > self.FEW and self.by_word is None:
            self.by_word = self._index()
        present: dict[int, list[bytes]] = {}
        for name in names:
            if name not in plain:
                holders = [i for i in range(len(self.launchers)) if name in self.text(i)]
            elif name in kept:
                holders = self.by_runnable.get(name, [])  # type: ignore[union-attr]
            elif self.by_word is not None:
                holders = self.by_word.get(name, [])
            else:
                holders = [i for i in range(len(self.launchers)) if _has_word(self.text(i), name)]
            for i in holders:
                present.setdefault(i, []).append(name)
        return sorted(present.items())

    def _index(self) -> dict[bytes, list[int]]:
        by_word: dict[bytes, list[int]] = {}
        for i, c in enumerate(self.launchers):
            # read again rather than kept: the texts of a large repository's launchers are a few
            # hundred MB, and only the few that name a target are read once more
            for word in set(NOT_IN_NAMES.split(launcher_text(c))):
                by_word.setdefault(word, []).append(i)
        self._texts.clear()
        return by_word

    def _kept_index(self) -> dict[bytes, list[int]]:
        """The launchers writing each name that ends like a script or a Python file, from the names
        each writes as the cache keeps them."""
        from ..speed.names import kept_names  # the cache's code: loaded by a run with a cache

        locations = [c.location for c in self.launchers]
        by_name: dict[bytes, list[int]] = {}
        kept = kept_names(self.cache, locations, self._runnable_names, self.also_keep)  # type: ignore[arg-type]
        for i, names in enumerate(kept):
            for name in names:
                by_name.setdefault(name, []).append(i)
        return by_name

    def _runnable_names(self, i: int) -> tuple[bytes, ...]:
        # not kept: of the texts read to keep their names, only the few naming a target are read again
        return runnable_names(launcher_text(self.launchers[i]))

    def text(self, i: int) -> bytes:
        data = self._texts.get(i)
        if data is None:
            data = self._texts[i] = launcher_text(self.launchers[i])
        return data


def runnable_names(data: bytes) -> tuple[bytes, ...]:
    """The words of a launcher's text (as ``NOT_IN_NAMES`` splits it) that end like a script or a
    Python file, each once: where each such ending occurs, the word it ends. A word longer than a
    file name can be (``NAME_MAX``) names no file and is left out."""
    marked = data.translate(_ends_as_blanks())  # a word's start is then the blank before it
    found: set[bytes] = set()
    for suffix in RUNNABLE_SUFFIXES:
        at = marked.find(suffix)
        while at != -1:
            end = at + len(suffix)
            if marked[end : end + 1] in (BLANK, b""):
                start = marked.rfind(BLANK, max(0, end - NAME_MAX - 1), at) + 1
                if start or end <= NAME_MAX:  # else the word goes on past what a name can hold
                    found.add(data[start:end])
            at = marked.find(suffix, end)
    return tuple(sorted(found))


@functools.cache
def _ends_as_blanks() -> bytes:
    """A ``bytes.translate`` table that turns every byte ending a name into a blank."""
    ends = _name_ends()
    return bytes(BLANK[0] if b in ends else b for b in range(256))


def _has_word(data: bytes, name: bytes) -> bool:
    """Whether ``name`` (which holds no character that ends a name) is a word of its own in ``data``,
    as ``NOT_IN_NAMES`` splits it: each place it occurs is looked at, not the whole text split (a
    launcher of a megabyte may name a file once)."""
    ends = _name_ends()
    at = data.find(name)
    while at != -1:
        after = at + len(name)
        if (at == 0 or data[at - 1] in ends) and (after == len(data) or data[after] in ends):
            return True
        at = data.find(name, at + 1)
    return False


@functools.cache
def _name_ends() -> frozenset[int]:
    """The bytes that end a file name, as ``NOT_IN_NAMES`` has them."""
    return frozenset(b for b in range(256) if NOT_IN_NAMES.match(bytes([b])))


def _declared_for(pin_location: str) -> str:
    """The folder whose files a version file declares for, with a trailing separator: its own, or for
    one in a declaration folder (``docker/Dockerfile``) the folder that holds it, as the linker reads it."""
    folder = os.path.dirname(pin_location)
    parent, name = os.path.split(folder)
    return (parent if name in DECLARATION_FOLDERS else folder) + os.sep


def _parts(location: str) -> tuple[bytes, ...]:
    return tuple(os.fsencode(location).split(os.fsencode(os.sep)))


def _names(data: bytes, folder: tuple[bytes, ...], target: tuple[bytes, ...]) -> bool:
    """Whether a file's text (the file in ``folder``) can run ``target``: it writes the target's
    path below the deepest folder the two share, or (a container that changes into the folder first:
    ``cd /job/code/scripts; bash train_start.sh``) each folder of that path and the file's name, as
    words of their own. Paths as their parts, compared part by part (``os.path.relpath`` per pair
    was most of a file-mode run naming a few hundred files of a model zoo)."""
    shared = 0
    limit = min(len(folder), len(target) - 1)
    while shared < limit and folder[shared] == target[shared]:
        shared += 1
    parts = target[shared:]
    if b"/".join(parts) in data:
        return True
    if len(parts) < 2 or not all(p in data for p in parts):
        return False  # a plain search first: most targets with a shared name are another model's
    return all(re.search(rb"(?<![\w.-])" + re.escape(p) + rb"(?![\w-])", data) for p in parts)


def launcher_text(candidate: Candidate) -> bytes:
    """The text a launcher is searched in for the names of other files: its first MiB; nothing for a
    file without a suffix whose first line names no shell (a data file, as the run reads it: it
    launches nothing, and a model zoo has thousands of them, some of a megabyte)."""
    return head(candidate.location, shell_only=candidate.kind == MAYBE_SHELL)


def head(path: Path | str, shell_only: bool = False) -> bytes:
    """The first MiB of a file (as much as a scan for names reads); empty when it cannot be read, or
    with ``shell_only`` when its first line names no shell."""
    # os-level calls: a buffered file object per file costs more than the read of a small script
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the scan
    except OSError:
        return b""
    try:
        data = os.read(fd, FIRST_READ)  # most scripts fit: no buffer of the largest size per file
        if shell_only:
            end = data.find(b"\n")
            if not shell_shebang((data if end < 0 else data[:end]).decode("latin-1")):
                return b""
        if len(data) == FIRST_READ:
            data += os.read(fd, MAX_SCAN_BYTES - FIRST_READ)
        return data
    except OSError:
        return b""
    finally:
        os.close(fd)


MAX_SCAN_BYTES = 1 << 20
FIRST_READ = 1 << 16
