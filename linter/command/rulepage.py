"""The ``rule`` command: one rule's page, or the table of every rule (text, JSON or Markdown)."""

from __future__ import annotations

import json
import re
import sys

from ..argv import UsageError, rule_parser
from ..docs import rules_markdown
from ..registry import all_rules, by_name
from ..rule import Rule
from .outcome import EXIT_CLEAN

FIX_LEGEND = (
    "fix: safe = applied by --fix; unsafe = applied with --unsafe-fixes; "
    "sometimes = safe or unsafe, by finding; none = no fix\n"
)


def rule_command(argv: list[str]) -> int:
    args = rule_parser().parse_args(argv)
    rules = all_rules()
    if args.output_format == "markdown" and (args.all or not args.code):
        sys.stdout.write(rules_markdown())
        return EXIT_CLEAN
    if args.all or not args.code:
        if args.output_format == "json":
            print(json.dumps([rule_json(r) for r in rules.values()], indent=2))
        else:
            print(rule_table(list(rules.values())), end="")
        return EXIT_CLEAN
    rule = rules.get(args.code.upper()) or by_name().get(args.code)
    if rule is None:
        raise UsageError(f"unknown rule '{args.code}' (see 'recovery-lint rule --all')")
    if args.output_format == "json":
        print(json.dumps(rule_json(rule), indent=2))
    else:
        print(rule.documentation(), end="")
    return EXIT_CLEAN


def rule_table(rules: list[Rule]) -> str:
    rows = [("CODE", "NAME", "SEVERITY", "FIX", "SUMMARY")]
    rows += [(r.code, r.name, r.severity.value, fix_safety(r), r.summary) for r in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in rows]
    return "\n".join(lines) + "\n\n" + FIX_LEGEND


def fix_safety(rule: Rule) -> str:
    """safe, unsafe, sometimes (safe or unsafe by finding) or none, read from the rule's own fix
    documentation, whose contract is to say which (see Rule.fix): "Safe. ...", "Unsafe: ...",
    "Safe for X ... Unsafe for Y", "No fix ..."."""
    if rule.fix_availability == "none":
        return "none"
    safe = re.search(r"\bsafe\b", rule.fix, re.IGNORECASE) is not None
    unsafe = re.search(r"\bunsafe\b", rule.fix, re.IGNORECASE) is not None
    if safe and unsafe:
        return "sometimes"
    return "unsafe" if unsafe else "safe"


def rule_json(rule: Rule) -> dict[str, object]:
    return {
        "code": rule.code,
        "name": rule.name,
        "phase": rule.phase,
        "severity": rule.severity.value,
        "fix": rule.fix_availability,
        "fix_safety": fix_safety(rule),
        "summary": rule.summary,
        "documentation": rule.documentation(),
    }
