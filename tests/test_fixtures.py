"""The bundled example repositories, end to end through the command line.

Each ``fixtures/<name>/expected.txt`` is the exact concise report. After checking a change in the
report is right, accept it with ``UPDATE_SNAPSHOTS=1 python -m pytest tests/test_fixtures.py``.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest

from .conftest import FIXTURES, ROOT, run_cli

EXAMPLES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def comments(text: str) -> list[str]:
    """Every comment of a YAML, shell or Python file (text after a '#' that starts a comment)."""
    return [m.group(1).rstrip() for m in re.finditer(r"(?:^|\s)(#.*)$", text, re.M)]


@pytest.mark.parametrize("name", EXAMPLES)
def test_report_matches_snapshot(name):
    result = run_cli("--output-format", "concise", f"fixtures/{name}", cwd=ROOT)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    snapshot = FIXTURES / name / "expected.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") or not snapshot.exists():
        snapshot.write_text(result.stdout, "utf-8")
    assert result.stdout == snapshot.read_text("utf-8"), (
        f"report of fixtures/{name} changed; if the new report is right, accept it with "
        "UPDATE_SNAPSHOTS=1 python -m pytest tests/test_fixtures.py"
    )
    findings = [line for line in result.stdout.splitlines() if ": RL" in line]
    assert result.returncode == (1 if findings else 0)


@pytest.mark.parametrize("name", EXAMPLES)
def test_fix_cycle_is_stable_and_keeps_comments(name, tmp_path):
    repo = tmp_path / name
    shutil.copytree(FIXTURES / name, repo)
    before = {p: p.read_text("utf-8") for p in repo.rglob("*") if p.is_file()}
    first = run_cli("--fix", "--unsafe-fixes", "--output-format", "concise", ".", cwd=repo)
    assert first.returncode in (0, 1), first.stderr
    after_first = {p: p.read_text("utf-8") for p in repo.rglob("*") if p.is_file()}
    for path, text in before.items():
        missing = [c for c in comments(text) if c not in comments(after_first[path])]
        assert not missing, f"{path.name} lost comments {missing}"
    second = run_cli("--output-format", "json", ".", cwd=repo)
    import json

    left = [d for d in json.loads(second.stdout) if d["fix"] is not None]
    assert left == [], f"fixable findings remain after --fix --unsafe-fixes: {left}"
    assert "RL900" not in second.stdout
    third = run_cli("--fix", "--unsafe-fixes", ".", cwd=repo)
    assert third.returncode in (0, 1)
    after_third = {p: p.read_text("utf-8") for p in repo.rglob("*") if p.is_file()}
    assert after_third == after_first, "a second --fix changed bytes"
