from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.jobs import Job
from recovery_lint.knowledge import documented_default, watchdog_default
from recovery_lint.rule import Case, Rule

from ._common import WATCHDOG_VARS, effective, insert_env_before, pytorch_launches, set_env_value

_MANIFEST = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
spec:
  tasks:
  - name: default
    template:
      spec:
        containers:
        - name: train
          command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""


class WatchdogDisabled(Rule):
    code = "RL101"
    name = "watchdog-disabled"
    phase = "detection"
    severity = Severity.WARNING
    fix_availability = "always"
    summary = "The HCCL watchdog is off, so a network fault is only noticed after the HCCL execution timeout"
    what = """
A PyTorch job without process-level recovery whose launch environment turns the HCCL watchdog off:
`TORCH_HCCL_ASYNC_ERROR_HANDLING` (which takes precedence) or `HCCL_ASYNC_ERROR_HANDLING` is `0`,
or neither is set while torch is 1.11.x or unknown (torch 2.1 and later default it to `1`).
The environment is the one the training process sees: container `env`, inline `bash -c`
exports and the launch scripts' exports, in execution order.
"""
    why = """
With the watchdog off, a parameter-plane network fault is not reported by the failing collective;
the job only fails when `HCCL_EXEC_TIMEOUT` runs out (1836 s by default, about half an hour),
and only then can the cluster scheduler start recovery. With `HCCL_ASYNC_ERROR_HANDLING=1` the
torch_npu watchdog detects the failed communication and exits the process at once.
"""
    example = """
```bash
export HCCL_ASYNC_ERROR_HANDLING=0    # RL101
torchrun --nproc_per_node 8 train.py
```
Use instead:
```bash
export HCCL_ASYNC_ERROR_HANDLING=1
torchrun --nproc_per_node 8 train.py
```
"""
    fix = """
Safe. A `0` is rewritten to `1` where it is set (script export or container env value). When the
variable is unset, `export HCCL_ASYNC_ERROR_HANDLING=1` is inserted on the line before the launch
command, at its indentation; a launch without a shell script gets a container `env` entry instead.
Not reported for jobs with process-level recovery (`recover-strategy`), which need the watchdog
off (see RL102).
"""
    sources = (
        "torch_npu docs: TORCH_HCCL_ASYNC_ERROR_HANDLING / HCCL_ASYNC_ERROR_HANDLING (torch 1.11.0 default 0, "
        "torch >= 2.1.0 default 1)",
        "CANN environment variable reference: HCCL_EXEC_TIMEOUT (default 1836 s)",
        "MindCluster docs: 05_configuring_training_recovery, recovery time optimization (watchdog)",
    )
    cases = (
        Case(
            title="an explicit 0 in the launch script",
            files={
                "job.yaml": _MANIFEST,
                "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0  # keep\ntorchrun train.py\n",
                "requirements.txt": "torch==2.1.0\n",
            },
            expect=("train.sh:2",),
            fixed={"train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=1  # keep\ntorchrun train.py\n"},
        ),
        Case(
            title="unset with an unknown torch version: insert the export before the launcher",
            files={
                "job.yaml": _MANIFEST,
                "train.sh": "#!/bin/bash\nif true; then\n    torchrun train.py\nfi\n",
            },
            expect=("train.sh:3",),
            fixed={
                "train.sh": "#!/bin/bash\nif true; then\n    export HCCL_ASYNC_ERROR_HANDLING=1\n"
                "    torchrun train.py\nfi\n"
            },
        ),
        Case(
            title="TORCH_HCCL_ASYNC_ERROR_HANDLING takes precedence",
            files={
                "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\nexport TORCH_HCCL_ASYNC_ERROR_HANDLING=1\n"
                "torchrun train.py\n"
            },
        ),
        Case(
            title="unset on torch 2.1: the watchdog is on by default",
            files={"train.sh": "torchrun train.py\n", "requirements.txt": "torch==2.1.0\n"},
        ),
        Case(
            title="process-level recovery needs the watchdog off",
            files={
                "job.yaml": _MANIFEST.replace("kind: Job", "kind: Job").replace(
                    "    ring-controller.atlas: ascend-910b\n",
                    "    ring-controller.atlas: ascend-910b\n    fault-scheduling: grace\n"
                    '    process-recover-enable: "on"\n',
                ),
                "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun train.py\n",
            },
        ),
        Case(
            title="a MindSpore job gets no PyTorch advice",
            files={"job.yaml": _MANIFEST.replace("bash /job/code/train.sh", "msrun train.py")},
        ),
    )

    def check_job(self, job: Job):
        if not job.context.pytorch or job.context.recovery == "process":
            return
        torch = job.context.versions.get("torch")
        default = watchdog_default(torch)
        timeout = documented_default("HCCL_EXEC_TIMEOUT") or 1836
        for launch, cmd in pytorch_launches(job):
            value = effective(cmd.env, *WATCHDOG_VARS)
            wait = cmd.env.get("HCCL_EXEC_TIMEOUT")
            wait_text = (
                f"HCCL_EXEC_TIMEOUT={wait.value} s"
                if wait is not None and wait.value
                else f"HCCL_EXEC_TIMEOUT (default {timeout} s)"
            )
            if value is not None:
                if value.value != "0" or value.span is None:
                    continue
                edits = set_env_value(job, value, "1")
                fix = safe_fix(f"Set {value.name}=1", *edits) if edits else None
                yield self.report(
                    value.span,
                    f"{value.name}=0 turns the HCCL watchdog off: a network fault is only detected after {wait_text}",
                    fix,
                    related=[(cmd.command.span, "the training launch that inherits it")],
                )
                continue
            if default == 1:
                continue
            assumed = (
                f"torch {torch} defaults the watchdog off"
                if torch
                else "torch version unknown; torch 1.11 defaults the watchdog off"
            )
            edits = insert_env_before(job, launch, cmd, "HCCL_ASYNC_ERROR_HANDLING", "1")
            fix = safe_fix("Export HCCL_ASYNC_ERROR_HANDLING=1 before the launch", *edits) if edits else None
            yield self.report(
                cmd.command.span,
                f"HCCL_ASYNC_ERROR_HANDLING is not set ({assumed}): a network fault is only detected after {wait_text}",
                fix,
            )
