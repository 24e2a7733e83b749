"""RL212: a setting that cancels a recovery feature the job turns on."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job, LaunchCommand
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.span import Span

from ._mindio_names import ACP, AUTO_PATCH, AUTO_PATCH_ON, TTP
from ._watchdog import HOT_SWITCH, HOT_SWITCH_LABEL

NO_CACHING = "PYTORCH_NO_NPU_MEMORY_CACHING"
HA_FLAG = "--enable-high-availability"
HBM_FLAG = "--enable-hbmfault-repair"

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llama
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
  annotations:
    recover-strategy: "retry"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""
_ENTRY = "from mindspeed_llm import megatron_adaptor\nimport mindio_acp\nimport torch\n"
_LAUNCH = "torchrun --nproc_per_node 8 pretrain_gpt.py --enable-high-availability\n"


class RecoveryFeatureCancelled(Rule):
    code = "RL212"
    scorecard = MISCONFIGURED
    name = "recovery-feature-cancelled"
    phase = "rescheduling"
    severity = Severity.WARNING
    fix_availability = "none"
    summary = "A setting of the job cancels a recovery feature it turns on"
    what = """
Two settings the MindCluster docs say do not go together, in one training launch:

- MindIO ACP (asynchronous checkpoints: `mindio_acp` imported by the entry of a MindSpeed-LLM job,
  or `MINDIO_AUTO_PATCH_MEGATRON` on) with MindIO TFT (`--enable-high-availability`,
  `HIGH_AVAILABILITY`, or what Ascend Operator sets on a PyTorch AscendJob for a `recover-strategy`
  or for `subHealthyStrategy: hotSwitch`): "与MindIO TFT
  特性不兼容，无法同时安装使用"; with the automatic Megatron patch on, importing `mindio_acp` raises
  when `mindio_ttp` is installed, so the job stops at start-up (an error);
- `PYTORCH_NO_NPU_MEMORY_CACHING` set, to any value, in a job with online recovery (the `retry`
  strategy, `--enable-hbmfault-repair`, or `HIGH_AVAILABILITY` with `retry`): online recovery
  "仅在PYTORCH_NO_NPU_MEMORY_CACHING未配置时才能使用".
"""
    why = """
The feature the job was configured for does not run: with ACP and TFT together the training does
not start (or one of them is dropped), and without the caching allocator the on-chip memory fault
that online recovery repairs in place takes the slow path of a process restart or a rescheduling.
"""
    example = """
```bash
export PYTORCH_NO_NPU_MEMORY_CACHING=1        # RL212 with recover-strategy "retry"
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --enable-high-availability ...
```
Use instead: leave `PYTORCH_NO_NPU_MEMORY_CACHING` unset.
"""
    fix = """
No fix: which of the two features to keep is the user's choice.
"""
    sources = (
        "MindCluster docs: 07_references/01_optimizing_saving_and_loading_checkpoints/03_usage_guidance.md and "
        "00_fault_recovery_acceleration/03_usage_guidance.md (MindSpeed-LLM框架开启MindIO ACP…与MindIO TFT特性不兼容，"
        "无法同时安装使用)",
        "MindIO ACP: acc_checkpoint/megatron/megatron_patch.py (MindIO-ACP cannot be used together with MindIO-TTP "
        "when integrated with MindSpeed-LLM)",
        "MindCluster docs: 04_resumable_training/01_solutions_principles.md, 进程级在线恢复 (仅在"
        "PYTORCH_NO_NPU_MEMORY_CACHING未配置时才能使用此功能); 00_fault_recovery_acceleration/03_usage_guidance.md "
        "(--enable-hbmfault-repair)",
    )
    cases = examples(
        lambda: (
            Case(
                title="MindIO ACP with the automatic Megatron patch and TFT: the import raises",
                files={
                    "train.sh": f"export {AUTO_PATCH}=true\n" + _LAUNCH,
                    "pretrain_gpt.py": _ENTRY,
                },
                expect=("train.sh:1:8",),
            ),
            Case(
                title="MindIO ACP imported by a MindSpeed-LLM entry with TFT",
                files={"train.sh": _LAUNCH, "pretrain_gpt.py": _ENTRY},
                expect=("train.sh:1:45",),
            ),
            Case(
                title="MindIO ACP imported on an AscendJob with hot switch, which runs MindIO TFT",
                files={
                    "job.yaml": _ACJOB.replace(
                        '    fault-scheduling: "grace"\n  annotations:\n    recover-strategy: "retry"\n',
                        '    fault-scheduling: "grace"\n    subHealthyStrategy: hotSwitch\n',
                    ),
                    "train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py\n",
                    "pretrain_gpt.py": _ENTRY,
                },
                expect=("job.yaml:9:25",),
            ),
            Case(
                title="ACP without TFT",
                files={"train.sh": _LAUNCH.replace(" --enable-high-availability", ""), "pretrain_gpt.py": _ENTRY},
            ),
            Case(
                title="no memory caching with online recovery (retry)",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": f"export {NO_CACHING}=1\ntorchrun --nproc_per_node 8 pretrain_gpt.py\n",
                    "pretrain_gpt.py": "import torch\nfrom mindspeed_llm import megatron_adaptor\n",
                },
                expect=("train.sh:1:8",),
            ),
            Case(
                title="no memory caching without online recovery",
                files={
                    "job.yaml": _ACJOB.replace('"retry"', '"recover"'),
                    "train.sh": f"export {NO_CACHING}=1\ntorchrun --nproc_per_node 8 pretrain_gpt.py\n",
                    "pretrain_gpt.py": "import torch\nfrom mindspeed_llm import megatron_adaptor\n",
                },
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        seen: set[tuple[str, int]] = set()
        for launch in job.launches:
            for cmd in launch.commands:
                if not cmd.judged or cmd.entry is None:
                    continue
                for span, message, severity in self._conflicts(job, cmd):
                    if (span.path, span.start) not in seen:
                        seen.add((span.path, span.start))
                        yield self.report(span, message, severity=severity)

    def _conflicts(self, job: Job, cmd: LaunchCommand):
        words = {w.value: w for w in cmd.words if w.value}
        tft = _tft(job, cmd, words)
        acp = _acp(job, cmd)
        if tft is not None and acp is not None:
            span, said, raises = acp
            where, how = tft
            message = (
                f"{said} with MindIO TFT ({how}): the docs say MindIO ACP and TFT cannot be installed and used "
                "together in MindSpeed-LLM"
            )
            if raises:
                message += f"; with the automatic Megatron patch, importing {ACP} raises when {TTP} is installed"
            yield (span if raises or where is None else where), message, Severity.ERROR if raises else Severity.WARNING
        caching = cmd.env.get(NO_CACHING)
        retry = _online_recovery(job, cmd, words)
        if caching is not None and caching.span is not None and retry:
            yield (
                caching.span,
                f"{NO_CACHING} is set ({caching.known or 'at run time'}) while {retry} is on: online recovery works "
                "only when it is not set, so an on-chip memory fault is not repaired in place",
                None,
            )


def _acp(job: Job, cmd: LaunchCommand) -> tuple[Span, str, bool] | None:
    """Where the launch turns MindIO ACP on in a MindSpeed-LLM job, how, and whether the import raises
    beside MindIO TTP (the automatic Megatron patch)."""
    patch = cmd.env.get(AUTO_PATCH)
    if patch is not None and patch.span is not None and (patch.known or "").strip().lower() in AUTO_PATCH_ON:
        return patch.span, f"{AUTO_PATCH}={patch.known} (MindIO ACP patching Megatron)", True
    entry = cmd.entry_file
    if entry is not None and entry.imports_module("mindspeed_llm") and entry.imports_module(ACP):
        imp = entry.first_top_import(ACP)
        span = imp.span if imp is not None else entry.imports[0].span
        return span, f"the entry {entry.source.path} imports {ACP} (MindIO ACP)", False
    return None


def _tft(job: Job, cmd: LaunchCommand, words) -> tuple[Span | None, str] | None:
    """Where and how the launch turns MindIO TFT on: the flag, HIGH_AVAILABILITY, or the environment
    Ascend Operator sets for a recover-strategy."""
    flag = words.get(HA_FLAG)
    if flag is not None:
        return flag.span, HA_FLAG
    env = cmd.env.get("HIGH_AVAILABILITY")
    if env is not None and env.known:
        return env.span, f"HIGH_AVAILABILITY={env.known}"
    strategy = _recover_strategy(job)
    if strategy is not None and job.context.framework == "pytorch":
        return None, f"the HIGH_AVAILABILITY Ascend Operator sets for recover-strategy {strategy.value}"
    hot = job.manifest.hot_switch if job.manifest is not None else None
    if hot is not None and job.context.framework == "pytorch":
        return hot.span, f"the HIGH_AVAILABILITY=recover Ascend Operator sets for {HOT_SWITCH_LABEL}: {HOT_SWITCH}"
    return None


def _online_recovery(job: Job, cmd: LaunchCommand, words) -> str:
    """What turns online recovery (retry) on for the launch, or ''."""
    if HBM_FLAG in words:
        return HBM_FLAG
    env = cmd.env.get("HIGH_AVAILABILITY")
    if env is not None and env.known and "retry" in env.known.lower().split(","):
        return f"HIGH_AVAILABILITY={env.known}"
    strategy = _recover_strategy(job)
    if strategy is not None and "retry" in strategy.value.split(","):
        return f'recover-strategy "{strategy.value}" (retry)'
    return ""


def _recover_strategy(job: Job):
    """The AscendJob's recover-strategy annotation, which Ascend Operator turns into HIGH_AVAILABILITY."""
    return job.manifest.recover_strategy if job.manifest is not None else None
