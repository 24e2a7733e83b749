"""The smaller command-line behaviours a ruff or yamllint user relies on, each as seen from outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run_cli

TORCHRUN_SCRIPT = (
    "#!/bin/bash\n# launch\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"
)
PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0: ships torch_npu_run, watchdog defaults on


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


# -- --statistics ------------------------------------------------------------------------------------
def test_statistics_prints_the_table_and_the_summary_only(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    result = run_cli("--statistics", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "     1  RL101  [-] watchdog-disabled",
        "     1  RL301  [*] torchrun-without-parallel-store",
        "2 findings (1 fixable, 1 more with --unsafe-fixes) in 1 file",
    ]


def test_statistics_as_json_is_json_only(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    result = run_cli("--statistics", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {"code": "RL101", "name": "watchdog-disabled", "count": 1, "fixable": True, "fixable_count": 1},
        {"code": "RL301", "name": "torchrun-without-parallel-store", "count": 1, "fixable": True, "fixable_count": 1},
    ]
    assert result.stderr == "2 findings (1 fixable, 1 more with --unsafe-fixes) in 1 file\n"


def test_statistics_with_a_format_that_has_no_table_is_a_usage_error(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    result = run_cli("--statistics", "--output-format", "sarif", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "recovery-lint: error: --statistics prints a table or JSON, not sarif\n"


# -- severity in the text formats ------------------------------------------------------------------------
def test_concise_and_full_output_show_the_severity(tmp_path):
    write(
        tmp_path,
        {
            "train.sh": TORCHRUN_SCRIPT,
            "requirements.txt": PINS,
            "bad.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: [x\n",
        },
    )
    concise = run_cli("--output-format", "concise", ".", cwd=tmp_path).stdout.splitlines()
    assert concise[0].startswith("bad.yaml:4:1: RL900 error: YAML syntax error")
    assert concise[1].startswith("train.sh:3:8: RL101 warning: HCCL_ASYNC_ERROR_HANDLING=0")
    assert concise[2].startswith("train.sh:4:1: RL301 [*] warning: 'torchrun'")
    full = run_cli("--output-format", "full", ".", cwd=tmp_path).stdout
    assert "bad.yaml:4:1: RL900 error: YAML syntax error" in full
    assert "train.sh:3:8: RL101 warning: HCCL_ASYNC_ERROR_HANDLING=0" in full
    assert "train.sh:4:1: RL301 [*] warning: 'torchrun'" in full


# -- --fail-on decides the exit code, and every format agrees --------------------------------------------
TEMPLATED = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {{ .Values.name }}\n"


def machine_views(root: Path, *argv: str) -> tuple[int, str, str, dict]:
    junit = run_cli("--output-format", "junit", *argv, ".", cwd=root)
    github = run_cli("--output-format", "github", *argv, ".", cwd=root)
    sarif = run_cli("--output-format", "sarif", *argv, ".", cwd=root)
    assert junit.returncode == github.returncode == sarif.returncode
    return junit.returncode, junit.stdout, github.stdout, json.loads(sarif.stdout)


def test_an_info_finding_fails_nothing_by_default_in_any_format(tmp_path):
    write(tmp_path, {"chart/job.yaml": TEMPLATED})
    code, junit, github, sarif = machine_views(tmp_path)
    assert code == 0
    assert 'failures="0"' in junit and "<failure" not in junit
    assert "RL903" in junit.split("<system-out>", 1)[1]  # still listed, as output of a passing test
    assert github.startswith("::notice file=chart/job.yaml,")
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["note"]


def test_fail_on_info_makes_the_info_finding_a_failure_everywhere(tmp_path):
    write(tmp_path, {"chart/job.yaml": TEMPLATED})
    code, junit, github, sarif = machine_views(tmp_path, "--fail-on", "info")
    assert code == 1
    assert 'failures="1"' in junit and '<failure message="RL903 ' in junit
    assert github.startswith("::warning file=chart/job.yaml,")
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["warning"]


def test_fail_on_error_turns_warnings_into_passing_notes(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    code, junit, github, sarif = machine_views(tmp_path, "--fail-on", "error")
    assert code == 0
    assert 'failures="0"' in junit and "<failure" not in junit
    assert [line.split(" ", 1)[0] for line in github.splitlines() if line.startswith("::")] == ["::notice", "::notice"]
    assert {r["level"] for r in sarif["runs"][0]["results"]} == {"note"}
    default = machine_views(tmp_path)
    assert default[0] == 1 and 'failures="2"' in default[1]  # one failing test case per finding
    assert [line.split(" ", 1)[0] for line in default[2].splitlines() if line.startswith("::")] == [
        "::warning",
        "::warning",
    ]


# -- selection, workers, configuration ------------------------------------------------------------------
def concise_codes(result) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": RL" in line]


def test_repeated_select_and_ignore_accumulate(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": "torch==2.one\ntorch-npu==2.1.0.post10\n"})
    both = run_cli("--output-format", "concise", "--select", "RL101", "--select", "RL301", ".", cwd=tmp_path)
    assert concise_codes(both) == ["RL101", "RL301"]
    neither = run_cli("--output-format", "concise", "--ignore", "RL101", "--ignore", "RL301", ".", cwd=tmp_path)
    assert concise_codes(neither) == ["RL602"]


def test_jobs_must_be_at_least_one(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    for value in ("0", "-1", "two"):
        result = run_cli("--jobs", value, ".", cwd=tmp_path)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr == (
            f"recovery-lint: error: argument --jobs: '{value}' is not a number of processes (1 or more; default: all cores)\n"
        )
    assert run_cli("--jobs", "1", ".", cwd=tmp_path).returncode == 1


def test_config_with_isolated_is_a_usage_error(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "lint.toml": 'ignore = ["RL101"]\n'})
    result = run_cli("--config", "lint.toml", "--isolated", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "recovery-lint: error: --config and --isolated contradict each other (--isolated reads no config file)\n"
    )


def test_a_config_file_in_pyproject_form_is_read_under_any_name(tmp_path):
    write(
        tmp_path,
        {
            "train.sh": TORCHRUN_SCRIPT,
            "requirements.txt": PINS,
            "ci/lint.toml": '[project]\nname = "x"\n\n[tool.recovery-lint]\nignore = ["RL101"]\n',
        },
    )
    result = run_cli("--output-format", "concise", "--config", "ci/lint.toml", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert concise_codes(result) == ["RL301"]


def test_a_bad_configured_version_is_reported_where_it_is_written(tmp_path):
    pyproject = '[project]\nname = "x"\n\n[tool.recovery-lint]\nfail-on = "warning"\n\n[tool.recovery-lint.versions]\ntorch = "2.1.0"\ncann = "eight"\n'
    write(
        tmp_path,
        {"pyproject.toml": pyproject, "deploy/job.yaml": "apiVersion: v1\nkind: Pod\n", "train.sh": TORCHRUN_SCRIPT},
    )
    result = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "recovery-lint: configuration error: pyproject.toml:9: invalid value for 'versions.cann': "
        "'eight' (expected a CANN release such as 8.0.RC2 or 8.0.0)\n"
    )


def test_configuration_errors_name_the_line_of_the_key(tmp_path):
    write(tmp_path, {".recovery-lint.toml": 'fail-on = "warning"\n\nselct = ["ALL"]\n', "train.sh": TORCHRUN_SCRIPT})
    result = run_cli(".", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (
        2,
        "recovery-lint: configuration error: .recovery-lint.toml:3: unknown key 'selct'; did you mean 'select'?\n",
    )


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('fail_on = "error"\n', "unknown key 'fail_on'; did you mean 'fail-on'?"),
        ('[target]\nplatfrom = "ascend-910b"\n', "unknown key 'target.platfrom'; did you mean 'target.platform'?"),
        ('[versions]\ntorch_npu = "2.1.0"\n', "unknown key 'versions.torch_npu'; did you mean 'versions.torch-npu'?"),
        ("colour = 1\n", "unknown key 'colour'\n"),
    ],
)
def test_an_unknown_key_suggests_the_one_it_most_likely_meant(tmp_path, toml, said):
    write(tmp_path, {".recovery-lint.toml": toml, "train.sh": TORCHRUN_SCRIPT})
    result = run_cli(".", cwd=tmp_path)
    assert result.returncode == 2 and said in result.stderr, result.stderr


# -- --diff ----------------------------------------------------------------------------------------------------
def test_diff_prints_the_patch_and_says_how_many_findings_it_would_fix(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    result = run_cli("--diff", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/train.sh\n+++ b/train.sh\n")
    assert result.stderr == "Would fix 1 finding (1 more with --unsafe-fixes).\n"
    both = run_cli("--diff", "--unsafe-fixes", ".", cwd=tmp_path)
    assert both.stderr == "Would fix 2 findings.\n"
    none = run_cli("--diff", "--select", "RL101", ".", cwd=tmp_path)
    assert (none.returncode, none.stdout) == (0, "")
    assert none.stderr == "No findings would be fixed (1 fixable with --unsafe-fixes).\n"
    assert (tmp_path / "train.sh").read_text() == TORCHRUN_SCRIPT


def test_diff_of_standard_input_says_it_too(tmp_path):
    write(tmp_path, {"requirements.txt": PINS, ".git/HEAD": ""})  # the repository the named file is in
    result = run_cli("--diff", "--stdin-filename", "train.sh", "-", cwd=tmp_path, stdin=TORCHRUN_SCRIPT)
    assert result.returncode == 1 and result.stdout.startswith("--- a/train.sh\n")
    assert result.stderr.startswith("Would fix 1 finding (1 more with --unsafe-fixes).\n")


# -- --help, --verbose, --show-files, -q, FORCE_COLOR ----------------------------------------------------------
def test_help_names_the_rule_command_the_exit_codes_and_examples():
    result = run_cli("--help", env={"COLUMNS": "100"})
    assert result.returncode == 0
    text = result.stdout
    assert text.startswith(
        "usage: recovery-lint [check] [options] [PATH ...]\n       recovery-lint rule CODE|NAME|--all\n"
    )
    assert "  rule CODE|NAME        print a rule's documentation; 'rule --all' lists every rule\n" in text
    assert "exit codes:\n  0    " in text and "\n  1    findings remain" in text and "\n  2    usage," in text
    assert "examples:\n  recovery-lint .  " in text and "  recovery-lint rule RL101  " in text
    for option in ("--show-files", "-q, --quiet", "--verbose", "--fail-on"):
        assert option in text


def test_verbose_shows_the_config_file_and_the_files_linted(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "ci/lint.toml": 'fail-on = "error"\n', "LICENSE": "MIT\n"})
    result = run_cli("--verbose", "--config", "ci/lint.toml", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.stderr == "recovery-lint: config: ci/lint.toml\nrecovery-lint: linted 1 file:\n  train.sh\n"
    isolated = run_cli("--verbose", "--isolated", ".", cwd=tmp_path)
    assert isolated.stderr.startswith("recovery-lint: config: none (--isolated)\n")
    found = run_cli("--verbose", ".", cwd=tmp_path)
    assert found.stderr.startswith("recovery-lint: config: none found (defaults)\n")


def test_show_files_lists_what_would_be_linted_and_exits(tmp_path):
    write(
        tmp_path,
        {
            "train.sh": TORCHRUN_SCRIPT,
            "deploy/job.yaml": "apiVersion: v1\nkind: Pod\n",
            "vendor/x.sh": "echo\n",
            "LICENSE": "MIT\n",
            "bin/launch": "#!/bin/bash\necho\n",
            ".recovery-lint.toml": 'exclude = ["vendor"]\n',
        },
    )
    result = run_cli("--show-files", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "bin/launch\ndeploy/job.yaml\ntrain.sh\n", "")


def test_show_files_of_an_excluded_folder_named_on_the_command_line_are_the_files_it_lints(tmp_path):
    write(tmp_path, {"vendor/x.sh": TORCHRUN_SCRIPT, ".recovery-lint.toml": 'exclude = ["vendor"]\n'})
    shown = run_cli("--show-files", "vendor", cwd=tmp_path)
    linted = run_cli("--verbose", "--output-format", "concise", "vendor", cwd=tmp_path)
    assert (shown.returncode, shown.stdout) == (0, "vendor/x.sh\n")
    assert "linted 1 file:\n  vendor/x.sh\n" in linted.stderr


def test_quiet_prints_the_findings_only(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    result = run_cli("-q", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 1 and result.stderr == ""
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["RL101", "RL301"]
    clean = run_cli("--quiet", "--select", "RL5", ".", cwd=tmp_path)
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "", "")


def test_force_color_colours_output_that_is_not_a_terminal(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    plain = run_cli("--output-format", "concise", ".", cwd=tmp_path, env={"NO_COLOR": ""})
    assert "\x1b[" not in plain.stdout
    forced = run_cli("--output-format", "concise", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\x1b[1mtrain.sh:3:8:\x1b[0m \x1b[1;33mRL101\x1b[0m" in forced.stdout
    full = run_cli("--output-format", "full", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\x1b[" in full.stdout
    refused = run_cli("--no-color", "--output-format", "concise", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in refused.stdout
    to_file = run_cli(
        "--output-format", "concise", "--output-file", "r.txt", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"}
    )
    assert to_file.returncode == 1 and "\x1b[" not in (tmp_path / "r.txt").read_text()


# -- rule --all ---------------------------------------------------------------------------------------------------
def test_rule_all_has_a_header_and_a_fix_safety_column_that_agrees_with_the_rule_examples():
    from recovery_lint.registry import all_rules

    result = run_cli("rule", "--all")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "FIX", "SUMMARY"]
    assert lines[-1].startswith("fix: safe = applied by --fix; unsafe = applied with --unsafe-fixes;")
    shown = {line.split()[0]: line.split()[3] for line in lines[1:] if line.startswith("RL")}
    rules = all_rules()
    assert set(shown) == set(rules)
    for code, rule in rules.items():
        # the rule's own examples: which of them change a file, and whether that needs --unsafe-fixes
        needs_unsafe = {
            case.unsafe
            for case in rule.cases
            if case.fixed is not None and any(text != case.files.get(path) for path, text in case.fixed.items())
        }
        expected = {frozenset(): "none", frozenset({False}): "safe", frozenset({True}): "unsafe"}.get(
            frozenset(needs_unsafe), "sometimes"
        )
        assert shown[code] == expected, code
    as_json = {
        r["code"]: r["fix_safety"] for r in json.loads(run_cli("rule", "--all", "--output-format", "json").stdout)
    }
    assert as_json == shown


# -- a closed pipe -------------------------------------------------------------------------------------------------
def test_a_reader_that_goes_away_ends_the_run_quietly_with_zero_as_ruff_does(tmp_path):
    import fcntl
    import os
    import subprocess
    import sys

    for i in range(400):
        write(tmp_path, {f"s{i}.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 train.py\n"})
    write(tmp_path, {"requirements.txt": PINS})
    env = {**os.environ, "NO_COLOR": "1"}
    for fmt in ("concise", "full"):
        read_end, write_end = os.pipe()
        # A pipe of one page, far smaller than either report, so the run always writes after the reader is gone
        # (a default 64 KiB pipe can take the whole concise report before the close, and the run then ends 1).
        fcntl.fcntl(write_end, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
        proc = subprocess.Popen(
            [sys.executable, "-m", "recovery_lint", "--output-format", fmt, "."],
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,
        )
        os.close(write_end)
        with os.fdopen(read_end, "rb") as reader:
            assert reader.readline().startswith(b"s0.sh:2:8: RL101")
        # the reader is closed, as `| head -1` closes it
        assert proc.wait(timeout=60) == 0
        assert proc.stderr.read() == b""
        proc.stderr.close()


# -- wording -------------------------------------------------------------------------------------------------------
def test_one_remaining_finding_remains(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    result = run_cli("--fix", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.stdout.splitlines()[-1] == (
        "Fixed 1 finding; 1 finding (0 fixable, 1 more with --unsafe-fixes) in 1 file remains"
    )


def test_the_fix_hint_says_what_the_fix_does_and_how_to_apply_it(tmp_path):
    write(tmp_path, {"train.sh": TORCHRUN_SCRIPT, "requirements.txt": PINS})
    full = run_cli("--output-format", "full", ".", cwd=tmp_path).stdout
    assert "  = help: Replace 'torchrun' with 'torch_npu_run' (safe fix: --fix)\n" in full
    assert "  = help: Set HCCL_ASYNC_ERROR_HANDLING=1 (unsafe fix: --fix --unsafe-fixes)\n" in full
    junit = run_cli("--output-format", "junit", ".", cwd=tmp_path).stdout
    assert "  help: Replace 'torchrun' with 'torch_npu_run' (safe fix: --fix)" in junit


def test_a_tab_in_yaml_indentation_is_called_a_tab(tmp_path):
    write(
        tmp_path,
        {
            "a.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n\tname: x\n",
            "b.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  labels:\n    a: b\n\t  c: d\n",
        },
    )
    lines = run_cli("--output-format", "concise", ".", cwd=tmp_path).stdout.splitlines()
    assert lines[0].startswith("a.yaml:4:1: RL900 error: YAML syntax error:") and "tab" in lines[0]
    assert lines[1].startswith("b.yaml:6:1: RL900 error: YAML syntax error:") and "tab" in lines[1]


# -- short concise messages, the detail elsewhere ---------------------------------------------------------------------
def test_concise_messages_are_headlines_and_the_detail_lives_in_full_and_json(tmp_path):
    from .conftest import FIXTURES

    concise = [
        line for line in run_cli("--output-format", "concise", str(FIXTURES)).stdout.splitlines() if ": RL" in line
    ]
    assert concise and all(len(line.split(": ", 2)[2]) <= 160 for line in concise), concise
    findings = json.loads(run_cli("--output-format", "json", str(FIXTURES)).stdout)
    rl301 = next(d for d in findings if d["code"] == "RL301" and "vcjob-gpt3" in d["path"])
    assert rl301["message"] == (
        "'torchrun' rendezvous through the single-threaded TCPStore; launch with torch_npu_run to use the "
        "Parallel Store."
    )
    assert rl301["detail"].startswith("Every rank of the job (fixtures/vcjob-gpt3/job.yaml runs 2 Pods)")
    assert any(line.endswith(rl301["message"]) for line in concise)
    full = run_cli("--output-format", "full", str(FIXTURES / "vcjob-gpt3")).stdout
    assert f"  = note: {rl301['detail']}\n" in full
    sarif = json.loads(run_cli("--output-format", "sarif", str(FIXTURES / "vcjob-gpt3")).stdout)
    texts = [r["message"]["text"] for r in sarif["runs"][0]["results"] if r["ruleId"] == "RL301"]
    assert texts == [f"{rl301['message']} {rl301['detail']}"]


# -- exclude on paths passed explicitly, and per-file-ignores matched the same way ------------------------------------
def excluded_repo(root: Path, config: str) -> None:
    script = "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 train.py\n"
    write(
        root,
        {
            "requirements.txt": PINS,
            ".recovery-lint.toml": config,
            "extra/x.sh": script,
            "sub/extra/y.sh": script,
            "top.sh": script,
        },
    )


def reported_paths(result) -> set[str]:
    return {line.split(":", 1)[0] for line in result.stdout.splitlines() if ": RL" in line}


def test_an_excluded_file_passed_explicitly_is_linted_unless_force_exclude(tmp_path):
    excluded_repo(tmp_path, 'exclude = ["extra"]\n')
    assert reported_paths(run_cli("--output-format", "concise", ".", cwd=tmp_path)) == {"top.sh"}
    explicit = run_cli("--output-format", "concise", "extra/x.sh", cwd=tmp_path)
    assert reported_paths(explicit) == {"extra/x.sh"}  # as ruff: a path named is linted
    forced = run_cli("--force-exclude", "--output-format", "concise", "extra/x.sh", "top.sh", cwd=tmp_path)
    assert reported_paths(forced) == {"top.sh"}
    nothing = run_cli("--force-exclude", "--output-format", "concise", "sub/extra/y.sh", cwd=tmp_path)
    assert (nothing.returncode, nothing.stdout) == (0, NOTHING_TO_LINT)


def test_an_excluded_folder_named_explicitly_is_walked_unless_force_exclude(tmp_path):
    excluded_repo(tmp_path, 'exclude = ["extra"]\n')
    named = run_cli("--output-format", "concise", "extra", "sub", cwd=tmp_path)
    assert reported_paths(named) == {"extra/x.sh"}  # sub/extra is excluded inside the walk
    forced = run_cli("--force-exclude", "--output-format", "concise", "extra", cwd=tmp_path)
    assert (forced.returncode, forced.stdout) == (0, NOTHING_TO_LINT)


def test_force_exclude_in_the_config(tmp_path):
    excluded_repo(tmp_path, 'exclude = ["extra"]\nforce-exclude = true\n')
    result = run_cli("--output-format", "concise", "extra/x.sh", "sub/extra/y.sh", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, NOTHING_TO_LINT)


def test_per_file_ignores_match_names_as_exclude_does(tmp_path):
    # a pattern without '/' names a file or folder at any depth, in both settings
    excluded_repo(tmp_path, 'per-file-ignores = { "extra" = ["RL301"], "top.sh" = ["RL101"] }\n')
    result = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    codes = {
        (path, line.split(": ")[1].split()[0])
        for line in result.stdout.splitlines()
        if ": RL" in line
        for path in [line.split(":", 1)[0]]
    }
    assert codes == {("extra/x.sh", "RL101"), ("sub/extra/y.sh", "RL101"), ("top.sh", "RL301")}
    excluded_repo(tmp_path, 'exclude = ["extra"]\n')
    assert reported_paths(run_cli("--output-format", "concise", ".", cwd=tmp_path)) == {"top.sh"}


NOTHING_TO_LINT = "No files to lint (no manifests, shell scripts, Python files or version pins found).\n"


# -- a fix run says what it fixed beyond what it reported -------------------------------------------------------
def test_fixes_of_findings_that_earlier_fixes_brought_are_named(tmp_path):
    # RL201's fix turns resumable training on; the job then has Job-level rescheduling, which RL202
    # reports and fixes in the next pass: the run says so, as it was not in the report it started from
    manifest = (
        "apiVersion: mindxdl.gitee.com/v1\nkind: AscendJob\nmetadata:\n  name: gpt\n  namespace: nlp\n  labels:\n"
        "    ring-controller.atlas: ascend-910b\n    framework: pytorch\nspec:\n  replicaSpecs:\n"
        "    Master:\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
        "          - name: ascend\n            image: x\n"
        "    Worker:\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
        "          - name: ascend\n            image: x\n"
    )
    write(tmp_path, {"job.yaml": manifest})
    before = run_cli("--output-format", "concise", ".", cwd=tmp_path).stdout
    assert "RL201" in before and "RL202" not in before
    fixed = run_cli("--fix", "--unsafe-fixes", "--output-format", "concise", ".", cwd=tmp_path)
    assert "recovery-lint: warning: also fixed 1 finding that appeared only after earlier fixes: RL202 (1)\n" in (
        fixed.stderr
    ), fixed.stderr


# -- leaving ---------------------------------------------------------------------------------------
def test_the_command_leaves_once_its_whole_report_is_written(tmp_path, monkeypatch):
    """The process ends without freeing its models (os._exit): a report larger than a pipe's buffer,
    on standard output and in a file, still arrives whole, with the run's exit code."""
    import contextlib
    import io
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from generate import generate

    from recovery_lint import cli

    generate(tmp_path, 300, seed=5)
    result = run_cli(".", "--no-cache", "--isolated", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1 and len(result.stdout) > 1 << 16
    shown = json.loads(result.stdout)
    written = run_cli(
        ".", "--no-cache", "--isolated", "--output-format", "sarif", "--output-file", "out.sarif", cwd=tmp_path
    )
    assert written.returncode == 1 and json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"]
    monkeypatch.chdir(tmp_path)
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        assert cli.main([".", "--no-cache", "--isolated", "--output-format", "json"]) == 1
    assert shown == json.loads(captured.getvalue())


def test_a_folder_of_a_larger_repository_is_walked_once_unless_excludes_apply(tmp_path, monkeypatch, capsys):
    """The walk that tells what to report is the walk of the folder: it is walked again only where
    ``exclude`` may prune it differently (the folder named is walked even when excluded)."""
    from recovery_lint import cli, discover, scope
    from recovery_lint.flow import gather as engine

    excluded_repo(tmp_path, "")
    monkeypatch.chdir(tmp_path)
    walked: list[list[str]] = []

    def counting(paths, *args, **kwargs):
        walked.append(sorted(Path(p).name for p in paths))
        return discover.discover(paths, *args, **kwargs)

    monkeypatch.setattr(engine, "discover", counting)
    monkeypatch.setattr(scope, "discover", counting)
    args = ["check", "sub", "--no-cache", "--output-format", "concise", "--jobs", "1"]
    assert cli.main([*args, "--isolated"]) == 1
    alone = capsys.readouterr().out
    assert walked == [["sub"], [tmp_path.name]]  # the folder by the scope, the repository by the run
    assert {line.split(":", 1)[0] for line in alone.splitlines() if ": RL" in line} == {"sub/extra/y.sh"}
    walked.clear()
    (tmp_path / ".recovery-lint.toml").write_text('exclude = ["nothing-matches"]\n')
    assert cli.main(args) == 1
    assert capsys.readouterr().out == alone
    assert walked == [["sub"], [tmp_path.name], ["sub"]]


# -- a source that cannot be read ---------------------------------------------------------------------
def test_an_unread_source_keeps_its_variables_unknown_and_show_jobs_names_it(tmp_path):
    """A script sourced from outside the repository may set anything: no finding rests on a variable
    being unset after it, a value set before it is no longer known, and --show-jobs says why."""
    write(
        tmp_path,
        {
            "requirements.txt": PINS,
            "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\nsource /opt/site/env.sh\n"
            "torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
    )
    result = run_cli("--output-format", "concise", "--select", "RL101", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    jobs = run_cli("--show-jobs", ".", cwd=tmp_path)
    assert (
        "ranks' environment: not all known: train.sh:3 sources /opt/site/env.sh, which could not be read" in jobs.stdout
    )
    # the same script with the site file in the repository: the value set before it is judged again
    write(
        tmp_path,
        {
            "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\nsource ./env.sh\n"
            "torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
            "env.sh": "export OTHER=1\n",
        },
    )
    result = run_cli("--output-format", "concise", "--select", "RL101", ".", cwd=tmp_path)
    assert result.returncode == 1 and "train.sh:2:8: RL101" in result.stdout


def test_a_declared_version_outside_the_tables_asks_for_no_key(tmp_path):
    """torch_npu 2.13.0 is no release of the table: the advice that needs the release is withheld,
    and the summary does not ask to declare a key the pin would override."""
    write(
        tmp_path,
        {
            "requirements.txt": "torch-npu==2.13.0\n",
            "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
            "train.py": "import torch\nimport torch_npu\n",
        },
    )
    result = run_cli("--output-format", "concise", "--select", "RL101", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert (
        "the torch_npu release is unknown for 1 job (RL101): a declared version is outside recovery-lint's tables, and no key settles it"
        in result.stdout
    )
    assert "torch-npu =" not in result.stdout


def test_a_quoted_script_path_with_a_space_is_linked_to_its_manifest(tmp_path):
    (tmp_path / ".git").mkdir()
    write(
        tmp_path,
        {
            "job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: g\n  labels:\n"
            '    fault-scheduling: "grace"\nspec:\n  tasks:\n  - name: t\n    replicas: 2\n    template:\n'
            "      spec:\n        containers:\n        - name: c\n"
            '          command: ["bash", "-c", "bash \'scripts/train start.sh\'"]\n',
            "scripts/train start.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
            "requirements.txt": PINS,
        },
    )
    for named in (".", "scripts/train start.sh", "job.yaml"):
        result = run_cli("--output-format", "concise", "--select", "RL103", named, cwd=tmp_path)
        assert "scripts/train start.sh:1:1: RL103" in result.stdout, (named, result.stdout)


def test_in_one_folder_the_recovery_lint_toml_wins_over_pyproject_and_the_nearest_folder_wins(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.recovery-lint]\nfail-on = "error"\n')
    (tmp_path / ".recovery-lint.toml").write_text('fail-on = "info"\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "run.sh").write_text("#!/bin/bash\necho hi\n")
    shown = run_cli("--verbose", "--no-cache", "sub/run.sh", cwd=tmp_path).stderr
    assert "config: .recovery-lint.toml" in shown, shown
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.recovery-lint]\nfail-on = "warning"\n')
    shown = run_cli("--verbose", "--no-cache", "sub/run.sh", cwd=tmp_path).stderr
    assert "config: sub/pyproject.toml" in shown, shown
