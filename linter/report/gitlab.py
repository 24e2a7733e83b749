"""GitLab Code Quality: a JSON list of issues (``description``, ``check_name``, ``fingerprint``,
``severity``, ``location.path`` relative to the repository, ``location.lines.begin``), the report a
GitLab CI job publishes with ``artifacts: reports: codequality``. Findings outside the repository are
left out (GitLab could not place them); the fingerprint is the one SARIF and baselines use, so an
issue keeps its identity when lines move."""

from __future__ import annotations

import json
from pathlib import Path

from ..diagnostics import Diagnostic, Severity
from ..span import printable
from . import fails, repository_path, repository_root

# GitLab's scale: info, minor, major, critical, blocker
SEVERITIES = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def issue(d: Diagnostic, path: str, fingerprint: str, fail_on: str) -> dict[str, object]:
    severity = SEVERITIES[d.severity]
    if not fails(d.severity, fail_on) and severity != "info":
        severity = "minor"  # below --fail-on: reported, not what fails the pipeline
    return {
        "description": f"{d.code} {d.message}",
        "check_name": f"{d.code} {d.name}",
        "fingerprint": fingerprint,
        "severity": severity,
        "location": {"path": path, "lines": {"begin": d.span.line, "end": max(d.span.end_line, d.span.line)}},
    }


def render(diagnostics: list[Diagnostic], *, sources, cwd: Path, fail_on: str = "warning") -> str:
    from ..adopt import numbered_fingerprints

    root = repository_root(cwd)
    issues = []
    for d, (fingerprint, occurrence) in zip(
        diagnostics, numbered_fingerprints(diagnostics, sources, cwd, root), strict=True
    ):
        path = repository_path(d.path, cwd, root)
        if path is not None:  # outside the repository GitLab could not place it
            issues.append(issue(d, path, f"{fingerprint}:{occurrence}", fail_on))
    return printable(json.dumps(issues, indent=2, ensure_ascii=False)) + "\n"


SUMMARY_TO_STDERR = True
SCORECARD_SECTION = False


def document(view) -> str:
    return render(view.diagnostics, sources=view.sources, cwd=view.cwd, fail_on=view.fail_on)
