"""Inline suppression directives, the same in YAML, shell and Python comments:

... # recovery-lint: ignore[RL301] -- reason       (the finding on this line, or on the line below when alone)
# recovery-lint: ignore-file[RL501]                 (the whole file)

A directive counts only in a real comment, as the file's own language sees it: Python's tokenizer,
the YAML scanner and tree-sitter-bash say where comments are, so a ``#`` inside a string, a quoted
scalar, a block scalar or a heredoc is text, not a directive.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .kinds import MANIFEST, PYTHON, SHELL
from .lazyre import LazyPattern
from .span import SourceText, Span

MARKER = "recovery-lint"  # files without it are never tokenized

DIRECTIVE = LazyPattern(
    r"#\s*recovery-lint\s*:\s*(?P<kind>[A-Za-z-]+)(?P<bracket>\[(?P<codes>[^\]\n]*)\])?(?P<reason>[^\n\r]*)"
)
CODE = LazyPattern(r"^RL\d{3}$")


@dataclass
class Directive:
    """One suppression comment and the codes it names."""

    kind: str  # ignore | ignore-file
    codes: list[tuple[str, Span]]  # each code with its own span
    span: Span  # the directive text, reason included
    line: int  # 1-based line it is on
    own_line: bool  # nothing but the comment on its line
    applies_to: int  # 1-based line it suppresses (ignore) ; 0 for ignore-file
    used: set[str] = field(default_factory=set)

    def covers(self, span: Span) -> bool:
        """A file directive covers the file; a line directive covers a finding whose span includes
        its line (a multi-line finding is suppressed from any of its lines)."""
        if self.kind == "ignore-file":
            return True
        src = span.source
        last = src.line_of(span.end - 1) + 1 if span.end > span.start else span.line
        return span.line <= self.applies_to <= last


@dataclass
class DirectiveProblem:
    """A suppression comment that is malformed or names an unknown code."""

    span: Span
    message: str


def _comment_start_ok(text: str, pos: int, line_start: int) -> bool:
    # a '#' starts a comment at a line start or after whitespace (YAML and shell); Python agrees
    return pos == line_start or text[pos - 1] in " \t"


class Comments:
    """Where a file's comments are: ``ranges`` (sorted, non-overlapping) from its language's own
    tokenizer; from ``fallback`` on (where tokenizing stopped at a syntax error), and for kinds
    without one, a ``#`` at a line start or after whitespace."""

    def __init__(self, ranges: list[tuple[int, int]] | None = None, fallback: int = 0) -> None:
        self.starts = [r[0] for r in ranges or ()]
        self.ends = [r[1] for r in ranges or ()]
        self.fallback = fallback if ranges is not None else 0

    def holds(self, text: str, pos: int, line_start: int) -> bool:
        i = bisect.bisect_right(self.starts, pos) - 1
        if i >= 0 and pos < self.ends[i]:
            return True
        return pos >= self.fallback and _comment_start_ok(text, pos, line_start)


def comments_of(src: SourceText, kind: str | None, model: object = None) -> Comments:
    if kind == PYTHON:
        return _python_comments(src)
    if kind == MANIFEST:
        return _yaml_comments(src)
    if kind == SHELL:
        return _shell_comments(src, model)
    return Comments()  # requirements, pyproject, Dockerfile: a '#' after whitespace is a comment


def _python_comments(src: SourceText) -> Comments:
    import io
    import tokenize

    ranges: list[tuple[int, int]] = []
    starts = src.line_starts
    reached = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src.text).readline):
            reached = starts[min(tok.end[0], len(starts)) - 1] + tok.end[1]
            if tok.type == tokenize.COMMENT:
                first = starts[tok.start[0] - 1] + tok.start[1]
                ranges.append((first, first + len(tok.string)))
    except (tokenize.TokenError, SyntaxError):
        return Comments(ranges, fallback=reached)
    return Comments(ranges, fallback=len(src.text) + 1)


def _yaml_comments(src: SourceText) -> Comments:
    """The complement of the scalars: a '#' outside every scalar token (after whitespace) is a
    comment. A block scalar's header line (``key: |  # note``) is not part of its text."""
    import yaml

    try:
        from yaml.cyaml import CParser as Scanner
    except ImportError:  # pragma: no cover - PyYAML without libyaml
        from yaml import SafeLoader as Scanner  # type: ignore[assignment]

    text = src.text
    base = 1 if text.startswith("\ufeff") else 0
    scalars: list[tuple[int, int]] = []
    reached = 0
    scanner = Scanner(text[base:])
    try:
        while scanner.check_token():
            tok = scanner.get_token()
            reached = tok.end_mark.index + base
            if isinstance(tok, yaml.ScalarToken):
                start = tok.start_mark.index + base
                if tok.style in ("|", ">"):
                    start = src.line_end(src.line_of(start))
                scalars.append((start, reached))
    except yaml.YAMLError:
        return _outside(text, scalars, reached)
    finally:
        scanner.dispose()
    return _outside(text, scalars, len(text) + 1)


def _outside(text: str, scalars: list[tuple[int, int]], fallback: int) -> Comments:
    ranges = []
    pos = 0
    for start, end in scalars:
        if start > pos:
            ranges.extend(_hash_comments(text, pos, start))
        pos = max(pos, end)
    ranges.extend(_hash_comments(text, pos, min(fallback, len(text))))
    return Comments(ranges, fallback)


def _hash_comments(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Comments in a stretch of YAML with no scalar: from each '#' after whitespace to its line end."""
    out = []
    pos = text.find("#", start, end)
    while pos != -1:
        line_end = text.find("\n", pos)
        line_end = len(text) if line_end == -1 else line_end
        if pos == 0 or text[pos - 1] in " \t\n\r":
            out.append((pos, line_end))
            pos = line_end
        pos = text.find("#", pos + 1, end)
    return out


def _shell_comments(src: SourceText, model: object) -> Comments:
    comments = getattr(model, "comments", None)
    if comments is None:
        from .sources.shell import parse_shell

        comments = parse_shell(src).comments
    return Comments(sorted((c.start, c.end) for c in comments), fallback=len(src.text) + 1)


def find_directives(
    src: SourceText, kind: str | None = None, model: object = None
) -> tuple[list[Directive], list[DirectiveProblem]]:
    """The directives in ``src``'s comments; ``kind`` (and the parsed ``model``) say which language
    decides what a comment is (without a kind: a '#' at a line start or after whitespace)."""
    text = src.text
    directives: list[Directive] = []
    problems: list[DirectiveProblem] = []
    if MARKER not in text:
        return directives, problems
    comments: Comments | None = None
    for match in DIRECTIVE.finditer(text):
        start = match.start()
        line0 = src.line_of(start)
        line_start = src.line_start(line0)
        if not _comment_start_ok(text, start, line_start) and kind not in (PYTHON, SHELL):
            continue
        comments = comments or comments_of(src, kind, model)
        if not comments.holds(text, start, line_start):
            continue
        span = src.span(start, start + len(match.group(0).rstrip()))
        directive = match.group("kind")  # ``kind`` stays the file's language for the next match
        if directive not in ("ignore", "ignore-file"):
            problems.append(
                DirectiveProblem(
                    span,
                    f"unknown directive 'recovery-lint: {directive}' (expected ignore[...] or ignore-file[...])",
                )
            )
            continue
        if match.group("bracket") is None:
            problems.append(
                DirectiveProblem(
                    span,
                    f"'recovery-lint: {directive}' names no code; write {directive}[RLxxx] so the scope is explicit",
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
        if directive == "ignore":
            applies = line0 + 2 if own_line else line0 + 1
        directives.append(Directive(directive, codes, span, line0 + 1, own_line, applies))
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
