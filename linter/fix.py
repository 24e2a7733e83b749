"""The one fix engine: applies edits on the original text, re-lints until stable, checks that
every changed file still parses, and writes atomically."""

from __future__ import annotations

import bisect
import difflib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import replace_file
from .diagnostics import Applicability, Diagnostic, Edit, Fix
from .engine import lint
from .flow.request import LintRequest, LintResult
from .kinds import MANIFEST
from .parse import ParsedFile, parse_guarded
from .span import SourceText, to_bytes

MAX_PASSES = 24  # a job takes a pass per rule with a fix for it (see this_pass)


@dataclass(eq=False, repr=False)
class FixOutcome:
    """The result of the fix loop: the final lint and each changed file's text before and after."""

    result: LintResult  # the lint of the final text
    original: dict[str, str]  # display path -> text before any fix
    fixed: dict[str, str]  # display path -> text after the fixes (changed files only)
    applied: int = 0
    reverted: list[str] = field(default_factory=list)  # messages for files left untouched
    converged: bool = True
    passes: list[dict[str, list[Edit]]] = field(default_factory=list)  # the edits applied in each pass, by path
    before: LintResult | None = None  # the lint of the original text
    # findings fixed that the first lint did not report: they appeared after earlier fixes (a label
    # that turns resumable training on makes RESUME_MODE_ENABLE due), by code
    follow_ups: dict[str, int] = field(default_factory=dict)


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    return fix is not None and (fix.applicability is Applicability.SAFE or unsafe)


def apply_fixes(
    diagnostics: list[Diagnostic],
    texts: dict[str, str],
    unsafe: bool,
    accepted: dict[str, list[Edit]] | None = None,
) -> tuple[dict[str, str], int]:
    """Apply every applicable fix that does not overlap one already taken; returns new texts.

    ``accepted``, when given, receives the edits applied, by path.
    """
    accepted = {} if accepted is None else accepted
    taken: set[tuple[object, ...]] = set()
    count = 0
    # the accepted edits of each path as a set and as (start, end) intervals in order, so that a
    # file with thousands of fixes is checked in n log n rather than n squared
    seen = {path: set(edits) for path, edits in accepted.items()}
    ranges = {path: sorted((e.span.start, e.span.end) for e in edits) for path, edits in accepted.items()}
    # one fix object reported by several findings (a job's every checkpoint call) is weighed once
    fixes = list({id(d.fix): d.fix for d in this_pass(diagnostics, unsafe)}.values())
    fixes.sort(key=lambda f: min((e.path, e.span.start) for e in f.edits))
    for fix in fixes:
        key = tuple(sorted((e.path, e.span.start, e.span.end, e.content) for e in fix.edits))
        if key in taken:
            continue  # the same fix reported for two jobs
        if any(e.path not in texts for e in fix.edits):
            continue
        # an edit identical to one already taken (two fixes adding the same import) is shared
        fresh = [e for e in fix.edits if e not in seen.get(e.path, ())]
        if any(_overlaps(e, ranges.get(e.path, [])) for e in fresh):
            continue  # waits for the next pass
        taken.add(key)
        for e in fresh:
            accepted.setdefault(e.path, []).append(e)
            seen.setdefault(e.path, set()).add(e)
            bisect.insort(ranges.setdefault(e.path, []), (e.span.start, e.span.end))
        count += 1
    new = dict(texts)
    for path, edits in accepted.items():
        new[path] = splice(texts[path], edits)
    return new, count


def this_pass(diagnostics: list[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    """The findings whose fixes this pass applies: for each job, those of the first rule (by code)
    with an applicable fix. The other rules' fixes for that job wait for the next pass, which is
    linted on the text the first one produced, so that no fix is combined with one that changes
    what its own rule decided (TaskD armed by RL202 while RL301 swaps in torch_npu_run, which RL301
    refuses beside TaskD). Findings of no job are not held back."""
    fixable = [d for d in diagnostics if applicable(d.fix, unsafe)]
    first: dict[str, str] = {}
    for d in sorted(fixable, key=lambda d: d.code):
        for job in _jobs_of(d):
            first.setdefault(job, d.code)
    return [d for d in fixable if all(first[job] == d.code for job in _jobs_of(d))]


def _jobs_of(d: Diagnostic) -> tuple[str, ...]:
    return d.origins or ((d.job,) if d.job else ())


def _overlaps(edit: Edit, ranges: list[tuple[int, int]]) -> bool:
    """Whether an edit conflicts with accepted ranges (in order). Accepted edits do not overlap each
    other, so only the one before the edit's start and those starting up to its end can conflict."""
    a0, a1 = edit.span.start, edit.span.end
    i = max(bisect.bisect_left(ranges, (a0, a0)) - 1, 0)
    while i < len(ranges) and ranges[i][0] <= a1:
        if _conflict(a0, a1, *ranges[i]):
            return True
        i += 1
    return False


def _conflict(a0: int, a1: int, b0: int, b1: int) -> bool:
    if a0 == a1 and b0 == b1:
        # two insertions at one point (two new keys at the end of one YAML mapping, say) need not
        # compose; the later one waits for the next pass, which is linted on the text holding the first
        return a0 == b0
    # an insertion inside a replaced range, or at its end, is ambiguous; one at its start goes before
    # it (a line inserted above a command whose first word is replaced)
    if a0 == a1:
        return b0 < a0 <= b1
    if b0 == b1:
        return a0 < b0 <= a1
    return a0 < b1 and b0 < a1


def splice(text: str, edits: list[Edit]) -> str:
    parts = []
    pos = 0
    for e in sorted(edits, key=_order):
        parts.append(text[pos : e.span.start])
        parts.append(e.content)
        pos = max(pos, e.span.end)
    parts.append(text[pos:])
    return "".join(parts)


def _order(e: Edit) -> tuple[int, int, int]:
    """Edits in text order. YAML insertions at one point go innermost first: an item appended to a
    sequence that ends there comes before a key added to the mapping holding it, and that key before
    one added to an outer mapping (each block ends where the next token starts)."""
    if e.span.start != e.span.end or not e.path.endswith((".yaml", ".yml")):
        return (e.span.start, e.span.end, 0)
    return (e.span.start, e.span.end, -_yaml_depth(e.content))


def _yaml_depth(content: str) -> int:
    for line in content.replace("\r", "").split("\n"):
        body = line.lstrip(" ")
        if body:
            return (len(line) - len(body)) * 2 + (1 if body == "-" or body.startswith("- ") else 0)
    return 0


def fix_loop(request: LintRequest, unsafe: bool) -> FixOutcome:
    given = dict(request.overrides)  # texts the caller supplied (standard input) stay in every pass
    result = first = lint(request)
    original = {f.path: f.text for f in result.files if f.source is not None}
    first_parse = {f.path: f for f in result.files}
    # only reported files may change (pre-commit mode); a fix that also edits another file is not applied
    writable = request.report_only
    texts = {p: t for p, t in original.items() if writable is None or p in writable}
    applied = 0
    converged = False
    passes: list[dict[str, list[Edit]]] = []
    reported = {(d.code, d.path, d.message) for d in first.diagnostics}
    follow_ups: dict[str, int] = {}
    for _ in range(MAX_PASSES):
        if not any(applicable(d.fix, unsafe) for d in result.diagnostics):
            converged = True
            break
        if result is not first:
            for d in result.diagnostics:
                if applicable(d.fix, unsafe) and (d.code, d.path, d.message) not in reported:
                    follow_ups[d.code] = follow_ups.get(d.code, 0) + 1
        accepted: dict[str, list[Edit]] = {}
        texts, count = apply_fixes(result.diagnostics, texts, unsafe, accepted)
        if count == 0:
            converged = True
            break
        applied += count
        passes.append(accepted)
        # a file a later pass turned back to its original text must be linted as that text too
        request.overrides = {
            **request.overrides,
            **{p: t for p, t in texts.items() if t != original.get(p) or p in request.overrides},
        }
        # every file this pass left alone keeps the model the last lint made of it
        request.earlier = {f.path: f for f in result.files if f.path not in accepted}
        result = lint(request)
    changed = {p: t for p, t in texts.items() if t != original.get(p)}
    final_parse = {f.path: f for f in result.files}  # the last lint already parsed the final texts
    reverted = []
    for path in list(changed):
        problem = parse_regression(first_parse.get(path), changed[path], final_parse.get(path))
        if problem:
            reverted.append(f"{path}: fixes not written: {problem}")
            del changed[path]
    if reverted:
        request.overrides = {**given, **changed}
        request.earlier = {}
        result = lint(request)
    return FixOutcome(result, original, changed, applied, reverted, converged, passes, first, follow_ups)


def parse_regression(before: ParsedFile | None, text: str, parsed: ParsedFile | None = None) -> str | None:
    """Why the fixed text is worse than the original, when it no longer parses as well."""
    if before is None or before.source is None:
        return None
    if parsed is not None and parsed.source is not None and parsed.text == text and parsed.kind == before.kind:
        after = parsed
    else:
        after = parse_guarded(SourceText(before.path, text), before.kind)
    old = {i.message for i in before.issues}
    new = [i for i in after.issues if i.message not in old]
    if len(after.issues) > len(before.issues) and new:
        return f"the fixed text would not parse ({new[0].message})"
    if before.kind == MANIFEST:
        old_docs = getattr(before.model, "documents", 0)
        new_docs = getattr(after.model, "documents", 0)
        if old_docs != new_docs:
            return f"the fixed text reads as {new_docs} YAML documents instead of {old_docs}"
    return None


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


class WriteError(Exception):
    pass


def write_atomic(path: Path, expected_before: str, text: str, roots: list[Path]) -> None:
    """Replace a file's content: a temporary file in the same folder, renamed over the original.

    Keeps the mode bits (and the owner when allowed); refuses a file whose real path is outside the
    linted tree (a symbolic link out of it), a read-only file, and one changed on disk since it was
    read. Every failure is a ``WriteError`` and leaves the original as it was.
    """
    target = path
    if path.is_symlink():
        try:
            target = path.resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
            raise WriteError(f"cannot resolve the symbolic link: {exc}") from exc
        if not any(_inside(target, r) for r in roots):
            raise WriteError("is a symbolic link to a file outside the linted tree; not written")
    try:
        current = target.read_bytes()
        info = target.stat()
    except OSError as exc:
        raise WriteError(f"cannot read before writing: {exc.strerror}") from exc
    if current != to_bytes(expected_before):
        raise WriteError("changed on disk while it was being linted; not written")
    mode = stat.S_IMODE(info.st_mode)
    # no write bit is read-only even for root, whom os.access always lets write
    if not os.access(target, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise WriteError("is read-only; not written")
    try:
        replace_file(target, to_bytes(text), mode, owner=(info.st_uid, info.st_gid))
    except OSError as exc:
        raise WriteError(f"write failed: {exc.strerror or exc}") from exc


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError, RuntimeError):
        return False
