"""A file that could not be parsed was not checked: its RL900 shows whatever rules are selected,
unless RL900 itself is ignored (ruff reports syntax errors always)."""

from __future__ import annotations

import pytest

from .conftest import run_cli

BROKEN = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: [x\n"  # a training job's manifest


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "job.yaml").write_text(BROKEN)
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        ["--select", "RL1"],
        ["--select", "RL301"],
        ["--ignore", "RL9"],
        ["--ignore", "RL901", "--ignore", "RL902"],
        ["--select", "RL1", "--ignore", "ALL"],
    ],
)
def test_a_yaml_syntax_error_is_reported_whatever_the_selection(repo, argv):
    result = run_cli("--output-format", "concise", *argv, ".", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("job.yaml:4:1: RL900 ")
    assert "All checks passed." not in result.stdout


def test_a_config_selection_does_not_hide_it_either(repo):
    (repo / ".recovery-lint.toml").write_text('select = ["RL3"]\nignore = ["RL90"]\n')
    result = run_cli("--output-format", "concise", ".", cwd=repo)
    assert result.returncode == 1 and "RL900" in result.stdout


@pytest.mark.parametrize(
    "argv", [["--ignore", "RL900"], ["--ignore", "parse-error"], ["--select", "RL1", "--ignore", "rl900"]]
)
def test_naming_rl900_itself_in_ignore_hides_it(repo, argv):
    result = run_cli("--output-format", "concise", *argv, ".", cwd=repo)
    assert (result.returncode, result.stdout) == (0, "All checks passed.\n")


def test_config_ignore_of_rl900_hides_it(repo):
    (repo / ".recovery-lint.toml").write_text('select = ["RL1"]\nignore = ["RL900"]\n')
    result = run_cli("--output-format", "concise", ".", cwd=repo)
    assert (result.returncode, result.stdout) == (0, "All checks passed.\n")
