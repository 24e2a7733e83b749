"""The smaller command-line behaviours a ruff or yamllint user relies on, each as seen from outside."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run_cli

TORCHRUN_SCRIPT = "#!/bin/bash\n# launch\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nproc_per_node 8 train.py\n"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


# -- --statistics ------------------------------------------------------------------------------------
def test_statistics_prints_the_table_and_the_summary_only(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT})
    result = run_cli("--statistics", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "     1  RL101  [*] watchdog-disabled",
        "     1  RL301  [*] torchrun-without-parallel-store",
        "2 findings (1 fixable, 1 more with --unsafe-fixes) in 1 file",
    ]


def test_statistics_as_json_is_json_only(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT})
    result = run_cli("--statistics", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {"code": "RL101", "name": "watchdog-disabled", "count": 1, "fixable": True, "fixable_count": 1},
        {"code": "RL301", "name": "torchrun-without-parallel-store", "count": 1, "fixable": True, "fixable_count": 1},
    ]
    assert result.stderr == "2 findings (1 fixable, 1 more with --unsafe-fixes) in 1 file\n"


def test_statistics_with_a_format_that_has_no_table_is_a_usage_error(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT})
    result = run_cli("--statistics", "--output-format", "sarif", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "recovery-lint: error: --statistics prints a table or JSON, not sarif\n"


# -- severity in the text formats ------------------------------------------------------------------------
def test_concise_and_full_output_show_the_severity(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "bad.yaml": "apiVersion: v1\nkind: Job\nmetadata: {name: [x\n"})
    concise = run_cli("--output-format", "concise", ".", cwd=tmp_path).stdout.splitlines()
    assert concise[0].startswith("bad.yaml:4:1: RL900 error: YAML syntax error")
    assert concise[1].startswith("train.sh:3:8: RL101 [*] warning: HCCL_ASYNC_ERROR_HANDLING=0")
    full = run_cli("--output-format", "full", ".", cwd=tmp_path).stdout
    assert "bad.yaml:4:1: RL900 error: YAML syntax error" in full
    assert "train.sh:3:8: RL101 [*] warning: HCCL_ASYNC_ERROR_HANDLING=0" in full
