"""A one-file run imports only what it uses: no jsonschema without a config file (a label value is
judged without it), no rich without terminal output, no tree-sitter without a shell script, no packaging without
a version to compare, no pickle, process pool or cache without a cache or a large run; and none of
the modules that only start-up would pay for (PyYAML for a manifest in the common block shape, dataclasses and inspect, ast without a Python file, typing, subprocess
without git, shutil, traceback, importlib.resources with tempfile and zipfile)."""

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
    "recovery_lint.cache",
    "recovery_lint.runcache",
    "recovery_lint.pool",
    "recovery_lint.ahead",
    "recovery_lint.interrupts",
    "recovery_lint.fix",
    "recovery_lint.adopt",
    "recovery_lint.report.full",
    "recovery_lint.report.scorecard",
    "yaml",
    "dataclasses",
    "ast",
    "inspect",
    "typing",
    "subprocess",
    "shutil",
    "traceback",
    "pkgutil",
    "importlib.resources",
    "tempfile",
    "zipfile",
    "argparse",  # a plain command line is read without it (argv.quick_parse)
    "gettext",
    "signal",  # the C module _signal is enough
    "json",  # the data files are read by the C decoder json uses (schemas._parse_json)
    "shlex",
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
    assert "recovery_lint.sources.yamlblock" in modules and "recovery_lint.engine" in modules  # what it uses
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


def test_a_manifest_running_a_script_loads_the_bash_grammar_but_not_its_package_helpers(tmp_path):
    modules, output = run_inline(tmp_path, "export HCCL_ASYNC_ERROR_HANDLING=0; torchrun --nproc_per_node=8 train.py")
    assert "RL101" in output  # found in the script: the grammar was loaded
    assert sorted(m for m in ("importlib.resources", "tempfile", "zipfile", "shutil") if m in modules) == []


def test_a_plain_inline_command_is_read_without_the_bash_grammar(tmp_path):
    modules, output = run_inline(tmp_path, "cd /job/code && torchrun --nproc_per_node=8 train.py")
    assert "RL301" in output  # the launch was read
    assert sorted(m for m in ("tree_sitter", "tree_sitter_bash") if m in modules) == []


def test_the_check_sees_modules_that_are_imported(tmp_path):
    # the same run with terminal output and a config file does load rich and jsonschema
    (tmp_path / "job.yaml").write_text(MANIFEST)
    (tmp_path / ".recovery-lint.toml").write_text('fail-on = "warning"\n')
    modules = imported_by_run(tmp_path, "--no-cache", "--output-format", "full", "job.yaml")
    assert {"rich", "jsonschema", "recovery_lint.report.full"} <= modules


# Run as the console script runs it, with a hook that counts the cyclic collector's passes and a
# check, after the run, of which rules had their examples built.
_COUNTING_RUN = """\
import gc, os, sys
from recovery_lint.console import main
passes = []
gc.callbacks.append(lambda phase, info: passes.append(phase) if phase == "start" else None)
sys.argv = ["recovery-lint", "--isolated", "--no-cache", "--output-format", "concise", "job.yaml"]
leave = os._exit

def report(code):  # the command leaves through os._exit once its output is written
    from recovery_lint import registry
    from recovery_lint.rule import examples
    built = [c for c, r in registry.all_rules().items() if not isinstance(vars(type(r)).get("cases"), examples)]
    print(f"exit={code} passes={len(passes)} built={built}", flush=True)
    leave(code)

os._exit = report
main()
print("returned")
"""


def test_the_console_script_runs_without_the_cyclic_collector_and_builds_no_examples(tmp_path):
    (tmp_path / "job.yaml").write_text(MANIFEST)
    result = subprocess.run(
        [sys.executable, "-c", _COUNTING_RUN],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.splitlines()[-1] == "exit=1 passes=0 built=[]", result.stdout + result.stderr


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
