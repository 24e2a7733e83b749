"""Inline suppression directives, the same in YAML, shell and Python comments:

... # recovery-lint: ignore[RL301] -- reason       (this line, or the line below when alone)
# recovery-lint: ignore-file[RL501]                 (the whole file)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .span import SourceText, Span

DIRECTIVE = re.compile(
    r"#\s*recovery-lint\s*:\s*(?P<kind>[A-Za-z-]+)(?P<bracket>\[(?P<codes>[^\]\n]*)\])?(?P<reason>[^\n\r]*)"
)
CODE = re.compile(r"^RL\d{3}$")


@dataclass
class Directive:
    kind: str  # ignore | ignore-file
    codes: list[tuple[str, Span]]  # each code with its own span
    span: Span  # the directive text, reason included
    line: int  # 1-based line it is on
    own_line: bool  # nothing but the comment on its line
    applies_to: int  # 1-based line it suppresses (ignore) ; 0 for ignore-file
    used: set[str] = field(default_factory=set)


@dataclass
class DirectiveProblem:
    span: Span
    message: str


def _comment_start_ok(text: str, pos: int, line_start: int) -> bool:
    # a '#' starts a comment at a line start or after whitespace (YAML and shell); Python agrees
    return pos == line_start or text[pos - 1] in " \t"


def find_directives(src: SourceText) -> tuple[list[Directive], list[DirectiveProblem]]:
    text = src.text
    directives: list[Directive] = []
    problems: list[DirectiveProblem] = []
    if "recovery-lint" not in text:
        return directives, problems
    for match in DIRECTIVE.finditer(text):
        start = match.start()
        line0 = src.line_of(start)
        line_start = src.line_start(line0)
        if not _comment_start_ok(text, start, line_start):
            continue
        span = src.span(start, start + len(match.group(0).rstrip()))
        kind = match.group("kind")
        if kind not in ("ignore", "ignore-file"):
            problems.append(
                DirectiveProblem(
                    span,
                    f"unknown directive 'recovery-lint: {kind}' (expected ignore[...] or ignore-file[...])",
                )
            )
            continue
        if match.group("bracket") is None:
            problems.append(
                DirectiveProblem(
                    span,
                    f"'recovery-lint: {kind}' names no code; write {kind}[RLxxx] so the scope is explicit",
                )
            )
            continue
        reason = match.group("reason").strip()
        if reason and not reason.startswith("--") and not reason.startswith("#"):
            problems.append(
                DirectiveProblem(
                    span, f"text after the directive must start with '--' (a reason): found '{reason[:30]}'"
                )
            )
            continue
        codes = _codes(src, match, problems)
        if codes is None:
            continue
        own_line = not text[line_start:start].strip()
        applies = 0
        if kind == "ignore":
            applies = line0 + 2 if own_line else line0 + 1
        directives.append(Directive(kind, codes, span, line0 + 1, own_line, applies))
    return directives, problems


def _codes(src: SourceText, match: re.Match[str], problems: list[DirectiveProblem]) -> list[tuple[str, Span]] | None:
    raw = match.group("codes")
    base = match.start("codes")
    codes: list[tuple[str, Span]] = []
    for part in re.finditer(r"[^,\s]+", raw):
        code = part.group(0)
        span = src.span(base + part.start(), base + part.end())
        if not CODE.match(code):
            problems.append(
                DirectiveProblem(span, f"'{code}' is not a rule code (expected RL followed by three digits)")
            )
            return None
        codes.append((code, span))
    if not codes:
        problems.append(DirectiveProblem(src.span(match.start(), match.end()), "empty code list"))
        return None
    return codes


def removal_edit(src: SourceText, directive: Directive, unused: set[str]) -> tuple[int, int, str]:
    """The character range to replace (and its replacement) to drop unused codes or the directive."""
    remaining = [c for c, _ in directive.codes if c not in unused]
    if remaining:
        first = directive.codes[0][1].start
        last = directive.codes[-1][1].end
        return first, last, ", ".join(remaining)
    start, end = directive.span.start, directive.span.end
    line0 = src.line_of(start)
    line_start = src.line_start(line0)
    if directive.own_line:
        # drop the whole line, terminator included
        next_start = src.line_starts[line0 + 1] if line0 + 1 < len(src.line_starts) else len(src.text)
        if next_start == len(src.text) and line_start > 0 and not src.text.endswith("\n"):
            # the last line, without a break after it: drop the break before it, CR included
            cut = 2 if src.text[line_start - 2 : line_start] == "\r\n" else 1
            return line_start - cut, len(src.text), ""
        return line_start, next_start, ""
    while start > line_start and src.text[start - 1] in " \t":
        start -= 1
    return start, end, ""
