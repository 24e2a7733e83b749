"""``recovery-lint -``: one file from standard input, its kind, display path and config from
``--stdin-filename``; with --fix or --diff the result goes to standard output, the report to
standard error, and nothing is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import run_cli
from .manifests import PROCESS_RECOVERY_ACJOB

SCRIPT = "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"
PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"
MANIFEST = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: llm-pretrain
  namespace: training
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
spec:
  tasks:
  - name: trainer
    replicas: 2
    template:
      spec:
        containers:
        - name: trainer
          image: registry.example.com/pytorch-npu:24.0
          command: ["/bin/bash", "-c", "bash scripts/train.sh"]
"""


def run_bytes(*args: str, stdin: bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "recovery_lint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def codes(text: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        head = line.split(" ", 2)
        if len(head) >= 2 and head[1].startswith("RL"):
            out.append((head[0], head[1]))
    return out


def repository(root: Path) -> None:
    """A repository whose pins say torch_npu_run exists (release 6.0.0)."""
    write(root, {"requirements.txt": PINS})
    (root / ".git").mkdir()


def test_stdin_filename_gives_kind_and_display_path(tmp_path):
    repository(tmp_path)
    result = run_cli("--output-format", "concise", "--stdin-filename", "deploy/run.sh", "-", stdin=SCRIPT, cwd=tmp_path)
    assert result.returncode == 1
    assert ("deploy/run.sh:2:8:", "RL101") in codes(result.stdout)
    assert ("deploy/run.sh:3:1:", "RL301") in codes(result.stdout)
    # the same text named as Python is parsed as Python: no shell findings
    as_python = run_cli("--output-format", "concise", "--stdin-filename", "run.py", "-", stdin=SCRIPT, cwd=tmp_path)
    assert codes(as_python.stdout) == [("run.py:2:8:", "RL900")]  # a Python syntax error
    # --stdin-filename without a path reads standard input too
    implicit = run_cli("--output-format", "concise", "--stdin-filename", "run.sh", stdin=SCRIPT, cwd=tmp_path)
    assert ("run.sh:2:8:", "RL101") in codes(implicit.stdout)


def test_without_a_name_the_kind_is_guessed(tmp_path):
    shell = run_cli("--output-format", "concise", "-", stdin=SCRIPT, cwd=tmp_path)
    # alone, nothing says which torch_npu runs it: the advice waits for the version
    assert (
        'the torch_npu release is unknown for 1 job (RL101, RL301): set torch-npu = "<version>" under [tool.recovery-lint.versions]'
        in shell.stdout
    ), shell.stdout
    pinned = SCRIPT.replace("torchrun", "pip install torch-npu==2.1.0.post10\ntorchrun")
    shell = run_cli("--output-format", "concise", "-", stdin=pinned, cwd=tmp_path)
    assert ("-:2:8:", "RL101") in codes(shell.stdout), shell.stdout
    manifest = run_cli("--output-format", "concise", "-", stdin=MANIFEST, cwd=tmp_path)
    assert ("-:8:23:", "RL202") in codes(manifest.stdout), manifest.stdout
    # text that is neither is read as Python (a snippet alone is no training job: only its syntax is checked)
    python = run_cli("--output-format", "concise", "-", stdin="import torch\n\ndef f(:\n", cwd=tmp_path)
    assert codes(python.stdout) == [("-:3:7:", "RL900")], python.stdout
    # a YAML file that is not a Kubernetes object, and unnamed text without findings, pass
    assert run_cli("-", stdin="import os\n", cwd=tmp_path).returncode == 0


def test_stdin_filename_decides_the_config(tmp_path):
    repository(tmp_path)
    write(tmp_path, {"legacy/.recovery-lint.toml": "ignore = ['RL301']\n"})
    legacy = run_cli("--output-format", "concise", "--stdin-filename", "legacy/run.sh", "-", stdin=SCRIPT, cwd=tmp_path)
    assert "RL301" not in legacy.stdout and "RL101" in legacy.stdout
    other = run_cli("--output-format", "concise", "--stdin-filename", "new/run.sh", "-", stdin=SCRIPT, cwd=tmp_path)
    assert "RL301" in other.stdout


def test_stdin_file_is_linked_with_the_repository_it_names(tmp_path):
    # the buffer of scripts/train.sh of a repository whose AscendJob declares process-level recovery:
    # the watchdog must stay off there, so RL101 is silent; the on-disk text is not what is linted
    manifest = PROCESS_RECOVERY_ACJOB
    write(tmp_path, {"job.yaml": manifest, "scripts/train.sh": "echo old\n", "requirements.txt": PINS})
    (tmp_path / ".git").mkdir()
    linked = run_cli(
        "--output-format", "concise", "--stdin-filename", "scripts/train.sh", "-", stdin=SCRIPT, cwd=tmp_path
    )
    assert "RL101" not in linked.stdout and ("scripts/train.sh:3:1:", "RL301") in codes(linked.stdout), linked.stdout
    assert "job.yaml" not in linked.stdout  # only the standard-input file is reported
    alone = run_cli(
        "--output-format", "concise", "--stdin-filename", "train.sh", "-", stdin=SCRIPT, cwd=tmp_path / "scripts"
    )
    assert "RL101" not in alone.stdout  # from the subfolder the repository is found all the same


def test_fix_with_stdin_prints_the_fixed_text_and_writes_nothing(tmp_path):
    repository(tmp_path)  # its pins make the torchrun fix safe
    original = SCRIPT.encode()
    result = run_bytes("--fix", "--unsafe-fixes", "--stdin-filename", "run.sh", "-", stdin=original, cwd=tmp_path)
    assert result.stdout == (
        b"#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=1\ntorch_npu_run --nnodes 2 --nproc_per_node 8 train.py\n"
    )
    err = result.stderr.decode()
    assert "Fixed 2 findings" in err and "RL101" not in err
    assert result.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "requirements.txt"]
    # --exit-non-zero-on-fix, and a text with nothing to fix comes back unchanged
    fixing = run_bytes(
        "--fix", "--exit-non-zero-on-fix", "--stdin-filename", "run.sh", "-", stdin=original, cwd=tmp_path
    )
    assert fixing.returncode == 1
    clean = b"#!/bin/bash\ntorch_npu_run train.py\n"
    same = run_bytes("--fix", "--stdin-filename", "run.sh", "-", stdin=clean, cwd=tmp_path)
    assert same.stdout == clean and same.returncode == 0


def test_fix_with_stdin_keeps_the_bytes_it_does_not_fix(tmp_path):
    # standard input is read as bytes: CRLF line endings and non-ASCII text come back as they were
    text = "#!/bin/bash\r\nexport HCCL_ASYNC_ERROR_HANDLING=0  # 调试\r\ntorchrun --nnodes 2 a.py\r\n".encode()
    repository(tmp_path)
    result = run_bytes(
        "--fix", "--unsafe-fixes", "--select", "RL101", "--stdin-filename", "env.sh", "-", stdin=text, cwd=tmp_path
    )
    assert result.stdout == text.replace(b"=0", b"=1"), result.stderr


def test_fix_with_stdin_reports_what_remains_on_stderr(tmp_path):
    # the safe fix swaps the launcher; the watchdog fix would change a value set explicitly, so that
    # finding remains and is reported on standard error
    repository(tmp_path)
    result = run_bytes(
        "--fix", "--output-format", "concise", "--stdin-filename", "run.sh", "-", stdin=SCRIPT.encode(), cwd=tmp_path
    )
    assert result.returncode == 1
    assert result.stdout.decode() == SCRIPT.replace("torchrun", "torch_npu_run")
    assert "run.sh:2:8: RL101" in result.stderr.decode()


def test_diff_with_stdin_prints_a_patch(tmp_path):
    write(tmp_path, {"run.sh": SCRIPT})
    repository(tmp_path)
    result = run_cli("--diff", "--unsafe-fixes", "--stdin-filename", "run.sh", "-", stdin=SCRIPT, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/run.sh\n+++ b/run.sh\n")
    assert "-export HCCL_ASYNC_ERROR_HANDLING=0\n" in result.stdout
    assert "+export HCCL_ASYNC_ERROR_HANDLING=1\n" in result.stdout
    assert (tmp_path / "run.sh").read_text() == SCRIPT


def test_stdin_usage_errors(tmp_path):
    both = run_cli("-", "other.sh", stdin=SCRIPT, cwd=tmp_path)
    assert both.returncode == 2 and "cannot be combined" in both.stderr
    named = run_cli("--stdin-filename", "a.sh", "x.sh", stdin=SCRIPT, cwd=tmp_path)
    assert named.returncode == 2 and "--stdin-filename needs '-'" in named.stderr
    binary = run_bytes("-", stdin=b"\xff\xfe bad", cwd=tmp_path)
    assert binary.returncode == 2 and b"not valid UTF-8" in binary.stderr
    suppress = run_cli("--add-suppressions", "-", stdin=SCRIPT, cwd=tmp_path)
    assert suppress.returncode == 2 and "Traceback" not in suppress.stderr
