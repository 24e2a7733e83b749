"""Adopting the linter on a repository that already has findings.

- ``--add-suppressions``: a ``# recovery-lint: ignore[...]`` directive for every current finding,
  merged into a directive already on the line, written through the fix engine's edit and atomic
  write path. A comment is never put where it would become part of a value (a YAML block scalar, a
  quoted string spanning lines, a heredoc, after a line continuation): the directive then goes on
  its own line above, or the line is reported as skipped.
- ``--write-baseline`` / ``--baseline``: the current findings recorded by a fingerprint that does
  not depend on line numbers, so only new findings are reported.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import Diagnostic, Edit
from .kinds import DOCKERFILE, MANIFEST, PYPROJECT, PYTHON, SHELL
from .registry import indexed_rules
from .span import SourceText, to_bytes
from .suppress import find_directives

BASELINE_VERSION = 1
SNIPPET_MAX_LINES = 5


# -- where a comment may go ----------------------------------------------------------------------
@dataclass(eq=False, repr=False)
class CommentRules:
    """Character ranges whose interior a comment must not enter, and lines continued onto the next."""

    protected: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, what) open interval
    continued: set[int] = field(default_factory=set)  # 0-based lines ending in a line continuation
    trailing: bool = True  # False where a comment may only stand on its own line (Dockerfile)

    def inside(self, pos: int) -> str | None:
        for start, end, what in self.protected:
            if start < pos < end:
                return what
        return None


def comment_rules(src: SourceText, kind: str) -> CommentRules:
    if kind == MANIFEST:
        return CommentRules(_yaml_ranges(src))
    if kind == SHELL:
        rules = CommentRules(_shell_ranges(src))
    elif kind == PYTHON:
        rules = CommentRules(_python_ranges(src))
    elif kind == PYPROJECT:
        rules = CommentRules(_toml_ranges(src))
    elif kind == DOCKERFILE:
        return CommentRules(trailing=False)
    else:
        rules = CommentRules()
    for line0 in range(len(src.line_starts)):
        end = src.line_end(line0)
        if rules.inside(end) is None and _continues(src.text[src.line_start(line0) : end]):
            rules.continued.add(line0)
    return rules


def _continues(line: str) -> bool:
    stripped = line.rstrip(" \t")
    return (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1


def _yaml_ranges(src: SourceText) -> list[tuple[int, int, str]]:
    import yaml

    out: list[tuple[int, int, str]] = []
    try:
        for token in yaml.scan(src.text, Loader=yaml.SafeLoader):
            if not isinstance(token, yaml.ScalarToken) or token.start_mark.line == token.end_mark.line:
                continue
            start, end = token.start_mark.index, token.end_mark.index
            if token.style in ("|", ">"):
                header_end = src.text.find("\n", start)
                start = header_end if header_end != -1 else end
                out.append((start, end, "a YAML block scalar"))
            else:
                what = "a plain YAML scalar" if token.style is None else "a quoted YAML string"
                out.append((start, end, f"{what} spanning lines"))
    except yaml.YAMLError:
        pass  # the ranges found before the error still hold
    return out


_SHELL_STRINGS = {"string", "raw_string", "ansi_c_string", "translated_string"}


def _shell_ranges(src: SourceText) -> list[tuple[int, int, str]]:
    from .sources.shell import _parser, tree_sitter_text

    src = SourceText(src.path, tree_sitter_text(src.text))  # one character for one: offsets hold in the file
    tree = _parser().parse(to_bytes(src.text))
    out: list[tuple[int, int, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _SHELL_STRINGS and node.start_point[0] != node.end_point[0]:
            out.append(
                (src.char_offset(node.start_byte), src.char_offset(node.end_byte), "a quoted string spanning lines")
            )
            continue
        if node.type == "heredoc_redirect":
            body = [c for c in node.children if c.type in ("heredoc_body", "heredoc_end")]
            if body:
                start = src.char_offset(body[0].start_byte) - 1  # the line break that opens the body
                end = src.char_offset(body[-1].end_byte) + 1  # the terminator line is part of it
                out.append((start, end, "a heredoc"))
        stack.extend(node.children)
    return out


def _python_ranges(src: SourceText) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []

    def offset(row: int, col: int) -> int:
        return src.line_starts[min(row - 1, len(src.line_starts) - 1)] + col

    fstring_starts: list[tuple[int, int]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src.text).readline):
            name = tokenize.tok_name.get(tok.type, "")
            if name == "FSTRING_START":
                fstring_starts.append(tok.start)
            elif name == "FSTRING_END" and fstring_starts:
                begin = fstring_starts.pop()
                if begin[0] != tok.end[0]:
                    out.append((offset(*begin), offset(*tok.end), "a string spanning lines"))
            elif tok.type == tokenize.STRING and tok.start[0] != tok.end[0]:
                out.append((offset(*tok.start), offset(*tok.end), "a string spanning lines"))
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


_TOML_MULTILINE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')


def _toml_ranges(src: SourceText) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), "a TOML string spanning lines") for m in _TOML_MULTILINE.finditer(src.text)]


# -- --add-suppressions ------------------------------------------------------------------------
@dataclass(eq=False, repr=False)
class SuppressionPlan:
    """What --add-suppressions would write: the new texts and what it added, extended or skipped."""

    texts: dict[str, str] = field(default_factory=dict)  # display path -> new text (changed files)
    added: int = 0  # new directives
    extended: int = 0  # existing directives that got more codes
    skipped: list[str] = field(default_factory=list)  # "path:line: why"
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (added, extended)


def plan_suppressions(diagnostics: list[Diagnostic], sources: dict[str, SourceText], kinds: dict[str, str]):
    from .fix import splice

    wanted: dict[str, dict[int, set[str]]] = {}
    plan = SuppressionPlan()
    for d in diagnostics:
        if not _suppressible(d.code):
            continue
        if d.path not in sources:
            plan.skipped.append(f"{d.path}:{d.span.line}: {d.code} not suppressed: the file could not be read")
            continue
        wanted.setdefault(d.path, {}).setdefault(d.span.line, set()).add(d.code)
    for path, lines in sorted(wanted.items()):
        src = sources[path]
        before = (plan.added, plan.extended)
        edits = _file_edits(src, kinds.get(path, ""), lines, plan)
        if edits:
            plan.texts[path] = splice(src.text, edits)
            plan.counts[path] = (plan.added - before[0], plan.extended - before[1])
    return plan


def _suppressible(code: str) -> bool:
    """Whether a line directive may silence the rule (not one that judges the directives themselves)."""
    rule = indexed_rules().get(code)
    return rule is None or rule.suppressible


def _directive(codes: set[str]) -> str:
    return f"# recovery-lint: ignore[{', '.join(sorted(codes))}]"


def _file_edits(src: SourceText, kind: str, lines: dict[int, set[str]], plan: SuppressionPlan) -> list[Edit]:
    directives, _ = find_directives(src, kind)
    existing = {d.applies_to: d for d in directives if d.kind == "ignore"}
    rules = comment_rules(src, kind)
    edits: list[Edit] = []
    for line1, codes in sorted(lines.items()):
        line0 = line1 - 1
        current = existing.get(line1)
        if current is not None:
            merged = {c for c, _ in current.codes} | codes
            first, last = current.codes[0][1].start, current.codes[-1][1].end
            edits.append(Edit(src.span(first, last), ", ".join(sorted(merged))))
            plan.extended += 1
            continue
        if line0 >= len(src.line_starts):
            plan.skipped.append(f"{src.path}:{line1}: {', '.join(sorted(codes))} not suppressed: no such line")
            continue
        if line0 == 0 and src.text.startswith("#!"):
            # the interpreter line: a comment after it would reach the interpreter as an argument (the
            # script then fails to start), and nothing goes above it; the finding is of the whole file
            edits.append(_below_interpreter_line(src, codes))
            plan.added += 1
            continue
        end = src.line_end(line0)
        why = rules.inside(end)
        if why is None and line0 in rules.continued:
            why = "a line continued onto the next"
        if rules.trailing and why is None:
            gap = "" if end == src.line_start(line0) else "  "
            edits.append(Edit(src.span(end), f"{gap}{_directive(codes)}"))
            plan.added += 1
            continue
        start = src.line_start(line0)
        above = rules.inside(start) or (
            "a line continued from the one above" if line0 > 0 and (line0 - 1) in rules.continued else None
        )
        if above is None:
            text = f"{src.indent_of_line(line0)}{_directive(codes)}{src.newline}"
            edits.append(Edit(src.span(start), text))
            plan.added += 1
            continue
        plan.skipped.append(
            f"{src.path}:{line1}: {', '.join(sorted(codes))} not suppressed: the line is inside {above or why}, "
            "where a comment would change the text"
        )
    return edits


def _below_interpreter_line(src: SourceText, codes: set[str]) -> Edit:
    """``# recovery-lint: ignore-file[...]`` on the line after a ``#!`` line."""
    directive = f"# recovery-lint: ignore-file[{', '.join(sorted(codes))}]"
    if len(src.line_starts) > 1:
        return Edit(src.span(src.line_start(1)), f"{directive}{src.newline}")
    return Edit(src.span(len(src.text)), f"{src.newline}{directive}{src.newline}")  # a one-line file


# -- baseline ----------------------------------------------------------------------------------
_JOB_ID = re.compile(r"^(.*)#\d+ (.*)$")


class BaselineError(Exception):
    pass


def _relative(path: str, cwd: Path, base: Path) -> str:
    if path == "-":
        return path
    absolute = Path(path) if Path(path).is_absolute() else cwd / path
    try:
        return absolute.resolve().relative_to(base.resolve()).as_posix()
    except (ValueError, OSError):
        return absolute.as_posix()


def snippet(d: Diagnostic, src: SourceText | None) -> str:
    """The whitespace-normalized text of the lines the finding covers (its first line when it covers many)."""
    if src is None or not src.line_starts:
        return ""
    first = min(d.span.line - 1, len(src.line_starts) - 1)
    last = min(d.span.end_line - 1, len(src.line_starts) - 1)
    if last - first >= SNIPPET_MAX_LINES:
        last = first
    text = src.text[src.line_start(first) : src.line_end(last)]
    return " ".join(text.split())


def fingerprint(d: Diagnostic, src: SourceText | None, cwd: Path, base: Path) -> str:
    """Rule code, path (relative to ``base``), job identity and source snippet; no line numbers."""
    job = ""
    if d.job:  # "path#2 Job/ns/name": the document's position in its file is left out too
        match = _JOB_ID.match(d.job)
        job = f"{_relative(match[1], cwd, base)} {match[2]}" if match else d.job
    parts = (d.code, _relative(d.path, cwd, base), job, snippet(d, src))
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def numbered_fingerprints(
    diagnostics: list[Diagnostic], sources: dict[str, SourceText], cwd: Path, base: Path
) -> list[tuple[str, int]]:
    """Each finding's fingerprint and its occurrence number among the findings with that fingerprint
    (one rule on the same text twice: 1, then 2), as the report formats that identify findings give them."""
    seen: Counter[str] = Counter()
    out = []
    for d in diagnostics:
        fp = fingerprint(d, sources.get(d.path), cwd, base)
        seen[fp] += 1
        out.append((fp, seen[fp]))
    return out


def write_baseline(file: Path, diagnostics: list[Diagnostic], sources: dict[str, SourceText], cwd: Path) -> int:
    from . import __version__

    base = file.absolute().parent
    counts: Counter[tuple[str, str, str]] = Counter()
    for d in diagnostics:
        counts[(fingerprint(d, sources.get(d.path), cwd, base), d.code, _relative(d.path, cwd, base))] += 1
    entries = [
        {"fingerprint": fp, "code": code, "path": path, "count": n}
        for (fp, code, path), n in sorted(counts.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0]))
    ]
    data = {"version": BASELINE_VERSION, "tool": f"recovery-lint {__version__}", "findings": entries}
    try:
        file.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    except OSError as exc:
        raise BaselineError(f"{file}: cannot write: {exc.strerror}") from exc
    return len(diagnostics)


def read_baseline(file: Path) -> Counter[str]:
    try:
        data = json.loads(file.read_text("utf-8"))
    except OSError as exc:
        raise BaselineError(f"{file}: cannot read: {exc.strerror}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{file}: not a JSON file: {exc}") from exc
    if not isinstance(data, dict) or "version" not in data:
        raise BaselineError(f"{file}: not a recovery-lint baseline (no 'version' field)")
    if data["version"] != BASELINE_VERSION:
        raise BaselineError(
            f"{file}: baseline version {data['version']!r} is not supported (expected {BASELINE_VERSION}); "
            "write it again with --write-baseline"
        )
    findings = data.get("findings")
    if not isinstance(findings, list):
        raise BaselineError(f"{file}: 'findings' must be a list")
    counts: Counter[str] = Counter()
    for i, entry in enumerate(findings):
        fp = entry.get("fingerprint") if isinstance(entry, dict) else None
        n = entry.get("count", 1) if isinstance(entry, dict) else None
        if not isinstance(fp, str) or not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise BaselineError(f"{file}: findings[{i}] needs a string 'fingerprint' and a positive integer 'count'")
        counts[fp] += n
    return counts


def filter_baseline(
    diagnostics: list[Diagnostic], known: Counter[str], sources: dict[str, SourceText], cwd: Path, base: Path
) -> tuple[list[Diagnostic], int]:
    """The findings not in the baseline (each baseline entry absorbs as many findings as its count)."""
    left = Counter(known)
    kept = []
    matched = 0
    for d in diagnostics:
        fp = fingerprint(d, sources.get(d.path), cwd, base)
        if left[fp] > 0:
            left[fp] -= 1
            matched += 1
        else:
            kept.append(d)
    return kept, matched
