"""What the command says when a path or a command word is wrong, or there is nothing to lint."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import run_cli


@pytest.mark.parametrize("path", ["nope.yaml", "nodir/"])
def test_a_missing_path_is_a_usage_error_in_one_line(tmp_path, path):
    result = run_cli(path, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == f"recovery-lint: error: {path}: No such file or directory\n"
    assert result.stdout == ""


def test_every_missing_path_is_named_and_existing_ones_are_not_linted_alone(tmp_path):
    (tmp_path / "train.sh").write_text("torch_npu_run train.py\n")
    result = run_cli("train.sh", "gone.sh", "nodir", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "recovery-lint: error: gone.sh, nodir: No such file or directory\n"


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [(["chek"], "check"), (["rules", "RL101"], "rule"), (["rulle", "--all"], "rule")],
)
def test_a_mistyped_command_is_a_usage_error_with_a_suggestion(tmp_path, argv, suggestion):
    result = run_cli(*argv, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"recovery-lint: error: {argv[0]}: no such command, file or directory")
    assert f"did you mean 'recovery-lint {suggestion}'?" in result.stderr


def test_an_option_written_as_a_command_is_pointed_at(tmp_path):
    result = run_cli("fix", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "recovery-lint: error: fix: no such command, file or directory (did you mean '--fix'?)\n"


def test_a_rule_code_given_as_a_path_points_at_the_rule_command(tmp_path):
    (tmp_path / "rules").mkdir()  # 'rules' exists here: it is a path, and RL101 is not
    result = run_cli("rules", "RL101", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        "recovery-lint: error: RL101: No such file or directory (a rule's documentation: recovery-lint rule RL101)\n"
    )


def test_a_missing_path_after_check_is_a_missing_path(tmp_path):
    result = run_cli("check", "chek", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, "recovery-lint: error: chek: No such file or directory\n")


NOTHING = "No files to lint (no manifests, shell scripts, Python files or version pins found).\n"


@pytest.mark.parametrize("files", [{}, {"LICENSE": "MIT\n", "notes.md": "# notes\n", "bin/tool": "echo\n"}])
def test_a_folder_with_nothing_to_lint_says_so_and_exits_zero(tmp_path, files):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, NOTHING)
    machine = run_cli("--output-format", "json", ".", cwd=tmp_path)
    assert (machine.returncode, machine.stdout, machine.stderr) == (0, "[]\n", NOTHING)


def test_an_extensionless_shell_script_is_something_to_lint(tmp_path):
    Path(tmp_path / "launch").write_text("#!/bin/bash\ntorch_npu_run train.py\n")
    result = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert "No files to lint" not in result.stdout


@pytest.mark.parametrize("git", [True, False])
def test_paths_are_shown_from_the_working_directory_the_shortest_way(tmp_path, git):
    # a run from a folder inside the repository shows a neighbour as ../c/run.sh, never by climbing to
    # the root and down again (../../a/c/run.sh), with git's listing and without it
    import subprocess

    script = "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"
    for rel in ("a/b/run.sh", "a/c/run.sh"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(script)
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\ntorch-npu==2.1.0.post10\n")
    if git:
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    else:
        (tmp_path / ".recovery-lint.toml").write_text("")  # the root, without git
    result = run_cli("--output-format", "concise", "..", cwd=tmp_path / "a" / "b")
    shown = [line.split(":")[0] for line in result.stdout.splitlines() if ": RL" in line]
    assert sorted(set(shown)) == ["../c/run.sh", "run.sh"], shown


@pytest.mark.parametrize("name", [os.fsdecode(b"run\xff.sh"), "训练.sh"], ids=["not-utf8", "chinese"])
def test_a_script_whose_name_is_not_ascii_is_linked_to_the_script_that_runs_it(tmp_path, name):
    # a file name bash accepts: in bytes that are not UTF-8, or in another script than Latin; file
    # mode searches the other scripts for it as the bytes it is (it stopped with an internal error
    # encoding such a name as UTF-8), and both modes link it to the script that runs it
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / name).write_bytes(b"#!/bin/bash\ntorchrun --nproc_per_node=8 train.py\n")
    (tmp_path / "launch.sh").write_bytes(b"#!/bin/bash\nbash " + os.fsencode(name) + b"\n")
    for paths in ((".",), (name,)):
        result = run_cli(*paths, "--isolated", "--no-cache", "--show-jobs", cwd=tmp_path, text=False)
        assert result.returncode in (0, 1) and b"internal error" not in result.stderr, result.stderr
        assert result.stdout.startswith(b"launch.sh (standalone)\n"), result.stdout
        assert b"script " + os.fsencode(name) in result.stdout, result.stdout
