"""Find the files to lint and say what kind each one is."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

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
YAML_SUFFIXES = (".yaml", ".yml")
SHELL_SUFFIXES = (".sh", ".bash")
KINDS = ("manifest", "shell", "python", "requirements", "pyproject", "dockerfile")


@dataclass(frozen=True)
class Candidate:
    path: Path  # absolute
    display: str  # relative to the working directory, '/' separated
    kind: str  # manifest | shell | python | requirements | pyproject | dockerfile | maybe-shell


def classify(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(YAML_SUFFIXES):
        return "manifest"
    if lower.endswith(SHELL_SUFFIXES):
        return "shell"
    if lower.endswith(".py"):
        return "python"
    if lower.endswith(".txt") and (lower.startswith("requirements") or lower.startswith("constraints")):
        return "requirements"
    if lower == "pyproject.toml":
        return "pyproject"
    if lower.startswith("dockerfile") or lower.endswith(".dockerfile") or lower.startswith("containerfile"):
        return "dockerfile"
    if "." not in name:
        return "maybe-shell"  # decided by its shebang once read
    return None


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()


class GitIgnore:
    """The .gitignore rules that apply below one directory (nested files included)."""

    def __init__(self) -> None:
        self.rules: list[tuple[Path, re.Pattern[str], bool, bool]] = []  # base, regex, negate, dir_only

    def load(self, directory: Path) -> None:
        path = directory / ".gitignore"
        try:
            text = path.read_text("utf-8", "replace")
        except OSError:
            return
        for raw in text.splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            self.rules.append((directory, _glob_regex(line), negate, dir_only))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        result = False
        for base, regex, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if regex.match(rel):
                result = not negate
        return result


def _glob_regex(pattern: str, covering: bool = True) -> re.Pattern[str]:
    """A .gitignore pattern as a regex over '/'-separated relative paths; ``covering``: a match of a
    folder also matches everything below it."""
    anchored = "/" in pattern.strip("/")
    pattern = pattern.lstrip("/")
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i)
            if end == -1:
                out.append(re.escape(ch))
            else:
                out.append(pattern[i : end + 1])
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{body}(?:/.*)?$" if covering else f"^{prefix}{body}$")


class ExcludeSet:
    """Configured ``exclude`` (and ``per-file-ignores``) globs, matched as .gitignore patterns
    against paths relative to the project root: a pattern without '/' matches a name at any depth,
    '*' stays within a folder, '**' crosses folders, and a folder's match covers what is below it."""

    def __init__(self, patterns: list[str], root: Path) -> None:
        self.root = root
        self.regexes = [_glob_regex(p.rstrip("/")) for p in patterns]
        self.own = [_glob_regex(p.rstrip("/"), covering=False) for p in patterns]

    def match(self, path: Path) -> bool:
        """The path, or a folder above it, is excluded."""
        return self.match_relative(self._relative(path))

    def match_relative(self, rel: str) -> bool:
        return any(r.match(rel) for r in self.regexes)

    def match_entry(self, path: Path) -> bool:
        """The path itself is excluded: what a walk asks of each entry it meets (the folders above
        it were asked on the way down), so that a folder named on the command line is walked even
        when it is excluded, as ruff does."""
        rel = self._relative(path)
        return any(r.match(rel) for r in self.own)

    def _relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


def discover(
    paths: list[Path], cwd: Path, excludes: ExcludeSet | None = None, respect_gitignore: bool = True
) -> tuple[list[Candidate], list[str]]:
    """Walk the given files and folders; returns the candidates and warnings for missing paths."""
    found: dict[Path, Candidate] = {}
    warnings: list[str] = []
    for given in paths:
        path = given if given.is_absolute() else cwd / given
        if not path.exists() and not path.is_symlink():
            warnings.append(f"{given}: no such file or directory")
            continue
        if path.is_dir() and not path.is_symlink():
            _walk(path.resolve() if not path.is_symlink() else path, cwd, excludes, respect_gitignore, found)
        elif path.is_file():
            kind = classify(path.name)
            if kind:  # a file named explicitly is linted even when ignored
                abs_path = path.absolute()
                found[abs_path] = Candidate(abs_path, display_path(abs_path, cwd), kind)
    # a link to a file that is linted under its own name is the same file: lint (and fix) it once
    kept = list(found.values())
    links = {c.path for c in kept if c.path.is_symlink()}
    if links:  # resolving every path costs a system call per folder level: only when there are links
        real = {_resolved(c.path) for c in kept if c.path not in links}
        kept = [c for c in kept if not (c.path in links and _resolved(c.path) in real)]
    return sorted(kept, key=lambda c: c.display), warnings


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _walk(
    root: Path, cwd: Path, excludes: ExcludeSet | None, respect_gitignore: bool, found: dict[Path, Candidate]
) -> None:
    ignore = GitIgnore()
    if respect_gitignore:
        for parent in reversed(root.parents):
            ignore.load(parent)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        if respect_gitignore:
            ignore.load(here)
        keep = []
        for d in sorted(dirnames):
            sub = here / d
            if d in DEFAULT_EXCLUDES or sub.is_symlink():
                continue
            if (respect_gitignore and ignore.ignored(sub, True)) or (excludes and excludes.match_entry(sub)):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            kind = classify(name)
            if not kind:
                continue
            path = here / name
            if not _regular(path):  # one lstat answers both checks below for a plain file
                if path.is_symlink() and not _inside(path, root):
                    continue  # never follow a link out of the linted tree
                if not path.is_file():
                    continue  # a FIFO, socket or device (reading would block), or a dangling or looping link
            if (respect_gitignore and ignore.ignored(path, False)) or (excludes and excludes.match_entry(path)):
                continue
            found[path] = Candidate(path, display_path(path, cwd), kind)


def _regular(path: Path) -> bool:
    """A regular file that is not a symbolic link."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return False
