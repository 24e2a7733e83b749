"""RL105: the HCCL watchdog on in a job whose recovery feature the docs say does not support it."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.jobs import EnvValue, Job, Launch, LaunchCommand
from recovery_lint.knowledge.data import WATCHDOG_VAR as NAME
from recovery_lint.knowledge.watchdog import watchdog_facts, watchdog_value
from recovery_lint.premises import release_facts, unread_source_evidence
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import insert_env_before, pytorch_launches, set_env_value
from ._versions import declared
from ._watchdog import watchdog_forbidden

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llama
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    subHealthyStrategy: "hotSwitch"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""
_VCJOB = (
    _ACJOB.replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1")
    .replace("kind: AscendJob", "kind: Job")
    .replace("    framework: pytorch\n", "")
)
_RETRY = 'export HCCL_OP_RETRY_ENABLE="L0:0, L1:1, L2:1"\n'
_LAUNCH = "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py\n"
_R600 = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0: default 1, a watchdog thread
_R500 = "torch==2.1.0\ntorch-npu==2.1.0.post4\n"  # release 5.0.1 for torch 2.1.0: no watchdog thread


class WatchdogWhereForbidden(Rule):
    code = "RL105"
    scorecard = MISCONFIGURED
    name = "watchdog-where-forbidden"
    phase = "detection"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "The HCCL watchdog is on in a job with hot switch or operator-level retry, which do not support it"
    what = """
A PyTorch training launch that leaves the HCCL watchdog on in a job whose recovery feature the
MindCluster docs say does not support it ("不支持开启watchdog功能"):

- sub-health hot switch, `subHealthyStrategy: hotSwitch` on an AscendJob (the only workload the
  docs support it on; elsewhere the label does nothing, RL205);
- operator-level online recovery, `HCCL_OP_RETRY_ENABLE` with a retry level switched on
  (`"L0:0, L1:1, L2:1"`) in the launch environment.

The watchdog is on when `HCCL_ASYNC_ERROR_HANDLING` is set to a value that turns it on, or is
unset on a torch_npu release whose default is on (6.0.RC1 and later). Unlike a `recover-strategy`
(RL102), hot switch makes Ascend Operator inject no `HCCL_ASYNC_ERROR_HANDLING=0`, so the default
stays in force. Releases that read the variable but start no watchdog thread (the 5.0.x builds for
torch 2.1.0) are left alone. Process-level recovery itself is RL102's subject.
"""
    why = """
Both features repair a fault while the training processes live on: operator-level retry has HCCL
execute the failed collective again, hot switch pauses training, brings up a standby Pod and
resumes. With the watchdog on, torch_npu reacts to the same failed collective first (mode `1`
ends the process), so the in-place repair becomes a process exit and a rescheduling with a
checkpoint reload, the slow path the feature exists to avoid.
"""
    example = """
```bash
export HCCL_OP_RETRY_ENABLE="L0:0, L1:1, L2:1"
export HCCL_ASYNC_ERROR_HANDLING=1    # RL105
torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py
```
Use instead:
```bash
export HCCL_OP_RETRY_ENABLE="L0:0, L1:1, L2:1"
export HCCL_ASYNC_ERROR_HANDLING=0
torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py
```
"""
    fix = """
Unset on a release whose default is on: `export HCCL_ASYNC_ERROR_HANDLING=0` is inserted before the
launch (or a container `env` entry when the container runs the launch itself), safe. Set to a value
that turns the watchdog on: the value is rewritten to `0` where it is set, unsafe, as it changes a
value set explicitly; no fix when it is set behind a condition.
"""
    sources = (
        "MindCluster docs: 04_usage/04_resumable_training/01_solutions_principles.md, 亚健康热切 and 算子级在线恢复 "
        "使用约束 (不支持开启watchdog功能; hot switch: 只支持…acjob类型训练任务)",
        "MindCluster docs: 03_configuration/02_configuring_fault_handling_policies.md (HCCL_OP_RETRY_ENABLE="
        '"L0:0, L1:1, L2:1" switches operator-level retry on)',
        "Ascend/pytorch release tags: OptionsManager.cpp (HCCL_ASYNC_ERROR_HANDLING default 1 from 6.0.RC1) and "
        "ProcessGroupHCCL.cpp (the watchdog thread; none in the 5.0.x builds for torch 2.1.0)",
    )
    cases = examples(
        lambda: (
            Case(
                title="hot switch, the watchdog turned on in the launch script: the user's value, an unsafe fix",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\n" + _LAUNCH,
                    "requirements.txt": _R600,
                },
                expect=("train.sh:1:8",),
                unsafe=True,
                fixed={"train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH},
            ),
            Case(
                title="hot switch, unset on a release whose default is on: export 0 before the launch",
                files={"job.yaml": _ACJOB, "train.sh": _LAUNCH, "requirements.txt": _R600},
                expect=("train.sh:1:1",),
                fixed={"train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH},
            ),
            Case(
                title="hot switch with no version declared: MindCluster's releases default it on",
                files={"job.yaml": _ACJOB, "train.sh": _LAUNCH},
                expect=("train.sh:1:1",),
            ),
            Case(
                title="operator-level retry with the watchdog on",
                files={
                    "train.sh": _RETRY + "export HCCL_ASYNC_ERROR_HANDLING=1\n" + _LAUNCH,
                    "requirements.txt": _R600,
                },
                expect=("train.sh:2:8",),
            ),
            Case(
                title="operator-level retry, release unknown: withheld",
                files={"train.sh": _RETRY + _LAUNCH},
                withheld=("release",),
            ),
            Case(
                title="operator-level retry with the watchdog off",
                files={
                    "train.sh": _RETRY + "export HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH,
                    "requirements.txt": _R600,
                },
            ),
            Case(
                title="every retry level off: no operator-level retry",
                files={
                    "train.sh": 'export HCCL_OP_RETRY_ENABLE="L0:0, L1:0, L2:0"\n' + _LAUNCH,
                    "requirements.txt": _R600,
                },
            ),
            Case(
                title="hot switch on a Volcano Job does nothing (RL205)",
                files={"job.yaml": _VCJOB, "train.sh": _LAUNCH, "requirements.txt": _R600},
            ),
            Case(
                title="a 5.0.x build for torch 2.1.0 starts no watchdog thread",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\n" + _LAUNCH,
                    "requirements.txt": _R500,
                },
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch or job.context.recovery == "process":
            return  # process-level recovery: RL102
        forbidden = watchdog_forbidden(job)
        launches = pytorch_launches(job)
        if forbidden is None or not launches:
            return
        facts, evidence = release_facts(job)
        if facts is None:
            yield self.withhold(job, "release", evidence)
            return
        watchdog = watchdog_facts(facts)
        if watchdog.no_npu or watchdog.read is False or watchdog.thread is False:
            return
        if facts.mixed or watchdog.thread is None:
            yield self.withhold(job, "release", f"{facts.basis}: some of them start no watchdog thread")
            return
        seen: set[tuple[str, int]] = set()
        for launch, cmd in launches:
            value = cmd.env.get(NAME)
            if value is None and cmd.may_set(NAME):  # a script sourced before the launch, not read, may set it
                if watchdog.on_by_default:
                    yield self.withhold(job, "launch-environment", unread_source_evidence(cmd))
                continue
            if value is None:
                if watchdog.on_by_default is None:
                    yield self.withhold(job, "release", f"{watchdog.basis}: they differ on the watchdog's default")
                elif watchdog.on_by_default:
                    yield self._unset(job, launch, cmd, forbidden, watchdog)
                continue
            if value.known is None or value.span is None or watchdog_value(value.known) == 0:
                continue  # set at run time, or off
            key = (value.span.path, value.span.start)
            if key not in seen:
                seen.add(key)
                yield self._turned_on(job, cmd, value, forbidden)

    def _turned_on(self, job: Job, cmd: LaunchCommand, value: EnvValue, forbidden):
        where, why = forbidden
        edits = None if value.conditional else set_env_value(job, value, "0")
        fix = safe_fix(f"Set {NAME}=0", *edits, overrides=f"{NAME}={value.known}") if edits else None
        assert value.span is not None
        return self.report(
            value.span,
            f"{NAME}={value.known.strip()} turns the HCCL watchdog on, and {why}: a failed collective ends the "
            "process instead of being repaired in place, and the job restarts from its last checkpoint",
            fix,
            related=[(where, "the feature that needs the watchdog off"), (cmd.command.span, "the training launch")],
        )

    def _unset(self, job: Job, launch: Launch, cmd: LaunchCommand, forbidden, watchdog):
        where, why = forbidden
        edits = insert_env_before(job, launch, cmd, NAME, "0")
        fix = safe_fix(f"Export {NAME}=0 before the launch", *edits) if edits else None
        return self.report(
            cmd.command.span,
            f"{NAME} is not set, which leaves the HCCL watchdog on (the default of {watchdog.basis}{declared(job)}), "
            f"and {why}: a failed collective ends the process instead of being repaired in place",
            fix,
            related=[(where, "the feature that needs the watchdog off")],
        )
