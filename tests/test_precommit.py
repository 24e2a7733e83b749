"""pre-commit: the hook manifest, file mode (only the passed files reported, the repository still
linked), and the real ``pre-commit try-repo`` against this checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest
from pre_commit.commands.run import Classifier, filter_by_include_exclude

from .conftest import ROOT, run_cli
from .manifests import PROCESS_RECOVERY_ACJOB

HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"

# A Volcano job whose container env turns the watchdog off. Alone it says nothing about the
# framework; only the script it runs (torch_npu_run) makes it a PyTorch job, where RL101 applies.
MANIFEST = """\
# Volcano job: resumable training with Pod-level rescheduling
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: llm-pretrain
  namespace: training
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - name: trainer
    replicas: 2
    template:
      spec:
        containers:
        - name: trainer
          image: registry.example.com/pytorch-npu:24.0
          command: ["/bin/bash", "-c", "bash scripts/train.sh"]
          env:
          - name: HCCL_ASYNC_ERROR_HANDLING
            value: "0"   # left from a debugging session
          resources:
            limits:
              huawei.com/Ascend910: 8
  maxRetry: 100
"""
# what a hook run stages: the watchdog back on, and an unquoted label value (a safe fix quotes it)
HOOK_MANIFEST = MANIFEST.replace('value: "0"   # left from a debugging session', 'value: "1"').replace(
    'pod-rescheduling: "on"', "pod-rescheduling: on"
)
FIXED_MANIFEST = HOOK_MANIFEST.replace("pod-rescheduling: on", 'pod-rescheduling: "on"')
CONTEXT = {
    "scripts/train.sh": "#!/bin/bash\nexport RESUME_MODE_ENABLE=1\ntorch_npu_run --nnodes 2 --nproc_per_node 8 train.py\n",
    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
    "train.py": "import torch\nimport torch_npu\n\ntorch.npu.set_compile_mode(jit_compile=False)\n",
    # a committed file with a fixable finding of its own: never reported or touched by a hook run
    # that was not passed it
    "tools/bench.sh": "#!/bin/bash\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd.parent)}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    write(repo, CONTEXT)
    (repo / "tools" / "bench.sh").chmod(0o755)
    git("init", "-q", cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "training code", cwd=repo)
    write(repo, {"job.yaml": MANIFEST})
    return repo


# -- the hook manifest ---------------------------------------------------------------------------
def test_hook_manifest_is_valid_and_has_check_and_fix_hooks():
    hooks = {h["id"]: h for h in load_manifest(str(HOOKS_FILE))}
    assert set(hooks) == {"recovery-lint", "recovery-lint-new", "recovery-lint-fix"}
    assert hooks["recovery-lint"]["entry"] == "recovery-lint --force-exclude --tracked-only"
    assert hooks["recovery-lint-new"]["entry"] == "recovery-lint --force-exclude --tracked-only --new-since HEAD"
    assert (
        hooks["recovery-lint-fix"]["entry"]
        == "recovery-lint --fix --exit-non-zero-on-fix --force-exclude --tracked-only"
    )
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["require_serial"] is True  # one process: measured faster, and no finding reported twice
        assert hook["pass_filenames"] is True


def test_hook_file_filter_admits_what_the_linter_reads_and_nothing_else(tmp_path):
    admitted = [
        "deploy/job.yaml",
        "deploy/job.yml",
        "scripts/train.sh",
        "scripts/env.bash",
        "train.py",
        "requirements.txt",
        "requirements-npu.txt",
        "1.8_requirements.txt",  # the dependencies of one torch version a model supports
        "constraints.txt",
        "pyproject.toml",
        "Dockerfile",
        "docker/Dockerfile.npu",
        "Containerfile",
        "bin/launch",  # executable with a shell shebang
        "README.md",  # its version tables
        "models/bert/README_en.md",
    ]
    refused = [
        "README",
        "docs/usage.md",
        "LICENSE",
        "notes.txt",
        "setup.cfg",
        "Cargo.toml",
        "Makefile",
        "data.json",
        "bin/tool",  # executable without a shebang
        "bin/notes",  # a shell shebang, but not executable (identify only reads shebangs of executables)
        "image.png",
        "types.pyi",
    ]
    for rel in admitted + refused:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "#!/bin/bash\necho\n" if rel in ("bin/launch", "bin/notes") else "x = 1\n"
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00" if rel.endswith(".png") else text.encode())
    for rel in ("bin/launch", "bin/tool"):
        (tmp_path / rel).chmod(0o755)
    names = admitted + refused
    for hook in load_manifest(str(HOOKS_FILE)):
        old = Path.cwd()
        os.chdir(tmp_path)
        try:
            chosen = Classifier(names).by_types(
                filter_by_include_exclude(names, hook["files"], hook["exclude"]),
                hook["types"],
                hook["types_or"],
                hook["exclude_types"],
            )
            assert sorted(chosen) == sorted(admitted), hook["id"]
        finally:
            os.chdir(old)


# -- file mode ------------------------------------------------------------------------------------
def test_a_file_passed_alone_is_linked_with_the_repository(tmp_path):
    repo = repository(tmp_path)
    result = run_cli("--output-format", "concise", "job.yaml", cwd=repo)
    assert result.returncode == 1
    # the manifest's finding needs the script it runs (it makes the job a PyTorch job) ...
    assert "job.yaml:24:13: RL101" in result.stdout
    # ... and the other files' findings are not reported
    assert "bench.sh" not in result.stdout and "1 finding" in result.stdout
    # without the repository the manifest gives no PyTorch evidence: the same file alone is silent
    alone = tmp_path / "alone"
    write(alone, {"job.yaml": MANIFEST})
    assert run_cli("--output-format", "concise", "job.yaml", cwd=alone).stdout == "All checks passed.\n"


def process_level_repository(tmp_path: Path) -> Path:
    """The repository with process-level recovery declared in an AscendJob (of a Megatron-based
    entry) and the watchdog turned off in the script, as process-level recovery needs."""
    repo = repository(tmp_path)
    script = CONTEXT["scripts/train.sh"].replace(
        "RESUME_MODE_ENABLE=1\n", "RESUME_MODE_ENABLE=1\nexport HCCL_ASYNC_ERROR_HANDLING=0\n"
    )
    entry = CONTEXT["train.py"] + "from megatron.training import pretrain\n"
    write(repo, {"job.yaml": PROCESS_RECOVERY_ACJOB, "scripts/train.sh": script, "train.py": entry})
    return repo


def test_a_script_passed_alone_is_judged_with_the_manifest_that_runs_it(tmp_path):
    repo = process_level_repository(tmp_path)
    linked = run_cli("--output-format", "concise", "scripts/train.sh", cwd=repo)
    assert linked.returncode == 0 and "RL101" not in linked.stdout, linked.stdout
    # the same script copied out of the repository is a standalone script: RL101 applies
    alone = tmp_path / "alone"
    write(
        alone,
        {"train.sh": (repo / "scripts" / "train.sh").read_text(), "requirements.txt": CONTEXT["requirements.txt"]},
    )
    found = run_cli("--output-format", "concise", "train.sh", "requirements.txt", cwd=alone).stdout
    assert "train.sh:3:8: RL101" in found, found


def test_file_mode_from_a_subfolder_uses_the_repository_root(tmp_path):
    repo = repository(tmp_path)
    result = run_cli("--output-format", "concise", "../job.yaml", cwd=repo / "scripts")
    assert "RL101" in result.stdout and "bench.sh" not in result.stdout, result.stdout + result.stderr


def test_fix_in_file_mode_writes_only_the_passed_files(tmp_path):
    repo = repository(tmp_path)
    write(repo, {"job.yaml": HOOK_MANIFEST})
    result = run_cli("--fix", "--exit-non-zero-on-fix", "job.yaml", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (repo / "job.yaml").read_text() == FIXED_MANIFEST
    assert (repo / "tools" / "bench.sh").read_text() == CONTEXT["tools/bench.sh"]
    again = run_cli("--fix", "--exit-non-zero-on-fix", "job.yaml", cwd=repo)
    assert again.returncode == 0 and "All checks passed." in again.stdout


def test_file_mode_with_nothing_lintable_reads_nothing(tmp_path):
    repo = repository(tmp_path)
    write(repo, {"NOTES.md": "x\n"})
    result = run_cli("--output-format", "concise", "NOTES.md", cwd=repo)
    assert result.returncode == 0 and result.stdout.startswith("No files to lint")


def test_repository_root_is_the_nearest_config_or_git_folder(tmp_path):
    # a config in scripts/ makes that folder the root: the manifest above it is not read, so the
    # script is judged as a standalone script
    repo = process_level_repository(tmp_path)
    write(
        repo,
        {
            "scripts/.recovery-lint.toml": "fail-on = 'warning'\n",
            "scripts/requirements.txt": CONTEXT["requirements.txt"],
        },
    )
    result = run_cli("--output-format", "concise", "scripts/train.sh", cwd=repo)
    assert "scripts/train.sh:3:8: RL101" in result.stdout, result.stdout
    # outside any repository only the files passed are read (the folder around them could be a
    # home or temp folder); passing the folder links the manifest with its script
    plain = tmp_path / "plain"
    write(
        plain,
        {
            "a/job.yaml": MANIFEST,
            "a/scripts/train.sh": CONTEXT["scripts/train.sh"],
            "elsewhere/broken.yaml": "apiVersion: v1\nkind: Job\nmetadata: {name: [x\n",
        },
    )
    alone = run_cli("--output-format", "concise", "a/job.yaml", cwd=plain)
    assert "RL101" not in alone.stdout and "RL900" not in alone.stdout, alone.stdout
    both = run_cli("--output-format", "concise", "a/job.yaml", "a/scripts/train.sh", cwd=plain)
    assert "a/job.yaml:24:13: RL101" in both.stdout, both.stdout
    folder = run_cli("--output-format", "concise", "a", cwd=plain)
    assert "a/job.yaml:24:13: RL101" in folder.stdout, folder.stdout


# -- the real pre-commit -------------------------------------------------------------------------
def _checkout_ref() -> str | None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    try:
        tracked = subprocess.run(
            ["git", "ls-files", "--error-unmatch", ".pre-commit-hooks.yaml"], cwd=ROOT, capture_output=True
        )
        if tracked.returncode != 0:
            return None
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        return None


@pytest.mark.slow  # about a minute: pre-commit builds the hook's virtualenv with pip
def test_pre_commit_try_repo_fails_on_a_staged_mistake_then_the_fix_hook_repairs_it(tmp_path):
    ref = _checkout_ref()
    if ref is None:
        pytest.skip("needs this project as a git checkout with .pre-commit-hooks.yaml committed")
    repo = repository(tmp_path)
    write(repo, {"job.yaml": HOOK_MANIFEST})
    git("add", "job.yaml", cwd=repo)
    # --ref pins the committed project: try-repo would otherwise copy uncommitted edits of the checkout
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}

    def hook(hook_id: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), hook_id, "--ref", ref, "--color", "never"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    check = hook("recovery-lint")
    out = check.stdout + check.stderr
    assert check.returncode == 1, out
    assert "Failed" in out and "job.yaml:10:23: RL205" in out
    assert "bench.sh" not in out  # only the staged file is reported

    fix = hook("recovery-lint-fix")
    out = fix.stdout + fix.stderr
    assert fix.returncode == 1, out  # it changed a file
    assert "Failed" in out and "files were modified by this hook" in out
    assert (repo / "job.yaml").read_text() == FIXED_MANIFEST
    assert (repo / "tools" / "bench.sh").read_text() == CONTEXT["tools/bench.sh"]

    git("add", "job.yaml", cwd=repo)
    again = hook("recovery-lint")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Passed" in again.stdout
