"""A one-file run imports only what it uses: no jsonschema without a config file (a label value is
judged without it), no rich without terminal output, no packaging without a version to compare, no
pickle, process pool or cache without a cache or a large run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

MANIFEST = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt3
  labels:
    ring-controller.atlas: ascend-910b
spec:
  tasks:
    - name: worker
      replicas: 2
      template:
        spec:
          containers:
            - name: train
              image: train:latest
              command: ["torchrun", "--nproc_per_node", "8", "train.py"]
"""
NOT_USED = (
    "jsonschema",
    "rich",
    "tree_sitter",
    "tree_sitter_bash",
    "packaging",
    "pickle",
    "concurrent.futures",
    "multiprocessing",
    "difflib",
    "xml.etree",
    "tomllib",
    "tomli",
    "recovery_lint.sources.bash_syntax",
    "recovery_lint.sources.bash_tokens",
    "recovery_lint.speed.cache",
    "recovery_lint.speed.runcache",
    "recovery_lint.speed.pool",
    "recovery_lint.speed.ahead",
    "recovery_lint.interrupts",
    "recovery_lint.fix",
    "recovery_lint.adopt",
    "recovery_lint.report.full",
    "recovery_lint.report.scorecard",
)


def imported_by_run(cwd: Path, *argv: str, output: list[str] | None = None) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "recovery_lint", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )
    assert result.returncode == 1, result.stdout + result.stderr  # the manifest has a finding
    if output is not None:
        output.append(result.stdout)
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", result.stderr, re.MULTILINE))


def test_a_one_file_concise_run_imports_none_of_the_heavy_modules(tmp_path):
    (tmp_path / "job.yaml").write_text(MANIFEST)
    modules = imported_by_run(tmp_path, "--isolated", "--no-cache", "--output-format", "concise", "job.yaml")
    assert "yaml" in modules and "recovery_lint.engine" in modules  # what it uses
    assert sorted(m for m in NOT_USED if m in modules) == []


def run_inline(tmp_path: Path, text: str) -> tuple[set[str], str]:
    """The modules a concise run imports, and its output, on MANIFEST with ``bash -c text`` as its command."""
    (tmp_path / "job.yaml").write_text(
        MANIFEST.replace('["torchrun", "--nproc_per_node", "8", "train.py"]', f'["/bin/bash", "-c", "{text}"]')
    )
    output: list[str] = []
    modules = imported_by_run(
        tmp_path, "--isolated", "--no-cache", "--output-format", "concise", "job.yaml", output=output
    )
    return modules, output[0]


def test_a_manifest_running_a_script_reads_it(tmp_path):
    modules, output = run_inline(tmp_path, "export HCCL_ASYNC_ERROR_HANDLING=0; torchrun --nproc_per_node=8 train.py")
    assert "RL101" in output  # found in the script: the grammar was loaded
    assert any(m.startswith("tree_sitter") for m in modules)


def test_the_check_sees_modules_that_are_imported(tmp_path):
    # the same run with terminal output and a config file does load rich and jsonschema
    (tmp_path / "job.yaml").write_text(MANIFEST)
    (tmp_path / ".recovery-lint.toml").write_text('fail-on = "warning"\n')
    modules = imported_by_run(tmp_path, "--no-cache", "--output-format", "full", "job.yaml")
    assert {"rich", "jsonschema"} <= modules


def test_the_installed_command_is_the_console_entry():
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["recovery-lint"] == "recovery_lint.console:main"


def test_a_rules_examples_are_built_once_when_first_read():
    from recovery_lint.registry import all_rules
    from recovery_lint.rule import Case

    rule = all_rules()["RL101"]
    cases = rule.cases
    assert cases and all(isinstance(c, Case) for c in cases)
    assert rule.cases is cases and type(rule).cases is cases  # the tuple replaced the descriptor
