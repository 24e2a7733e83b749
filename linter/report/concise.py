"""One ``path:line:col: CODE [*] severity: message`` line per finding (``[*]``: a safe fix). The
message is the finding's headline, its first sentence; the full and JSON formats add the detail."""

from __future__ import annotations

from ..diagnostics import Diagnostic, Severity

# ANSI styles (no rich here: concise output is the fast path of every CI and pre-commit run)
BOLD, CYAN, RESET = "\x1b[1m", "\x1b[36m", "\x1b[0m"
SEVERITY_STYLES = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m", Severity.INFO: "\x1b[1;36m"}


def render(diagnostics: list[Diagnostic], color: bool = False) -> str:
    lines = [_line(d, color) for d in diagnostics]
    return "\n".join(lines) + ("\n" if lines else "")


def _line(d: Diagnostic, color: bool) -> str:
    safe = d.fix is not None and d.fix.applicability.value == "safe"
    where = f"{d.path}:{d.span.line}:{d.span.column}:"
    if not color:
        return f"{where} {d.code}{' [*]' if safe else ''} {d.severity.value}: {d.headline}"
    style = SEVERITY_STYLES[d.severity]
    mark = f" {CYAN}[*]{RESET}" if safe else ""
    return f"{BOLD}{where}{RESET} {style}{d.code}{RESET}{mark} {style}{d.severity.value}:{RESET} {d.headline}"


SUMMARY_TO_STDERR = False
SCORECARD_SECTION = False


def document(view) -> str:
    return render(view.diagnostics, color=view.color)
