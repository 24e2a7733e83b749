"""Every rule's own examples: where it must fire, where it must stay silent, and the fixed text."""

from __future__ import annotations

import pytest

from recovery_lint.registry import all_rules
from recovery_lint.testing import position_matches, run_case

CASES = [
    pytest.param(rule, case, id=f"{code}-{i}-{case.title or 'case'}")
    for code, rule in all_rules().items()
    for i, case in enumerate(rule.cases)
]


@pytest.mark.parametrize(("rule", "case"), CASES)
def test_rule_case(rule, case, tmp_path):
    outcome = run_case(rule, case, tmp_path)
    assert not outcome.errors, outcome.errors
    unmatched = [e for e in case.expect if not any(position_matches(e, a) for a in outcome.positions)]
    unexpected = [a for a in outcome.positions if not any(position_matches(e, a) for e in case.expect)]
    assert not unmatched and not unexpected, (
        f"{rule.code} expected {list(case.expect)} got {outcome.positions}: {outcome.messages}"
    )
    if case.withheld:
        assert outcome.withheld == sorted(case.withheld), f"{rule.code} withheld on {outcome.withheld}"
    if case.fixed is not None:
        for path, text in case.fixed.items():
            assert outcome.fixed[path] == text, f"{rule.code} fixed text of {path}"


@pytest.mark.parametrize("rule", list(all_rules().values()), ids=lambda r: r.code)
def test_rule_is_documented_and_exemplified(rule):
    for field in ("summary", "what", "why", "example", "fix"):
        assert getattr(rule, field).strip(), f"{rule.code} lacks {field}"
    assert rule.sources, f"{rule.code} lacks sources"
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.phase in ("detection", "rescheduling", "comm-init", "checkpoint", "compile", "versions", "meta")
    assert any(c.expect for c in rule.cases), f"{rule.code} has no example that must fire"
    assert any(not c.expect for c in rule.cases), f"{rule.code} has no example that must stay silent"
    if rule.fix_availability != "none":
        assert any(c.fixed for c in rule.cases), f"{rule.code} has a fix but no expected fixed text"
    if rule.fix_availability == "always":
        # "Fix: always" on the page is a promise; a documented exception makes it "sometimes".
        assert "no fix" not in rule.fix.lower(), f"{rule.code} says Fix: always but documents when there is none"
