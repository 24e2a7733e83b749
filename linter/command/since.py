"""``--new-since REV``: only the findings a change introduced. The repository as it was at REV is read
from git's objects (``git archive``) into a temporary folder, so neither the working tree nor the
index is touched; it is linted there as the current run lints (the same configuration file,
selection, ``--target``/``--versions`` and paths), and its findings are the baseline the current
ones are filtered by, with the fingerprints ``--baseline`` uses (rule, path, job and source text, no
line numbers)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

from ..argv import UsageError

SINCE_BASELINE = ".recovery-lint-since.json"


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise UsageError(f"--new-since needs git: {exc.strerror or exc}") from exc


def repository_of(cwd: Path) -> Path:
    found = _git(["rev-parse", "--show-toplevel"], cwd)
    if found.returncode != 0:
        raise UsageError("--new-since needs a git repository (the working directory is not in one)")
    return Path(os.fsdecode(found.stdout.strip()))


def commit_of(rev: str, root: Path) -> str:
    found = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], root)
    if found.returncode != 0 or not found.stdout.strip():
        raise UsageError(f"--new-since: '{rev}' is not a commit of this repository")
    return found.stdout.decode().strip()


def _extract(commit: str, root: Path, into: Path) -> None:
    """The commit's tree under ``into``, streamed from ``git archive`` (members that would land outside
    it, and links, are skipped: nothing of the tree runs, and nothing outside is written)."""
    process = subprocess.Popen(["git", "archive", "--format=tar", commit], cwd=root, stdout=subprocess.PIPE)
    assert process.stdout is not None
    with tarfile.open(fileobj=process.stdout, mode="r|") as archive:
        for member in archive:
            target = (into / member.name).resolve()
            if not (member.isfile() or member.isdir()) or not target.is_relative_to(into.resolve()):
                continue
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = archive.extractfile(member)
            if source is not None:
                target.write_bytes(source.read())
    if process.wait() != 0:
        raise UsageError(f"--new-since: git archive {commit[:12]} failed")


def _passed_on(args: argparse.Namespace, config: Path | None) -> list[str]:
    """The options of the current run that decide what is found: the configuration file it read (none:
    --isolated, so the old tree's own file does not count either), selection, target and versions."""
    out = ["--config", str(config.absolute())] if config is not None else ["--isolated"]
    for option in ("select", "ignore", "extend_select", "target", "versions"):
        for value in getattr(args, option) or []:
            out += [f"--{option.replace('_', '-')}", value]
    return out


def _paths_then(paths: list[str], cwd: Path, root: Path, then_root: Path, then_cwd: Path) -> list[str] | None:
    """The paths named, as they are in the old tree; None when none of them existed then."""
    if not paths:
        return []
    kept = []
    for given in paths:
        absolute = Path(os.path.normpath(cwd / given))
        try:
            relative = absolute.relative_to(root)
        except ValueError:
            continue  # outside the repository: it has no past in it
        if (then_root / relative).exists():
            kept.append(os.path.relpath(then_root / relative, then_cwd))
    return kept or None


def findings_then(args: argparse.Namespace, cwd: Path, config: Path | None) -> tuple[Counter[str], Path]:
    """The fingerprints of the findings at ``args.new_since``, and the repository root they are
    relative to (what the current findings are compared against)."""
    from ..adopt import BaselineError, read_baseline

    root = repository_of(cwd)
    if args.new_since == "HEAD" and _git(["rev-parse", "--verify", "--quiet", "HEAD"], root).returncode != 0:
        return Counter(), root  # the first commit of a repository: there was nothing before it
    commit = commit_of(args.new_since, root)
    with tempfile.TemporaryDirectory(prefix="recovery-lint-since-") as folder:
        then_root = Path(folder) / "tree"
        then_root.mkdir()
        _extract(commit, root, then_root)
        # the top of the old tree is a repository's top, as the linker finds one (file mode reads the
        # whole repository a named file belongs to); an empty marker, no git data
        (then_root / ".git").mkdir(exist_ok=True)
        then_cwd = then_root / cwd.resolve().relative_to(root.resolve())
        paths = _paths_then(list(args.paths), cwd, root, then_root, then_cwd)
        if paths is None or not then_cwd.is_dir():
            return Counter(), root  # nothing named existed then: every finding is new
        baseline = Path(folder) / "tree" / SINCE_BASELINE
        command = [
            sys.executable, "-m", "recovery_lint", "check", "--no-cache", "--quiet", "--exit-zero",
            "--write-baseline", str(baseline), *_passed_on(args, config), *paths,
        ]  # fmt: skip
        done = subprocess.run(command, cwd=then_cwd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            said = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise UsageError(f"--new-since: linting {args.new_since} failed: {said}")
        try:
            return read_baseline(baseline), root
        except BaselineError as exc:
            raise UsageError(f"--new-since: {exc}") from exc
