"""Asking git which files it lists below a folder (tracked, and untracked but not ignored), with
nothing the linted repository configures ever run."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

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

# folders a walk never enters, by name: git is told to skip them too
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


class GitListing:
    """Files git lists below a folder (relative, '/' separated): tracked ones, and untracked ones
    that are not ignored, which a second git process lists meanwhile (its scan of the work tree is
    most of git's time; the tracked files can be sorted through while it runs). Nested repositories
    (untracked clones) are listed as folders; git does not list their contents, nor a submodule's."""

    def __init__(self, tracked: list[str], scan: subprocess.Popen[bytes] | None, untracked: bool = True) -> None:
        self.tracked = tracked  # a list: most runs only go through it once
        self.with_untracked = untracked  # False: the listing is what git tracks, nothing else
        self._scan = scan
        self._untracked: list[str] = []
        self._repositories: frozenset[str] = frozenset()
        self._ok: bool | None = None if untracked else True  # tracked only: nothing else to wait for

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


def git_listing(root: Path, top: Path, untracked: bool = True) -> GitListing | None:
    """What git tracks, or leaves untracked but not ignored, below ``root`` (inside the work tree at
    ``top``); None when git cannot tell: not installed, an error, a foreign owner, or ``root``
    itself ignored (a folder named on the command line is walked even then). The untracked part
    may still be listing: ``finish`` says whether it came. Without ``untracked``, what git tracks
    only (what a commit holds): git then reads the index alone, not the folders of the work tree."""
    git = git_program()
    if git is None or not (_owned_by_us(top) and _owned_by_us(top / ".git")):
        return None
    if root != top:
        checked = _run_git(git, top, root, ["check-ignore", "-q", "--no-index", "--", "."])
        if checked is None or checked.returncode != 1:  # 0: ignored, 128: an error
            return None
    scan = None
    if untracked:
        skip = [f"--exclude={name}/" for name in sorted(DEFAULT_EXCLUDES)]  # never walked: spare git the time
        scan = _start_git(git, top, root, ["ls-files", "--others", "--exclude-standard", "-z", *skip])
        if scan is None:
            return None
    listed = _run_git(git, top, root, ["ls-files", "--cached", "-z"])
    if listed is None or listed.returncode != 0:
        if scan is not None:
            _stop(scan)
        return None
    return GitListing(_entries(listed.stdout)[0], scan, untracked)


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
