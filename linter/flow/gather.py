"""Gather: the files a run lints, from the paths given and the configuration's excludes."""

from __future__ import annotations

from ..discover import Candidate, ExcludeSet, ListedFiles, discover
from ..kinds import KINDS, PYTHON
from .request import LintRequest


def gather(request: LintRequest, defer_checks: bool = True) -> tuple[list[Candidate], list[str], ListedFiles | None]:
    """The files a run lints, warnings for paths that do not exist (see ``discover``), and in a run
    over named files the Python files of git's listing, made candidates as links reach them. With
    ``defer_checks``, a file that may never be read is checked when it is (a Python file nothing
    reaches; in a run over named files, any file): one lstat less for each of the others."""
    excludes = ExcludeSet(request.config.exclude, request.config.root or request.cwd)
    deferred = (KINDS if request.named else {PYTHON}) if defer_checks else ()
    later = ListedFiles() if request.named and defer_checks else None
    candidates, warnings = discover(
        request.paths, request.cwd, excludes, defer_checks=deferred, tracked_only=request.tracked_only, later=later
    )
    more = list(request.extra_candidates)
    if request.folders:
        # a folder named inside a larger repository is walked even where the walk from the root
        # skips it (an excluded folder named on the command line, as ruff does)
        more = _folder_files(request, excludes) + more
    if more:  # one walk lists each file once; another walk, or a file added, may list one again
        seen = {c.display for c in candidates}
        for c in more:
            if c.display not in seen:
                seen.add(c.display)
                candidates.append(c)
    return candidates, warnings, later


def _folder_files(request: LintRequest, excludes: ExcludeSet) -> list[Candidate]:
    """The files of the folders given inside a larger repository: the walk made of them to know what
    to report when nothing is excluded, a new walk otherwise."""
    if request.folder_files is not None and not excludes.regexes:
        return request.folder_files
    return discover(request.folders, request.cwd, excludes, tracked_only=request.tracked_only)[0]
