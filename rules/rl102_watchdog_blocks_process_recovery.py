from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.jobs import Job
from recovery_lint.rule import Case, Rule

from ._common import WATCHDOG_VARS, effective, pytorch_launches, set_env_value

ON_VALUES = {"1": "on (detect and exit the process)", "2": "on (detect only)"}

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

_SWITCH_ONLY = _ACJOB.replace('  annotations:\n    recover-strategy: "recover"\n', "").replace(
    '    pod-rescheduling: "on"\n', '    pod-rescheduling: "on"\n    process-recover-enable: "on"\n'
)


class WatchdogBlocksProcessRecovery(Rule):
    code = "RL102"
    name = "watchdog-blocks-process-recovery"
    phase = "detection"
    severity = Severity.WARNING
    fix_availability = "always"
    summary = "The HCCL watchdog is turned on in a job with process-level recovery, which needs it off"
    what = """
A PyTorch job with process-level recovery (a `recover-strategy` annotation, or the label
`process-recover-enable: "on"`, on a resumable job) whose launch environment sets
`TORCH_HCCL_ASYNC_ERROR_HANDLING` (which takes precedence) or `HCCL_ASYNC_ERROR_HANDLING` to `1`
(detect and exit) or `2` (detect only). For an AscendJob with a `recover-strategy` the Ascend
Operator appends `HCCL_ASYNC_ERROR_HANDLING=0` to the container environment, which replaces a
container `env` value, but an `export` in a launch script runs later and overrides it.
"""
    why = """
Process-level recovery (MindIO TFT with TaskD: `recover`, `recover-in-place`, `retry`,
`elastic-training`, `dump`) repairs a fault while the healthy training processes stay alive: the
controller stops them, rebuilds the communication groups and resumes from the replicas in memory.
With the watchdog on, torch_npu itself reacts to the failed collective (mode `1` kills the
process), so the in-place repair turns into a process restart or a rescheduling with a checkpoint
reload, the slow path this recovery exists to avoid. TaskD warns about the setting at start-up,
and every official process-recovery launch script exports `HCCL_ASYNC_ERROR_HANDLING=0`.
"""
    example = """
```yaml
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
Safe. The value is rewritten to `0` where it is set (the script export, an inline `bash -c`
export, or the container `env` value), keeping its quoting. Jobs without process-level
recovery are never reported here; for them the watchdog should be on (see RL101).
"""
    sources = (
        "ascend-operator: pkg/controllers/v1 env.go doAddProcessRecoverEnv (HCCL_ASYNC_ERROR_HANDLING=0 appended "
        "for PyTorch recover strategies)",
        "MindCluster docs: api/environment_variable_description (HCCL_ASYNC_ERROR_HANDLING 0 off, 1 detect and "
        "exit, 2 detect only)",
        "mindcluster-deploy samples: resumable-training/fault-tolerance/*/pytorch/*/train_start.sh "
        "(export HCCL_ASYNC_ERROR_HANDLING=0)",
        "torch_npu docs: TORCH_HCCL_ASYNC_ERROR_HANDLING takes precedence over HCCL_ASYNC_ERROR_HANDLING",
    )
    cases = (
        Case(
            title="a script export turns the watchdog back on",
            files={
                "job.yaml": _ACJOB,
                "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=1  # from the old job\ntorchrun train.py\n",
            },
            expect=("train.sh:2:8",),
            fixed={
                "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0  # from the old job\ntorchrun train.py\n"
            },
        ),
        Case(
            title="the new variable name, detect-only mode, quoted, CRLF",
            files={
                "job.yaml": _ACJOB,
                "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\r\nexport TORCH_HCCL_ASYNC_ERROR_HANDLING='2'\r\n"
                "torchrun train.py\r\n",
            },
            expect=("train.sh:2",),
            fixed={
                "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\r\nexport TORCH_HCCL_ASYNC_ERROR_HANDLING='0'\r\n"
                "torchrun train.py\r\n"
            },
        ),
        Case(
            title="process-recover-enable without a recover-strategy: the container env value is effective",
            files={
                "job.yaml": _SWITCH_ONLY.replace(
                    "            image: pytorch-npu:2.1.0\n",
                    "            image: pytorch-npu:2.1.0\n            env:\n"
                    '            - name: HCCL_ASYNC_ERROR_HANDLING\n              value: "1"\n',
                ),
                "train.sh": "torchrun train.py\n",
            },
            expect=("job.yaml:22",),
            fixed={
                "job.yaml": _SWITCH_ONLY.replace(
                    "            image: pytorch-npu:2.1.0\n",
                    "            image: pytorch-npu:2.1.0\n            env:\n"
                    '            - name: HCCL_ASYNC_ERROR_HANDLING\n              value: "0"\n',
                ),
            },
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

    def check_job(self, job: Job):
        if not job.context.pytorch or job.context.recovery != "process":
            return
        doc = job.manifest
        injected = doc is not None and doc.is_ascendjob and doc.annotation("recover-strategy") is not None
        seen: set[tuple[str, int]] = set()
        for _launch, cmd in pytorch_launches(job):
            value = effective(cmd.env, *WATCHDOG_VARS)
            if value is None or value.span is None or value.value is None:
                continue
            mode = ON_VALUES.get(value.value.strip())
            key = (value.span.path, value.span.start)
            if mode is None or key in seen:
                continue
            seen.add(key)
            override = (
                ", overriding the 0 the Ascend Operator injects for the recover-strategy"
                if injected and value.origin != "container"
                else ""
            )
            edits = set_env_value(job, value, "0")
            fix = safe_fix(f"Set {value.name}=0", *edits) if edits else None
            yield self.report(
                value.span,
                f"{value.name}={value.value.strip()} turns the HCCL watchdog {mode}{override}: process-level "
                "recovery needs it off, or a fault restarts the training processes instead of repairing them "
                "in place",
                fix,
                related=[(cmd.command.span, "the training launch that inherits it")],
            )
