"""pre-commit passes only the changed files; a recovery finding is a claim about a job. A run over named
files lints the jobs those files belong to and reports every finding of those jobs, in any of their
files, as the folder run does. Each case is a repository in git, linted through the command line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, run_cli

MANIFEST = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt3
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec:
  minAvailable: 2
  schedulerName: volcano
  maxRetry: 3
  tasks:
  - name: trainer
    replicas: 2
    template:
      spec:
        containers:
        - name: trainer
          image: pytorch-npu:24.0
          command: ["/bin/bash", "-c", "bash /job/code/scripts/train_start.sh"]
"""
START = """\
#!/bin/bash
source /job/code/scripts/env.sh
torch_npu_run --nnodes 2 --node_rank $RANK --master_addr $MASTER_ADDR --master_port 6000 pretrain.py
"""
ENV = "export RESUME_MODE_ENABLE=1\nexport HCCL_ASYNC_ERROR_HANDLING=1\n"
ENTRY = "import torch\nimport torch_npu\n\nmodel = torch.nn.Linear(2, 2).npu()\n"
PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0, built for CANN 8.0.0


def repository(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    return root


def found(root: Path, *paths: str, isolated: bool = True) -> list[str]:
    args = ["check", "--no-cache", "--output-format", "json", *(["--isolated"] if isolated else []), *paths]
    result = run_cli(*args, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return sorted(f"{d['path']}:{d['line']} {d['code']}" for d in json.loads(result.stdout))


BASE = {
    "job.yaml": MANIFEST,
    "scripts/train_start.sh": START,
    "scripts/env.sh": ENV,
    "scripts/pretrain.py": ENTRY,
    "requirements.txt": PINS,
}


def test_a_commit_of_the_manifest_alone_reports_the_findings_it_causes_in_the_entry(tmp_path):
    repo = repository(tmp_path, {**BASE, "job.yaml": MANIFEST.replace("ascend-910b", "ascend-910")})
    folder = found(repo, ".")
    assert "scripts/pretrain.py:2 RL501" in folder, folder
    assert found(repo, "job.yaml") == folder


def test_a_commit_of_a_sourced_env_script_alone_reports_the_launch_it_breaks(tmp_path):
    repo = repository(tmp_path, {**BASE, "scripts/env.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\n"})
    folder = found(repo, ".")
    assert [f for f in folder if "RL103" in f], folder  # RESUME_MODE_ENABLE left the launch environment
    assert found(repo, "scripts/env.sh") == folder


def test_a_commit_of_a_pin_file_alone_reports_the_launches_that_read_it(tmp_path):
    # torch_npu 2.1.0.post4 (5.0.1.2) has neither torch_npu_run nor a watchdog thread
    repo = repository(tmp_path, {**BASE, "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post4\n"})
    folder = found(repo, ".")
    assert "scripts/train_start.sh:3 RL302" in folder and [f for f in folder if "RL101" in f], folder
    assert found(repo, "requirements.txt") == folder


def test_a_commit_of_the_image_alone_reports_the_launches_it_declares_for(tmp_path):
    """MindSpeed-LLM's torch_npu lives in docker/Dockerfile, a declaration folder beside the launch
    scripts' folders: the Dockerfile alone brings in every launch below the folder that holds it (a
    test suite's scripts only where a job reaches them, as in the folder run)."""
    launches = {
        "examples/gpt/pretrain_gpt_ptd.sh": "NNODES=2\ntorchrun --nnodes $NNODES --node_rank 0 --master_addr h"
        " --master_port 6000 pretrain_gpt.py\n",
        "examples/gpt/pretrain_gpt.py": ENTRY,
        "tests/st/run.sh": "torchrun --nnodes 2 --node_rank 0 --master_addr h --master_port 6000 x.py\n",
    }
    dockerfile = "FROM ubuntu:22.04\nRUN pip install torch==2.1.0 torch-npu==2.1.0.post10\n"
    repo = repository(tmp_path, {**launches, "docker/Dockerfile": dockerfile})
    folder = found(repo, ".")
    assert folder == ["examples/gpt/pretrain_gpt_ptd.sh:2 RL301"], folder
    assert found(repo, "docker/Dockerfile") == folder


def test_a_readme_brings_in_the_launches_of_its_folder_only_with_a_version_table(tmp_path):
    """A model's README with a version table declares the torch of the launches below it; a README
    without one (the repository's front page, mentioning the scripts) brings in nothing."""
    table = "# ResNet50\n\n| 配套 | 版本 |\n|---|---|\n| PyTorch | 1.11.0 |\n| CANN | 6.0.RC1 |\n"
    launch = "torchrun --nnodes 2 --nproc_per_node 8 main.py\n"
    repo = repository(
        tmp_path,
        {
            "README.md": "Models: run models/resnet/test/train_full_16p.sh, see models/resnet/README.md\n",
            "models/resnet/README.md": table,
            "models/resnet/test/train_full_16p.sh": launch,
            "models/resnet/main.py": ENTRY,
        },
    )

    def files_read(*paths: str) -> list[str]:
        result = run_cli("check", "--no-cache", "--isolated", "--show-files", *paths, cwd=repo)
        assert result.returncode == 0, result.stderr
        return result.stdout.split()

    assert files_read("README.md") == ["README.md"]
    assert "models/resnet/test/train_full_16p.sh" in files_read("models/resnet/README.md")
    folder = found(repo, ".")
    assert [f for f in folder if "RL101" in f], folder  # torch 1.11 builds leave the watchdog off
    assert found(repo, "models/resnet/README.md") == folder


def test_the_scripts_that_run_the_named_files_are_found_for_one_file_and_for_many(tmp_path):
    """A caller names the file as a word of its own (``bash s0.sh``, ``${DIR}/s0.sh``), never as
    part of another name (``my_s0.sh``): the same whether one file is named or many (looked up
    through an index of the scripts' words)."""
    files = {f"s{i}.sh": f"echo {i}\n" for i in range(10)}
    files |= {f"c{i}.sh": f"bash s{i}.sh\n" for i in range(9)}
    files |= {"c9.sh": "DIR=$(dirname $0)\n${DIR}/s9.sh;\n", "decoy.sh": "bash my_s0.sh\n", "my_s0.sh": "echo\n"}
    repo = repository(tmp_path, files)

    def files_read(*paths: str) -> set[str]:
        result = run_cli("check", "--no-cache", "--isolated", "--show-files", *paths, cwd=repo)
        assert result.returncode == 0, result.stderr
        return set(result.stdout.split())

    assert files_read("s0.sh") == {"s0.sh", "c0.sh"}
    assert files_read("s9.sh") == {"s9.sh", "c9.sh"}
    named = [f"s{i}.sh" for i in range(10)]
    assert files_read(*named) == {*named, *(f"c{i}.sh" for i in range(10))}


def test_a_file_without_a_suffix_runs_the_named_file_only_when_it_is_a_shell_script(tmp_path):
    """A file without a suffix is a launcher only when its first line names a shell (as a run reads
    it); a data file that mentions a script's name (a corpus, a log) is not searched, whether one
    file is named or many (through the index of the launchers' words)."""
    from recovery_lint.discover import Candidate
    from recovery_lint.flow.reach import _reaching, launcher_text
    from recovery_lint.kinds import classify

    files = {f"s{i}.sh": f"echo {i}\n" for i in range(10)}
    files |= {"run_s0": "#!/bin/bash\nbash s0.sh\n", "corpus": "text about s1.sh and s0.sh\n" * 50}
    files |= {"notes": "#!/usr/bin/env python3\nimport os\nos.system('bash s1.sh')\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    candidates = [Candidate(tmp_path / name, name, classify(name)) for name in sorted(files)]
    by_name = {c.display: c for c in candidates}

    assert launcher_text(by_name["run_s0"]).startswith(b"#!/bin/bash")
    assert launcher_text(by_name["corpus"]) == launcher_text(by_name["notes"]) == b""
    assert _reaching(candidates, {"s0.sh"}, set()) == {"run_s0"}
    assert _reaching(candidates, {"s1.sh"}, set()) == set()
    assert _reaching(candidates, {f"s{i}.sh" for i in range(10)}, set()) == {"run_s0"}


def test_a_script_of_a_configured_job_mapping_is_judged_in_that_job(tmp_path):
    manifest = MANIFEST.replace("bash /job/code/scripts/train_start.sh", "/opt/start")
    config = (
        '[tool.recovery-lint]\n[[tool.recovery-lint.jobs]]\nmanifest = "job.yaml"\n'
        'scripts = ["scripts/train_start.sh"]\nentry = "scripts/pretrain.py"\n'
    )
    repo = repository(
        tmp_path, {**BASE, "job.yaml": manifest, "scripts/env.sh": "export A=1\n", "pyproject.toml": config}
    )
    folder = found(repo, ".", isolated=False)
    assert [f for f in folder if "RL103" in f], folder  # the manifest's resumable job needs RESUME_MODE_ENABLE
    assert found(repo, "scripts/train_start.sh", isolated=False) == folder
    assert found(repo, "scripts/pretrain.py", isolated=False) == folder


def test_a_script_a_manifest_in_a_sibling_folder_runs_is_judged_in_that_job(tmp_path):
    manifest = MANIFEST.replace(
        "bash /job/code/scripts/train_start.sh", "cd /job/code/scripts; bash train_start.sh"
    ).replace('    pod-rescheduling: "on"\n', "")
    repo = repository(
        tmp_path,
        {
            "manifests/train-vcjob.yaml": manifest,
            "scripts/train_start.sh": START.replace("source /job/code/scripts/env.sh", "source env.sh"),
            "scripts/env.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n",
            "scripts/pretrain.py": ENTRY,
            "requirements.txt": PINS,
        },
    )
    folder = found(repo, ".")
    assert len(folder) >= 3, folder
    assert found(repo, "scripts/train_start.sh") == folder


def test_a_file_of_no_job_is_reported_as_before(tmp_path):
    repo = repository(tmp_path, {**BASE, "tools/helper.sh": "#!/bin/bash\r\necho hi\r\n"})
    assert found(repo, "tools/helper.sh") == ["tools/helper.sh:1 RL900"]


def test_another_job_sharing_a_file_keeps_its_findings_out_of_the_report(tmp_path):
    other = MANIFEST.replace("name: gpt3", "name: bert").replace(
        "bash /job/code/scripts/train_start.sh", "bash /job/code/bert/run.sh"
    )
    repo = repository(
        tmp_path,
        {
            **BASE,
            "bert/job.yaml": other.replace('    pod-rescheduling: "on"\n', ""),
            "bert/run.sh": "#!/bin/bash\ntorch_npu_run --nnodes 2 --node_rank $RANK --master_addr $A bert.py\n",
        },
    )
    folder = found(repo, ".")
    assert [f for f in folder if f.startswith("bert/job.yaml")], folder
    alone = found(repo, "job.yaml")
    assert not [f for f in alone if f.startswith("bert/")], alone


@pytest.mark.skipif(not (ROOT / ".pre-commit-hooks.yaml").is_file(), reason="no hooks file")
def test_the_hook_entry_as_pre_commit_runs_it_fails_a_manifest_only_commit(tmp_path):
    """pre-commit runs the hook's entry with its args and the changed files (require_serial: one
    batch); a commit of the manifest alone that breaks the entry fails."""
    import yaml

    hook = next(h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()) if h["id"] == "recovery-lint")
    assert hook.get("require_serial") is True
    repo = repository(tmp_path, BASE)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "base", "--no-verify"], check=True, env=_git_env())
    (repo / "job.yaml").write_text(MANIFEST.replace("ascend-910b", "ascend-910"))
    entry = hook["entry"].split()
    assert entry[0] == "recovery-lint"
    result = run_cli(*entry[1:], *hook.get("args", []), "job.yaml", cwd=repo)
    assert result.returncode == 1 and "scripts/pretrain.py:2:1: RL501" in result.stdout, result.stdout


def _git_env() -> dict[str, str]:
    import os

    return {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }


def test_select_on_the_command_line_overrides_the_configurations_ignore(tmp_path):
    config = "[tool.recovery-lint]\nignore = ['RL301']\nextend-select = []\n"
    script = "#!/bin/bash\ntorchrun --nnodes 2 --node_rank $R --master_addr $A train.py\n"
    repo = repository(tmp_path, {"pyproject.toml": config, "run.sh": script, "requirements.txt": PINS})
    assert found(repo, ".", isolated=False) == []
    selected = run_cli("check", "--no-cache", "--output-format", "json", "--select", "RL301", ".", cwd=repo)
    assert [d["code"] for d in json.loads(selected.stdout)] == ["RL301"]
    # an --ignore given with it on the command line still applies
    both = run_cli(
        "check", "--no-cache", "--output-format", "json", "--select", "RL3", "--ignore", "RL301", ".", cwd=repo
    )
    assert json.loads(both.stdout) == []


def test_tracked_only_reads_the_repository_as_a_commit_holds_it(tmp_path):
    """The hooks pass --tracked-only: a manifest nobody has added to git is no part of the commit
    (nor of the clone CI lints), so it neither links with a named file nor is walked; a file named
    is linted all the same, tracked or not."""
    repo = repository(tmp_path, BASE)
    (repo / "draft").mkdir()
    (repo / "draft/job.yaml").write_text(MANIFEST.replace("ascend-910b", "ascend-910"))  # untracked
    broken_by_draft = "scripts/pretrain.py:2 RL501"
    assert broken_by_draft in found(repo, "scripts/train_start.sh")
    assert broken_by_draft not in found(repo, "--tracked-only", "scripts/train_start.sh")
    assert broken_by_draft in found(repo, ".")
    assert broken_by_draft not in found(repo, "--tracked-only", ".")
    named = found(repo, "--tracked-only", "draft/job.yaml")
    assert broken_by_draft in named, named


def test_an_entry_a_named_run_reaches_is_the_file_the_folder_run_has(tmp_path):
    """A run over named files makes no candidate of a Python file until a link reaches it; the file
    it then makes is the one the folder run has, or none where the folder run has none: below a
    folder no walk enters, or excluded by the configuration (passed on as pre-commit does)."""
    ascend_910 = MANIFEST.replace("ascend-910b", "ascend-910")
    for where, config in (
        ("scripts/pretrain.py", ""),
        ("venv/pretrain.py", ""),  # a folder no walk enters
        ("legacy/pretrain.py", '[tool.recovery-lint]\nexclude = ["legacy/"]\n'),
    ):
        root = tmp_path / where.split("/")[0]
        files = {**BASE, "job.yaml": ascend_910, "scripts/pretrain.py": "", where: ENTRY}
        files["scripts/train_start.sh"] = START.replace(" pretrain.py", f" /job/code/{where}")
        if config:
            files["pyproject.toml"] = config
        repo = repository(root, files)
        folder = found(repo, ".", isolated=not config)
        assert (f"{where}:2 RL501" in folder) == (where == "scripts/pretrain.py"), (where, folder)
        assert found(repo, "--force-exclude", "job.yaml", isolated=not config) == folder, where


def test_a_module_the_entry_imports_is_reached_in_a_named_run(tmp_path):
    """The entry loads torch_npu through a module of the repository: a run over the manifest alone
    follows the import to that module's file, as the folder run does."""
    entry = "import torch\nimport npu_setup\n\nmodel = torch.nn.Linear(2, 2).npu()\n"
    files = {
        **BASE,
        "job.yaml": MANIFEST.replace("ascend-910b", "ascend-910"),
        "scripts/pretrain.py": entry,
        "scripts/npu_setup.py": "import torch_npu\n",
    }
    repo = repository(tmp_path, files)
    folder = found(repo, ".")
    assert any(f.startswith("scripts/pretrain.py:") and f.endswith("RL501") for f in folder), folder
    assert found(repo, "job.yaml") == folder


def test_the_jobs_of_a_named_run_list_the_python_files_nothing_reaches(tmp_path):
    repo = repository(tmp_path, {**BASE, "tools/convert.py": "import torch\n"})
    result = run_cli("check", "--no-cache", "--isolated", "--show-jobs", "scripts/train_start.sh", cwd=repo)
    assert "tools/convert.py: not judged, unknown (not read: no launch or manifest reaches it)" in result.stdout
    assert "scripts/pretrain.py: not judged" not in result.stdout, result.stdout


def test_a_named_run_from_a_subfolder_reaches_the_entry_by_its_path_from_there(tmp_path):
    """Display paths of the files a link reaches are written from the working folder, as the folder
    run writes them: ``pretrain.py`` from ``scripts/``, the manifest as ``../job.yaml``."""
    repo = repository(tmp_path, {**BASE, "job.yaml": MANIFEST.replace("ascend-910b", "ascend-910")})
    folder = found(repo / "scripts", "..")
    assert "pretrain.py:2 RL501" in folder, folder
    assert found(repo / "scripts", "../job.yaml") == folder
