"""RL102: The HCCL watchdog is turned on in a job with process-level recovery, which needs it off."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.jobs import Job
from recovery_lint.knowledge.data import WATCHDOG_VAR as NAME
from recovery_lint.knowledge.watchdog import watchdog_value
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import pytorch_launches, set_env_value

MEGATRON_STACKS = ("mindspeed_llm", "mindspeed", "megatron")
_MEGATRON = "import torch\nfrom mindspeed_llm import megatron_adaptor\n"

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llama
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    pod-rescheduling: "on"
  annotations:
    recover-strategy: "recover"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch-npu:2.1.0
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""

_VCJOB = (
    _ACJOB.replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1")
    .replace("kind: AscendJob", "kind: Job")
    .replace("    framework: pytorch\n", "")
)
_SWITCH_ONLY = _ACJOB.replace('  annotations:\n    recover-strategy: "recover"\n', "").replace(
    '    pod-rescheduling: "on"\n', '    pod-rescheduling: "on"\n    process-recover-enable: "on"\n'
)


class WatchdogBlocksProcessRecovery(Rule):
    code = "RL102"
    scorecard = MISCONFIGURED
    name = "watchdog-blocks-process-recovery"
    phase = "detection"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "The HCCL watchdog is turned on in a job with process-level recovery, which needs it off"
    what = """
Process-level recovery, which exists only for an AscendJob (MindCluster constraint), and for
PyTorch only with a Megatron-based stack (MindSpeed-LLM):

- an AscendJob with process-level recovery (a `recover-strategy` annotation on a resumable job)
  whose launch environment sets
  `HCCL_ASYNC_ERROR_HANDLING` to a value that turns the watchdog on. For an AscendJob with a
  `recover-strategy` Ascend Operator appends `HCCL_ASYNC_ERROR_HANDLING=0` to the container
  environment, which replaces a container `env` value, but an `export` in a launch script runs
  later and overrides it. (`TORCH_HCCL_ASYNC_ERROR_HANDLING` is read by no final torch_npu
  release up to 26.1.0, so it changes nothing.)
- an AscendJob with process-level recovery whose training entries do not use MindSpeed-LLM or
  Megatron: the docs support process-level recovery for PyTorch only with that stack.
- a workload that is not an AscendJob (a Volcano Job) carrying `recover-strategy` or
  `process-recover-enable`: they have no effect there; the job gets Job- or Pod-level
  rescheduling and needs its watchdog on (RL101).
- an AscendJob with `process-recover-enable: "on"` and no `recover-strategy` annotation: the
  label arms nothing by itself (Ascend Operator sets it on the PodGroup from the annotation, and
  ClusterD takes the strategies from the annotation), so the job is not process-level recovery.
"""
    why = """
Process-level recovery (MindIO TFT with TaskD: `recover`, `recover-in-place`, `retry`,
`elastic-training`, `dump`) repairs a fault while the healthy training processes stay alive: the
controller stops them, rebuilds the communication groups and resumes from the replicas in memory.
With the watchdog on, torch_npu itself reacts to the failed collective (mode `1` kills the
process), so the in-place repair turns into a process restart or a rescheduling with a checkpoint
reload, the slow path this recovery exists to avoid. TaskD warns about the setting at start-up,
and every official process-recovery launch script exports `HCCL_ASYNC_ERROR_HANDLING=0`. Labels
copied onto a workload that does not support the feature give a false sense of a fast recovery.
"""
    example = """
```yaml
kind: AscendJob
metadata:
  annotations:
    recover-strategy: "recover"
```
```bash
export HCCL_ASYNC_ERROR_HANDLING=1    # RL102
torchrun --nproc_per_node 8 pretrain_gpt.py
```
Use instead:
```bash
export HCCL_ASYNC_ERROR_HANDLING=0
torchrun --nproc_per_node 8 pretrain_gpt.py
```
"""
    fix = """
The value the user set is rewritten to `0` where it is set (the script export, an inline `bash -c`
export, or the container `env` value), keeping its quoting: unsafe, as it changes a value set
explicitly; no fix when it is set behind a condition. The other two findings have no fix.
"""
    sources = (
        "ascend-operator: pkg/controllers/v1 env.go doAddProcessRecoverEnv (HCCL_ASYNC_ERROR_HANDLING=0 appended "
        "for PyTorch recover strategies); job.go addPgProcessRecoverLabel (process-recover-enable set on the "
        "PodGroup when the recover-strategy annotation is there)",
        "clusterd: pkg/domain/common/utils.go GetRecoverBaseInfo (strategies from the PodGroup annotation)",
        "MindCluster docs: 04_resumable_training/01_solutions_principles (process-level rescheduling: AscendJob "
        "only; PyTorch with MindSpeed-LLM; no watchdog)",
        "mindcluster-deploy samples: resumable-training/fault-tolerance/*/pytorch/*/train_start.sh "
        "(export HCCL_ASYNC_ERROR_HANDLING=0)",
        "Ascend/pytorch release tags: no final release up to 26.1.0 reads TORCH_HCCL_ASYNC_ERROR_HANDLING",
    )
    cases = examples(
        lambda: (
            Case(
                title="a script export turns the watchdog back on: the user's value, an unsafe fix",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=1  # from the old job\ntorchrun train.py\n",
                    "pretrain.py": _MEGATRON,
                },
                expect=("train.sh:2:8",),
                unsafe=True,
                fixed={
                    "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0  # from the old job\ntorchrun train.py\n"
                },
            ),
            Case(
                title="the new variable name is read by no release: the old name's 0 stays in force",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\r\nexport TORCH_HCCL_ASYNC_ERROR_HANDLING='2'\r\n"
                    "torchrun train.py\r\n",
                },
            ),
            Case(
                title="process-recover-enable without a recover-strategy arms nothing: the annotation is missing",
                files={"job.yaml": _SWITCH_ONLY, "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\ntorchrun train.py\n"},
                expect=("job.yaml:10:29",),
            ),
            Case(
                title="a container env value is replaced by the operator's 0 for a recover-strategy",
                files={
                    "job.yaml": _ACJOB.replace(
                        "            image: pytorch-npu:2.1.0\n",
                        "            image: pytorch-npu:2.1.0\n            env:\n"
                        '            - name: HCCL_ASYNC_ERROR_HANDLING\n              value: "1"\n',
                    ),
                    "train.sh": "torchrun train.py\n",
                },
            ),
            Case(
                title="watchdog off, as process-level recovery needs",
                files={"job.yaml": _ACJOB, "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun train.py\n"},
            ),
            Case(
                title="unset: the operator injects 0",
                files={"job.yaml": _ACJOB, "train.sh": "torchrun train.py\n", "requirements.txt": "torch==2.1.0\n"},
            ),
            Case(
                title="Pod-level rescheduling only: the watchdog should be on",
                files={
                    "job.yaml": _ACJOB.replace('  annotations:\n    recover-strategy: "recover"\n', ""),
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\ntorchrun train.py\n",
                },
            ),
            Case(
                title="recover-strategy copied onto a Volcano Job: no effect there",
                files={"job.yaml": _VCJOB, "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun train.py\n"},
                expect=("job.yaml:10",),
            ),
            Case(
                title="process-level recovery for a PyTorch entry that is not Megatron-based",
                files={
                    "job.yaml": _ACJOB.replace(
                        "bash /job/code/train.sh", "torchrun --nproc_per_node 8 /job/code/train.py"
                    ),
                    "train.py": "import torch\nimport torch_npu\n",
                },
                expect=("job.yaml:11",),
            ),
            Case(
                title="standalone script: recovery level unknown",
                files={"train.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\ntorchrun train.py\n"},
            ),
            Case(
                title="a MindSpore job gets no PyTorch advice",
                files={
                    "job.yaml": _ACJOB.replace("framework: pytorch", "framework: mindspore"),
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\nmsrun --worker_num=8 train.py\n",
                },
            ),
        )
    )

    def check_job(self, job: Job):
        for span, note in job.context.notes:
            yield self.report(
                span, f"{note}; the job gets Job- or Pod-level rescheduling and needs its watchdog (RL101)"
            )
        if not job.context.pytorch:
            return
        yield from self._not_megatron(job)
        if job.context.recovery != "process":
            return
        doc = job.manifest
        injected = doc is not None and doc.recover_strategy is not None
        seen: set[tuple[str, int]] = set()
        for _launch, cmd in pytorch_launches(job):
            value = cmd.env.get(NAME)
            if value is None or value.span is None or value.known is None:
                continue
            key = (value.span.path, value.span.start)
            if watchdog_value(value.known) == 0 or key in seen:
                continue
            seen.add(key)
            override = (
                ", overriding the 0 the Ascend Operator injects for the recover-strategy"
                if injected and value.origin != "container"
                else ""
            )
            edits = None if value.conditional else set_env_value(job, value, "0")
            fix = safe_fix(f"Set {NAME}=0", *edits, overrides=f"{NAME}={value.known}") if edits else None
            yield self.report(
                value.span,
                f"{NAME}={value.known.strip()} turns the HCCL watchdog on{override}: process-level recovery needs "
                "it off, or a fault restarts the training processes instead of repairing them in place",
                fix,
                related=[(cmd.command.span, "the training launch that inherits it")],
            )

    def _not_megatron(self, job: Job):
        """Process-level recovery asked for (whether or not fault scheduling is on yet) for PyTorch
        entries that do not use the Megatron stack it needs."""
        doc = job.manifest
        if doc is None or not doc.is_ascendjob or not job.entries:
            return
        label = doc.annotation("recover-strategy") or doc.label("process-recover-enable")
        if label is None:
            return
        if doc.label("process-recover-enable") is label and label.value != "on":
            return
        if any(e.imports_module(*MEGATRON_STACKS) for e in job.entries):
            return
        names = ", ".join(e.source.path for e in job.entries)
        yield self.report(
            label.span if label is not None else doc.span,
            f"process-level recovery supports PyTorch only with a Megatron-based stack (MindSpeed-LLM), and the "
            f"training entry ({names}) imports neither mindspeed nor megatron: recovery falls back to rescheduling",
        )
