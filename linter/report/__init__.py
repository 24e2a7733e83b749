"""Output formats. Each is a module of this package with ``document(view) -> str`` (the report of a
run's findings), ``SUMMARY_TO_STDERR`` (the summary line goes to standard error, so that standard
output holds the document alone) and ``SCORECARD_SECTION`` (the scorecard follows the findings)."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic
    from ..span import SourceText

FORMATS = ("full", "concise", "json", "sarif", "github", "gitlab", "junit")


@dataclass(eq=False, repr=False)
class View:
    """What a document is made from."""

    diagnostics: list[Diagnostic]
    sources: dict[str, SourceText]  # display path -> its text, for the lines a finding quotes
    linted: list[str]  # the files the run reports on (a test case each, in JUnit)
    cwd: Path
    fail_on: str  # the lowest severity that fails the run: nothing below it is shown as a failure
    color: bool
    width: int
    warnings: list[str]
    internal_errors: list[str]
    documentation_url: str | None = None  # the configured address of docs/rules.md, when given
    withheld: list = field(default_factory=list)  # advice withheld for an unknown premise (premises.Withheld)


def renderer(name: str) -> ModuleType:
    """The module of the output format ``name`` (imported when a run first asks: rich is the full
    format's alone)."""
    if name not in FORMATS:
        raise ValueError(f"unknown output format {name!r}")
    return importlib.import_module(f"{__name__}.{name}")


def fails(severity, fail_on: str) -> bool:
    """Whether a finding of this severity fails the run under ``--fail-on`` (the exit code's rule,
    which every format follows: what does not fail the run is never shown as a failure)."""
    from ..diagnostics import Severity

    return severity.rank >= Severity(fail_on).rank


def fix_hint(fix) -> str:
    """How a fix is offered, in words: 'Add the label ... (safe fix: --fix)'."""
    how = "safe fix: --fix" if fix.applicability.value == "safe" else "unsafe fix: --fix --unsafe-fixes"
    return f"{fix.message} ({how})"


def repository_root(cwd: Path) -> Path:
    """The nearest directory at or above ``cwd`` holding ``.git`` (a checkout), else ``cwd``."""
    cwd = Path(os.path.abspath(cwd))
    for candidate in (cwd, *cwd.parents):
        if (candidate / ".git").exists():
            return candidate
    return cwd


def repository_path(display: str, cwd: Path, root: Path) -> str | None:
    """A display path (relative to ``cwd``, or absolute) relative to ``root``, '/' separated;
    None when the file lies outside the repository."""
    absolute = Path(os.path.normpath(Path(os.path.abspath(cwd)) / display))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return None


def write_report_file(path: Path, text: str) -> None:
    """Write a report atomically: a reader (or an upload step) never sees a half-written file. A shell
    script's undecodable bytes, quoted in a text report, are written as they are in the file."""
    from ..atomic import replace_file  # loaded by a run that writes its report to a file

    replace_file(Path(path), text.encode("utf-8", "surrogateescape"))
