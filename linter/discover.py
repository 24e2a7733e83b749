"""Find the files to lint and say what kind each one is."""

from __future__ import annotations

import functools
import os
import re
import stat
import sys
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .kinds import PYTHON, classify

if TYPE_CHECKING:
    import subprocess
    from typing import Protocol

DEFAULT_EXCLUDES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "__pycache__",
        "node_modules",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".hypothesis",
        ".recovery-lint_cache",
        ".eggs",
        "__pypackages__",
        "site-packages",
    }
)


class Candidate:
    """A file to lint: where it is, how it is shown, and what kind it is (from its name). The
    ``Path`` is made on first use: a large repository has tens of thousands of candidates and a
    run reads few of them."""

    __slots__ = ("_path", "display", "kind", "location", "unchecked_in")

    def __init__(self, path: Path | str, display: str, kind: str, unchecked_in: str | None = None) -> None:
        self.location = os.fspath(path)  # absolute
        self.display = display  # relative to the working directory, '/' separated
        self.kind = kind  # manifest | shell | python | requirements | pyproject | dockerfile | readme | maybe-shell
        self._path = path if isinstance(path, Path) else None
        # the walked root, while it is not yet known to be a regular file or a link inside that root
        # (see ``readable``); None once checked
        self.unchecked_in = unchecked_in

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = Path(self.location)
        return self._path

    def _key(self) -> tuple[str, str, str]:
        return (self.location, self.display, self.kind)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Candidate) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Candidate({self.location!r}, {self.display!r}, {self.kind!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Candidate, (self.location, self.display, self.kind, self.unchecked_in))


def readable(candidate: Candidate) -> bool:
    """Whether a candidate may be read: a regular file, or a link to one inside the walked tree (a
    FIFO would block the read, a link out of the tree would read someone else's file). A listing
    leaves this to the first read for the files most runs never open (Python files nothing reaches)."""
    root = candidate.unchecked_in
    if root is None:
        return True
    if _usable(candidate.location, root, {}) is None:
        return False
    candidate.unchecked_in = None
    return True


def display_path(path: Path, cwd: Path) -> str:
    """``path`` as shown to the user: relative to the working directory, with ``../`` when the two
    share a folder below the filesystem root (a run from a subfolder of the repository), else absolute."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        pass
    common = os.path.commonpath([str(path), str(cwd)])
    if common in ("/", "") or os.path.dirname(common) == common:
        return path.as_posix()
    return Path(os.path.relpath(path, cwd)).as_posix()


# --------------------------------------------------------------------------------------------
# Ignore files (.gitignore, .git/info/exclude) read the way git reads them, for trees where git
# cannot answer: each file is compiled once, and a path is matched only against the files of its
# own ancestors (git's precedence: the deepest file first, the last matching line of a file wins).
#
# A matcher of our own, because pathspec (what yamllint uses) does not do the job: its GitIgnoreSpec
# disagrees with `git check-ignore` on 6 of the 59 cases of tests/test_discover.py (POSIX classes
# such as [[:digit:]], a reversed range [b-a] and a trailing backslash, which raise, a folder
# re-included under a 'build/**' line, 'foo/**/'), and its default backend backtracks for minutes on
# a line such as '*a*a*a*a*a*a*a*a*a*a*b'. This one agrees with git on every case and on random
# trees, in linear time.


@dataclass(frozen=True)
class IgnorePattern:
    """One line of an ignore file, parsed as git parses it."""

    text: str  # the pattern itself: no '!', no trailing '/', no trailing spaces
    negated: bool
    dir_only: bool  # a trailing '/': matches folders only
    basename: bool  # no '/' in it: matches the name at any depth below the file's folder


def parse_ignore_lines(text: str) -> list[IgnorePattern]:
    patterns = []
    for line in text.removeprefix("\ufeff").split("\n"):
        if not line or line.startswith("#"):
            continue
        line = _trim_trailing_spaces(line.removesuffix("\r"))
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        dir_only = line.endswith("/")
        if dir_only:
            line = line[:-1]
        if line:
            patterns.append(IgnorePattern(line, negated, dir_only, "/" not in line))
    return patterns


def _trim_trailing_spaces(line: str) -> str:
    """Drop trailing spaces unless escaped with a backslash (git's trim_trailing_spaces)."""
    last_space = None
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == " ":
            if last_space is None:
                last_space = i
        elif ch == "\\":
            i += 1
            if i == len(line):
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
}


def wildmatch_regex(pattern: str, pathname: bool, group: str = "g") -> str | None:
    """The regex of git's wildmatch() for one pattern, or None for a pattern that never matches
    (git aborts on an unclosed bracket or a trailing backslash). With ``pathname`` (WM_PATHNAME),
    wildcards stop at '/', and ``**`` between slashes crosses them. ``group`` prefixes the names of
    the regex's own groups."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 == n:
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif ch == "?":
            out.append("[^/]" if pathname else ".")
            i += 1
        elif ch == "*":
            i = _stars(pattern, i, pathname, out)
        elif ch == "[":
            end = _bracket(pattern, i, pathname, out)
            if end is None:
                return None
            i = end
        else:
            out.append(re.escape(ch))
            i += 1
    return _without_backtracking(out, "[^/]*" if pathname else ".*", group)


def _without_backtracking(tokens: list[str], star: str, group: str) -> str:
    """Join the tokens, matching each run of fixed-width tokens that sits between two stars at its
    leftmost place, once: a lookahead finds it and a backreference consumes it, so the regex engine
    never tries the other places (a line like ``*a*a*a*a*a*a*a*b`` would take seconds per name).
    The leftmost place is enough when the star after the run can take whatever a later place would
    have left over: true for '*' that stops at '/' when the run holds no '/', and for '*' of a name."""
    variable = (star, ".*", "(?:.*/)?", "/")
    out: list[str] = []
    i = 0
    while i < len(tokens):
        end = i + 1
        if tokens[i] == star:
            while end < len(tokens) and tokens[end] not in variable:
                end += 1
            if end > i + 1 and end < len(tokens) and tokens[end] == star:
                name = f"{group}_{i}"
                out.append(f"(?=(?P<{name}>{star}?{''.join(tokens[i + 1 : end])}))(?P={name})")
                i = end
                continue
            end = i + 1
        out.append(tokens[i])
        i = end
    return "".join(out)


def _stars(pattern: str, i: int, pathname: bool, out: list[str]) -> int:
    """Translate a run of '*' starting at i; return the index after what was consumed."""
    start = i
    while i < len(pattern) and pattern[i] == "*":
        i += 1
    if not pathname:
        out.append(".*")
        return i
    at_start = start == 0 or pattern[start - 1] == "/"
    if i - start >= 2 and at_start:
        if i == len(pattern):
            out.append(".*")  # trailing '/**': everything inside
            return i
        if pattern[i] == "/":
            out.append("(?:.*/)?")  # '**/': zero or more folders
            return i + 1
    out.append("[^/]*")  # any other run of stars is one '*'
    return i


def _bracket(pattern: str, i: int, pathname: bool, out: list[str]) -> int | None:
    """Translate the bracket expression at i; return the index after it, or None if it is unclosed."""
    j = i + 1
    negated = j < len(pattern) and pattern[j] in "!^"
    if negated:
        j += 1
    parts: list[str] = []
    first = True
    while True:
        if j >= len(pattern):
            return None
        ch = pattern[j]
        if ch == "]" and not first:
            break
        first = False
        if ch == "[" and pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            name = pattern[j + 2 : end] if end != -1 else None
            if name not in _POSIX_CLASSES:
                return None
            parts.append(_POSIX_CLASSES[name])
            j = end + 2
            continue
        if ch == "\\":
            j += 1
            if j >= len(pattern):
                return None
            ch = pattern[j]
        j += 1
        if j + 1 < len(pattern) and pattern[j] == "-" and pattern[j + 1] != "]":
            high = pattern[j + 1]
            j += 2
            if high == "\\":
                if j >= len(pattern):
                    return None
                high = pattern[j]
                j += 1
            # wildmatch tests the first character on its own before the range: a reversed range
            # still matches it
            parts.append(f"{re.escape(ch)}-{re.escape(high)}" if ch <= high else re.escape(ch))
            continue
        parts.append(re.escape(ch))
    body = "".join(parts)
    slash = "(?!/)" if pathname else ""
    if negated:
        out.append(f"{slash}[^{body}]" if body else f"{slash}.")
    else:
        out.append(f"{slash}[{body}]" if body else "(?!)")
    return j + 1


class IgnoreFile:
    """The patterns of one ignore file, compiled into at most four regexes: for names and for paths
    (relative to the file's folder), each once for files and once for folders. Alternatives are in
    reverse order, so the first that matches is the file's last matching line, as in git."""

    def __init__(self, patterns: list[IgnorePattern]) -> None:
        self.patterns = patterns
        self._compiled = {
            (basename, is_dir): _combined(patterns, basename, is_dir)
            for basename in (True, False)
            for is_dir in (True, False)
        }

    @classmethod
    def read(cls, path: Path) -> IgnoreFile | None:
        """The file's patterns; None when it is missing, empty or not a regular file (git does not
        follow a symlinked .gitignore, and a FIFO would block the read)."""
        text = _read_regular(path)
        patterns = parse_ignore_lines(text) if text else []
        return cls(patterns) if patterns else None

    def verdict(self, rel: str, name: str, is_dir: bool) -> bool | None:
        """True (ignored) or False (re-included by a '!' line) from this file's last matching line;
        None when no line matches ``rel`` (the path below the file's folder)."""
        best = -1
        for basename, subject in ((True, name), (False, rel)):
            regex = self._compiled[(basename, is_dir)]
            if regex is None:
                continue
            match = regex.fullmatch(subject)
            if match and match.lastgroup is not None:  # the group of the alternative that matched
                best = max(best, int(match.lastgroup[1:]))
        return None if best < 0 else not self.patterns[best].negated


def _combined(patterns: list[IgnorePattern], basename: bool, is_dir: bool) -> re.Pattern[str] | None:
    """One regex whose alternatives are the patterns, last line first; alternative ``p<n>`` is line n."""
    alternatives = []
    for index in reversed(range(len(patterns))):
        pattern = patterns[index]
        if pattern.basename != basename or (pattern.dir_only and not is_dir):
            continue
        # git strips one leading '/' (the anchor) from a path pattern before matching
        text = pattern.text if basename else pattern.text.removeprefix("/")
        body = wildmatch_regex(text, pathname=not basename, group=f"g{index}")
        if body is not None:
            alternatives.append(f"(?P<p{index}>{body})")
    return re.compile("|".join(alternatives), re.DOTALL) if alternatives else None


def _read_regular(path: Path) -> str | None:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        return os.fsdecode(path.read_bytes())  # the same decoding as the names os.walk gives
    except OSError:
        return None


if TYPE_CHECKING:

    class _Rules(Protocol):
        """What is ignored in one folder of the walk."""

        def ignored(self, name: str, is_dir: bool) -> bool: ...

        def below(self, name: str, names: Collection[str]) -> _Rules:
            """The rules of the subfolder ``name``, whose own entries are ``names``."""
            ...


class _NoRules:
    def ignored(self, name: str, is_dir: bool) -> bool:
        return False

    def below(self, name: str, names: Collection[str]) -> _Rules:
        return self


@dataclass(frozen=True)
class _PatternRules:
    """The ignore files of a folder's ancestors, deepest first, each with the folder's path relative
    to the ignore file's own folder ('' or ending in '/')."""

    folder: Path
    layers: tuple[tuple[IgnoreFile, str], ...]

    def ignored(self, name: str, is_dir: bool) -> bool:
        for ignore_file, prefix in self.layers:
            verdict = ignore_file.verdict(prefix + name, name, is_dir)
            if verdict is not None:
                return verdict
        return False

    def below(self, name: str, names: Collection[str]) -> _Rules:
        folder = self.folder / name
        if ".git" in names:  # a nested repository: its own rules, not ours (as git does)
            return _repository_rules(folder)
        layers = tuple((f, f"{prefix}{name}/") for f, prefix in self.layers)
        own = IgnoreFile.read(folder / ".gitignore") if ".gitignore" in names else None
        return _PatternRules(folder, ((own, ""), *layers) if own else layers)


@dataclass(frozen=True)
class _GitRules:
    """What git listed below a folder: tracked files and untracked ones that are not ignored."""

    folder: Path
    listing: GitListing
    prefix: str  # this folder relative to the folder git listed ('' or ending in '/')

    def ignored(self, name: str, is_dir: bool) -> bool:
        path = self.prefix + name
        if is_dir:  # a submodule is listed under its folder's name, an untracked nested clone as 'name/'
            listing = self.listing
            return not (path in listing.folders or path in listing.files or path in listing.repositories)
        return path not in self.listing.files

    def below(self, name: str, names: Collection[str]) -> _Rules:
        folder = self.folder / name
        if ".git" in names:  # a submodule or a nested clone: git lists only its folder
            return _repository_rules(folder)
        return _GitRules(folder, self.listing, f"{self.prefix}{name}/")


def _rules_of(root: Path, top: Path | None, listing: GitListing | None) -> _Rules:
    """Git's answer when it gave one, else the ignore files read as git reads them."""
    if listing is not None and listing.finish():
        return _GitRules(root, listing, "")
    return _pattern_rules_for_root(root, top)


def _repository_rules(top: Path) -> _Rules:
    return _rules_of(top, top, git_listing(top, top))


def _pattern_rules_for_root(root: Path, top: Path | None) -> _PatternRules:
    """The ignore files that apply inside ``root``: those of its ancestors up to the work tree's top
    (every ancestor outside a repository), then the repository's info/exclude, which yields to them."""
    folders = [root, *root.parents]
    if top is not None:
        folders = folders[: folders.index(top) + 1]
    layers = []
    for folder in folders:
        ignore_file = IgnoreFile.read(folder / ".gitignore")
        if ignore_file is not None:
            prefix = root.relative_to(folder).as_posix()
            layers.append((ignore_file, "" if prefix == "." else prefix + "/"))
    exclude = _info_exclude(top) if top is not None else None
    if exclude is not None and top is not None:
        prefix = root.relative_to(top).as_posix()
        layers.append((exclude, "" if prefix == "." else prefix + "/"))
    return _PatternRules(root, tuple(layers))


def _info_exclude(top: Path) -> IgnoreFile | None:
    """``.git/info/exclude``, also for a worktree or submodule whose ``.git`` is a file naming its git
    folder (a linked worktree keeps ``info/`` in the common folder)."""
    git_dir = top / ".git"
    if not git_dir.is_dir():
        text = _read_regular(git_dir) or ""
        if not text.startswith("gitdir:"):
            return None
        git_dir = top / text[len("gitdir:") :].strip()
        common = _read_regular(git_dir / "commondir")
        if common:
            git_dir = git_dir / common.strip()
    return IgnoreFile.read(git_dir / "info" / "exclude")


def _work_tree_top(folder: Path) -> Path | None:
    """The nearest folder from ``folder`` upwards with a ``.git`` (a folder, or a file in a worktree
    or submodule)."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


# --------------------------------------------------------------------------------------------
# Asking git. Nothing from the linted repository may run: its .git/config is as untrusted as its
# files, and a few settings make a read-only command start programs. Each is neutralised:
# - core.fsmonitor names a hook that git runs when it reads the index;
# - a partial clone fetches missing objects on demand (a .gitignore of a sparse checkout is read from
#   the index), and a configured transport such as ext:: runs a command: GIT_NO_LAZY_FETCH, and
#   GIT_ALLOW_PROTOCOL with no real protocol; core.hooksPath also reaches any git it starts;
# - core.untrackedCache lets the index's cached listing stand in for the folders on disk;
# - the system config and inherited GIT_* variables (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_PARAMETERS)
#   are dropped; GIT_DIR and GIT_WORK_TREE are set, so a core.worktree in the config or a bare
#   repository planted in a subfolder cannot move the tree git lists;
# - a repository owned by another user is not asked (git's own safe.directory check);
# - git itself is looked up on the absolute entries of PATH only, never in the linted tree;
# - a config that names a FIFO as its excludes file blocks git: the timeout ends it, and we fall back.

GIT_TIMEOUT = 60.0
_SAFE_CONFIG = ("core.fsmonitor=false", "core.untrackedCache=false", "core.hooksPath=/dev/null")


class GitListing:
    """Files git lists below a folder (relative, '/' separated): tracked ones, and untracked ones
    that are not ignored, which a second git process lists meanwhile (its scan of the work tree is
    most of git's time; the tracked files can be sorted through while it runs). Nested repositories
    (untracked clones) are listed as folders; git does not list their contents, nor a submodule's."""

    def __init__(self, tracked: list[str], scan: subprocess.Popen[bytes] | None) -> None:
        self.tracked = tracked  # a list: most runs only go through it once
        self._scan = scan
        self._untracked: list[str] = []
        self._repositories: frozenset[str] = frozenset()
        self._ok: bool | None = None

    def finish(self) -> bool:
        """Wait for the untracked listing; False when git failed there (then none of it holds)."""
        if self._ok is None:
            output = _collect(self._scan)
            self._scan = None
            self._ok = output is not None
            if output is not None:
                self._untracked, self._repositories = _entries(output)
        return self._ok

    def abandon(self) -> None:
        if self._scan is not None:
            _stop(self._scan)
        self._scan, self._ok = None, False

    @property
    def untracked(self) -> list[str]:
        """Never a tracked file (``ls-files --others``)."""
        self.finish()
        return self._untracked

    @property
    def repositories(self) -> frozenset[str]:
        self.finish()
        return self._repositories

    @functools.cached_property
    def files(self) -> frozenset[str]:
        """Only a walk asks (a tree with nested repositories), as do ``folders``."""
        return frozenset(self.tracked).union(self.untracked)

    @functools.cached_property
    def folders(self) -> frozenset[str]:
        return frozenset(_folders_of(self.files | self.repositories))


def _entries(output: bytes) -> tuple[list[str], frozenset[str]]:
    """Listed files and nested repositories (entries ending in '/'); one decode of the whole
    listing, as os.fsdecode would decode each entry."""
    text = output.decode(sys.getfilesystemencoding(), "surrogateescape")
    entries = text.split("\0")
    if entries and entries[-1] == "":
        entries.pop()  # the terminator of the last entry
    if "/\0" not in text and not text.endswith("/"):  # the usual case: no nested repository
        return entries, frozenset()
    return [e for e in entries if not e.endswith("/")], frozenset(e[:-1] for e in entries if e.endswith("/"))


def _folders_of(paths: Collection[str]) -> set[str]:
    folders: set[str] = set()
    for path in paths:
        cut = path.rfind("/")
        while cut > 0:
            parent = path[:cut]
            if parent in folders:
                break
            folders.add(parent)
            cut = path.rfind("/", 0, cut)
    return folders


def git_listing(root: Path, top: Path) -> GitListing | None:
    """What git tracks, or leaves untracked but not ignored, below ``root`` (inside the work tree at
    ``top``); None when git cannot tell: not installed, an error, a foreign owner, or ``root``
    itself ignored (a folder named on the command line is walked even then). The untracked part
    may still be listing: ``finish`` says whether it came."""
    git = git_program()
    if git is None or not (_owned_by_us(top) and _owned_by_us(top / ".git")):
        return None
    if root != top:
        checked = _run_git(git, top, root, ["check-ignore", "-q", "--no-index", "--", "."])
        if checked is None or checked.returncode != 1:  # 0: ignored, 128: an error
            return None
    skip = [f"--exclude={name}/" for name in sorted(DEFAULT_EXCLUDES)]  # never walked: spare git the time
    scan = _start_git(git, top, root, ["ls-files", "--others", "--exclude-standard", "-z", *skip])
    if scan is None:
        return None
    listed = _run_git(git, top, root, ["ls-files", "--cached", "-z"])
    if listed is None or listed.returncode != 0:
        _stop(scan)
        return None
    return GitListing(_entries(listed.stdout)[0], scan)


@functools.cache
def git_program() -> str | None:
    import shutil  # git is looked for only where a listing is asked for

    absolute = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]
    return shutil.which("git", path=os.pathsep.join(absolute)) if absolute else None


def _owned_by_us(path: Path) -> bool:
    if not hasattr(os, "geteuid"):
        return True
    try:
        return os.lstat(path).st_uid == os.geteuid()
    except OSError:
        return False


def _git_environment(top: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_DIR=str(top / ".git"),
        GIT_WORK_TREE=str(top),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_NO_LAZY_FETCH="1",
        GIT_ALLOW_PROTOCOL="none",
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def _git_command(git: str, args: list[str]) -> list[str]:
    return [git, "--no-pager", *(arg for setting in _SAFE_CONFIG for arg in ("-c", setting)), *args]


def _run_git(git: str, top: Path, cwd: Path, args: list[str]) -> subprocess.CompletedProcess[bytes] | None:
    """git run to its end; None when it could not start or ran past the timeout."""
    return _finish(_start_git(git, top, cwd, args))


def _start_git(git: str, top: Path, cwd: Path, args: list[str]) -> subprocess.Popen[bytes] | None:
    import subprocess

    try:
        return subprocess.Popen(
            _git_command(git, args),
            cwd=cwd,
            env=_git_environment(top),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _finish(process: subprocess.Popen[bytes] | None) -> subprocess.CompletedProcess[bytes] | None:
    if process is None:
        return None
    import subprocess

    try:
        output, _ = process.communicate(timeout=GIT_TIMEOUT)
    except (OSError, subprocess.SubprocessError):
        _stop(process)
        return None
    return subprocess.CompletedProcess(process.args, process.returncode, output)


def _collect(process: subprocess.Popen[bytes] | None) -> bytes | None:
    """A started git's output; None when it failed or ran past the timeout."""
    done = _finish(process)
    return done.stdout if done is not None and done.returncode == 0 else None


def _stop(process: subprocess.Popen[bytes]) -> None:
    import contextlib
    import subprocess

    process.kill()
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        process.communicate()


def _glob_regex(pattern: str, covering: bool = True) -> re.Pattern[str]:
    """A .gitignore pattern as a regex over '/'-separated relative paths, its wildcards as git's
    wildmatch reads them; ``covering``: a match of a folder also matches everything below it."""
    anchored = "/" in pattern.rstrip("/")  # a '/' at the start or in the middle, as in .gitignore
    body = wildmatch_regex(pattern.lstrip("/"), pathname=True)
    if body is None:  # git never matches an unclosed bracket or a trailing backslash
        return re.compile(r"(?!)")
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{body}(?:/.*)?$" if covering else f"^{prefix}{body}$")


class ExcludeSet:
    """Configured ``exclude`` (and ``per-file-ignores``) globs, matched as .gitignore patterns
    against paths relative to the project root: a pattern without '/' matches a name at any depth,
    '*' stays within a folder, '**' crosses folders, and a folder's match covers what is below it."""

    def __init__(self, patterns: list[str], root: Path) -> None:
        self.root = root
        self._below = os.fspath(root).rstrip("/") + "/"  # what the text of a path below the root starts with
        self.regexes = [_glob_regex(p.rstrip("/")) for p in patterns]
        self.own = [_glob_regex(p.rstrip("/"), covering=False) for p in patterns]

    def match(self, path: Path) -> bool:
        """The path, or a folder above it, is excluded."""
        return self.match_relative(self._relative(path))

    def match_relative(self, rel: str) -> bool:
        return any(r.match(rel) for r in self.regexes)

    def match_entry(self, path: Path | str) -> bool:
        """The path itself is excluded: what a walk asks of each entry it meets (the folders above
        it were asked on the way down), so that a folder named on the command line is walked even
        when it is excluded, as ruff does."""
        rel = self._relative(path)
        return any(r.match(rel) for r in self.own)

    def _relative(self, path: Path | str) -> str:
        if isinstance(path, str):  # a walk's own text: normalised, and a Path per entry was a third of the walk
            if path.startswith(self._below):
                return path[len(self._below) :]
            path = Path(path)
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


def discover(
    paths: list[Path],
    cwd: Path,
    excludes: ExcludeSet | None = None,
    respect_gitignore: bool = True,
    defer_python_checks: bool = False,
) -> tuple[list[Candidate], list[str]]:
    """Walk the given files and folders; returns the candidates and warnings for missing paths.

    With ``defer_python_checks``, Python files from git's listing are not checked here (one lstat
    each, most of a large repository's listing); ``readable`` checks each the first time it is
    read, so one that turns out to be deleted, a FIFO or a link out of the tree is never read."""
    found: dict[str, Candidate] = {}  # absolute location -> candidate
    links: set[str] = set()  # the locations that are symbolic links
    warnings: list[str] = []
    for given in paths:
        path = given if given.is_absolute() else cwd / given
        if not path.exists() and not path.is_symlink():
            warnings.append(f"{given}: no such file or directory")
            continue
        if path.is_dir() and not path.is_symlink():
            root = path.resolve() if not path.is_symlink() else path
            _walk(root, cwd, excludes, respect_gitignore, found, links, defer_python_checks)
        elif path.is_file():
            kind = classify(path.name)
            if kind:  # a file named explicitly is linted even when ignored
                abs_path = path.absolute()
                found[os.fspath(abs_path)] = Candidate(abs_path, display_path(abs_path, cwd), kind)
                if abs_path.is_symlink():
                    links.add(os.fspath(abs_path))
    # a link to a file that is linted under its own name is the same file: lint (and fix) it once
    kept = list(found.values())
    if links:  # walked folders are resolved and links to folders not followed: only links need resolving
        kept = [c for c in kept if not (c.location in links and _links_to_a_found_file(c.location, found, links))]
    return sorted(kept, key=lambda c: c.display), warnings


def _links_to_a_found_file(link: str, found: dict[str, Candidate], links: set[str]) -> bool:
    target = os.fspath(_real(link) or "")
    return target in found and target not in links


def _walk(
    root: Path,
    cwd: Path,
    excludes: ExcludeSet | None,
    respect_gitignore: bool,
    found: dict[str, Candidate],
    links: set[str],
    defer_python_checks: bool = False,
) -> None:
    root_rules: _Rules = _NoRules()
    if respect_gitignore:
        top = _work_tree_top(root)
        listing = git_listing(root, top) if top is not None else None
        if listing is not None and not _has_submodules(root):
            listed: dict[str, Candidate] = {}
            listed_links: set[str] = set()
            try:  # the tracked files first, while git lists the untracked ones
                _from_listing(root, cwd, excludes, listing.tracked, listed, listed_links, defer_python_checks)
            except BaseException:
                listing.abandon()
                raise
            if listing.finish() and not listing.repositories:
                _from_listing(root, cwd, excludes, listing.untracked, listed, listed_links, defer_python_checks)
                found.update(listed)
                links.update(listed_links)
                return
        root_rules = _rules_of(root, top, listing)
    _walk_folders(root, cwd, excludes, root_rules, found, links)


def _walk_folders(
    root: Path,
    cwd: Path,
    excludes: ExcludeSet | None,
    root_rules: _Rules,
    found: dict[str, Candidate],
    links: set[str],
) -> None:
    """The candidates below ``root`` where git cannot list them, folder by folder. Paths are kept as
    text and each folder's display prefix is worked out once: a ``Path`` per file and folder, and
    an lstat per file that the folder's listing already tells is a regular file, were most of the
    walk of 10,000 files."""
    base = os.fspath(root).rstrip("/")  # the filesystem root: "" (its files are "/name")
    prefixes = _FolderPrefixes(root, cwd)
    real: dict[str, Path | None] = {}  # the root resolved, at the first link met
    pending: list[tuple[str, str, _Rules | None]] = [(base, "", None)]  # (folder, below the root, rules above)
    filtered = excludes is not None and bool(excludes.regexes)
    while pending:
        folder, rel, above = pending.pop()
        listed = _list_folder(folder or "/")
        if listed is None:
            continue
        folders, files = listed
        rules = root_rules if above is None else above.below(rel.rpartition("/")[2], _names(folders, files))
        prefix = prefixes[rel]
        below = []
        for name, is_link in sorted(folders):
            if name in DEFAULT_EXCLUDES or is_link:
                continue
            path = f"{folder}/{name}"
            if rules.ignored(name, True) or (filtered and excludes.match_entry(path)):  # type: ignore[union-attr]
                continue
            below.append((path, f"{rel}/{name}" if rel else name, rules))
        pending.extend(reversed(below))  # walked in name order
        if prefix is None:
            continue
        for name, regular in sorted(files):
            kind = classify(name)
            if not kind:
                continue
            location = f"{folder}/{name}"
            link = False if regular else _usable(location, base or "/", real)
            if link is None:
                continue
            if link:
                links.add(location)
            if rules.ignored(name, False) or (filtered and excludes.match_entry(location)):  # type: ignore[union-attr]
                continue
            found[location] = Candidate(location, prefix + name, kind)


def _list_folder(folder: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]] | None:
    """A folder's subfolders, each with whether it is a symbolic link (a link to a folder counts as
    one, as ``os.walk`` lists it), and its other entries, each with whether it is a regular file (as
    the folder's listing tells; an lstat when it does not); None when it cannot be listed."""
    folders: list[tuple[str, bool]] = []
    files: list[tuple[str, bool]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    is_folder = entry.is_dir()
                except OSError:
                    is_folder = False
                if is_folder:
                    folders.append((entry.name, entry.is_symlink()))
                else:
                    try:
                        files.append((entry.name, entry.is_file(follow_symlinks=False)))
                    except OSError:
                        files.append((entry.name, False))
    except OSError:
        return None
    return folders, files


def _names(folders: list[tuple[str, bool]], files: list[tuple[str, bool]]) -> set[str]:
    return {name for name, _ in folders} | {name for name, _ in files}


def _has_submodules(root: Path) -> bool:
    return os.path.lexists(root / ".gitmodules")


def _from_listing(
    root: Path,
    cwd: Path,
    excludes: ExcludeSet | None,
    listed: Collection[str],
    found: dict[str, Candidate],
    links: set[str],
    defer_python_checks: bool = False,
) -> None:
    """The candidates of a work tree without nested repositories, straight from git's listing: the
    same files the walk would keep, without visiting every folder."""
    base = os.fspath(root)
    prefixes = _FolderPrefixes(root, cwd)
    real: dict[str, Path | None] = {}  # the root resolved, at the first link met
    verdicts: dict[str, bool] = {}  # folder below the root -> excluded
    filtered = bool(excludes and excludes.regexes)
    for rel in listed:  # the result is sorted at the end
        folder, _, name = rel.rpartition("/")
        kind = PYTHON if name.endswith(".py") else classify(name)  # most of a listing: no lower()
        if not kind:
            continue
        prefix = prefixes[folder]
        if prefix is None:
            continue
        location = f"{base}/{rel}"
        if kind == PYTHON and defer_python_checks:
            # most Python files are never read (only what a launch reaches): checked when first read
            if filtered and _excluded_below(base, rel, excludes, verdicts):  # type: ignore[arg-type]
                continue
            found[location] = Candidate(location, prefix + name, kind, base)
            continue
        link = _usable(location, base, real)  # git lists a link as a file, never files through a linked folder
        if link is None:
            continue
        if link:
            links.add(location)
        if filtered and _excluded_below(base, rel, excludes, verdicts):  # type: ignore[arg-type]
            continue
        found[location] = Candidate(location, prefix + name, kind)


class _FolderPrefixes(dict[str, "str | None"]):
    """Folder below the walked root -> what the display paths (as ``display_path`` gives them) of
    its files start with; None for a folder below one that is never walked. Worked out once per
    folder: ``relpath`` for each of tens of thousands of files costs a large part of a one-file run."""

    def __init__(self, root: Path, cwd: Path) -> None:
        super().__init__()
        shown = display_path(root, cwd)
        self.root_shown = "" if shown == "." else shown + "/"
        # the working directory inside the walked tree: folders are reached by climbing from it
        # (root-relative text behind "../../" would climb to the root and down again)
        inside = os.path.relpath(cwd, root).replace(os.sep, "/") if self.root_shown.startswith("../") else ".."
        self.climb = [] if inside.startswith("..") else inside.split("/")

    def __missing__(self, folder: str) -> str | None:
        # skipped when its own name or a folder above it is (the folder above is looked up once)
        parent, _, name = folder.rpartition("/")
        skipped = name in DEFAULT_EXCLUDES or (parent != "" and self[parent] is None)
        prefix = None if skipped else self._prefix(folder)
        self[folder] = prefix
        return prefix

    def _prefix(self, folder: str) -> str:
        if not self.climb:
            return f"{self.root_shown}{folder}/" if folder else self.root_shown
        parts = folder.split("/") if folder else []
        shared = 0
        for mine, theirs in zip(self.climb, parts, strict=False):
            if mine != theirs:
                break
            shared += 1
        shown = "/".join([".."] * (len(self.climb) - shared) + parts[shared:])
        return f"{shown}/" if shown else ""


def _excluded_below(base: str, rel: str, excludes: ExcludeSet, verdicts: dict[str, bool]) -> bool:
    """Whether a listed file, or a folder between the walked root and it, is excluded: the same
    entries the walk asks about (the root itself may be excluded and named on the command line)."""
    folder = ""
    for part in rel.split("/")[:-1]:
        folder = f"{folder}/{part}" if folder else part
        hit = verdicts.get(folder)
        if hit is None:
            hit = verdicts[folder] = excludes.match_entry(f"{base}/{folder}")
        if hit:
            return True
    return excludes.match_entry(f"{base}/{rel}")


def _regular(path: Path | str) -> bool:
    """A regular file that is not a symbolic link."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _usable(location: Path | str, root: str, real: dict[str, Path | None]) -> bool | None:
    """Whether a file below ``root`` may be read, and whether it is a symbolic link: False for a
    regular file (one lstat tells), True for a link to a file inside the tree; None for what is
    never read: a FIFO, socket or device (reading would block), a dangling or looping link, or a
    link out of the tree (someone else's file). ``real`` keeps the root resolved once per walk."""
    if _regular(location):
        return False
    path = Path(location)
    if not path.is_symlink():
        return None
    if root not in real:
        real[root] = _real(root)
    return True if _inside_real(path, real[root]) and path.is_file() else None


def _real(root: str) -> Path | None:
    try:
        return Path(root).resolve()
    except (OSError, RuntimeError):
        return None


def _inside_real(path: Path, real_root: Path | None) -> bool:
    if real_root is None:
        return False
    try:
        path.resolve().relative_to(real_root)
        return True
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return False
