"""A JSON list of findings; schema in ``schemas/output.schema.json``."""

from __future__ import annotations

import json

from ..diagnostics import Diagnostic
from ..span import printable


def as_dict(d: Diagnostic) -> dict[str, object]:
    s = d.span
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "message": d.headline,
        "detail": d.detail,
        "path": s.path,
        "line": s.line,
        "column": s.column,
        "end_line": s.end_line,
        "end_column": s.end_column,
        "job": d.job,
        "fix": d.fix.to_dict() if d.fix is not None else None,
        "related": [
            {
                "path": r.span.path,
                "line": r.span.line,
                "column": r.span.column,
                "end_line": r.span.end_line,
                "end_column": r.span.end_column,
                "message": r.message,
            }
            for r in d.related
        ],
    }


def render(diagnostics: list[Diagnostic]) -> str:
    # printable: a shell script's undecodable bytes (quoted in a message or an edit) cannot be JSON text
    return printable(json.dumps([as_dict(d) for d in diagnostics], indent=2, ensure_ascii=False)) + "\n"


SUMMARY_TO_STDERR = True
SCORECARD_SECTION = False


def document(view) -> str:
    return render(view.diagnostics)
