"""Run a rule's own examples (``Rule.cases``): the rule's documentation doubles as its tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import Config, config_from_dict
from .engine import lint
from .fix import fix_loop
from .flow.request import LintRequest, LintResult
from .rule import Case, Rule


@dataclass(eq=False, repr=False)
class CaseOutcome:
    """What a rule did on one of its cases: findings, fixed texts and errors."""

    positions: list[str]  # "path:line:column" of the rule's findings
    messages: list[str]
    fixed: dict[str, str]  # every case file's text after the fix loop
    errors: list[str]  # internal errors of the rules (a rule that raised)
    withheld: list[str]  # the premises the rule's advice was withheld on


def write_case(case: Case, root: Path) -> None:
    for rel, text in case.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def run_case(rule: Rule, case: Case, root: Path, rules: list[Rule] | None = None) -> CaseOutcome:
    """Lint a case's files, written under ``root``, with ``rule`` alone (or ``rules``)."""
    write_case(case, root)
    config = config_from_dict(case.config, None) if case.config else Config()
    from .registry import all_rules

    chosen = rules or [rule, *(all_rules()[c] for c in case.with_rules)]
    result: LintResult = lint(LintRequest(paths=[root], cwd=root, config=config, rules=chosen))
    own = [d for d in result.diagnostics if d.code == rule.code]
    positions = [f"{d.path}:{d.span.line}:{d.span.column}" for d in own]
    outcome = fix_loop(LintRequest(paths=[root], cwd=root, config=config, rules=chosen), unsafe=case.unsafe)
    fixed = {p: outcome.fixed.get(p, outcome.original.get(p, "")) for p in case.files}
    withheld = sorted({w.premise for w in result.withheld if w.code == rule.code})
    return CaseOutcome(
        positions, [d.message for d in own], fixed, result.internal_errors + outcome.result.internal_errors, withheld
    )


def position_matches(expected: str, actual: str) -> bool:
    """``path:line`` matches any column; ``path:line:col`` must match exactly."""
    return actual == expected or actual.rsplit(":", 1)[0] == expected
