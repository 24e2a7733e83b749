"""The RankTable and version-pin fixtures show what their READMEs say, through the command line."""

from __future__ import annotations

import json
import shutil

from .conftest import FIXTURES, ROOT, run_cli


def findings(path, cwd=ROOT) -> list[dict]:
    result = run_cli("--output-format", "json", str(path), cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def by_code(items: list[dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in items:
        out.setdefault(d["code"], []).append(f"{d['path']}:{d['line']}")
    return out


def test_each_ranktable_mistake_is_found_in_its_own_job():
    found = by_code(findings("fixtures/acjob-ranktable"))
    base = "fixtures/acjob-ranktable"
    assert found["RL311"] == [f"{base}/bert-finetune/job.yaml:63"]
    assert found["RL312"] == [f"{base}/gpt3-pretrain/job.yaml:63", f"{base}/gpt3-pretrain/job.yaml:107"]
    assert found["RL313"] == [f"{base}/gpt3-pretrain/scripts/train_start.sh:7"]
    assert found["RL314"] == [f"{base}/legacy-image/scripts/train.sh:4"]
    assert found["RL315"] == [f"{base}/llama-sft/job.yaml:31", f"{base}/llama-sft/job.yaml:51"]
    assert "RL310" not in found  # every job is in RankTable mode already


def test_ranktable_fixes_leave_a_consistent_rank_table_setup(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "acjob-ranktable", repo)
    run_cli("--fix", "--unsafe-fixes", ".", cwd=repo)
    left = by_code(findings(".", cwd=repo))
    assert {c for c in left if c.startswith("RL31")} == {"RL314"}
    gpt3 = (repo / "gpt3-pretrain" / "job.yaml").read_text("utf-8")
    assert gpt3.count("path: /user/mindx-dl/ranktable/llm.gpt3-pretrain") == 2
    script = (repo / "gpt3-pretrain" / "scripts" / "train_start.sh").read_text("utf-8")
    assert "export RANK_TABLE_FILE=/user/serverid/devindex/config/hccl.json\n" in script
    llama = (repo / "llama-sft" / "job.yaml").read_text("utf-8")
    assert "rank-table" not in llama and llama.count("name: ranktable") == 4


def test_version_pins_rule_out_the_configured_optimizations():
    items = findings("fixtures/version-pinned")
    found = by_code(items)
    base = "fixtures/version-pinned"
    assert found == {
        "RL302": [f"{base}/scripts/train.sh:7"],
        "RL303": [f"{base}/Dockerfile:4"],
        "RL314": [f"{base}/scripts/train.sh:4"],
        "RL601": [f"{base}/requirements.txt:3"],
    }
    rl302 = next(d for d in items if d["code"] == "RL302")
    related = {(r["path"], r["line"]) for r in rl302["related"]}
    assert related == {(f"{base}/requirements.txt", 2), (f"{base}/requirements.txt", 3)}
    assert all(d["fix"] is None for d in items)
