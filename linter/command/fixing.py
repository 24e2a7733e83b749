"""The check command's writing modes: ``--fix`` and ``--diff`` (also over standard input), and
``--add-suppressions``. Each plans with the fix engine and writes through the one atomic writer,
only inside the trees the run was given."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import fix
from ..adopt import plan_suppressions
from ..diagnostics import Diagnostic
from ..engine import lint
from ..fix import WriteError, applicable, parse_regression, unified_diff, write_atomic
from ..flow.request import LintRequest, LintResult
from ..span import to_bytes
from .outcome import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, count, exit_code
from .output import Output


@dataclass(eq=False, repr=False)
class FixOptions:
    """The fix-related options of one check command."""

    unsafe: bool
    diff: bool
    exit_non_zero_on_fix: bool
    exit_zero: bool
    quiet: bool
    verbose: bool


Filter = Callable[[LintResult], list[Diagnostic]]  # the findings left to report (a baseline's)
Warn = Callable[[str], None]


def fix_files(options: FixOptions, request: LintRequest, out: Output, fail_on: str, keep: Filter, warn: Warn) -> int:
    """``--fix`` (or ``--diff``): every fix applied until nothing changes, then written (or shown)."""
    outcome = fix.fix_loop(request, unsafe=options.unsafe)
    outcome.result.diagnostics = keep(outcome.result)
    _warn_all(outcome.result.warnings, warn)
    for message in outcome.reverted:
        print(f"recovery-lint: error: {message}", file=sys.stderr)
    if not outcome.converged:
        warn("fixes did not converge after the maximum number of passes")
    if outcome.follow_ups and outcome.fixed:
        warn(follow_up_note(outcome.follow_ups, options.diff))
    status = EXIT_ERROR if outcome.reverted else EXIT_CLEAN
    if options.diff:
        text = "".join(unified_diff(p, outcome.original[p], t) for p, t in sorted(outcome.fixed.items()))
        out.write(text)
        would_fix(options, outcome.applied if text else 0, outcome.result.diagnostics)
        return EXIT_FINDINGS if text else status
    roots = write_roots(request)
    written = 0
    failed: set[str] = set()
    for path, text in sorted(outcome.fixed.items()):
        try:
            write_atomic(outcome.result.abs_paths[path], outcome.original[path], text, roots)
            written += 1
        except (WriteError, KeyError) as exc:
            print(f"recovery-lint: error: {path}: {exc}", file=sys.stderr)
            status = EXIT_ERROR
            failed.add(path)
    fixed = outcome.applied if written else 0
    if failed:
        # report what is on disk now: a file left unwritten keeps its findings
        request.overrides = {p: t for p, t in request.overrides.items() if p not in failed}
        outcome.result = lint(request)
        outcome.result.diagnostics = keep(outcome.result)
        before = len(outcome.before.diagnostics) if outcome.before is not None else 0
        fixed = max(0, before - len(outcome.result.diagnostics)) if written else 0
    out.report(outcome.result.diagnostics, outcome.result, fixed=fixed)
    outside = fixes_outside(outcome.result.diagnostics, request.report_only, options.unsafe)
    if outside:
        files = sorted(set(outside.values()))
        shown = ", ".join(files[:3]) + (", ..." if len(files) > 3 else "")
        left = count(len(outside), "fixable finding")
        warn(f"{left} left: the fix edits {shown}, not passed to this run (pass the file, or the folder)")
    if status == EXIT_ERROR:
        return status
    if options.exit_non_zero_on_fix and written:
        return EXIT_FINDINGS
    return exit_code(outcome.result.diagnostics, fail_on, options.exit_zero)


def fix_standard_input(
    options: FixOptions, request: LintRequest, display: str, original: str, out: Output, fail_on: str, keep: Filter
) -> int:
    """'-' with --fix or --diff: the fixed text (or the diff) on standard output, the report on standard error."""
    outcome = fix.fix_loop(request, unsafe=options.unsafe)
    outcome.result.diagnostics = keep(outcome.result)
    if not options.quiet:
        for message in [*outcome.result.warnings, *outcome.reverted]:
            print(f"recovery-lint: warning: {message}", file=sys.stderr)
    fixed = outcome.fixed.get(display, original)
    if options.diff:
        sys.stdout.write(unified_diff(display, original, fixed))
        would_fix(options, outcome.applied if fixed != original else 0, outcome.result.diagnostics)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(to_bytes(fixed))
    sys.stdout.flush()
    if not options.diff:  # --diff says what it would fix (above); the fixed text's own report would be of no file
        with contextlib.redirect_stdout(sys.stderr):
            applied = outcome.applied if fixed != original else 0
            out.report(outcome.result.diagnostics, outcome.result, fixed=applied)
    if outcome.reverted or outcome.result.internal_errors:
        return EXIT_ERROR
    if fixed != original and (options.diff or options.exit_non_zero_on_fix):
        return EXIT_FINDINGS
    return exit_code(outcome.result.diagnostics, fail_on, options.exit_zero)


def add_suppressions(request: LintRequest, warn: Warn) -> int:
    """``--add-suppressions``: an ignore directive for every finding, written file by file."""
    result = lint(request)
    _warn_all(result.warnings, warn)
    kinds = {f.path: f.kind for f in result.files}
    wanted = result.diagnostics
    if request.report_only is not None and request.named:  # as --fix: only the files passed are written
        wanted = [d for d in wanted if d.path in request.report_only]
    plan = plan_suppressions(wanted, result.sources(), kinds)
    parsed = {f.path: f for f in result.files}
    status = EXIT_CLEAN
    added = extended = files = 0
    for path, text in sorted(plan.texts.items()):
        problem = parse_regression(parsed[path], text)
        try:
            if problem:
                raise WriteError(f"not written: {problem}")
            write_atomic(result.abs_paths[path], parsed[path].text, text, write_roots(request))
        except WriteError as exc:
            print(f"recovery-lint: error: {path}: {exc}", file=sys.stderr)
            status = EXIT_ERROR
            continue
        files += 1
        added += plan.counts[path][0]
        extended += plan.counts[path][1]
    for line in plan.skipped:
        print(f"recovery-lint: warning: {line}", file=sys.stderr)  # the lines that were not suppressed
    line = f"Added {count(added, 'suppression directive')}"
    if extended:
        line += f" and extended {extended}"
    print(f"{line} in {count(files, 'file')}.")
    if plan.skipped and status == EXIT_CLEAN:
        print(f"{len(plan.skipped)} finding line(s) could not be suppressed (see above).")
        status = EXIT_FINDINGS
    return status


def write_roots(request: LintRequest) -> list[Path]:
    """The linted trees a fix may write in: each folder given, or the folder holding each file
    given (taken before links are followed, so a link named on the command line does not make
    its target's folder writable)."""
    roots = []
    for p in request.paths:
        path = Path(os.path.abspath(p if p.is_absolute() else request.cwd / p))
        roots.append(path.resolve() if path.is_dir() and not path.is_symlink() else path.parent.resolve())
    return roots


def fixes_outside(diagnostics: list[Diagnostic], report_only: set[str] | None, unsafe: bool) -> dict[int, str]:
    """Findings left with a fix that edits a file the run may not write (a run over named files
    writes those files only): finding -> the first such file."""
    if report_only is None:
        return {}
    out: dict[int, str] = {}
    for d in diagnostics:
        if applicable(d.fix, unsafe):
            others = sorted({e.path for e in d.fix.edits} - report_only)
            if others:
                out[id(d)] = others[0]
    return out


def follow_up_note(follow_ups: dict[str, int], diff: bool) -> str:
    """Fixes of findings the run did not report at first: they appeared once earlier fixes were in."""
    total = sum(follow_ups.values())
    codes = ", ".join(f"{code} ({n})" for code, n in sorted(follow_ups.items()))
    verb = "would also fix" if diff else "also fixed"
    return f"{verb} {count(total, 'finding')} that appeared only after earlier fixes: {codes}"


def would_fix(options: FixOptions, fixed: int, remaining: list[Diagnostic]) -> None:
    """--diff's summary, on standard error so that the patch on standard output stays a patch."""
    if options.quiet:
        return
    unsafe = options.unsafe
    more = 0 if unsafe else sum(1 for d in remaining if d.fix is not None and d.fix.applicability.value == "unsafe")
    extra = f" ({more} more with --unsafe-fixes)" if more else ""
    if fixed:
        print(f"Would fix {count(fixed, 'finding')}{extra}.", file=sys.stderr)
    else:
        print(f"No findings would be fixed{f' ({more} fixable with --unsafe-fixes)' if more else ''}.", file=sys.stderr)


def _warn_all(messages: list[str], warn: Warn) -> None:
    for message in messages:
        warn(message)
