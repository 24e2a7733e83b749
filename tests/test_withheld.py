"""Withheld advice as a user meets it: the summary line that says what settles it, --show-withheld
listing each place (text and JSON), SARIF carrying it apart from the results, and --target /
--versions settling a premise for one run, through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from .conftest import ROOT, run_cli

SCRIPT = (
    "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
    "torchrun --nnodes 2 --node_rank $NODE_RANK --master_addr $MASTER_ADDR --nproc_per_node 8 train.py\n"
)
ENTRY = "import torch\nimport torch_npu\n"


def _repository(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train.sh").write_text(SCRIPT)
    (tmp_path / "scripts" / "train.py").write_text(ENTRY)
    return tmp_path


def test_the_summary_says_what_is_unknown_and_the_toml_that_settles_it(tmp_path):
    out = run_cli("--isolated", "--no-cache", ".", cwd=_repository(tmp_path)).stdout
    line = out.splitlines()[-1]
    assert line.startswith("Advice withheld: ")
    assert (
        'the torch_npu release is unknown for 1 job (RL101, RL301): set torch-npu = "<version>" under '
        "[tool.recovery-lint.versions] in pyproject.toml (or --versions torch-npu=<version>)" in line
    )
    assert "the NPU platform is unknown for 1 job (RL501): set platform = " in line
    assert "--show-withheld lists where" in line


def test_show_withheld_lists_each_place_what_would_hold_and_what_settles_it(tmp_path):
    result = run_cli("--isolated", "--no-cache", "--show-withheld", ".", cwd=_repository(tmp_path))
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    at = lines.index(next(line for line in lines if " RL301 withheld: " in line))
    assert lines[at] == (
        "scripts/train.sh:3:1: RL301 withheld: the torch_npu release is unknown (neither torch nor torch_npu is "
        "declared for it)"
    )
    assert lines[at + 1].startswith("  holds if: the job's torch_npu release ships torch_npu_run")
    assert lines[at + 2].startswith('  settle it: set torch-npu = "<version>"')
    assert lines[-1] == "3 pieces of advice withheld in 1 job."


def test_show_withheld_as_json(tmp_path):
    out = run_cli(
        "--isolated", "--no-cache", "--show-withheld", "--output-format", "json", ".", cwd=_repository(tmp_path)
    )
    records = json.loads(out.stdout)
    rl301 = next(r for r in records if r["rule"] == "RL301")
    assert (rl301["path"], rl301["line"], rl301["column"]) == ("scripts/train.sh", 3, 1)
    assert rl301["premise"] == "release" and rl301["key"] == "versions.torch-npu"
    assert rl301["settle"].startswith('set torch-npu = "<version>"')
    assert rl301["condition"].startswith("the job's torch_npu release ships torch_npu_run")


def test_sarif_carries_withheld_advice_as_a_run_property_not_as_results(tmp_path):
    out = run_cli("--isolated", "--no-cache", "--output-format", "sarif", ".", cwd=_repository(tmp_path)).stdout
    report = json.loads(out)
    jsonschema.validate(report, json.loads((ROOT / "schemas" / "sarif-2.1.0.json").read_text()))
    run = report["runs"][0]
    assert run["results"] == []
    assert {w["rule"] for w in run["properties"]["withheld"]} == {"RL101", "RL301", "RL501"}


def test_versions_on_the_command_line_settle_the_release_for_one_run(tmp_path):
    repo = _repository(tmp_path)
    result = run_cli(
        "--isolated", "--no-cache", "--output-format", "concise", "--versions", "torch-npu=2.1.0.post10", ".", cwd=repo
    )
    assert result.returncode == 1
    assert "scripts/train.sh:3:1: RL301 warning:" in result.stdout
    assert "the torch_npu release is unknown" not in result.stdout


def test_target_on_the_command_line_settles_the_platform_and_wins_over_the_file(tmp_path):
    repo = _repository(tmp_path)
    (repo / ".recovery-lint.toml").write_text('[target]\nplatform = "ascend-910"\n')
    filed = run_cli("--no-cache", ".", cwd=repo).stdout
    assert "the NPU platform is unknown" not in filed
    given = run_cli("--no-cache", "--target", "platform=ascend-910b,nodes=2", ".", cwd=repo).stdout
    assert "the NPU platform is unknown" not in given
    shown = run_cli("--no-cache", "--target", "platform=ascend-910b", "--show-jobs", ".", cwd=repo).stdout
    assert "platform: ascend-910b (target.platform)" in shown


def test_command_line_keys_are_checked_as_the_file_keys_are(tmp_path):
    repo = _repository(tmp_path)
    for args, message in (
        (("--target", "platfrom=ascend-910b"), "unknown key '--target platfrom'; did you mean '--target platform'?"),
        (("--target", "nodes=two"), "invalid value for '--target nodes': 'two' (expected a whole number)"),
        (("--target", "platform"), "--target takes KEY=VALUE pairs, not 'platform'"),
        (("--versions", "torch-npu=banana"), "invalid value for '--versions torch-npu': 'banana'"),
    ):
        result = run_cli("--isolated", "--no-cache", *args, ".", cwd=repo)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
