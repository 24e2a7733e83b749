"""The recovery scorecard: statuses from findings and job context, its table forms and its JSON."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from recovery_lint.config import Config
from recovery_lint.diagnostics import Diagnostic, Severity
from recovery_lint.engine import LintRequest, lint
from recovery_lint.registry import all_rules, select
from recovery_lint.report import scorecard
from recovery_lint.rule import PHASES

from .conftest import FIXTURES, ROOT, run_cli

SCHEMA = json.loads((ROOT / "schemas" / "scorecard.schema.json").read_text("utf-8"))
EXAMPLES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
BOX = re.compile("[\u2500-\u257f\u2580-\u259f]")
ANSI = re.compile(r"\x1b\[")

VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: grace
{extra}spec:
  tasks:
  - name: default
    template:
      spec:
        containers:
        - name: train
          command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""
ENTRY = "import torch\nimport torch_npu\n\nif __name__ == '__main__':\n    pass\n"
# process-level recovery: an AscendJob of two Pods running a Megatron-based entry
PROCESS_RECOVERY_JOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
    framework: pytorch
    fault-scheduling: grace
    pod-rescheduling: "on"
    process-recover-enable: "on"
    fault-retry-times: "10"
  annotations:
    recover-strategy: "recover"
spec:
  runPolicy: {backoffLimit: 100}
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            env: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}, {name: TTP_PORT, value: "8000"}]
            ports: [{containerPort: 9601, name: taskd-port}]
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            env: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}, {name: TTP_PORT, value: "8000"}]
            ports: [{containerPort: 9601, name: taskd-port}]
"""
MEGATRON_ENTRY = "import torch\nimport torch_npu\nfrom megatron.training import pretrain\n"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def card_json(cwd: Path, *args: str) -> dict:
    result = run_cli("--scorecard", "--output-format", "json", *args, ".", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def phases(job: dict) -> dict[str, dict]:
    return {p["phase"]: p for p in job["phases"]}


def only_job(doc: dict) -> dict:
    manifest_jobs = [j for j in doc["jobs"] if not j["standalone"]]
    assert len(manifest_jobs) == 1, [j["job"] for j in doc["jobs"]]
    return manifest_jobs[0]


# -- end to end --------------------------------------------------------------------------------------
def test_scorecard_of_the_gpt3_example_in_a_ci_log():
    result = run_cli("--scorecard", "fixtures/vcjob-gpt3")
    assert result.returncode == 1
    out = result.stdout
    assert not ANSI.search(out) and not BOX.search(out), "colour or box drawing in a CI log"
    assert out.startswith("Recovery scorecard: fixtures/vcjob-gpt3/job.yaml#2 Job/training/gpt3-pretrain\n")
    assert re.search(r"Fault detection\s+missing\s+1836 s \(HCCL_EXEC_TIMEOUT default\)\s+RL101 watchdog-disabled", out)
    assert re.search(r"Rescheduling\s+missing\s+-\s+RL202 job-level-rescheduling", out)
    assert re.search(r"Communication setup\s+missing\s+-\s+RL301 ", out)
    assert re.search(r"Operator compilation\s+optimized\s+-\s+binary operators are the default on ascend-910b", out)
    assert re.search(r"^  Phase\s+Status\s+Worst case\s+Findings / evidence$", out, re.M)
    # the columns line up: every phase row has its status at the same offset
    offsets = {
        line.index(status)
        for line in out.splitlines()
        for status in ("missing", "optimized", "unknown")
        if re.match(r"  (Fault|Resch|Commu|Rollb|Opera)", line) and f" {status} " in line
    }
    assert len(offsets) == 1
    assert re.search(r"^\d+ findings \(\d+ fixable.*\) in \d+ files$", out.splitlines()[-1])


@pytest.mark.parametrize("name", EXAMPLES)
def test_scorecard_json_of_every_fixture_validates(name):
    result = run_cli("--scorecard", "--output-format", "json", f"fixtures/{name}")
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["jobs"], "every example has a job"
    findings = json.loads(run_cli("--output-format", "json", f"fixtures/{name}").stdout)
    in_phases = {(f["code"], f["path"], f["line"]) for j in doc["jobs"] for p in j["phases"] for f in p["findings"]}
    other = {(f["code"], f["path"], f["line"]) for j in doc["jobs"] for f in j["other_findings"]}
    assert in_phases | other == {(f["code"], f["path"], f["line"]) for f in findings}


def test_scorecard_json_of_the_gpt3_example():
    job = only_job(card_json(FIXTURES / "vcjob-gpt3"))
    assert job["context"]["platform"] == "ascend-910b" and job["context"]["recovery"] == "job"
    p = phases(job)
    assert [x["phase"] for x in job["phases"]] == list(scorecard.PHASES)
    assert p["detection"]["status"] == "missing" and p["detection"]["codes"] == ["RL101"]
    assert p["detection"]["worst_case"] == {
        "text": "1836 s (HCCL_EXEC_TIMEOUT default)",
        "seconds": 1836,
        "setting": "HCCL_EXEC_TIMEOUT",
        "origin": "default",
    }
    assert p["compile"]["status"] == "optimized" and p["compile"]["worst_case"] is None


def test_process_level_recovery_optimizes_detection_and_rescheduling(tmp_path):
    write(
        tmp_path,
        {
            "job.yaml": PROCESS_RECOVERY_JOB,
            "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\nexport RESUME_MODE_ENABLE=1\ntorch_npu_run train.py\n",
            "train.py": MEGATRON_ENTRY,
            "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
        },
    )
    p = phases(only_job(card_json(tmp_path)))
    assert p["detection"]["status"] == "optimized" and "process-level recovery" in p["detection"]["detail"]
    assert p["detection"]["worst_case"] is None
    assert p["rescheduling"]["status"] == "optimized"
    assert p["comm-init"]["status"] == "optimized" and "torch_npu_run" in p["comm-init"]["detail"]


def test_a_setting_that_cancels_online_recovery_is_never_optimized(tmp_path):
    """The same process-level job, with retry among its strategies: PYTORCH_NO_NPU_MEMORY_CACHING turns
    online recovery off (RL212), and a host network without HCCL_IF_IP and a short connect timeout in
    RankTable mode (RL316, RL317) leave the communication setup misconfigured."""
    job = PROCESS_RECOVERY_JOB.replace('recover-strategy: "recover"', 'recover-strategy: "retry,recover"')
    write(
        tmp_path,
        {
            "job.yaml": job,
            "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\nexport RESUME_MODE_ENABLE=1\n"
            "export PYTORCH_NO_NPU_MEMORY_CACHING=1\ntorch_npu_run train.py\n",
            "train.py": MEGATRON_ENTRY,
            "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
        },
    )
    p = phases(only_job(card_json(tmp_path)))
    assert p["rescheduling"]["status"] == "misconfigured" and "RL212" in p["rescheduling"]["codes"]
    hosted = job.replace(
        "        spec:\n          containers:", "        spec:\n          hostNetwork: true\n          containers:"
    )
    write(
        tmp_path,
        {
            "job.yaml": hosted,
            "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\nexport RESUME_MODE_ENABLE=1\n"
            "export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json\ntorch_npu_run train.py\n",
        },
    )
    p = phases(only_job(card_json(tmp_path)))
    assert p["comm-init"]["status"] == "misconfigured"
    assert {"RL316", "RL317"} <= set(p["comm-init"]["codes"]), p["comm-init"]


def test_watchdog_on_under_process_recovery_is_misconfigured(tmp_path):
    write(
        tmp_path,
        {
            "job.yaml": PROCESS_RECOVERY_JOB,
            "train.sh": "export RESUME_MODE_ENABLE=1\nexport HCCL_ASYNC_ERROR_HANDLING=1\ntorchrun --nnodes 2 train.py\n",
            "train.py": MEGATRON_ENTRY,
        },
    )
    p = phases(only_job(card_json(tmp_path)))
    assert p["detection"]["status"] == "misconfigured" and p["detection"]["codes"] == ["RL102"]
    assert p["detection"]["worst_case"] is None  # the watchdog is on: no timeout wait


def test_watchdog_off_costs_the_jobs_own_exec_timeout(tmp_path):
    script = "export RESUME_MODE_ENABLE=1\nexport HCCL_EXEC_TIMEOUT={}\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 train.py\n"
    write(tmp_path, {"job.yaml": VCJOB.format(extra=""), "train.sh": script.format(600), "train.py": ENTRY})
    p = phases(only_job(card_json(tmp_path)))
    assert p["detection"]["status"] == "missing" and p["detection"]["codes"] == ["RL101"]
    assert p["detection"]["worst_case"] == {
        "text": "600 s (HCCL_EXEC_TIMEOUT set by the job)",
        "seconds": 600,
        "setting": "HCCL_EXEC_TIMEOUT",
        "origin": "job",
    }
    write(tmp_path, {"train.sh": script.format(0)})
    never = phases(only_job(card_json(tmp_path)))["detection"]["worst_case"]
    assert never["seconds"] is None and "never" in never["text"]


def test_a_mindspore_job_has_no_pytorch_phases(tmp_path):
    write(tmp_path, {"job.yaml": VCJOB.format(extra="").replace("bash /job/code/train.sh", "msrun train.py")})
    p = phases(only_job(card_json(tmp_path)))
    for phase in ("detection", "comm-init", "checkpoint", "compile"):
        assert p[phase]["status"] == "not applicable", phase
        assert "MindSpore" in p[phase]["detail"]
    assert p["rescheduling"]["status"] != "not applicable"


def test_a_standalone_script_is_scored_and_rescheduling_is_unknown(tmp_path):
    write(
        tmp_path,
        {
            "train.sh": "torch_npu_run train.py\n",
            "train.py": ENTRY,
            "helper.py": "X = 1\n",
            "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
        },
    )
    doc = card_json(tmp_path)
    assert [j["job"] for j in doc["jobs"]] == ["train.sh (standalone)"], "a helper module is not a job"
    p = phases(doc["jobs"][0])
    assert p["rescheduling"]["status"] == "unknown" and "no manifest" in p["rescheduling"]["detail"]
    assert p["detection"]["status"] == "optimized" and "torch 2.1.0" in p["detection"]["detail"]
    assert p["comm-init"]["status"] == "optimized"


def test_statuses_come_from_findings_not_from_a_second_opinion(tmp_path):
    """With RL101 not selected, nothing says the watchdog is off: detection is unknown, not missing."""
    job = only_job(card_json(FIXTURES / "vcjob-gpt3", "--ignore", "RL101"))
    assert phases(job)["detection"]["status"] == "unknown"
    assert phases(job)["detection"]["codes"] == []


def test_full_output_ends_with_the_scorecard_before_the_summary():
    result = run_cli("--output-format", "full", "fixtures/vcjob-gpt3")
    lines = result.stdout.rstrip("\n").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Recovery scorecard: "))
    assert all("RL101 " not in line or line.strip().startswith("Fault detection") for line in lines[start:])
    assert any(line.startswith("fixtures/vcjob-gpt3/scripts/env.sh:4:8: RL101") for line in lines[:start])
    assert re.match(r"\d+ findings", lines[-1])
    concise = run_cli("--output-format", "concise", "fixtures/vcjob-gpt3").stdout
    assert "Recovery scorecard" not in concise


def test_scorecard_refuses_formats_it_cannot_print():
    result = run_cli("--scorecard", "--output-format", "sarif", "fixtures/vcjob-gpt3")
    assert result.returncode == 2 and "--scorecard" in result.stderr


def test_scorecard_json_to_a_file(tmp_path):
    out = tmp_path / "card.json"
    result = run_cli("--scorecard", "--output-format", "json", "--output-file", str(out), "fixtures")
    assert result.stdout == ""
    jsonschema.validate(json.loads(out.read_text("utf-8")), SCHEMA)


# -- units -----------------------------------------------------------------------------------------
def test_every_rule_says_what_its_finding_means_and_each_phase_has_one_owner():
    rules = all_rules()
    for code, rule in rules.items():
        assert rule.scorecard in (scorecard.MISSING, scorecard.MISCONFIGURED), code
        if rule.phase not in scorecard.PHASES:
            assert scorecard.rule_phase(code) is None
    owners = [rule.phase for rule in rules.values() if "phase_status" in vars(type(rule))]
    assert sorted(owners) == sorted(scorecard.PHASES)  # one rule tells each phase
    assert set(scorecard.PHASES) < set(PHASES)


def _project(tmp_path: Path, files: dict[str, str]):
    write(tmp_path, files)
    request = LintRequest(paths=[Path(".")], cwd=tmp_path, config=Config(), rules=select(None, []))
    return lint(request)


def test_misconfigured_wins_over_missing_and_codes_are_listed(tmp_path):
    result = _project(tmp_path, {"job.yaml": VCJOB.format(extra=""), "train.sh": "torchrun --nnodes 2 train.py\n"})
    job = next(j for j in result.project.jobs if j.manifest is not None)
    span = job.manifest.span

    def finding(code: str) -> Diagnostic:
        return Diagnostic(code, all_rules()[code].name, "m", Severity.WARNING, span, job=job.id)

    score = scorecard.score_phase(job, "comm-init", [finding("RL301"), finding("RL313")])
    assert score.status == "misconfigured" and score.codes == ["RL301", "RL313"]
    assert scorecard.score_phase(job, "comm-init", [finding("RL301")]).status == "missing"


def test_findings_are_attributed_to_their_own_job(tmp_path):
    two = VCJOB.format(extra="") + "---\n" + VCJOB.format(extra="").replace("name: gpt", "name: bert")
    files = {
        "job.yaml": two,
        "train.sh": "torchrun --nnodes 2 train.py\n",
        "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
    }
    result = _project(tmp_path, files)
    jobs = [j for j in result.project.jobs if j.manifest is not None]
    assert len(jobs) == 2
    for job in jobs:
        mine = scorecard.findings_of(job, result.diagnostics)
        assert mine and all(d.job in (job.id, None) for d in mine)
    cards = scorecard.build(result.project, result.diagnostics)
    assert [c.job.id for c in cards if not c.standalone] == [j.id for j in jobs]


def test_plain_and_rich_renderings(tmp_path):
    result = _project(tmp_path, {"job.yaml": VCJOB.format(extra=""), "train.sh": "torchrun --nnodes 2 train.py\n"})
    cards = scorecard.build(result.project, result.diagnostics)
    plain = scorecard.render_text(cards, terminal=False, color=True)
    assert not ANSI.search(plain) and not BOX.search(plain)
    coloured = scorecard.render_text(cards, terminal=True, color=True, width=160)
    assert ANSI.search(coloured) and "Fault detection" in coloured
    mono = scorecard.render_text(cards, terminal=True, color=False, width=160)
    assert not ANSI.search(mono) and "Fault detection" in mono
    assert scorecard.render_plain([]).startswith("Recovery scorecard: no jobs found")


def test_file_mode_scores_the_whole_job_of_the_files_passed(tmp_path):
    """A script passed alone reports its own findings, but its job's card counts them all."""
    shutil.copytree(FIXTURES / "vcjob-gpt3", tmp_path / "repo")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir()
    write(repo, {"other/train.sh": "torch_npu_run other.py\n", "other/other.py": ENTRY})
    whole = only_job(card_json(repo))
    result = run_cli("--scorecard", "--output-format", "json", "scripts/env.sh", cwd=repo)
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert [j["job"] for j in doc["jobs"]] == [whole["job"]], "only the job of the file passed"
    assert phases(doc["jobs"][0]) == phases(whole)
    assert phases(doc["jobs"][0])["comm-init"]["codes"] == ["RL301"]  # found in train_start.sh, not passed
    concise = run_cli("--output-format", "concise", "scripts/env.sh", cwd=repo).stdout
    # the report is the whole job's too: a commit of env.sh alone is judged with its job
    assert "scripts/train_start.sh:24:1: RL301" in concise and "scripts/env.sh:4:8: RL101" in concise
    assert "other/" not in concise


def test_a_baseline_hides_findings_from_the_report_not_from_the_scorecard(tmp_path):
    shutil.copytree(FIXTURES / "vcjob-gpt3", tmp_path / "repo")
    repo = tmp_path / "repo"
    assert run_cli("--write-baseline", "baseline.json", ".", cwd=repo).returncode == 0
    assert json.loads(run_cli("--output-format", "json", "--baseline", "baseline.json", ".", cwd=repo).stdout) == []
    with_baseline = only_job(card_json(repo, "--baseline", "baseline.json"))
    assert phases(with_baseline) == phases(only_job(card_json(repo)))
    assert phases(with_baseline)["detection"]["status"] == "missing"


def test_no_jobs_no_section_in_full_output_but_scorecard_says_so(tmp_path):
    write(tmp_path, {"helper.py": "X = 1\n"})
    full = run_cli("--output-format", "full", ".", cwd=tmp_path)
    assert full.stdout == "All checks passed.\n"
    card = run_cli("--scorecard", ".", cwd=tmp_path)
    assert card.stdout.startswith("Recovery scorecard: no jobs found\n") and card.returncode == 0


def test_readme_scorecard_capture_is_a_real_run():
    readme = (ROOT / "README.md").read_text("utf-8")
    command = "$ recovery-lint --scorecard fixtures/vcjob-gpt3\n"
    block = readme.split(command, 1)[1].split("```", 1)[0]
    result = run_cli("--scorecard", "fixtures/vcjob-gpt3")
    assert block == result.stdout + result.stderr, (
        "the README's scorecard capture is out of date: paste the output of "
        "'recovery-lint --scorecard fixtures/vcjob-gpt3' into the README"
    )


RANKTABLE_POD = """\
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch-npu:24.0
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            volumeMounts:
            - name: code
              mountPath: /job/code
          volumes:
          - name: code
            hostPath:
              path: /data/code
"""
ASCENDJOB_WITHOUT_RANKTABLE = f"""\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt3
  namespace: train
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
spec:
  replicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
{RANKTABLE_POD}    Worker:
      replicas: 3
      restartPolicy: Never
{RANKTABLE_POD}"""


def test_info_advice_alone_does_not_make_a_visible_optimization_missing(tmp_path):
    write(
        tmp_path,
        {
            "job.yaml": ASCENDJOB_WITHOUT_RANKTABLE,
            "train.sh": "#!/bin/bash\nexport RESUME_MODE_ENABLE=1\ntorch_npu_run --nnodes=4 --nproc_per_node=8 train.py\n",
            "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
        },
    )
    comm = phases(only_job(card_json(tmp_path)))["comm-init"]
    assert (comm["status"], comm["codes"]) == ("optimized", ["RL310"])  # RL310 (info) fires, as advice
    text = run_cli("--scorecard", ".", cwd=tmp_path).stdout
    row = next(line for line in text.splitlines() if "Communication setup" in line)
    assert row.split()[2:] == [
        "optimized",
        "-",
        "Parallel",
        "Store",
        "(torch_npu_run);",
        "advice:",
        "RL310",
        "ranktable-mode-unused",
    ]
