"""--new-since REV through the command line: only the findings a change introduced are reported, the
repository at REV is read from git's objects without touching the working tree or the index, file
mode and folder runs agree, and a revision that is not there is a clear error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import FIXTURES, run_cli
from .test_precommit import git


def _committed(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "vcjob-gpt3", repo)
    (repo / "expected.txt").unlink()
    git("init", "-q", cwd=repo)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "training job", cwd=repo)
    return repo


def _codes(result) -> list[str]:
    return sorted(f"{f['path']}:{f['line']} {f['code']}" for f in json.loads(result.stdout))


def test_nothing_changed_means_nothing_new(tmp_path):
    repo = _committed(tmp_path)
    assert len(json.loads(run_cli("--output-format", "json", ".", cwd=repo).stdout)) == 3
    result = run_cli("--new-since", "HEAD", ".", cwd=repo)
    assert result.returncode == 0 and result.stdout.startswith("All checks passed."), result.stdout


def test_only_what_the_change_introduced_is_reported_in_folder_and_file_mode(tmp_path):
    repo = _committed(tmp_path)
    env = repo / "scripts" / "env.sh"
    env.write_text("# sourced by train_start.sh\n" + env.read_text() + "export HCCL_CONNECT_TIMEOUT=100\n")
    status = git("status", "--porcelain", cwd=repo)
    for named in (".", "scripts/env.sh"):
        result = run_cli("--new-since", "HEAD", "--output-format", "json", named, cwd=repo)
        assert result.returncode == 1, result.stderr
        assert [c.split(" ")[1] for c in _codes(result)] == ["RL317"], _codes(result)
    assert git("status", "--porcelain", cwd=repo) == status  # the working tree and the index as they were
    assert git("stash", "list", cwd=repo) == ""


def test_a_fixed_finding_is_not_reported_and_a_moved_one_stays_old(tmp_path):
    repo = _committed(tmp_path)
    script = repo / "scripts" / "train_start.sh"
    script.write_text(script.read_text().replace("set -e\n", "set -e\n\n# launch\n", 1))  # RL301 two lines lower
    env = repo / "scripts" / "env.sh"
    env.write_text(env.read_text().replace("HCCL_ASYNC_ERROR_HANDLING=0", "HCCL_ASYNC_ERROR_HANDLING=1"))
    result = run_cli("--new-since", "HEAD", ".", cwd=repo)
    assert result.returncode == 0 and result.stdout.startswith("All checks passed."), result.stdout


def test_the_first_commit_of_a_repository_reports_everything(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "vcjob-gpt3", repo)
    git("init", "-q", cwd=repo)
    assert len(json.loads(run_cli("--new-since", "HEAD", "--output-format", "json", ".", cwd=repo).stdout)) == 3


def test_a_revision_that_is_not_there_is_a_clear_error(tmp_path):
    repo = _committed(tmp_path)
    result = run_cli("--new-since", "origin/main", ".", cwd=repo)
    assert result.returncode == 2
    assert "--new-since: 'origin/main' is not a commit of this repository" in result.stderr
    outside = tmp_path / "plain"
    shutil.copytree(FIXTURES / "vcjob-gpt3", outside)
    result = run_cli("--new-since", "HEAD", ".", cwd=outside)
    assert result.returncode == 2 and "--new-since needs a git repository" in result.stderr


def test_the_old_tree_is_linted_with_the_configuration_the_run_reads(tmp_path):
    repo = _committed(tmp_path)
    # a configuration added by the change itself (not in HEAD) still applies to HEAD's tree
    (repo / ".recovery-lint.toml").write_text('ignore = ["RL202"]\n')
    result = run_cli("--new-since", "HEAD", ".", cwd=repo)
    assert result.returncode == 0 and result.stdout.startswith("All checks passed."), result.stdout
