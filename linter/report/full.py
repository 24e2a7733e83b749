"""Findings with their source lines and the span marked, for a terminal (rich)."""

from __future__ import annotations

from ..diagnostics import Diagnostic, Severity
from ..span import SourceText
from . import fix_hint

STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}
CONTEXT = 1  # lines shown around the marked span
MAX_LINES = 6


def render(console, diagnostics: list[Diagnostic], sources: dict[str, SourceText]) -> None:
    from rich.text import Text

    for d in diagnostics:
        head = Text()
        head.append(f"{d.path}:{d.span.line}:{d.span.column}: ", style="bold")
        head.append(d.code, style=STYLES[d.severity])
        if d.fix is not None and d.fix.applicability.value == "safe":
            head.append(" [*]", style="cyan")
        head.append(f" {d.severity.value}:", style=STYLES[d.severity])
        head.append(f" {d.headline}")
        console.print(head, soft_wrap=True)
        src = sources.get(d.path)
        if src is not None and src.text:
            console.print(_snippet(src, d), soft_wrap=True, highlight=False)
        if d.detail:
            console.print(Text(f"  = note: {d.detail}"), soft_wrap=True)
        for related in d.related:
            console.print(
                Text(
                    f"  = note: {related.span.path}:{related.span.line}:{related.span.column}: {related.message}",
                    style="dim",
                ),
                soft_wrap=True,
            )
        if d.fix is not None:
            console.print(Text(f"  = help: {fix_hint(d.fix)}", style="cyan"), soft_wrap=True)
        console.print(Text(f"  = docs: {_docs(d.code)}", style="dim"), soft_wrap=True)
        console.print()


def _docs(code: str) -> str:
    """Where the rule's page is: the command that prints it, and its address when there is one."""
    from ..docs import rule_url
    from ..registry import all_rules

    rule = all_rules().get(code)
    url = rule_url(rule) if rule is not None else None
    return f"recovery-lint rule {code}" + (f" ({url})" if url else "")


def _snippet(src: SourceText, d: Diagnostic):
    from rich.text import Text

    first = max(d.span.line - 1 - CONTEXT, 0)
    last_marked = min(d.span.end_line - 1, d.span.line - 1 + MAX_LINES - 1)
    last = min(last_marked + CONTEXT, len(src.line_starts) - 1)
    if d.span.end_line > d.span.line and d.span.end_column == 1:
        last_marked = max(d.span.line - 1, last_marked - 1)
    width = len(str(last + 1))
    out = Text()
    for line0 in range(first, last + 1):
        line = src.line_text(line0).expandtabs(4)
        out.append(f"  {line0 + 1:>{width}} | ", style="blue")
        out.append(line[:200] + "\n")
        if d.span.line - 1 <= line0 <= last_marked:
            start = d.span.column - 1 if line0 == d.span.line - 1 else len(line) - len(line.lstrip())
            end = d.span.end_column - 1 if line0 == d.span.end_line - 1 else len(line)
            end = max(end, start + 1)
            out.append(f"  {'':>{width}} | ", style="blue")
            out.append(" " * start + "^" * min(end - start, 200) + "\n", style=STYLES[d.severity])
    out.rstrip()
    return out


SUMMARY_TO_STDERR = False
SCORECARD_SECTION = True


def document(view) -> str:
    import io

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(
        file=buffer, force_terminal=view.color, no_color=not view.color, width=view.width, highlight=False
    )
    render(console, view.diagnostics, view.sources)
    return buffer.getvalue()
