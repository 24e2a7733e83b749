"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` line per finding,
which the runner turns into an annotation on the file and lines of the pull request. A finding
below ``--fail-on`` does not fail the run, so it is a ``::notice``; one that fails it is at least a
``::warning``."""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import Diagnostic, Severity
from . import fails, repository_path, repository_root

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """The message part of a workflow command (after ``::``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A ``key=value`` property of a workflow command: also ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(d: Diagnostic, fail_on: str = "warning") -> str:
    if not fails(d.severity, fail_on):
        return "notice"
    return "warning" if d.severity is Severity.INFO else COMMANDS[d.severity]


def line(d: Diagnostic, path: str, fail_on: str = "warning") -> str:
    s = d.span
    props = [
        ("file", path),
        ("line", str(s.line)),
        ("col", str(s.column)),
        ("endLine", str(max(s.end_line, s.line))),
        ("endColumn", str(s.end_column)),
        ("title", f"{d.code} {d.name}"),
    ]
    head = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{command(d, fail_on)} {head}::{escape_data(d.message)}"


def render(diagnostics: list[Diagnostic], *, cwd: Path, root: Path | None = None, fail_on: str = "warning") -> str:
    root = root or repository_root(cwd)
    lines = [line(d, repository_path(d.path, cwd, root) or d.path, fail_on) for d in diagnostics]
    return "\n".join(lines) + ("\n" if lines else "")


SUMMARY_TO_STDERR = False
SCORECARD_SECTION = False


def document(view) -> str:
    return render(view.diagnostics, cwd=view.cwd, fail_on=view.fail_on)
