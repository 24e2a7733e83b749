"""Every command and snippet of the README works as written: each command shown is run here (or by
the test named in RUN_ELSEWHERE), and adding a command to the README without a test fails."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
import yaml

from .conftest import FIXTURES, ROOT, run_cli
from .test_precommit import GIT_ENV, git

README = (ROOT / "README.md").read_text("utf-8")
BIN = Path(sys.executable).parent  # where this environment's `recovery-lint` and `pre-commit` live
WHEEL = "recovery_lint-0.1.0-py3-none-any.whl"


def fenced_blocks(info: str | None = None) -> list[str]:
    return [body for kind, body in re.findall(r"```(\w*)\n(.*?)```", README, re.S) if info is None or kind == info]


def readme_commands() -> set[str]:
    """Commands the README shows: lines of bash/sh blocks (a block starting with a shebang is a
    script, not commands), `$ ` lines of console blocks, and inline code that starts a command."""
    found = set()
    for kind, body in re.findall(r"```(\w*)\n(.*?)```", README, re.S):
        lines = body.splitlines()
        if kind in ("bash", "sh") and not (lines and lines[0].startswith("#!")):
            found |= {re.split(r"\s{2,}#", line)[0].strip() for line in lines if line.strip()}
        elif kind == "console":
            found |= {line[2:] for line in lines if line.startswith("$ ")}
    prose = re.sub(r"```.*?```", "", README, flags=re.S)
    found |= set(re.findall(r"`((?:recovery-lint|pre-commit|pip|python) [^`]*)`", prose))
    return found


@dataclass(frozen=True)
class Expect:
    codes: tuple[int, ...]  # acceptable exit codes (of the whole shell line)
    before: str = ""  # a README command that must run first
    creates: str = ""  # a file the command writes


# Run here, in a copy of the example job (fixtures/vcjob-gpt3, a git repository of its own).
COMMANDS = {
    "recovery-lint rule RL101": Expect((0,)),
    "recovery-lint rule RL301": Expect((0,)),
    "recovery-lint --scorecard": Expect((1,)),
    "recovery-lint . | head -1": Expect((0,)),
    "recovery-lint chek": Expect((2,)),  # shown as the usage error it is
    "recovery-lint --output-format github .": Expect((1,)),
    "recovery-lint --output-format junit --output-file recovery-lint.xml .": Expect((1,), creates="recovery-lint.xml"),
    "recovery-lint -": Expect((0,)),
    "recovery-lint --stdin-filename scripts/env.sh - < scripts/env.sh": Expect((1,)),
    "recovery-lint --fix --unsafe-fixes --stdin-filename scripts/env.sh - < scripts/env.sh": Expect((0,)),
    "recovery-lint --statistics .": Expect((1,)),
    "recovery-lint init": Expect((0,), creates=".recovery-lint.toml"),
    "recovery-lint --add-suppressions .": Expect((0,)),
    "recovery-lint --write-baseline .recovery-lint-baseline.json .": Expect(
        (0,), creates=".recovery-lint-baseline.json"
    ),
    "recovery-lint --baseline .recovery-lint-baseline.json .": Expect(
        (0,), before="recovery-lint --write-baseline .recovery-lint-baseline.json ."
    ),
    "recovery-lint --select RL301 .": Expect((1,)),
}
# Run by another test, with the reason.
RUN_ELSEWHERE = {
    "recovery-lint --output-format concise fixtures/vcjob-gpt3": "test_cli.py: the capture is the real output",
    "recovery-lint --scorecard fixtures/vcjob-gpt3": "test_scorecard.py: the capture is the real output",
    "pip install -e '.[test]' && recovery-lint fixtures/vcjob-gpt3": "test_install_commands_work_as_written",
    "pip wheel --no-deps -w dist .": "test_install_commands_work_as_written",
    f"pip install dist/{WHEEL}": "test_install_commands_work_as_written",
    "python -m pytest": "this suite itself",
    "recovery-lint server": "test_server.py speaks LSP to it over stdio",
    "pip install 'recovery-lint[server]'": "the test extra installs pygls; test_server.py checks the message without it",
    "python -m pytest tests/test_rule_cases.py tests/test_rule_cases_cli.py -k RLNNN": "this suite itself",
    "python -m recovery_lint.registry > schemas/rule_index.json": "test_rule_index.py: the index equals the rules",
    "recovery-lint rule --all --output-format markdown > docs/rules.md": (
        "test_cli.py::test_generated_rules_doc_is_current"
    ),
    "python bench/run.py": "test_bench_smoke.py runs it on a small repository",
    "pre-commit run --all-files": "test_the_pre_commit_snippet_works_as_written",
    "pre-commit try-repo /path/to/recovery-lint recovery-lint --all-files": (
        "test_precommit.py::test_pre_commit_try_repo_fails_on_a_staged_mistake_then_the_fix_hook_repairs_it"
        " (the checkout for /path/to/recovery-lint)"
    ),
}


def test_every_readme_command_is_run_by_a_test():
    shown = readme_commands()
    assert shown - set(COMMANDS) - set(RUN_ELSEWHERE) == set(), "a README command no test runs"
    assert (set(COMMANDS) | set(RUN_ELSEWHERE)) - shown == set(), "a tested command the README no longer shows"


def example_job(tmp_path: Path) -> Path:
    job = tmp_path / "vcjob-gpt3"
    shutil.copytree(FIXTURES / "vcjob-gpt3", job)
    git("init", "-q", cwd=job)
    return job


def shell(command: str, cwd: Path, path: Path = BIN) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{path}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_readme_command_works_as_written(tmp_path, command):
    job = example_job(tmp_path)
    expect = COMMANDS[command]
    if expect.before:
        assert shell(expect.before, job).returncode in COMMANDS[expect.before].codes
    result = shell(command, job)
    assert result.returncode in expect.codes, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    if expect.creates:
        assert (job / expect.creates).is_file()


def test_the_suppression_snippet_is_a_script_whose_directives_all_work(tmp_path):
    (script,) = [body for body in fenced_blocks("bash") if body.startswith("#!")]
    (tmp_path / "train.sh").write_text(script)
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\ntorch-npu==2.1.0.post10\n")  # torch_npu_run exists
    result = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "All checks passed.\n")  # every finding suppressed, none unused
    (tmp_path / "train.sh").write_text(re.sub(r"\s*# recovery-lint: .*", "", script))
    bare = run_cli("--output-format", "concise", ".", cwd=tmp_path).stdout
    assert [line.split(": ")[1].split()[0] for line in bare.splitlines()[:-1]] == ["RL101", "RL301", "RL301"]


def test_the_configuration_snippet_is_a_valid_configuration(tmp_path):
    (config,) = [b for b in fenced_blocks("toml") if "[tool.recovery-lint" in b]
    job = example_job(tmp_path)
    (job / "pyproject.toml").write_text(config)
    result = run_cli("--verbose", "--output-format", "concise", ".", cwd=job)
    assert result.returncode == 1 and result.stderr.startswith("recovery-lint: config: pyproject.toml\n"), result.stderr


def test_every_option_of_the_usage_listing_exists():
    (usage,) = [body for body in fenced_blocks("") if body.startswith("recovery-lint [check]")]
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+|-q)\b", usage))
    help_text = run_cli("--help").stdout + run_cli("rule", "--help").stdout
    assert options and {o for o in options if o not in help_text} == set()


def test_the_pre_commit_snippet_works_as_written(tmp_path):
    (config,) = [body for body in fenced_blocks("yaml") if body.startswith("repos:")]
    repo = example_job(tmp_path)
    (repo / ".pre-commit-config.yaml").write_text(config)
    git("add", ".", cwd=repo)
    env = {
        **os.environ,
        **GIT_ENV,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "NO_COLOR": "1",
    }
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "recovery-lint" in result.stdout and "Failed" in result.stdout
    assert "scripts/env.sh:4:8: RL101 warning:" in result.stdout
    assert "scripts/train_start.sh:24:1: RL301 [*] warning:" in result.stdout


@pytest.mark.slow  # builds two virtual environments and installs the dependencies into them
def test_install_commands_work_as_written(tmp_path):
    """The first command of the README in a copy of the checkout, the wheel built and installed as
    the Installing section says, and the GitHub Actions workflow's steps run with that wheel."""
    checkout = tmp_path / "checkout"
    shutil.copytree(
        ROOT,
        checkout,
        ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", ".*_cache"),
    )
    develop = make_venv(tmp_path / "develop")
    first_screen = next(c for c in RUN_ELSEWHERE if c.startswith("pip install -e"))
    result = shell(first_screen, checkout, develop)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]  # the example has findings
    assert "3 findings" in result.stdout
    assert shell("pip wheel --no-deps -w dist .", checkout, develop).returncode == 0
    assert (checkout / "dist" / WHEEL).is_file()

    # the workflow, in a repository holding the wheel as the text says
    repo = example_job(tmp_path)
    (repo / "tools").mkdir()
    shutil.copy(checkout / "dist" / WHEEL, repo / "tools" / WHEEL)
    (workflow,) = [body for body in fenced_blocks("yaml") if body.startswith("name: recovery-lint")]
    steps = [step["run"] for step in yaml.safe_load(workflow)["jobs"]["recovery-lint"]["steps"] if "run" in step]
    assert steps[0] == f"pip install tools/{WHEEL}"
    runner = make_venv(tmp_path / "runner")
    assert shell(steps[0], repo, runner).returncode == 0
    lint = shell(steps[1], repo, runner)
    assert lint.returncode == 1, lint.stderr  # findings fail the step; the upload still runs
    sarif = json.loads((repo / "recovery-lint.sarif").read_text())
    jsonschema.validate(sarif, json.loads((ROOT / "schemas" / "sarif-2.1.0.json").read_text()))
    assert sarif["runs"][0]["results"]
    # the Installing section's own command, in the checkout
    assert shell(f"pip install dist/{WHEEL}", checkout, runner).returncode == 0


def make_venv(where: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(where)
    return where / "bin"


def test_the_first_screen_gives_the_two_commands():
    first = README.split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", first, re.S)
    commands = [re.split(r"\s{2,}#", line)[0].strip() for line in block.splitlines()]
    assert commands == ["pip install -e '.[test]' && recovery-lint fixtures/vcjob-gpt3", "python -m pytest"]


def test_the_readme_points_at_no_address_that_does_not_exist():
    for text in (README, (ROOT / "pyproject.toml").read_text("utf-8")):
        assert "github.com/recovery-lint" not in text and "rev: v0.1.0" not in text


def test_every_package_of_the_source_tree_is_installed():
    """A regular install ships the listed packages only; a folder missing from the list fails
    there at import, never in an editable checkout."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    roots = {name: ROOT / folder for name, folder in setup["package-dir"].items()}
    on_disk = set()
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            inner = init.parent.relative_to(folder).parts
            on_disk.add(".".join((name, *inner)))
    assert sorted(on_disk - set(setup["packages"])) == []
