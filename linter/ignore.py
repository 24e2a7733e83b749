"""The .gitignore matcher: what git ignores, read from the ignore files the way git reads them, as
the rules a walk asks in each folder where git cannot list the tree."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import gitlisting

if TYPE_CHECKING:
    from typing import Protocol

    from .gitlisting import GitListing

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


@dataclass(eq=False)
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

    class Rules(Protocol):
        """What is ignored in one folder of the walk."""

        def ignored(self, name: str, is_dir: bool) -> bool: ...

        def below(self, name: str, names: Collection[str]) -> Rules:
            """The rules of the subfolder ``name``, whose own entries are ``names``."""
            ...


class NoRules:
    def ignored(self, name: str, is_dir: bool) -> bool:
        return False

    def below(self, name: str, names: Collection[str]) -> Rules:
        return self


@dataclass(eq=False, repr=False)
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

    def below(self, name: str, names: Collection[str]) -> Rules:
        folder = self.folder / name
        if ".git" in names:  # a nested repository: its own rules, not ours (as git does)
            return _repository_rules(folder)
        layers = tuple((f, f"{prefix}{name}/") for f, prefix in self.layers)
        own = IgnoreFile.read(folder / ".gitignore") if ".gitignore" in names else None
        return _PatternRules(folder, ((own, ""), *layers) if own else layers)


@dataclass(eq=False, repr=False)
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

    def below(self, name: str, names: Collection[str]) -> Rules:
        folder = self.folder / name
        if ".git" in names:  # a submodule or a nested clone: git lists only its folder
            return _repository_rules(folder, self.listing.with_untracked)
        return _GitRules(folder, self.listing, f"{self.prefix}{name}/")


def rules_of(root: Path, top: Path | None, listing: GitListing | None) -> Rules:
    """Git's answer when it gave one, else the ignore files read as git reads them."""
    if listing is not None and listing.finish():
        return _GitRules(root, listing, "")
    return _pattern_rules_for_root(root, top)


def _repository_rules(top: Path, untracked: bool = True) -> Rules:
    return rules_of(top, top, gitlisting.git_listing(top, top, untracked))


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


def work_tree_top(folder: Path) -> Path | None:
    """The nearest folder from ``folder`` upwards with a ``.git`` (a folder, or a file in a worktree
    or submodule)."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None
