"""SARIF 2.1.0 for code scanning (GitHub and other consumers): one run per invocation.

- ``tool.driver.rules`` lists every rule of the registry with its documentation and, as
  ``helpUri``, the address of its section in docs/rules.md (``docs.rule_url``: the distribution's
  documentation URL, else the file in the checkout recovery-lint runs from); results point at
  their rule by ``ruleId`` and ``ruleIndex``.
- Locations are relative to the repository root (``%SRCROOT%``), regions are 1-based and come
  from the diagnostic's real span; columns count characters (``columnKind: unicodeCodePoints``).
- ``partialFingerprints`` are the baseline's fingerprint (``adopt.fingerprint``: rule, repository
  path, job, whitespace-normalized text of the finding's lines; never a line number) plus an
  occurrence number, so an alert survives lines added above it.
- ``results`` is always present (``[]`` on a clean run); files that could not be parsed (the
  findings of a rule with ``file_not_checked``: RL900), linker warnings and internal rule errors are
  also ``toolExecutionNotifications``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..diagnostics import Diagnostic, Edit, Severity
from ..span import SourceText, Span, printable
from . import fails, repository_path, repository_root

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FINGERPRINT_KEY = "recoveryLintFinding/v1"


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


def rule_descriptor(rule, documentation_url: str | None = None) -> dict[str, object]:
    from ..docs import rule_url
    from ..rule import PHASE_TITLES

    doc = rule.documentation()
    url = rule_url(rule, documentation_url)
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _plain(doc), "markdown": doc},
        "help": {"text": _plain(doc), "markdown": doc},
        **({"helpUri": url} if url else {}),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": ["recovery-time", rule.phase],
            "phase": PHASE_TITLES[rule.phase],
            "fix": rule.fix_availability,
        },
    }


def _level(severity: Severity, fail_on: str) -> str:
    """A result's level follows ``--fail-on``: below it a ``note`` (it does not fail the run), at or
    above it at least a ``warning``."""
    if not fails(severity, fail_on):
        return "note"
    return "warning" if severity is Severity.INFO else LEVELS[severity]


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
    fail_on: str = "warning",
    documentation_url: str | None = None,
    withheld: Iterable[object] = (),
) -> dict[str, object]:
    from ..adopt import numbered_fingerprints
    from ..docs import documentation_base
    from ..registry import all_rules

    information = documentation_base(documentation_url)

    cwd = Path(cwd)
    root = root or repository_root(cwd)
    locator = _Locator(cwd, root)
    rules = list(all_rules().values())
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    notifications: list[dict[str, object]] = []
    # the baseline's fingerprint, taken relative to the repository root; the occurrence number tells
    # apart findings of one rule on the same text
    numbered = numbered_fingerprints(diagnostics, sources, cwd, root)
    for d, (fingerprint, occurrence) in zip(diagnostics, numbered, strict=True):
        result: dict[str, object] = {"ruleId": d.code}
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        result.update(
            {
                "level": _level(d.severity, fail_on),
                "message": {"text": d.message},
                "locations": [{"physicalLocation": locator.physical(d.span)}],
                "partialFingerprints": {
                    FINGERPRINT_KEY: f"{fingerprint}:{occurrence}",
                    "primaryLocationLineHash": f"{fingerprint[:16]}:{occurrence}",
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
        if d.code in index and rules[index[d.code]].file_not_checked:
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
                **({"informationUri": information} if information else {}),
                "rules": [rule_descriptor(r, documentation_url) for r in rules],
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": root.resolve().as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    held_back = list(withheld)
    if held_back:  # advice not given is no result: a property of the run, for tools that want it
        from .withheld import withheld_records

        run["properties"] = {"withheld": withheld_records(held_back)}  # type: ignore[arg-type]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render(diagnostics: list[Diagnostic], **kwargs) -> str:
    import json

    return printable(json.dumps(build(diagnostics, **kwargs), indent=2, ensure_ascii=False)) + "\n"


SUMMARY_TO_STDERR = True
SCORECARD_SECTION = False


def document(view) -> str:
    return render(
        view.diagnostics,
        sources=view.sources,
        cwd=view.cwd,
        warnings=view.warnings,
        internal_errors=view.internal_errors,
        fail_on=view.fail_on,
        documentation_url=view.documentation_url,
        withheld=view.withheld,
    )
