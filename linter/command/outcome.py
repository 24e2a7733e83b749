"""How a run ends: its exit code and the summary line under the findings."""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import Diagnostic, Severity
from ..kinds import MAYBE_SHELL, classify
from ..parse import shell_shebang

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # 128 + SIGINT, 128 + SIGTERM, as a shell reports them
NOTHING_TO_LINT = "No files to lint (no manifests, shell scripts, Python files or version pins found)."


def exit_code(diagnostics: list[Diagnostic], fail_on: str, exit_zero: bool) -> int:
    """1 when a finding at or above ``fail_on`` is left (never with ``exit_zero``), else 0."""
    if exit_zero:
        return EXIT_CLEAN
    threshold = Severity(fail_on).rank
    return EXIT_FINDINGS if any(d.severity.rank >= threshold for d in diagnostics) else EXIT_CLEAN


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def summary_line(diagnostics: list[Diagnostic], fixed: int, unsafe_fixes: bool, nothing_linted: bool) -> str:
    """``3 findings (1 fixable, 1 more with --unsafe-fixes) in 3 files``, after ``Fixed N findings``
    when fixes were written; ``All checks passed.`` (or that nothing was found to lint) when clean."""
    files = len({d.path for d in diagnostics})
    safe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "safe")
    unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "unsafe")
    if unsafe_fixes:  # the unsafe fixes are applied too: they count as fixable
        safe, unsafe = safe + unsafe, 0
    extra = f", {unsafe} more with --unsafe-fixes" if unsafe else ""
    line = f"{count(len(diagnostics), 'finding')} ({safe} fixable{extra}) in {count(files, 'file')}"
    if fixed:
        done = f"Fixed {count(fixed, 'finding')}"
        verb = "remains" if len(diagnostics) == 1 else "remain"
        return f"{done}; {line} {verb}" if diagnostics else f"{done}; no findings remain."
    if not diagnostics:
        return NOTHING_TO_LINT if nothing_linted else "All checks passed."
    return line


def read_by_a_run(display: str, path: Path) -> bool:
    """Whether a run reads a candidate: any with a known kind, an extensionless file only with a
    shell shebang (what decides its kind)."""
    if display == "-" or classify(path.name) != MAYBE_SHELL:
        return True
    try:
        with open(path, "rb") as handle:
            first = handle.readline(200)
    except OSError:
        return False
    return shell_shebang(first.decode("utf-8", "replace"))


def linted(candidates: dict[str, Path]) -> list[str]:
    """Display paths of the files a run reads: an extensionless file only with a shell shebang."""
    return sorted(display for display, path in candidates.items() if read_by_a_run(display, path))
