"""The command line as a user runs it: reports, exit codes, fixes, configuration, jobs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from .conftest import FIXTURES, ROOT, SHARED, run_cli

OUTPUT_SCHEMA = json.loads((ROOT / "schemas" / "output.schema.json").read_text())

TORCHRUN_SCRIPT = (
    "#!/bin/bash\n# launch\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"
)
PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0: ships torch_npu_run, watchdog defaults on


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())


def test_vcjob_example_reports_rl101_rl202_rl301_at_their_lines():
    result = run_cli("--output-format", "concise", "fixtures/vcjob-gpt3")
    lines = result.stdout.splitlines()
    assert "fixtures/vcjob-gpt3/job.yaml:22:23: RL202" in result.stdout
    # the fix would change a value set explicitly: offered, but not as a safe fix
    assert any(line.startswith("fixtures/vcjob-gpt3/scripts/env.sh:4:8: RL101 warning:") for line in lines)
    assert any(line.startswith("fixtures/vcjob-gpt3/scripts/train_start.sh:24:1: RL301 [*]") for line in lines)
    assert result.returncode == 1


def test_json_output_validates_against_published_schema():
    result = run_cli("--output-format", "json", "fixtures")
    data = json.loads(result.stdout)
    jsonschema.validate(data, OUTPUT_SCHEMA)
    assert data, "the fixtures have findings"
    first = data[0]
    assert first["path"].startswith("fixtures/") and "\\" not in first["path"]
    job_ids = {d["job"] for d in data if d["job"]}
    assert "fixtures/vcjob-gpt3/job.yaml#2 Job/training/gpt3-pretrain" in job_ids
    fixes = {(d["code"], d["path"]): d["fix"] for d in data if d["fix"]}
    assert fixes[("RL101", "fixtures/vcjob-gpt3/scripts/env.sh")]["applicability"] == "unsafe"
    safe = fixes[("RL301", "fixtures/vcjob-gpt3/scripts/train_start.sh")]
    assert safe["applicability"] == "safe" and safe["edits"][0]["content"] == "torch_npu_run"


def test_clean_repository_exits_zero_and_says_so(tmp_path):
    write(
        tmp_path,
        {"train.sh": "torch_npu_run train.py\n", "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n"},
    )
    result = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "All checks passed." in result.stdout
    assert json.loads(run_cli(".", "--output-format", "json", cwd=tmp_path).stdout) == []


def test_exit_codes_for_findings_usage_and_thresholds(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    assert run_cli(".", cwd=tmp_path).returncode == 1
    assert run_cli(".", "--exit-zero", cwd=tmp_path).returncode == 0
    assert run_cli(".", "--fail-on", "error", cwd=tmp_path).returncode == 0
    bad = run_cli(".", "--no-such-flag", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("recovery-lint: error:")
    assert "Traceback" not in bad.stderr
    unknown = run_cli(".", "--select", "RL999", cwd=tmp_path)
    assert unknown.returncode == 2 and "RL999" in unknown.stderr


def test_select_and_ignore_by_code_prefix_and_name(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    both = run_cli(".", "--output-format", "concise", cwd=tmp_path).stdout
    assert "RL101" in both and "RL301" in both
    only3 = run_cli(".", "--select", "RL3", "--output-format", "concise", cwd=tmp_path).stdout
    assert "RL301" in only3 and "RL101" not in only3
    named = run_cli(".", "--ignore", "torchrun-without-parallel-store", "--output-format", "concise", cwd=tmp_path)
    assert "RL301" not in named.stdout and "RL101" in named.stdout
    specific = run_cli(".", "--select", "RL301", "--ignore", "RL3", "--output-format", "concise", cwd=tmp_path)
    assert "RL301" in specific.stdout


def test_fix_writes_preserves_comments_and_is_idempotent(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    safe = run_cli(".", "--fix", "--output-format", "concise", cwd=tmp_path)
    text = (tmp_path / "train.sh").read_text()
    # the safe fix swaps the launcher; the explicit HCCL_ASYNC_ERROR_HANDLING=0 is the user's value
    assert (
        text
        == "#!/bin/bash\n# launch\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorch_npu_run --nnodes 2 --nproc_per_node 8 train.py\n"
    )
    assert safe.returncode == 1 and "Fixed 1 finding" in safe.stdout and "train.sh:3:8: RL101" in safe.stdout
    result = run_cli(".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    text = (tmp_path / "train.sh").read_text()
    assert (
        text
        == "#!/bin/bash\n# launch\nexport HCCL_ASYNC_ERROR_HANDLING=1\ntorch_npu_run --nnodes 2 --nproc_per_node 8 train.py\n"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Fixed 1 finding" in result.stdout
    again = run_cli(".", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", cwd=tmp_path)
    assert again.returncode == 0 and (tmp_path / "train.sh").read_text() == text


def test_exit_non_zero_on_fix(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    assert run_cli(".", "--fix", "--exit-non-zero-on-fix", "--select", "RL301", cwd=tmp_path).returncode == 1


def test_diff_prints_patch_and_writes_nothing(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    result = run_cli(".", "--diff", cwd=tmp_path)
    assert result.returncode == 1
    assert "-torchrun --nnodes 2 --nproc_per_node 8 train.py" in result.stdout
    assert "+torch_npu_run --nnodes 2 --nproc_per_node 8 train.py" in result.stdout
    assert (tmp_path / "train.sh").read_text() == TORCHRUN_SCRIPT
    # the RL101 fix changes a value set explicitly: only shown with --unsafe-fixes
    assert "+export HCCL_ASYNC_ERROR_HANDLING" not in result.stdout
    unsafe = run_cli(".", "--diff", "--unsafe-fixes", cwd=tmp_path).stdout
    assert "-export HCCL_ASYNC_ERROR_HANDLING=0" in unsafe and "+export HCCL_ASYNC_ERROR_HANDLING=1" in unsafe
    assert (tmp_path / "train.sh").read_text() == TORCHRUN_SCRIPT


def test_fix_keeps_crlf_line_endings_and_bom_in_yaml(tmp_path):
    manifest = (
        "\ufeffapiVersion: batch.volcano.sh/v1alpha1\r\nkind: Job\r\nmetadata:\r\n  name: a\r\n  labels:\r\n"
        "    fault-scheduling: grace   # resumable\r\nspec:\r\n  tasks:\r\n  - name: t\r\n    replicas: 2\r\n"
        "    template:\r\n"
        "      spec:\r\n        containers:\r\n        - name: c\r\n          image: x\r\n"
    )
    write(tmp_path, {"job.yaml": manifest.encode("utf-8")})
    run_cli(".", "--fix", "--unsafe-fixes", "--select", "RL202", cwd=tmp_path)
    data = (tmp_path / "job.yaml").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b'    fault-scheduling: grace   # resumable\r\n    pod-rescheduling: "on"\r\nspec:' in data
    assert data.count(b"\n") == data.count(b"\r\n")


def test_script_with_syntax_error_still_reports_parsed_parts(tmp_path):
    write(
        tmp_path,
        {
            "broken.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 train.py\nif [ ; then\n",
            "other.sh": "torchrun --nnodes 2 other.py\n",
            "requirements.txt": PINS,
        },
    )
    result = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    out = result.stdout
    assert "broken.sh:2:8: RL101" in out
    assert "broken.sh:4:" in out and "RL900" in out
    assert "other.sh:1:1: RL301" in out
    assert result.returncode == 1


def test_show_jobs_links_manifests_to_scripts_and_entries():
    out = run_cli("--show-jobs", "fixtures").stdout
    assert "fixtures/vcjob-gpt3/job.yaml#2 Job/training/gpt3-pretrain" in out
    assert "script fixtures/vcjob-gpt3/scripts/train_start.sh" in out
    assert "script fixtures/vcjob-gpt3/scripts/env.sh" in out
    assert (
        "launch torchrun at fixtures/vcjob-gpt3/scripts/train_start.sh:24 -> entry fixtures/vcjob-gpt3/pretrain_gpt.py"
        in out
    )
    assert "container Worker/ascend:" in out
    assert "(standalone)" not in out.split("fixtures/acjob-resnet50/scripts/train_start.sh")[0]


def test_rule_command_prints_documentation():
    doc = run_cli("rule", "RL101")
    assert doc.returncode == 0
    for heading in (
        "## What it checks",
        "## Why it costs recovery time",
        "## Example",
        "## Fix and its safety",
        "## Sources",
    ):
        assert heading in doc.stdout
    by_name = run_cli("rule", "watchdog-disabled")
    assert by_name.stdout == doc.stdout
    listing = run_cli("rule", "--all").stdout
    assert "RL301  torchrun-without-parallel-store" in listing
    assert run_cli("rule", "RL000").returncode == 2


def test_generated_rules_doc_is_current():
    expected = run_cli("rule", "--all", "--output-format", "markdown").stdout
    assert (ROOT / "docs" / "rules.md").read_text("utf-8") == expected, (
        "docs/rules.md is stale: recovery-lint rule --all --output-format markdown > docs/rules.md"
    )


def test_config_unknown_key_is_a_clear_error(tmp_path):
    write(tmp_path, {".recovery-lint.toml": "selct = ['RL1']\n", "train.sh": "echo\n"})
    result = run_cli(".", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown key 'selct'" in result.stderr and "Traceback" not in result.stderr
    write(tmp_path, {".recovery-lint.toml": "[versions]\ntorch = 2\n"})
    result = run_cli(".", cwd=tmp_path)
    assert result.returncode == 2 and "versions.torch" in result.stderr


def test_config_select_versions_and_per_file_ignores(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": "[tool.recovery-lint]\nper-file-ignores = {'legacy/*' = ['RL301']}\n"
            "[tool.recovery-lint.versions]\ntorch = '2.1.0'\ntorch-npu = '2.1.0.post10'\n",
            "legacy/run.sh": "torchrun --nnodes 2 a.py\n",
            "new/run.sh": "torchrun --nnodes 2 b.py\n",
        },
    )
    out = run_cli(".", "--output-format", "concise", cwd=tmp_path).stdout
    assert "legacy/run.sh" not in out
    assert "new/run.sh:1:1: RL301" in out
    assert "RL101" not in out  # torch_npu 2.1.0.post10 (6.0.0) from config: the watchdog defaults on
    # without the configuration neither the ignores nor the versions apply: with no release known and
    # no manifest, neither torch_npu_run nor the watchdog default can be claimed
    isolated = run_cli(".", "--isolated", "--output-format", "concise", cwd=tmp_path).stdout
    assert isolated.startswith("All checks passed.\nAdvice withheld: the torch_npu release is unknown for 2 jobs"), (
        isolated
    )
    write(tmp_path, {"requirements.txt": "torch==1.11.0\ntorch-npu==1.11.0.post14\n"})
    isolated = run_cli(".", "--isolated", "--output-format", "concise", cwd=tmp_path).stdout
    assert "legacy/run.sh:1:1: RL301" in isolated and "legacy/run.sh:1:1: RL101" in isolated


def test_configured_job_links_a_manifest_to_its_script(tmp_path):
    manifest = (FIXTURES / "vcjob-gpt3" / "job.yaml").read_text().replace("bash scripts/train_start.sh", "/opt/start")
    write(
        tmp_path,
        {
            "deploy/job.yaml": manifest,
            "launch/start_training.sh": "torchrun pretrain_gpt.py\n",
            ".recovery-lint.toml": "[[jobs]]\nmanifest = 'deploy/job.yaml'\nscripts = ['launch/start_training.sh']\n",
        },
    )
    out = run_cli("--show-jobs", ".", cwd=tmp_path).stdout
    assert "script launch/start_training.sh" in out.split("deploy/job.yaml#2")[1]


def test_gitignore_and_exclude_are_honoured(tmp_path):
    write(
        tmp_path,
        {
            ".gitignore": "build/\n",
            "build/run.sh": "torchrun --nnodes 2 a.py\n",
            "vendor/run.sh": "torchrun --nnodes 2 a.py\n",
            ".recovery-lint.toml": "exclude = ['vendor']\n",
            "run.sh": "torchrun --nnodes 2 a.py\n",
            "requirements.txt": PINS,
        },
    )
    out = run_cli(".", "--output-format", "concise", cwd=tmp_path).stdout
    assert "build/" not in out and "vendor/" not in out and "run.sh:1:1: RL301" in out


def test_non_kubernetes_yaml_is_ignored(tmp_path):
    write(tmp_path, {".github/workflows/ci.yaml": "on: [push]\njobs: {a: {runs-on: x}}\n", "config.yaml": "lr: [0.1\n"})
    result = run_cli(".", "--output-format", "concise", cwd=tmp_path)
    assert result.returncode == 0 and "RL" not in result.stdout


def test_version_and_module_entry_point():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("recovery-lint ")


@pytest.mark.skipif(not (SHARED / "corpus" / "manifests").is_dir(), reason="shared corpus not present")
def test_real_manifests_lint_without_parse_errors(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SHARED / "corpus" / "manifests", corpus)
    result = run_cli("--isolated", "--output-format", "json", ".", cwd=corpus)
    assert result.returncode in (0, 1), result.stderr
    data = json.loads(result.stdout)
    assert not [d for d in data if d["code"] == "RL900"]
    templated = [d for d in data if d["code"] == "RL903"]
    assert [d["path"] for d in templated] == ["Ascend__mindxdl-deploy__python_examples__vcjob.yaml"]


def test_readme_example_capture_is_a_real_run():
    readme = (ROOT / "README.md").read_text("utf-8")
    command = "$ recovery-lint --output-format concise fixtures/vcjob-gpt3\n"
    start = readme.index(command) + len(command)
    capture = readme[start : readme.index("```", start)]
    assert run_cli("--output-format", "concise", "fixtures/vcjob-gpt3").stdout == capture
