"""Suppression directives count only in real comments, and on any line of the finding they name."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_cli

PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def assert_clean_and_untouched_by_fix(root: Path, files: dict[str, str]) -> None:
    result = run_cli("--output-format", "concise", ".", cwd=root)
    assert (result.returncode, result.stdout) == (0, "All checks passed.\n"), result.stdout
    fixed = run_cli("--fix", "--unsafe-fixes", ".", cwd=root)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    for rel, text in files.items():
        assert (root / rel).read_text() == text, rel


PYTHON_STRINGS = '''\
"""Helpers.

Write # recovery-lint: ignore[RL301] -- reason after a launch line to keep torchrun.
"""

EXAMPLE = "torchrun --nnodes 2 train.py  # recovery-lint: ignore[RL301] -- legacy"
TEMPLATE = f"""
{EXAMPLE}  # recovery-lint: ignore-file[RL501]
"""
'''


# a launch makes train.py a training entry: read and checked (a Python file nothing runs is not read)
LAUNCH = {"run.sh": "#!/bin/bash\ntorch_npu_run --nproc_per_node 8 train.py\n", "requirements.txt": PINS}


def test_a_directive_in_a_python_string_or_docstring_is_text(tmp_path):
    files = {"train.py": PYTHON_STRINGS, **LAUNCH}
    write(tmp_path, files)
    assert_clean_and_untouched_by_fix(tmp_path, files)


def test_a_python_comment_directive_still_works_and_an_unused_one_is_reported(tmp_path):
    write(tmp_path, {"train.py": PYTHON_STRINGS + "X = 1  # recovery-lint: ignore[RL401] -- kept\n", **LAUNCH})
    result = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert result.stdout.startswith("train.py:10:8: RL901 [*] warning: unused suppression of RL401"), result.stdout
    assert result.stdout.count("RL90") == 1


YAML_SCALARS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
  annotations:
    how-to: "add # recovery-lint: ignore[RL101] -- reason to an env line"
    other: 'also # recovery-lint: ignore[RL301]'
data:
  script: |
    # recovery-lint: ignore[RL301] -- text of the block scalar
    torch_npu_run train.py
"""


def test_a_directive_in_a_yaml_quoted_or_block_scalar_is_text(tmp_path):
    files = {"notes.yaml": YAML_SCALARS}
    write(tmp_path, files)
    assert_clean_and_untouched_by_fix(tmp_path, files)


SHELL_STRINGS = """\
#!/bin/bash
echo "usage: append # recovery-lint: ignore[RL301] -- reason"
echo 'or # recovery-lint: ignore[RL101]'
cat <<END
# recovery-lint: ignore[RL301] -- inside a heredoc
END
torch_npu_run --nproc_per_node 8 train.py
"""


def test_a_directive_in_a_shell_string_or_heredoc_is_text(tmp_path):
    files = {"train.sh": SHELL_STRINGS, "requirements.txt": PINS}
    write(tmp_path, files)
    assert_clean_and_untouched_by_fix(tmp_path, files)


DIRECTIVE = "  # recovery-lint: ignore[RL101] -- the image patches the watchdog"
POD_RESCHEDULING_JOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llm-pretrain
  labels:
    ring-controller.atlas: ascend-910b
    framework: pytorch
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: registry.example.com/pytorch-npu:24.0
            command: ["/bin/bash", "-c", "bash train.sh"]
            env:
            - name: HCCL_ASYNC_ERROR_HANDLING
              value: "0"
"""
JOB_CONTEXT = {
    "train.sh": "#!/bin/bash\nexport RESUME_MODE_ENABLE=1\ntorch_npu_run --nproc_per_node 8 train.py\n",
    "requirements.txt": PINS,
    "train.py": "import torch\nimport torch_npu\nfrom megatron.training import pretrain\n",  # process recovery needs Megatron
}


def test_the_env_entry_finding_spans_its_name_and_value_lines(tmp_path):
    write(tmp_path, {"job.yaml": POD_RESCHEDULING_JOB, **JOB_CONTEXT})
    result = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert result.stdout.startswith("job.yaml:21:15: RL101 "), result.stdout


@pytest.mark.parametrize("line", ['              value: "0"', "            - name: HCCL_ASYNC_ERROR_HANDLING"])
def test_a_directive_on_any_line_of_a_multi_line_finding_suppresses_it(tmp_path, line):
    manifest = POD_RESCHEDULING_JOB.replace(line + "\n", line + DIRECTIVE + "\n")
    files = {"job.yaml": manifest, **JOB_CONTEXT}
    write(tmp_path, files)
    assert_clean_and_untouched_by_fix(tmp_path, files)


def test_every_directive_in_a_python_file_is_read_not_only_the_first():
    from recovery_lint.parse import parse_source
    from recovery_lint.span import SourceText
    from recovery_lint.suppress import find_directives

    src = SourceText("train.py", "x = 1#recovery-lint: ignore[RL301]\ny = 2#recovery-lint: ignore[RL302]\n")
    directives, problems = find_directives(src, "python", parse_source(src, "python").model)
    assert [(d.codes[0][0], d.line) for d in directives] == [("RL301", 1), ("RL302", 2)] and not problems
