"""RL103: A resumable PyTorch job whose launch environment does not set RESUME_MODE_ENABLE=1."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.jobs import Job
from recovery_lint.lazyre import LazyPattern
from recovery_lint.premises import unread_source_evidence
from recovery_lint.rule import Case, Rule, examples

from ._common import insert_env_before, pytorch_launches, set_env_value
from ._examples import PYTORCH_VCJOB as _VCJOB
from ._versions import facts_of

# the launch of MindCluster's basic-training samples (train_start.sh), cut down
_DLS_START = """\
#!/bin/bash
app_url="$(readlink -f "$1")/"
boot_file="$3"
train_param="${@:4}"
function dls_get_executor {
    case "${1##*.}" in py) which python ;; sh) which bash ;; esac
}
DLS_PROGRAM_EXECUTOR="$(dls_get_executor "$boot_file")"
# train
${DLS_PROGRAM_EXECUTOR} ${app_url}${boot_file} ${train_param}
"""

VAR = "RESUME_MODE_ENABLE"
RESUMABLE = ("job", "pod", "process")
_LEADING_INT = LazyPattern(r"\s*[+-]?(\d+)")


_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llama
  labels:
    framework: pytorch
    fault-scheduling: "grace"
    process-recover-enable: "on"
  annotations:
    recover-strategy: "recover,retry"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch-npu:2.1.0
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch-npu:2.1.0
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""


def enabled(value: str) -> bool:
    """torch_npu reads the variable with strtol: any leading non-zero integer turns it on."""
    match = _LEADING_INT.match(value)
    return bool(match) and int(match.group(1)) != 0


class ResumeModeDisabled(Rule):
    code = "RL103"
    name = "resume-mode-disabled"
    phase = "detection"
    severity = Severity.WARNING
    premises = ("rescheduling",)
    fix_availability = "sometimes"
    summary = "A resumable PyTorch job whose launch environment does not set RESUME_MODE_ENABLE=1"
    what = """
A PyTorch job that the cluster reschedules after a fault (label `fault-scheduling` is `grace` or
`force`, with Job-level, Pod-level or process-level recovery) whose launch environment does not
turn `RESUME_MODE_ENABLE` on. torch_npu reads the variable as an integer (default `0`, off), so a
value such as `true` or `0` leaves resume mode off.
"""
    why = """
The MindCluster resumable-training guide asks for `RESUME_MODE_ENABLE=1` in every PyTorch launch
script, and every official resumable sample exports it next to the watchdog settings. What it does
in torch_npu is narrow: in checkpoint-resume mode, a stream synchronize that fails during a
host/device copy makes torch_npu print a warning ("in checkpoint-resume mode will not throw
exceptions") instead of raising, so a fault on the device side does not surface as an exception
in the middle of the copy while the cluster handles it. Releases before 5.0.rc3 do not read it.
"""
    example = """
```bash
# job labelled fault-scheduling: "grace"
torchrun --nproc_per_node 8 pretrain_gpt.py    # RL103: RESUME_MODE_ENABLE not set
```
Use instead:
```bash
export RESUME_MODE_ENABLE=1
torchrun --nproc_per_node 8 pretrain_gpt.py
```
"""
    fix = """
When the variable is unset: safe, `export RESUME_MODE_ENABLE=1` is inserted on the line before the
launch command, at its indentation; a launch without a shell script gets a container `env` entry
instead. A value the user set (`0`, `true`) is rewritten to `1` where it is set: unsafe, as it
changes a value set explicitly; no fix when it is set behind a condition. Standalone launch
scripts, which no manifest reaches, are not reported: nothing says their job is resumable.
"""
    sources = (
        "MindCluster docs: usage/resumable_training/05_configuring_training_recovery.md, Recovery Time Optimization "
        "(PyTorch): the launch script's 'env for breakpoint ckpt' (export RESUME_MODE_ENABLE=1); zh: "
        "03_configuration/03_configuring_training_recovery.md",
        "mindcluster-deploy samples: resumable-training/*/pytorch/*/train_start.sh (export RESUME_MODE_ENABLE=1)",
        "Ascend/pytorch: torch_npu/csrc/core/npu/register/OptionsManager (IsResumeModeEnable, "
        'GetBoolTypeOption("RESUME_MODE_ENABLE") with strtol, default 0)',
    )
    cases = examples(
        lambda: (
            Case(
                title="resumable job, launch script without the export",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "#!/bin/bash\nsource env.sh\n  torchrun --nproc_per_node 8 train.py  # launch\n",
                    "env.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\n",
                },
                expect=("train.sh:3:3",),
                fixed={
                    "train.sh": "#!/bin/bash\nsource env.sh\n  export RESUME_MODE_ENABLE=1\n"
                    "  torchrun --nproc_per_node 8 train.py  # launch\n"
                },
            ),
            Case(
                title="the official samples' launch: an executor picked at run time runs the entry bound from $3",
                files={
                    "job.yaml": _VCJOB.replace(
                        "bash /job/code/train.sh",
                        "bash /job/code/train_start.sh /job/code /job/output main.py --epochs=90",
                    )
                    + '          env:\n          - name: framework\n            value: "PyTorch"\n',
                    "train_start.sh": _DLS_START,
                },
                expect=("train_start.sh:10:1",),
                fixed={
                    "train_start.sh": _DLS_START.replace(
                        "${DLS_PROGRAM_EXECUTOR} ${app_url}",
                        "export RESUME_MODE_ENABLE=1\n${DLS_PROGRAM_EXECUTOR} ${app_url}",
                    )
                },
            ),
            Case(
                title="a script sourced before the launch is not in the repository: it may export the variable",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "#!/bin/bash\nsource /opt/site/env.sh\ntorchrun --nproc_per_node 8 train.py\n",
                },
                withheld=("launch-environment",),
            ),
            Case(
                title="CANN's set_env.sh sets only install paths: still reported",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "#!/bin/bash\ninstall_path=/usr/local/Ascend\nsource ${install_path}/ascend-toolkit/set_env.sh\n"
                    "torchrun --nproc_per_node 8 train.py\n",
                },
                expect=("train.sh:4:1",),
                fixed={
                    "train.sh": "#!/bin/bash\ninstall_path=/usr/local/Ascend\nsource ${install_path}/ascend-toolkit/set_env.sh\n"
                    "export RESUME_MODE_ENABLE=1\ntorchrun --nproc_per_node 8 train.py\n",
                },
            ),
            Case(
                title="set to a value torch_npu reads as off: the user's value, an unsafe fix",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": 'export RESUME_MODE_ENABLE="true"\ntorchrun train.py\n',
                },
                expect=("train.sh:1:8",),
                unsafe=True,
                fixed={"train.sh": 'export RESUME_MODE_ENABLE="1"\ntorchrun train.py\n'},
            ),
            Case(
                title="process-level recovery is resumable too; Master and Worker share the script (one finding)",
                files={"job.yaml": _ACJOB, "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\r\ntorchrun train.py\r\n"},
                expect=("train.sh:2",),
                fixed={
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\r\nexport RESUME_MODE_ENABLE=1\r\ntorchrun train.py\r\n"
                },
            ),
            Case(
                title="a launch without a script gets a container env entry",
                files={
                    "job.yaml": _VCJOB.replace(
                        '["/bin/bash", "-c", "bash /job/code/train.sh"]', '["torchrun", "/job/code/train.py"]'
                    ).replace(
                        "          image: pytorch-npu:2.1.0\n",
                        "          image: pytorch-npu:2.1.0\n          env:\n"
                        '          - name: TASK_QUEUE_ENABLE\n            value: "2"\n',
                    ),
                },
                expect=("job.yaml:19",),
                fixed={
                    "job.yaml": _VCJOB.replace(
                        '["/bin/bash", "-c", "bash /job/code/train.sh"]', '["torchrun", "/job/code/train.py"]'
                    ).replace(
                        "          image: pytorch-npu:2.1.0\n",
                        "          image: pytorch-npu:2.1.0\n          env:\n"
                        '          - name: TASK_QUEUE_ENABLE\n            value: "2"\n'
                        '          - name: RESUME_MODE_ENABLE\n            value: "1"\n',
                    ),
                },
            ),
            Case(
                title="set in a sourced file",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": ". ./env.sh\ntorchrun train.py\n",
                    "env.sh": "export RESUME_MODE_ENABLE=1\n",
                },
            ),
            Case(
                title="not resumable: no fault-scheduling label (that is RL201)",
                files={
                    "job.yaml": _VCJOB.replace('    fault-scheduling: "grace"\n', ""),
                    "train.sh": "torchrun train.py\n",
                },
            ),
            Case(
                title="standalone launch script: nothing says the job is resumable",
                files={"train.sh": "torchrun train.py\n", "requirements.txt": "torch==2.1.0\n"},
            ),
            Case(
                title="a MindSpore job gets no PyTorch advice",
                files={
                    "job.yaml": _ACJOB.replace("framework: pytorch", "framework: mindspore"),
                    "train.sh": "msrun --worker_num=8 train.py\n",
                },
            ),
            Case(
                title="a value set from elsewhere cannot be judged",
                files={"job.yaml": _VCJOB, "train.sh": 'export RESUME_MODE_ENABLE="${RESUME}"\ntorchrun train.py\n'},
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch or job.context.recovery not in RESUMABLE:
            return
        if facts_of(job).answer("reads_resume_mode_enable") is False:
            return  # a release that does not read the variable
        labels = f'fault-scheduling "{_label(job)}"'
        seen: set[tuple[str, int]] = set()
        for launch, cmd in pytorch_launches(job):
            value = cmd.env.get(VAR)
            if value is not None:
                if value.value is None or enabled(value.value) or value.span is None:
                    continue
                key = (value.span.path, value.span.start)
                if key in seen:
                    continue
                seen.add(key)
                edits = None if value.conditional else set_env_value(job, value, "1")
                fix = safe_fix(f"Set {VAR}=1", *edits, overrides=f"{VAR}={value.value}") if edits else None
                yield self.report(
                    value.span,
                    f"{VAR}={value.value} leaves torch_npu's checkpoint-resume mode off (it reads the value as an "
                    f"integer) in a resumable job ({labels}), which the resumable-training guide asks for",
                    fix,
                    related=[(cmd.command.span, "the training launch that inherits it")],
                )
                continue
            key = (cmd.command.span.path, cmd.command.span.start)
            if key in seen:
                continue
            if cmd.may_set(VAR):  # a script sourced before the launch, not read, may set it
                yield self.withhold(job, "launch-environment", unread_source_evidence(cmd))
                continue
            seen.add(key)
            edits = insert_env_before(job, launch, cmd, VAR, "1")
            fix = safe_fix(f"Export {VAR}=1 before the launch", *edits) if edits else None
            yield self.report(
                cmd.command.span,
                f"{VAR} is not set for this launch of a resumable job ({labels}), which the resumable-training "
                "guide asks for: torch_npu raises instead of warning when a stream synchronize fails during a "
                "host/device copy",
                fix,
            )


def _label(job: Job) -> str:
    node = job.manifest.label("fault-scheduling") if job.manifest is not None else None
    return node.value if node is not None else ""
