"""Nothing in a linted repository runs: linting and ``--fix`` never execute, source or import it,
and make no network access. The only bytes that change on disk are the fixed files'."""

from __future__ import annotations

import hashlib
import os
import socket
import sys
from pathlib import Path

import pytest

from recovery_lint.config import Config
from recovery_lint.engine import LintRequest, lint
from recovery_lint.fix import fix_loop, write_atomic
from recovery_lint.registry import all_rules

from .conftest import run_cli


def hostile_repository(root: Path, sentinel: Path, marks: Path) -> None:
    """A repository whose every file would leave a trace (or delete ``sentinel``) if it ran."""
    touch = lambda name: f"touch {marks / name}"  # noqa: E731
    write = lambda name: f"open({str(marks / name)!r}, 'w').write('ran')"  # noqa: E731
    files = {
        "job.yaml": f"""\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt  # the command below would write a file
  labels:
    fault-scheduling: grace
spec:
  tasks:
  - name: default
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
          command: ["/bin/bash", "-c", "{touch("manifest-command")}; bash /job/code/scripts/train.sh"]
          lifecycle:
            postStart:
              exec: {{command: ["/bin/sh", "-c", "{touch("post-start")}"]}}
""",
        "scripts/train.sh": f"""\
#!/bin/bash
rm -rf {sentinel}
{touch("train-sh")}
source ./env.sh
export HCCL_ASYNC_ERROR_HANDLING=0
torchrun --nnodes 2 --nproc_per_node 8 train.py $({touch("substitution")})
""",
        "scripts/env.sh": f"{touch('env-sh')}\nrm -rf {sentinel}\n",
        "train.py": f"""\
import os
import torch
import torch_npu
{write("train-py")}
os.system("rm -rf {sentinel}")


def train(model, path):
    torch.save(model.state_dict(), path)
""",
        "sitecustomize.py": write("sitecustomize"),
        "usercustomize.py": write("usercustomize"),
        "evil.pth": f"import os; os.system('{touch('pth')}')\n",
        "conftest.py": write("conftest"),
        "setup.py": write("setup-py"),
        # shadow the linter's own dependencies, for a run started inside the repository
        "yaml.py": write("yaml-py"),
        "json.py": write("json-py"),
        "tree_sitter.py": write("tree-sitter-py"),
        "packaging/__init__.py": write("packaging-py"),
        "Dockerfile": f"FROM x\nRUN {touch('dockerfile')}\n",
        "requirements.txt": f"torch==2.1.0\n-e git+https://example.invalid/x.git#egg=x\n--index-url https://example.invalid/{marks}\n",
        "pyproject.toml": f"[build-system]\nrequires = ['x']\n[project]\nname = 'x'\ndependencies = ['torch==2.1.0']\n# {write('pyproject')}\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    (root / "scripts" / "train.sh").chmod(0o755)


def snapshot(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            key = str(path)
            if path.is_dir():
                out[key] = "<dir>"
            else:
                out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def hostile(tmp_path):
    repo, sentinel, marks = tmp_path / "repo", tmp_path / "sentinel", tmp_path / "marks"
    sentinel.mkdir()
    (sentinel / "keep").write_text("precious", "utf-8")
    marks.mkdir()
    hostile_repository(repo, sentinel, marks)
    return repo, sentinel, marks


def assert_nothing_ran(sentinel: Path, marks: Path) -> None:
    assert (sentinel / "keep").read_text("utf-8") == "precious"
    assert list(marks.iterdir()) == []


def test_lint_and_fix_in_process_change_only_the_fixed_files_and_use_no_network(hostile, monkeypatch):
    repo, sentinel, marks = hostile

    class NoNetwork(socket.socket):
        def __init__(self, *args, **kwargs):
            raise AssertionError("network access")

    monkeypatch.setattr(socket, "socket", NoNetwork)
    monkeypatch.setattr(socket, "create_connection", NoNetwork)
    monkeypatch.setattr(os, "system", lambda *a: pytest.fail("os.system called"))
    modules_before = set(sys.modules)
    before = snapshot(repo, sentinel, marks)
    request = LintRequest([repo], repo, Config(), list(all_rules().values()))
    result = lint(request)
    assert {d.code for d in result.diagnostics} >= {"RL101", "RL103"}  # the repository was read
    outcome = fix_loop(LintRequest([repo], repo, Config(), list(all_rules().values())), unsafe=True)
    assert outcome.fixed
    assert snapshot(repo, sentinel, marks) == before  # computing fixes writes nothing
    for path, text in outcome.fixed.items():
        write_atomic(outcome.result.abs_paths[path], outcome.original[path], text, [repo])
    after = snapshot(repo, sentinel, marks)
    changed = {k for k in before if before[k] != after.get(k)} | (set(after) - set(before))
    assert changed == {str(repo / p) for p in outcome.fixed}
    assert_nothing_ran(sentinel, marks)
    imported = {m for m in set(sys.modules) - modules_before if m.split(".")[0] in ("train", "setup", "conftest")}
    assert not imported
    assert not any(str(repo) in (getattr(m, "__file__", None) or "") for m in list(sys.modules.values()))


@pytest.mark.parametrize("how", ["module", "console-script"])
def test_the_command_run_inside_the_repository_runs_nothing(hostile, how):
    repo, sentinel, marks = hostile
    before = snapshot(repo, sentinel, marks)
    if how == "module":  # python -m puts the working directory first on sys.path
        result = run_cli("--fix", "--unsafe-fixes", "--isolated", "--output-format", "concise", ".", cwd=repo)
    else:
        import subprocess

        script = Path(sys.executable).with_name("recovery-lint")
        if not script.exists():
            pytest.skip("the console script is not installed next to this interpreter")
        result = subprocess.run(
            [str(script), "--fix", "--unsafe-fixes", "--isolated", "--output-format", "concise", "."],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "NO_COLOR": "1"},
        )
    assert result.returncode in (0, 1), result.stderr
    assert "Fixed" in result.stdout
    assert_nothing_ran(sentinel, marks)
    after = snapshot(repo, sentinel, marks)
    changed = {Path(k).relative_to(repo).as_posix() for k in before if before[k] != after.get(k)}
    assert changed and changed <= {"scripts/train.sh", "scripts/env.sh", "train.py", "job.yaml"}
    assert set(after) == set(before)  # no file created or deleted
