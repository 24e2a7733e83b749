"""One ``path:line:col: CODE [*] severity: message`` line per finding (``[*]``: a safe fix)."""

from __future__ import annotations

from ..diagnostics import Diagnostic


def render(diagnostics: list[Diagnostic]) -> str:
    lines = []
    for d in diagnostics:
        mark = " [*]" if d.fix is not None and d.fix.applicability.value == "safe" else ""
        lines.append(f"{d.path}:{d.span.line}:{d.span.column}: {d.code}{mark} {d.severity.value}: {d.message}")
    return "\n".join(lines) + ("\n" if lines else "")
