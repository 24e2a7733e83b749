"""The examples of the recovery checks, run as a user runs them: the command line in a repository of
the example's files, its configuration written as ``.recovery-lint.toml``, the rule selected with
``--select``. Each must fire where it says and nowhere else, and say which premise it withholds on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recovery_lint.premises import subject
from recovery_lint.registry import all_rules
from recovery_lint.testing import position_matches, write_case

from .conftest import run_cli

# the checks of MindCluster recovery configuration, and the rules whose cases changed with them
CODES = (
    "RL102",
    "RL104",
    "RL105",
    "RL201",
    "RL202",
    "RL203",
    "RL204",
    "RL205",
    "RL207",
    "RL208",
    "RL209",
    "RL210",
    "RL212",
    "RL311",
    "RL313",
    "RL316",
    "RL317",
)
CASES = [
    pytest.param(code, i, id=f"{code}-{i}-{case.title or 'case'}")
    for code in CODES
    for i, case in enumerate(all_rules()[code].cases)
]


def toml_text(config: dict[str, object], prefix: str = "") -> str:
    """A configuration mapping as TOML: scalars and lists first, then tables and arrays of tables."""
    lines: list[str] = []
    tables: list[str] = []
    for key, value in config.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            tables.append(f"[{name}]\n" + toml_text(value, name))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            tables += [f"[[{name}]]\n" + toml_text(v, name) for v in value]
        else:
            lines.append(f"{json.dumps(key)} = {_value(value)}")
    return "\n".join(lines) + ("\n" if lines else "") + "\n".join(tables)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(value)


@pytest.mark.parametrize(("code", "index"), CASES)
def test_the_example_through_the_command_line(code: str, index: int, tmp_path: Path):
    case = all_rules()[code].cases[index]
    write_case(case, tmp_path)
    if case.config:
        (tmp_path / ".recovery-lint.toml").write_text(toml_text(case.config), encoding="utf-8")
    selected = ",".join((code, *case.with_rules))
    result = run_cli("--select", selected, "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    found = [f"{d['path']}:{d['line']}:{d['column']}" for d in json.loads(result.stdout) if d["code"] == code]
    unmatched = [e for e in case.expect if not any(position_matches(e, a) for a in found)]
    unexpected = [a for a in found if not any(position_matches(e, a) for e in case.expect)]
    assert not unmatched and not unexpected, f"expected {list(case.expect)}, got {found}"
    if case.withheld:
        text = run_cli("--select", selected, "--no-cache", "--output-format", "concise", ".", cwd=tmp_path).stdout
        for premise in case.withheld:
            assert f"{subject(premise)} is unknown" in text and code in text, text
