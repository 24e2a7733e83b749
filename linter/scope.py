"""What a run lints and what it reports, from the command line's PATH arguments.

- Every run reads the repository its paths belong to (the nearest folder upwards with ``.git`` or
  a config) and reports only what lies in the paths given, so a file gets the same finding, with
  the same fix, whether the run names it, its folder or the repository, from any working folder.
- Folders (or nothing): report the files below them.
- Only files (how pre-commit and editors call a linter): report those files alone; a script passed
  alone is still judged with the manifest that runs it.
- Outside any repository only the paths given are read.
- ``-``: one file read from standard input, named by ``--stdin-filename``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .config import find_config
from .discover import Candidate, discover, display_path
from .kinds import MANIFEST, PYTHON, SHELL, SHELL_KINDS, classify
from .lazyre import LazyPattern

STDIN_DISPLAY = "-"


class ScopeError(Exception):
    pass


@dataclass(eq=False, repr=False)
class Scope:
    """Which paths a run walks, where its configuration is found and which files it reports."""

    paths: list[Path]  # what the engine walks
    config_start: Path  # where config discovery starts
    report_only: set[str] | None = None  # display paths to report; None reports everything
    extra: list[Candidate] = field(default_factory=list)  # the files named (or read from stdin): always parsed
    folders: list[Path] = field(default_factory=list)  # folders given inside a larger repository
    overrides: dict[str, str] = field(default_factory=dict)  # display path -> text (standard input)
    stdin: str | None = None  # display path of the text read from standard input
    root: Path | None = None  # the repository root in file mode
    folder_files: list[Candidate] | None = None  # what the walk of ``folders`` found (with them)


def resolve(
    given: list[str],
    cwd: Path,
    stdin_filename: str | None = None,
    stdin_bytes: bytes | None = None,
    tracked_only: bool = False,
) -> Scope:
    if STDIN_DISPLAY in given:
        if len(given) > 1:
            raise ScopeError("'-' (standard input) cannot be combined with other paths")
        return _stdin_scope(cwd, stdin_filename, stdin_bytes or b"")
    if stdin_filename is not None:
        raise ScopeError("--stdin-filename needs '-' as the path")
    paths = [Path(p) for p in given] or [Path(".")]
    absolute = [Path(os.path.normpath(p if p.is_absolute() else cwd / p)) for p in paths]
    if given and all(p.is_file() for p in absolute):
        return _file_scope(absolute, cwd)
    if not all(p.is_dir() for p in absolute):
        return Scope(paths, absolute[0])  # a missing path: the engine says so
    return _folder_scope(paths, absolute, cwd, tracked_only)


def _folder_scope(paths: list[Path], absolute: list[Path], cwd: Path, tracked_only: bool = False) -> Scope:
    common = Path(os.path.commonpath([str(p) for p in absolute]))
    root = find_root(common)
    if root is None or any(p == root for p in absolute):
        return Scope(paths, absolute[0])
    inside, _ = discover(absolute, cwd, tracked_only=tracked_only)
    return Scope([root], absolute[0], {c.display for c in inside}, root=root, folders=absolute, folder_files=inside)


def _file_scope(files: list[Path], cwd: Path) -> Scope:
    candidates, _ = discover(files, cwd)
    if not candidates:  # nothing lintable was passed: no reason to read the repository
        return Scope([], files[0], report_only=set())
    common = Path(os.path.commonpath([str(f.parent) for f in files]))
    root = find_root(common)
    if root is None:
        # outside any repository the folder around the files could be anything (a home or temp
        # folder): link only the files that were passed rather than read everything beside them
        return Scope(files, files[0], {c.display for c in candidates}, candidates)
    return Scope([root], files[0], {c.display for c in candidates}, candidates, root=root)


def find_root(start: Path) -> Path | None:
    """The nearest folder from ``start`` upwards that holds ``.git`` or a recovery-lint config."""
    config = find_config(start / "_")  # find_config starts at the parent of a file path
    config_dir = config.parent if config else None
    for folder in [start, *start.parents]:
        if (folder / ".git").exists() or folder == config_dir:
            return folder
    return None


def _stdin_scope(cwd: Path, name: str | None, data: bytes) -> Scope:
    # as for files: a shell script may hold bytes that are not UTF-8 (bash reads bytes), nothing else
    text = data.decode("utf-8", "surrogateescape")
    path = Path(os.path.normpath(cwd / name)) if name is not None else None
    kind = (classify(path.name) if path is not None else None) or guess_kind(text)
    if kind not in SHELL_KINDS:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ScopeError(f"standard input is not valid UTF-8 (byte {exc.start})") from exc
    if path is None:
        cand = Candidate(cwd / STDIN_DISPLAY, STDIN_DISPLAY, kind)
        return Scope(
            [],
            cwd,
            {STDIN_DISPLAY},
            [cand],
            overrides={STDIN_DISPLAY: text},
            stdin=STDIN_DISPLAY,
        )
    display = display_path(path, cwd)
    cand = Candidate(path, display, kind)
    # the name may be of a file not written yet, in a folder not made yet: its repository all the same
    existing = next((folder for folder in path.parents if folder.is_dir()), None)
    root = find_root(existing) if existing is not None else None
    paths = [root] if root is not None else []
    return Scope(paths, path, {display}, [cand], overrides={display: text}, stdin=display, root=root)


_API_VERSION = LazyPattern(r"(?m)^apiVersion\s*:")  # standard input only


def guess_kind(text: str) -> str:
    """The kind of unnamed text: a YAML object with apiVersion, a script with a shebang, else Python."""
    if _API_VERSION.search(text):
        return MANIFEST
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    if first.startswith("#!"):
        return PYTHON if "python" in first else SHELL
    return PYTHON
