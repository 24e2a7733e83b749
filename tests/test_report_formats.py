"""SARIF, GitHub annotations, JUnit XML, --output-file, colour and the progress bar."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from recovery_lint.diagnostics import Diagnostic, Severity
from recovery_lint.report import github, junit, sarif
from recovery_lint.span import SourceText

from .conftest import FIXTURES, ROOT, run_cli

SARIF_SCHEMA = json.loads((ROOT / "schemas" / "sarif-2.1.0.json").read_text("utf-8"))
EXAMPLES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
CLEAN = {"train.sh": "torch_npu_run train.py\n", "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def sarif_of(*args: str, cwd: Path = ROOT) -> dict:
    result = run_cli("--output-format", "sarif", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def validate_sarif(doc: dict) -> None:
    validator = jsonschema.Draft4Validator(SARIF_SCHEMA)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def findings_json(*args: str, cwd: Path = ROOT) -> list[dict]:
    return json.loads(run_cli("--output-format", "json", *args, cwd=cwd).stdout)


# -- SARIF ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", EXAMPLES)
def test_sarif_of_every_fixture_validates_and_matches_the_findings(name):
    doc = sarif_of(f"fixtures/{name}")
    validate_sarif(doc)
    assert len(doc["runs"]) == 1
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    findings = findings_json(f"fixtures/{name}")
    assert len(run["results"]) == len(findings)
    for result, finding in zip(run["results"], findings, strict=True):
        assert result["ruleId"] == finding["code"]
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[finding["severity"]]
        location = result["locations"][0]["physicalLocation"]
        # the repository root of this checkout holds .git: URIs are relative to it
        assert location["artifactLocation"] == {"uri": finding["path"], "uriBaseId": "%SRCROOT%"}
        assert location["region"] == {
            "startLine": finding["line"],
            "startColumn": finding["column"],
            "endLine": finding["end_line"],
            "endColumn": finding["end_column"],
        }
        assert len(result.get("relatedLocations", [])) == len(finding["related"])
        assert ("fixes" in result) == (finding["fix"] is not None)
        if finding["fix"]:
            replacements = [r for change in result["fixes"][0]["artifactChanges"] for r in change["replacements"]]
            assert [r["insertedContent"]["text"] for r in replacements] == [
                e["content"] for e in finding["fix"]["edits"]
            ]
            assert [r["deletedRegion"]["startLine"] for r in replacements] == [
                e["line"] for e in finding["fix"]["edits"]
            ]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.resolve().as_uri() + "/"


def test_sarif_of_a_clean_run_has_an_empty_results_array(tmp_path):
    write(tmp_path, CLEAN)
    result = run_cli("--output-format", "sarif", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    validate_sarif(doc)
    run = doc["runs"][0]
    assert run["results"] == []
    assert run["invocations"] == [{"executionSuccessful": True}]
    assert "All checks passed." in result.stderr


def test_sarif_rules_carry_their_documentation_and_the_address_of_their_section():
    run = sarif_of("fixtures/vcjob-gpt3")["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "recovery-lint" and driver["version"]
    # no documentation-url configured: the rule pages of the checkout this runs from
    assert driver["informationUri"] == (ROOT / "docs" / "rules.md").as_uri()
    from recovery_lint.registry import all_rules

    registry = all_rules()
    assert [r["id"] for r in driver["rules"]] == list(registry)
    for rule in driver["rules"]:
        anchor = f"{rule['id'].lower()}-{rule['name']}"
        assert rule["helpUri"] == (ROOT / "docs" / "rules.md").as_uri() + "#" + anchor
        assert f"[{rule['id']}](#{anchor})" in (ROOT / "docs" / "rules.md").read_text()
        doc = registry[rule["id"]].documentation()
        assert rule["shortDescription"]["text"] == registry[rule["id"]].summary
        assert rule["help"]["markdown"] == doc and rule["fullDescription"]["markdown"] == doc
        assert "```" not in rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert registry[rule["id"]].phase in rule["properties"]["tags"]


def test_sarif_links_the_configured_documentation_url(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.recovery-lint]\ndocumentation-url = "https://docs.example.com/rl/rules.md"\n',
            "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
            "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
        },
    )
    doc = sarif_of(".", cwd=tmp_path)
    validate_sarif(doc)
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://docs.example.com/rl/rules.md"
    assert {r["id"]: r["helpUri"] for r in driver["rules"]}["RL101"] == (
        "https://docs.example.com/rl/rules.md#rl101-watchdog-disabled"
    )


def test_sarif_fingerprints_survive_line_shifts_and_the_working_directory(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "vcjob-gpt3", repo / "vcjob-gpt3")
    (repo / ".git").mkdir()  # the repository root

    def results(cwd: Path) -> dict[str, tuple[str, str, int]]:
        run = sarif_of(".", cwd=cwd)["runs"][0]
        out = {}
        for r in run["results"]:
            loc = r["locations"][0]["physicalLocation"]
            key = r["partialFingerprints"]["recoveryLintFinding/v1"]
            assert re.fullmatch(r"[0-9a-f]{32}:\d+", key) and key not in out
            out[key] = (r["ruleId"], loc["artifactLocation"]["uri"], loc["region"]["startLine"])
            assert r["partialFingerprints"]["primaryLocationLineHash"] == key[:16] + key[32:]
        return out

    before = results(repo)
    assert before and all(uri.startswith("vcjob-gpt3/") for _, uri, _ in before.values())
    assert results(repo / "vcjob-gpt3") == before  # same URIs and fingerprints from a subdirectory
    for path in (repo / "vcjob-gpt3").rglob("*"):
        if path.suffix in (".yaml", ".sh", ".py"):
            text = path.read_text("utf-8")
            if text.startswith("#!"):
                first, rest = text.split("\n", 1)
                path.write_text(first + "\n\n\n" + rest, "utf-8")
            else:
                path.write_text("\n\n" + text, "utf-8")
    after = results(repo)
    assert after.keys() == before.keys()
    assert all(after[k][2] == before[k][2] + 2 for k in before)
    # a new mistake is a new fingerprint, the old ones stay
    script = repo / "vcjob-gpt3" / "scripts" / "train_start.sh"
    script.write_text(script.read_text("utf-8") + "python -m torch.distributed.run eval.py\n", "utf-8")
    grown = results(repo)
    assert before.keys() < grown.keys() and len(grown) == len(before) + 1
    # the same identity as a baseline written at the repository root
    assert run_cli("--write-baseline", "baseline.json", ".", cwd=repo).returncode == 0
    baseline = json.loads((repo / "baseline.json").read_text("utf-8"))["findings"]
    assert {e["fingerprint"] for e in baseline} == {k.split(":")[0] for k in grown}


def test_sarif_columns_count_characters_not_bytes(tmp_path):
    write(
        tmp_path,
        {
            "train.sh": 'echo "启动训练"; torchrun --nnodes 2 train.py\n',
            "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
        },
    )
    run = sarif_of(".", "--select", "RL301", cwd=tmp_path)["runs"][0]
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == len('echo "启动训练"; ') + 1
    assert region["endColumn"] == region["startColumn"] + len("torchrun")


def test_sarif_reports_parse_failures_as_notifications_too(tmp_path):
    write(tmp_path, {"job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: [x\n", **CLEAN})
    doc = sarif_of(".", cwd=tmp_path)
    validate_sarif(doc)
    run = doc["runs"][0]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is True
    notes = invocation["toolExecutionNotifications"]
    parse = [n for n in notes if n.get("descriptor", {}).get("id") == "RL900"]
    assert len(parse) == 1 and parse[0]["level"] == "error"
    assert parse[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "job.yaml"
    assert run["tool"]["driver"]["rules"][parse[0]["associatedRule"]["index"]]["id"] == "RL900"
    assert [r["ruleId"] for r in run["results"]] == ["RL900"]
    assert parse[0]["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


def test_sarif_outside_the_repository_uses_absolute_uris(tmp_path):
    span = SourceText("/elsewhere/train.sh", "torchrun x\n").span(0, 8)
    d = Diagnostic("RL301", "torchrun-without-parallel-store", "m", Severity.WARNING, span)
    doc = sarif.build([d], sources={}, cwd=tmp_path, root=tmp_path)
    validate_sarif(doc)
    artifact = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "file:///elsewhere/train.sh"}


def test_fingerprints_ignore_whitespace_and_line_numbers_but_not_the_rule_or_the_text(tmp_path):
    def key(text: str, code: str = "RL101", path: str = "a.sh", job: str | None = None) -> str:
        src = SourceText(path, text)
        start = text.index("X=0")
        d = Diagnostic(code, "n", "m", Severity.WARNING, src.span(start, start + 3), job=job)
        run = sarif.build([d], sources={path: src}, cwd=tmp_path, root=tmp_path)["runs"][0]
        return run["results"][0]["partialFingerprints"]["recoveryLintFinding/v1"]

    assert key("export X=0\n") == key("\n\n  export   X=0\n")
    assert key("export X=0\n") != key("export X=0\n", code="RL102")
    assert key("export X=0\n") != key("export X=0\n", path="b.sh")
    assert key("export X=0\n") != key("export X=0 # x\n")
    assert key("export X=0\n", job="a.yaml#1 Job/ns/x") == key("export X=0\n", job="a.yaml#3 Job/ns/x")
    assert key("export X=0\n", job="a.yaml#1 Job/ns/x") != key("export X=0\n", job="a.yaml#1 Job/ns/y")


# -- GitHub annotations --------------------------------------------------------------------------
def test_github_format_prints_one_workflow_command_per_finding():
    result = run_cli("--output-format", "github", "fixtures")
    findings = findings_json("fixtures")
    lines = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert len(lines) == len(findings)
    pattern = re.compile(
        r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),endLine=(\d+),endColumn=(\d+),"
        r"title=(RL\d{3}) ([a-z0-9-]+)::(.+)$"
    )
    for line, finding in zip(lines, findings, strict=True):
        m = pattern.match(line)
        assert m, line
        level = {"error": "error", "warning": "warning", "info": "notice"}[finding["severity"]]
        assert m.groups()[:7] == (
            level,
            finding["path"],
            str(finding["line"]),
            str(finding["column"]),
            str(finding["end_line"]),
            str(finding["end_column"]),
            finding["code"],
        )
    summary = [line for line in result.stdout.splitlines() if not line.startswith(("::", "Advice withheld"))]
    assert summary[-1].endswith(" files")  # the summary line, before what was withheld


def test_github_escapes_data_and_properties():
    assert github.escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    src = SourceText("dir,x/a:b.sh", "x\n")
    d = Diagnostic("RL903", "templated-manifest", "line one\nline two: 50%", Severity.INFO, src.span(0, 1))
    line = github.line(d, "dir,x/a:b.sh")
    assert line == (
        "::notice file=dir%2Cx/a%3Ab.sh,line=1,col=1,endLine=1,endColumn=2,title=RL903 templated-manifest"
        "::line one%0Aline two: 50%25"
    )


# -- JUnit -----------------------------------------------------------------------------------------
def test_junit_has_one_failing_testcase_per_finding_and_one_passing_per_clean_file():
    result = run_cli("--output-format", "junit", "fixtures/vcjob-gpt3")
    root = ET.fromstring(result.stdout)
    suites = root.findall("testsuite")
    assert root.tag == "testsuites" and len(suites) == 1
    cases = suites[0].findall("testcase")
    linted = sorted(
        str(p.relative_to(ROOT).as_posix())
        for p in (FIXTURES / "vcjob-gpt3").rglob("*")
        if p.suffix in (".yaml", ".sh", ".py", ".txt") and p.name != "expected.txt"
    )
    assert sorted({c.get("classname") for c in cases}) == linted
    assert all(len(c.findall("failure")) <= 1 for c in cases)  # one failure per test case
    findings = findings_json("fixtures/vcjob-gpt3")
    failures = [(c.get("classname"), f.get("type"), f.text) for c in cases for f in c.findall("failure")]
    assert len(failures) == len(findings)
    # a file without findings is one passing test case
    clean = set(linted) - {f["path"] for f in findings}
    assert all(sum(1 for c in cases if c.get("classname") == p) == 1 for p in clean)
    for finding in findings:
        location = f"{finding['path']}:{finding['line']}:{finding['column']}: {finding['code']}"
        assert any(
            path == finding["path"] and kind == finding["code"] and text.startswith(location)
            for path, kind, text in failures
        )
    assert suites[0].get("failures") == str(len(findings))
    assert suites[0].get("tests") == str(len(cases))


def test_junit_stays_well_formed_with_markup_and_control_characters():
    src = SourceText("a<b>.sh", "x\n")
    d = Diagnostic("RL101", "watchdog-disabled", 'bad "quote" & <tag> \x01 \x1b[0m', Severity.WARNING, src.span(0, 1))
    text = junit.render([d], files=["a<b>.sh", "clean.sh"])
    root = ET.fromstring(text)
    cases = {c.get("classname"): c for c in root.iter("testcase")}
    assert set(cases) == {"a<b>.sh", "clean.sh"}
    assert cases["clean.sh"].find("failure") is None
    failure = cases["a<b>.sh"].find("failure")
    assert failure.get("type") == "RL101" and '"quote" & <tag>' in failure.get("message")


# -- --output-file -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["sarif", "json", "junit", "github", "gitlab", "concise"])
def test_output_file_holds_the_report_alone(tmp_path, fmt):
    out = tmp_path / "reports" / "report.out"
    out.parent.mkdir()
    out.write_text("STALE-CONTENT that is much longer than nothing at all\n" * 50, "utf-8")
    result = run_cli("--output-format", fmt, "--output-file", str(out), "fixtures/vcjob-gpt3")
    assert result.returncode == 1
    assert result.stdout == ""
    text = out.read_text("utf-8")
    assert "STALE-CONTENT" not in text
    assert not re.search(r"^(\d+ findings? \(|All checks passed|recovery-lint: )", text, re.M), (
        "a log line in the report"
    )
    assert re.search(r"\d+ findings \(\d+ fixable", result.stderr)
    assert [p.name for p in out.parent.iterdir()] == ["report.out"], "a temporary file was left behind"
    if fmt in ("sarif", "json"):
        json.loads(text)
    if fmt == "junit":
        ET.fromstring(text)


def test_output_file_in_a_missing_directory_is_a_clean_error(tmp_path):
    result = run_cli("--output-format", "sarif", "--output-file", str(tmp_path / "no" / "x.sarif"), "fixtures")
    assert result.returncode == 2 and "Traceback" not in result.stderr


# -- terminal manners -----------------------------------------------------------------------------------
def run_in_terminal(*args: str, env: dict[str, str] | None = None, stderr_only: bool = False) -> tuple[str, str]:
    """Run the command with standard output (or only standard error) on a pseudo-terminal."""
    import pty

    master, slave = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    full_env.update({"TERM": "xterm-256color", **(env or {})})
    proc = subprocess.Popen(
        [sys.executable, "-m", "recovery_lint", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE if stderr_only else slave,
        stderr=slave if stderr_only else subprocess.PIPE,
        env=full_env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    piped = proc.communicate(timeout=120)[0 if stderr_only else 1].decode()
    os.close(master)
    return b"".join(chunks).decode(errors="replace"), piped


def test_colour_only_on_a_terminal_and_never_with_no_color():
    coloured, _ = run_in_terminal("fixtures/vcjob-gpt3")
    assert ANSI.search(coloured), "no colour on a terminal"
    assert "Recovery scorecard" in coloured  # the full report ends with the scorecard
    for args, env in ((("--no-color",), None), ((), {"NO_COLOR": "1"})):
        plain, _ = run_in_terminal(*args, "fixtures/vcjob-gpt3", env=env)
        assert not ANSI.search(plain), (args, env)
        assert "RL101" in plain
    piped = run_cli("--output-format", "full", "fixtures/vcjob-gpt3", env={"NO_COLOR": ""})
    assert not ANSI.search(piped.stdout)


def test_progress_bar_on_a_terminal_for_large_runs(tmp_path):
    for i in range(310):
        write(tmp_path, {f"s{i:03}.sh": "echo hi\n"})
    terminal, stdout = run_in_terminal(str(tmp_path), "--output-format", "concise", stderr_only=True)
    assert "linting" in terminal and "310" in terminal
    assert stdout.strip() == "All checks passed."
    small, _ = run_in_terminal("fixtures/vcjob-gpt3", "--output-format", "concise", stderr_only=True)
    assert "linting" not in small


def test_progress_bar_threshold_and_a_single_pass():
    from recovery_lint.command.output import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar(stream, color=False, threshold=300)
    for done in range(0, 301):
        bar(done, 300)
    assert stream.getvalue() == ""
    bar = ProgressBar(stream, color=False, threshold=300)
    for done in range(0, 302):
        bar(done, 301)
    assert bar.finished and "301/301" in stream.getvalue()
    size = len(stream.getvalue())
    bar(5, 301)  # a second pass of the fix loop draws nothing
    assert len(stream.getvalue()) == size


def test_a_concise_run_imports_no_renderer_it_does_not_use():
    # the command leaves through os._exit once its report is written: the modules are listed then
    code = (
        "import os, sys, runpy\n"
        "sys.argv = ['recovery-lint', '--output-format', 'concise', 'fixtures/vcjob-gpt3']\n"
        "leave = os._exit\n"
        "def listed(code):\n"
        "    print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'xml') or "
        "m in ('recovery_lint.report.sarif', 'recovery_lint.report.junit', 'recovery_lint.report.github', "
        "'recovery_lint.report.scorecard', 'recovery_lint.report.full')), flush=True)\n"
        "    leave(code)\n"
        "os._exit = listed\n"
        "runpy.run_module('recovery_lint', run_name='__main__')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr


def test_junit_in_file_mode_lists_the_files_passed(tmp_path):
    shutil.copytree(FIXTURES / "vcjob-gpt3", tmp_path / "repo")
    (tmp_path / "repo" / ".git").mkdir()
    result = run_cli("--output-format", "junit", "scripts/env.sh", cwd=tmp_path / "repo")
    cases = ET.fromstring(result.stdout).findall("testsuite/testcase")
    # the file passed, and the files of its job with a finding (the job's findings are the report)
    assert sorted({c.get("classname") for c in cases}) == ["job.yaml", "scripts/env.sh", "scripts/train_start.sh"]
    assert [f.get("type") for c in cases if c.get("classname") == "scripts/env.sh" for f in c.findall("failure")] == [
        "RL101"
    ]


def test_gitlab_code_quality_lists_each_finding_with_a_stable_fingerprint(tmp_path):
    result = run_cli("--output-format", "gitlab", "fixtures/vcjob-gpt3")
    issues = json.loads(result.stdout)
    assert result.returncode == 1 and len(issues) == 3
    by_check = {i["check_name"].split()[0]: i for i in issues}
    rl301 = by_check["RL301"]
    assert rl301["location"] == {
        "path": "fixtures/vcjob-gpt3/scripts/train_start.sh",
        "lines": {"begin": 24, "end": 24},
    }
    assert rl301["severity"] == "major" and rl301["description"].startswith("RL301 ")
    assert len({i["fingerprint"] for i in issues}) == 3
    # the same finding two lines lower keeps its fingerprint
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "fixtures" / "vcjob-gpt3", repo)
    (repo / ".git").mkdir()
    before = {
        i["check_name"]: i["fingerprint"]
        for i in json.loads(run_cli("--output-format", "gitlab", ".", cwd=repo).stdout)
    }
    script = repo / "scripts" / "train_start.sh"
    script.write_text("#!/bin/bash\n\n" + script.read_text().split("\n", 1)[1])
    after = {
        i["check_name"]: i["fingerprint"]
        for i in json.loads(run_cli("--output-format", "gitlab", ".", cwd=repo).stdout)
    }
    assert before == after
