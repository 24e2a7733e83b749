"""RL214: a small explicit --max_restarts that ends in-place recovery before the job's rescheduling budget."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import edit
from recovery_lint.jobs import Job, LaunchCommand
from recovery_lint.launchers.table import TORCH_NPU_RUN, TORCHRUN
from recovery_lint.premises import LEVELS
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.shellwords import option_at, word_value
from recovery_lint.sources.manifest import ManifestDoc
from recovery_lint.sources.shell import Word

from ._common import VOLCANO_DEFAULT_RETRIES, points_into_command, pytorch_launches, written_in_command

OPTIONS = ("--max_restarts", "--max-restarts")
# "不配置该参数时默认为32767次": TaskD's patch of torchrun also turns 0 into this number (torch_patch.py)
DOCUMENTED = 32767

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llama
  namespace: default
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: torch:latest
            command: ["/bin/bash", "-c", "bash /job/code/train_start.sh"]
            ports:
            - containerPort: 9601
              name: taskd-port
            resources:
              limits:
                huawei.com/Ascend910: 8
"""
_SCRIPT = """\
#!/bin/bash
DISTRIBUTED_ARGS="--nproc_per_node 8 --nnodes $NNODES --node_rank $NODE_RANK --master_addr $MASTER_ADDR"
torchrun $DISTRIBUTED_ARGS --max_restarts 3 train.py
"""
_ENTRY = "import torch\nimport torch_npu\n\ntorch.distributed.init_process_group('hccl')\n"


class RestartBudgetBelowRescheduling(Rule):
    code = "RL214"
    scorecard = MISCONFIGURED
    name = "restart-budget-below-rescheduling"
    phase = "rescheduling"
    severity = Severity.WARNING
    premises = ("rescheduling",)
    fix_availability = "sometimes"
    summary = "--max_restarts ends in-place recovery after a few faults, before the job's rescheduling budget"
    what = """
A PyTorch launch by `torchrun` (or `python -m torch.distributed.run`, `torch_npu_run`) in a job with
Pod-level rescheduling or process-level recovery that passes `--max_restarts N` with N at least 1 and
below the number of faults the job itself allows: its `spec.runPolicy.backoffLimit` (AscendJob, else
`fault-retry-times`, else no limit), its `spec.maxRetry` (Volcano Job, 3 when unset), and in any case
the 32767 the fault-handling guide gives as the default. The guide: `--max_restarts` is the number
of faults allowed in the container; beyond it the PyTorch training process exits. `0` is not
reported: TaskD's patch of torchrun turns it into 32767. A value held in a variable of unknown
value is not judged.
"""
    why = """
Under Pod-level rescheduling and process-level recovery the healthy Pods keep their containers and
TaskD restarts their training processes in place, counting each fault against `--max_restarts`.
Once the count is spent the agent exits instead, so from the next fault on the job no longer gets
the fast recovery it was configured for, although its own rescheduling budget is not used up.
A value such as 3, common in GPU examples of elastic training, is spent within days on a large cluster.
"""
    example = """
```bash
torchrun $DISTRIBUTED_ARGS --max_restarts 3 train.py     # RL214 in a Pod-level rescheduled job
```
Use instead:
```bash
torchrun $DISTRIBUTED_ARGS --max_restarts 32767 train.py
```
"""
    fix = """
Unsafe: sets the value to 32767, the guide's default, where the number is written in the launch
command itself; the number of faults the job survives in place changes, which is the user's choice.
No fix when the option comes from a variable.
"""
    sources = (
        "MindCluster docs: 03_configuration/02_configuring_fault_handling_policies.md, Pod-level and process-level "
        "rescheduling, process-level online recovery (--max_restarts表示配置容器内最大允许触发的故障次数…超出次数后"
        "PyTorch训练进程会直接退出训练，不配置该参数时默认为32767次)",
        "TaskD: taskd/python/adaptor/patch/torch_patch.py patch_launch_agent (max_restarts 0 becomes 32767), "
        "framework/agent/pt_agent/pt_agent.py restart_workers (a negative remaining count exits the agent)",
        "MindCluster docs: 06_api/15_yaml_configuration.md, vcjob maxRetry and acjob backoffLimit",
    )
    cases = examples(
        lambda: (
            Case(
                title="--max_restarts 3 in a Pod-level rescheduled AscendJob without a restart limit",
                files={"job.yaml": _ACJOB, "train_start.sh": _SCRIPT, "train.py": _ENTRY},
                expect=("train_start.sh:3:28",),
                unsafe=True,
                fixed={"train_start.sh": _SCRIPT.replace("--max_restarts 3", "--max_restarts 32767")},
            ),
            Case(
                title="the documented 32767",
                files={
                    "job.yaml": _ACJOB,
                    "train_start.sh": _SCRIPT.replace("--max_restarts 3", "--max_restarts 32767"),
                    "train.py": _ENTRY,
                },
            ),
            Case(
                title="0, which TaskD's patch turns into 32767",
                files={
                    "job.yaml": _ACJOB,
                    "train_start.sh": _SCRIPT.replace("--max_restarts 3", "--max-restarts=0"),
                    "train.py": _ENTRY,
                },
            ),
            Case(
                title="no larger than the job's own backoffLimit",
                files={
                    "job.yaml": _ACJOB.replace(
                        "spec:\n  replicaSpecs:", "spec:\n  runPolicy:\n    backoffLimit: 3\n  replicaSpecs:"
                    ),
                    "train_start.sh": _SCRIPT,
                    "train.py": _ENTRY,
                },
            ),
            Case(
                title="below the job's backoffLimit, in a variable of known value: reported, no fix",
                files={
                    "job.yaml": _ACJOB.replace(
                        "spec:\n  replicaSpecs:", "spec:\n  runPolicy:\n    backoffLimit: 100\n  replicaSpecs:"
                    ),
                    "train_start.sh": _SCRIPT.replace('$MASTER_ADDR"', '$MASTER_ADDR --max_restarts 10"').replace(
                        " --max_restarts 3", ""
                    ),
                    "train.py": _ENTRY,
                },
                expect=("train_start.sh:3:10",),
                unsafe=True,
                fixed={
                    "train_start.sh": _SCRIPT.replace('$MASTER_ADDR"', '$MASTER_ADDR --max_restarts 10"').replace(
                        " --max_restarts 3", ""
                    )
                },
            ),
            Case(
                title="Job-level rescheduling: every fault restarts the whole job, the in-place count is not used",
                files={
                    "job.yaml": _ACJOB.replace('    pod-rescheduling: "on"\n', ""),
                    "train_start.sh": _SCRIPT,
                    "train.py": _ENTRY,
                },
            ),
            Case(
                title="a value of unknown value",
                files={
                    "job.yaml": _ACJOB,
                    "train_start.sh": _SCRIPT.replace("--max_restarts 3", "--max_restarts $RESTARTS"),
                    "train.py": _ENTRY,
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or job.context.recovery not in ("pod", "process"):
            return
        budget = _job_budget(doc)
        if budget is _UNKNOWN:
            return
        allowed = min(DOCUMENTED, budget[0]) if budget[0] is not None else DOCUMENTED
        for _launch, cmd in pytorch_launches(job):
            if cmd.row is None or cmd.row.family not in (TORCHRUN, TORCH_NPU_RUN):
                continue
            found = _max_restarts(cmd)
            if found is None:
                continue
            option, value_word, restarts = found
            if not 1 <= restarts < allowed:
                continue
            said = (
                f"the job allows {budget[0]} ({budget[1]})"
                if budget[0] is not None
                else f"the job sets no limit ({budget[1]})"
            )
            yield self.report(
                option.span if points_into_command(cmd, option) else cmd.command.span,
                f"--max_restarts {restarts} under {LEVELS[job.context.recovery]}: after {restarts} faults the "
                f"training processes exit instead of being restarted in place, while {said}; the guide's "
                f"default is {DOCUMENTED}",
                _fix(cmd, value_word),
            )


_UNKNOWN = (None, "")


def _literal(text: str | None) -> int | None:
    text = (text or "").strip().strip("\"'")
    return int(text) if text.isdigit() and len(text) < 10 else None


def _job_budget(doc: ManifestDoc) -> tuple[int | None, str]:
    """How many reschedulings the job allows and where that is said; (None, why) for no limit, and
    ``_UNKNOWN`` when the value is written but not a number."""
    spec = doc.root.map("spec")
    if doc.is_ascendjob:
        policy = spec.map("runPolicy") if spec is not None else None
        limit = policy.scalar("backoffLimit") if policy is not None else None
        if limit is not None:
            value = _literal(limit.value)
            return (value, "spec.runPolicy.backoffLimit") if value is not None else _UNKNOWN
        retry = doc.label("fault-retry-times")
        if retry is not None:
            value = _literal(retry.value)
            return (value, "fault-retry-times, with no backoffLimit") if value else _UNKNOWN
        return None, "no backoffLimit or fault-retry-times"
    if doc.is_vcjob:
        retry = spec.scalar("maxRetry") if spec is not None else None
        if retry is None:
            return VOLCANO_DEFAULT_RETRIES, "Volcano's default without spec.maxRetry"
        value = _literal(retry.value)
        if value is None:
            return _UNKNOWN
        return (value, "spec.maxRetry") if value else (VOLCANO_DEFAULT_RETRIES, "Volcano's default for maxRetry 0")
    return _UNKNOWN


def _max_restarts(cmd: LaunchCommand) -> tuple[Word, Word, int] | None:
    """The option word, the word holding its value and the value, among the launcher's own options
    (before the entry); None when absent or not a number."""
    words = cmd.words
    entry = cmd.entry_index
    found = option_at(words, OPTIONS, {}, cmd.launcher_words[1] - cmd.launcher_words[0], entry)
    if found is None or found[1] is None:
        return None
    at, value_at = found
    written = word_value(words[value_at], {}) or words[value_at].text
    value = _literal(written.split("=", 1)[1] if value_at == at else written)
    return (words[at], words[value_at], value) if value is not None else None


def _fix(cmd: LaunchCommand, value_word: Word):
    if not written_in_command(cmd, value_word):
        return None
    src = cmd.script.source
    written = src.text[value_word.span.start : value_word.span.end]
    # --max_restarts=3 keeps its option; a separate value word is replaced whole
    start = value_word.span.start + (written.index("=") + 1 if "=" in written else 0)
    return unsafe_fix(f"Set --max_restarts to {DOCUMENTED}", edit(src, start, value_word.span.end, str(DOCUMENTED)))
