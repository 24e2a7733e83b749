"""Adoption on a repository with findings: --add-suppressions, --write-baseline / --baseline,
--statistics; all through the command line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from .conftest import FIXTURES, run_cli

WATCHDOG_OFF = "export HCCL_ASYNC_ERROR_HANDLING=0"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the bundled fixtures (they have findings of many rules), as a repository checkout."""
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    (tmp_path / ".git").mkdir()  # file mode reads the repository a file belongs to
    return tmp_path


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def concise(*args: str, cwd: Path):
    return run_cli("--output-format", "concise", *args, cwd=cwd)


def finding_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if re.match(r"^\S+:\d+:\d+: RL\d{3}", line)]


# -- baseline ---------------------------------------------------------------------------------
def test_baseline_hides_recorded_findings_and_survives_line_shifts(repo):
    before = finding_lines(concise("fixtures", cwd=repo).stdout)
    assert len(before) >= 5
    written = run_cli("--write-baseline", "baseline.json", "fixtures", cwd=repo)
    assert written.returncode == 0, written.stderr
    assert f"Wrote {len(before)} findings to baseline.json" in written.stderr
    data = json.loads((repo / "baseline.json").read_text())
    assert data["version"] == 1 and sum(e["count"] for e in data["findings"]) == len(before)
    assert all(e["path"].startswith("fixtures/") for e in data["findings"])

    clean = concise("--baseline", "baseline.json", "fixtures", cwd=repo)
    assert clean.returncode == 0 and finding_lines(clean.stdout) == [], clean.stdout

    # one blank line at the top of every file with a finding moves every finding down a line
    for rel in {line.split(":")[0] for line in before}:
        path = repo / rel
        path.write_bytes(b"\n" + path.read_bytes())
    shifted = concise("fixtures", cwd=repo)
    assert finding_lines(shifted.stdout) != before  # the line numbers did change
    assert finding_lines(concise("--baseline", "baseline.json", "fixtures", cwd=repo).stdout) == []

    # a new mistake is the one finding reported: a second training launch of the same entry
    script = repo / "fixtures" / "vcjob-gpt3" / "scripts" / "pretrain_long.sh"
    script.write_text("#!/bin/bash\ntorchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py --save /job/output/long\n")
    new = concise("--baseline", "baseline.json", "fixtures", cwd=repo)
    assert finding_lines(new.stdout) == [
        line for line in finding_lines(concise("fixtures", cwd=repo).stdout) if "pretrain_long.sh" in line
    ]
    assert len(finding_lines(new.stdout)) == 1 and new.returncode == 1


def test_baseline_paths_do_not_depend_on_the_working_directory(repo):
    assert run_cli("--write-baseline", "baseline.json", "fixtures", cwd=repo).returncode == 0
    inside = concise("--baseline", "../baseline.json", ".", cwd=repo / "fixtures")
    assert inside.returncode == 0 and finding_lines(inside.stdout) == [], inside.stdout


def test_baseline_counts_duplicate_findings(tmp_path):
    line = "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"
    pins = {"requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n"}
    write(tmp_path, {"run.sh": "#!/bin/bash\n" + line * 2, **pins})
    assert [f.split(" ")[:2] for f in finding_lines(concise(".", cwd=tmp_path).stdout)] == [
        ["run.sh:2:1:", "RL301"],
        ["run.sh:3:1:", "RL301"],
    ]
    assert run_cli("--write-baseline", "b.json", ".", cwd=tmp_path).returncode == 0
    entries = json.loads((tmp_path / "b.json").read_text())["findings"]
    assert [e["count"] for e in entries] == [2]  # one fingerprint: same rule, file and text
    assert finding_lines(concise("--baseline", "b.json", ".", cwd=tmp_path).stdout) == []
    write(tmp_path, {"run.sh": "#!/bin/bash\n" + line * 3})
    assert len(finding_lines(concise("--baseline", "b.json", ".", cwd=tmp_path).stdout)) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "not a JSON file"),
        ('{"findings": []}', "no 'version' field"),
        ('{"version": 99, "findings": []}', "baseline version 99 is not supported"),
        ('{"version": 1, "findings": [{"code": "RL101"}]}', "findings[0] needs a string 'fingerprint'"),
    ],
)
def test_a_bad_baseline_is_a_clear_error(tmp_path, content, message):
    write(tmp_path, {"run.sh": "torchrun a.py\n"})
    if content is not None:
        write(tmp_path, {"b.json": content})
    result = run_cli("--baseline", "b.json", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_statistics_prints_counts_per_rule(repo):
    result = concise("--statistics", "fixtures", cwd=repo)
    findings = finding_lines(concise("fixtures", cwd=repo).stdout)
    per_code: dict[str, int] = {}
    for line in findings:
        code = line.split(": ")[1].split()[0]
        per_code[code] = per_code.get(code, 0) + 1
    rows = {m.group(2): int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+(RL\d{3})\s", result.stdout, re.M)}
    assert rows == per_code


# -- --add-suppressions -----------------------------------------------------------------------
def test_add_suppressions_silences_every_finding_and_rl901_follows_a_fix(repo):
    before = finding_lines(concise("fixtures", cwd=repo).stdout)
    added = run_cli("--add-suppressions", "fixtures", cwd=repo)
    assert added.returncode == 0, added.stdout + added.stderr
    lines = {tuple(f.split(":")[:2]) for f in before}
    assert re.search(r"Added \d+ suppression directives in \d+ files\.", added.stdout)
    assert int(re.search(r"Added (\d+)", added.stdout).group(1)) == len(lines)
    after = concise("fixtures", cwd=repo)
    assert after.returncode == 0 and finding_lines(after.stdout) == [], after.stdout
    # the directive went at the end of the finding's line, the line's own comment kept
    env = repo / "fixtures" / "vcjob-gpt3" / "scripts" / "env.sh"
    assert (
        f"{WATCHDOG_OFF}   # copied from an old debugging session  # recovery-lint: ignore[RL101]\n" in env.read_text()
    )
    # a second run finds nothing to add
    again = run_cli("--add-suppressions", "fixtures", cwd=repo)
    assert "Added 0 suppression directives in 0 files." in again.stdout
    # fixing the suppressed mistake makes the directive unused: RL901 at that line
    env.write_text(env.read_text().replace(WATCHDOG_OFF, "export HCCL_ASYNC_ERROR_HANDLING=1"))
    stale = finding_lines(concise("fixtures", cwd=repo).stdout)
    assert len(stale) == 1 and stale[0].startswith("fixtures/vcjob-gpt3/scripts/env.sh:4:") and "RL901" in stale[0]


def test_a_finding_on_the_interpreter_line_is_suppressed_below_it_and_the_script_still_starts(tmp_path):
    """A comment after ``#!/bin/bash`` reaches bash as the name of a script to run (exit 127): the
    directive for the whole file goes on the next line."""
    write(tmp_path, {"train.sh": "#!/bin/bash\r\nexport HCCL_ASYNC_ERROR_HANDLING=1\r\ntorchrun train.py\r\n"})
    (tmp_path / ".git").mkdir()
    assert "RL900" in concise(".", cwd=tmp_path).stdout
    added = run_cli("--add-suppressions", ".", cwd=tmp_path)
    assert added.returncode == 0, added.stdout + added.stderr
    text = (tmp_path / "train.sh").read_bytes().decode()
    assert text.startswith("#!/bin/bash\r\n# recovery-lint: ignore-file[RL900]\r\nexport"), text
    assert finding_lines(concise(".", cwd=tmp_path).stdout) == []


def test_add_suppressions_puts_the_directive_above_a_continued_line_and_merges(tmp_path):
    script = (
        "#!/bin/bash\n"
        "export HCCL_ASYNC_ERROR_HANDLING=0\n"
        "    # recovery-lint: ignore[RL301] -- the image has no torch_npu_run yet\n"
        "torchrun --nnodes 2 --nproc_per_node 8 \\\n"
        "    train.py\n"
        "torchrun --nnodes 2 --nproc_per_node 8 \\\n"
        "    finetune.py\n"
    )
    # release 6.0.0 ships torch_npu_run, so RL301 has something to say about both launches
    write(tmp_path, {"run.sh": script, "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n"})
    first = finding_lines(concise(".", cwd=tmp_path).stdout)
    assert any(":6:1: RL301" in f for f in first)
    result = run_cli("--add-suppressions", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (tmp_path / "run.sh").read_text()
    # a trailing comment after the backslash would end the command there: the directive goes above
    assert "# recovery-lint: ignore[RL301]\ntorchrun --nnodes 2 --nproc_per_node 8 \\\n    finetune.py\n" in text
    assert "\\  #" not in text
    assert finding_lines(concise(".", cwd=tmp_path).stdout) == []


def test_add_suppressions_extends_the_directive_already_on_the_line(tmp_path):
    # torch_npu 1.11.0.post11 (release 6.0.rc1) defaults the watchdog off and ships torch_npu_run: RL101
    # (watchdog default) points at the launch line RL301's directive covers
    write(
        tmp_path,
        {
            "run.sh": "#!/bin/bash\ntorchrun --nnodes 2 train.py  # recovery-lint: ignore[RL301] -- no torch_npu_run yet\n",
            "requirements.txt": "torch==1.11.0\ntorch-npu==1.11.0.post11\n",
        },
    )
    assert [f.split(": ")[1][:5] for f in finding_lines(concise(".", cwd=tmp_path).stdout)] == ["RL101"]
    result = run_cli("--add-suppressions", ".", cwd=tmp_path)
    assert result.returncode == 0 and "Added 0 suppression directives and extended 1 in 1 file." in result.stdout
    assert (tmp_path / "run.sh").read_text() == (
        "#!/bin/bash\ntorchrun --nnodes 2 train.py  # recovery-lint: ignore[RL101, RL301] -- no torch_npu_run yet\n"
    )
    assert finding_lines(concise(".", cwd=tmp_path).stdout) == []


INLINE_SCRIPT_JOB = """\
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
          command: ["/bin/bash", "-c"]
          args:
          - |
            export RESUME_MODE_ENABLE=1
            export HCCL_ASYNC_ERROR_HANDLING=0
            torchrun --nnodes 2 --nproc_per_node 8 train.py
          env:
          - name: TASK_QUEUE_ENABLE
            value: "2"   # recovery-lint: ignore[RL101]
  maxRetry: 100
"""


def test_add_suppressions_skips_lines_inside_a_yaml_block_scalar(tmp_path):
    write(tmp_path, {"job.yaml": INLINE_SCRIPT_JOB, "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n"})
    findings = finding_lines(concise(".", cwd=tmp_path).stdout)
    assert sorted(f.split(" ")[0:2] for f in findings) == [
        ["job.yaml:25:20:", "RL101"],
        ["job.yaml:26:13:", "RL301"],
        ["job.yaml:29:26:", "RL901"],
    ]
    result = run_cli("--add-suppressions", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "job.yaml:25: RL101 not suppressed: the line is inside a YAML block scalar" in result.stderr
    assert "job.yaml:26: RL301 not suppressed" in result.stderr
    assert "Added 0 suppression directives in 0 files." in result.stdout
    assert (tmp_path / "job.yaml").read_text() == INLINE_SCRIPT_JOB  # RL901 is not suppressed either


def test_add_suppressions_puts_the_directive_above_a_string_spanning_lines(tmp_path):
    # the manifest's inline script is a quoted YAML string over two lines: a trailing comment on its
    # first line would be part of the string, a comment line above the key is not
    job = INLINE_SCRIPT_JOB.replace(
        "          - |\n            export RESUME_MODE_ENABLE=1\n            export HCCL_ASYNC_ERROR_HANDLING=0\n"
        "            torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
        '          - "export RESUME_MODE_ENABLE=1; export HCCL_ASYNC_ERROR_HANDLING=0;\n'
        '            torch_npu_run --nproc_per_node 8 train.py"\n',
    ).replace("   # recovery-lint: ignore[RL101]", "")
    write(tmp_path, {"job.yaml": job, "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n"})
    findings = finding_lines(concise(".", cwd=tmp_path).stdout)
    assert [f.split(" ")[0:2] for f in findings] == [["job.yaml:23:13:", "RL101"]], findings
    result = run_cli("--add-suppressions", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "job.yaml").read_text() == job.replace(
        '          - "export', '          # recovery-lint: ignore[RL101]\n          - "export'
    )
    assert finding_lines(concise(".", cwd=tmp_path).stdout) == []


def test_add_suppressions_in_file_mode_writes_only_the_passed_files(repo):
    env = repo / "fixtures" / "vcjob-gpt3" / "scripts" / "env.sh"
    job = repo / "fixtures" / "vcjob-gpt3" / "job.yaml"
    job_before = job.read_text()
    result = run_cli("--add-suppressions", "fixtures/vcjob-gpt3/scripts/env.sh", cwd=repo)
    assert result.returncode == 0 and "Added 1 suppression directive in 1 file." in result.stdout
    assert "# recovery-lint: ignore[RL101]" in env.read_text()
    assert job.read_text() == job_before
