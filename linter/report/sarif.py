"""SARIF 2.1.0 for code scanning (GitHub and other consumers): one run per invocation.

- ``tool.driver.rules`` lists every rule of the registry with its documentation and a ``helpUri``
  into docs/rules.md; results point at their rule by ``ruleId`` and ``ruleIndex``.
- Locations are relative to the repository root (``%SRCROOT%``), regions are 1-based and come
  from the diagnostic's real span; columns count characters (``columnKind: unicodeCodePoints``).
- ``partialFingerprints`` hash the rule, the repository path, the job and the normalized source
  text of the finding, never its line number, so an alert survives lines added above it.
- ``results`` is always present (``[]`` on a clean run); files that could not be parsed (RL900),
  linker warnings and internal rule errors are also ``toolExecutionNotifications``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..diagnostics import Diagnostic, Edit, Severity
from ..span import SourceText, Span
from . import PROJECT_URL, repository_path, repository_root, rule_help_uri

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FINGERPRINT_KEY = "recoveryLintFinding/v1"
MAX_FINGERPRINT_LINES = 20
_JOB_ID = re.compile(r"^(.*)#\d+ (.*)$")


# -- fingerprints --------------------------------------------------------------------------------
def normalize(text: str) -> str:
    """Whitespace-insensitive form of source text: runs of blanks (and line breaks) become one space."""
    return " ".join(text.split())


def job_identity(job: str | None, cwd: Path, root: Path) -> str:
    """The job a finding belongs to, independent of the working directory and document order:
    ``deploy/a.yaml#2 Job/ns/name`` becomes ``deploy/a.yaml Job/ns/name`` (repository-relative)."""
    if not job:
        return ""
    match = _JOB_ID.match(job)
    if match is None:
        return job
    path, rest = match.groups()
    return f"{repository_path(path, cwd, root) or path} {rest}"


def finding_fingerprint(d: Diagnostic, source: SourceText | None, path: str, job: str) -> str:
    """A hash of what a finding is, not where it is: rule, path, job and the normalized text of
    the span and of the lines it stands on."""
    span_text = lines_text = ""
    if source is not None and source.text:
        span = d.span
        span_text = source.text[span.start : span.end]
        first = max(span.line - 1, 0)
        last = min(span.end_line - 1, first + MAX_FINGERPRINT_LINES - 1, len(source.line_starts) - 1)
        lines_text = "\n".join(source.line_text(i) for i in range(first, last + 1))
    elif d.snippet:
        span_text = d.snippet
    digest = hashlib.sha256()
    for part in ("v1", d.code, path, job, normalize(span_text), normalize(lines_text)):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()[:32]


# -- locations -----------------------------------------------------------------------------------
def _region(span: Span) -> dict[str, int]:
    return {
        "startLine": max(span.line, 1),
        "startColumn": max(span.column, 1),
        "endLine": max(span.end_line, span.line, 1),
        "endColumn": max(span.end_column, 1),
    }


class _Locator:
    def __init__(self, cwd: Path, root: Path) -> None:
        self.cwd = cwd
        self.root = root

    def artifact(self, display: str) -> dict[str, str]:
        rel = repository_path(display, self.cwd, self.root)
        if rel is not None:
            return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}
        return {"uri": (Path(self.cwd) / display).resolve().as_uri()}

    def physical(self, span: Span) -> dict[str, object]:
        return {"artifactLocation": self.artifact(span.path), "region": _region(span)}


# -- document --------------------------------------------------------------------------------------
def _plain(markdown: str) -> str:
    """The rule page as plain text: headings without their marks, no code fences."""
    lines = []
    for line in markdown.splitlines():
        if line.startswith("```"):
            continue
        lines.append(line.lstrip("#").lstrip() if line.startswith("#") else line)
    return "\n".join(lines).strip() + "\n"


def rule_descriptor(rule) -> dict[str, object]:
    from ..rule import PHASE_TITLES

    doc = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _plain(doc), "markdown": doc},
        "help": {"text": _plain(doc), "markdown": doc},
        "helpUri": rule_help_uri(rule.code, rule.name),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": ["recovery-time", rule.phase],
            "phase": PHASE_TITLES[rule.phase],
            "fix": rule.fix_availability,
        },
    }


def _fix(fix, locator: _Locator) -> dict[str, object]:
    by_path: dict[str, list[Edit]] = {}
    for edit in sorted(fix.edits, key=lambda e: (e.path, e.span.start)):
        by_path.setdefault(edit.path, []).append(edit)
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {
                "artifactLocation": locator.artifact(path),
                "replacements": [
                    {"deletedRegion": _region(e.span), "insertedContent": {"text": e.content}} for e in edits
                ],
            }
            for path, edits in by_path.items()
        ],
        "properties": {"applicability": fix.applicability.value},
    }


def build(
    diagnostics: list[Diagnostic],
    *,
    sources: dict[str, SourceText],
    cwd: Path,
    root: Path | None = None,
    warnings: Iterable[str] = (),
    internal_errors: Iterable[str] = (),
) -> dict[str, object]:
    from ..registry import all_rules

    cwd = Path(cwd)
    root = root or repository_root(cwd)
    locator = _Locator(cwd, root)
    rules = list(all_rules().values())
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    notifications: list[dict[str, object]] = []
    seen: dict[str, int] = {}
    for d in diagnostics:
        rel = repository_path(d.path, cwd, root) or d.path
        fingerprint = finding_fingerprint(d, sources.get(d.path), rel, job_identity(d.job, cwd, root))
        seen[fingerprint] = seen.get(fingerprint, 0) + 1
        result: dict[str, object] = {"ruleId": d.code}
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        result.update(
            {
                "level": LEVELS[d.severity],
                "message": {"text": d.message},
                "locations": [{"physicalLocation": locator.physical(d.span)}],
                "partialFingerprints": {
                    FINGERPRINT_KEY: fingerprint,
                    "primaryLocationLineHash": f"{fingerprint[:16]}:{seen[fingerprint]}",
                },
            }
        )
        if d.related:
            result["relatedLocations"] = [
                {"id": i, "physicalLocation": locator.physical(r.span), "message": {"text": r.message}}
                for i, r in enumerate(d.related, start=1)
            ]
        if d.fix is not None and d.fix.edits:
            result["fixes"] = [_fix(d.fix, locator)]
        properties: dict[str, object] = {"name": d.name}
        if d.job:
            properties["job"] = d.job
        result["properties"] = properties
        results.append(result)
        if d.code == "RL900":
            note: dict[str, object] = {
                "level": "error",
                "message": {"text": f"{d.path}: {d.message}"},
                "locations": [{"physicalLocation": locator.physical(d.span)}],
                "descriptor": {"id": d.code},
            }
            if d.code in index:
                note["associatedRule"] = {"id": d.code, "index": index[d.code]}
            notifications.append(note)
    notifications += [{"level": "warning", "message": {"text": w}} for w in warnings]
    errors = list(internal_errors)
    notifications += [{"level": "error", "message": {"text": e}} for e in errors]
    invocation: dict[str, object] = {"executionSuccessful": not errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run = {
        "tool": {
            "driver": {
                "name": "recovery-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": PROJECT_URL,
                "rules": [rule_descriptor(r) for r in rules],
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": root.resolve().as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render(diagnostics: list[Diagnostic], **kwargs) -> str:
    import json

    return json.dumps(build(diagnostics, **kwargs), indent=2, ensure_ascii=False) + "\n"
