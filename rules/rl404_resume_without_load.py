"""RL404: a rescheduled MindSpeed-LLM (Megatron) job that saves checkpoints but never loads one."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import edit
from recovery_lint.jobs import Job, LaunchCommand
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.shellwords import PURE_VARIABLE
from recovery_lint.sources.shell import Word

from ._common import pytorch_launches, written_in_command
from ._examples import PYTORCH_VCJOB as _VCJOB

SAVE = "--save"
LOAD = ("--load",)
STACKS = ("mindspeed_llm", "megatron")  # the entries whose --save/--load are Megatron's checkpoint arguments

_ENTRY = "import torch\nfrom mindspeed_llm import megatron_adaptor\nfrom megatron.training import pretrain\n"
_SCRIPT = """\
#!/bin/bash
CKPT_SAVE_DIR=/ckpt/llama
torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py \\
    --micro-batch-size 1 \\
    --save ${CKPT_SAVE_DIR} \\
    --save-interval 500
"""


class ResumeWithoutLoad(Rule):
    code = "RL404"
    scorecard = MISCONFIGURED
    name = "resume-without-load"
    phase = "checkpoint"
    severity = Severity.WARNING
    premises = ("rescheduling",)
    fix_availability = "sometimes"
    summary = "A rescheduled Megatron job saves checkpoints but loads none: each recovery starts from iteration 0"
    what = """
A training launch of a MindSpeed-LLM (or Megatron) entry, in a job the cluster reschedules after a
fault (fault-scheduling `grace` or `force`), that passes `--save` but no `--load`. The MindCluster
recovery guide calls `--load` the one switch of training-process recovery ("“--load”是训练进程恢复
的统一开关，打开后训练进程恢复才生效"): without it a rescheduled or recovered process starts the
training again from its first iteration, whatever it saved. A launch whose arguments hold a
variable with an unknown value is not judged (`--load` may be in it).
"""
    why = """
Rescheduling brings the job back in minutes, but a job that does not load its checkpoint then
repeats every step it had already done: the recovery costs the whole run so far instead of the
steps since the last checkpoint.
"""
    example = """
```bash
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py ... --save ${CKPT_SAVE_DIR}     # RL404: no --load
```
Use instead:
```bash
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py ... --save ${CKPT_SAVE_DIR} --load ${CKPT_SAVE_DIR}
```
"""
    fix = """
Unsafe: adds `--load` with the value of `--save` right after it, where both are written in the
launch command itself (not in a variable holding the arguments). Megatron starts from iteration 0
when the folder holds no checkpoint yet and resumes from the latest one otherwise; review it for a
job meant to start afresh on every run.
"""
    sources = (
        "MindCluster docs: 04_resumable_training/03_configuration/03_configuring_training_recovery.md, 配置存储CKPT加载 "
        "(“--load”是训练进程恢复的统一开关，打开后训练进程恢复才生效)",
        "Megatron-LM megatron/training/checkpointing.py load_checkpoint (no tracker file: starts from iteration 0)",
    )
    cases = examples(
        lambda: (
            Case(
                title="a rescheduled MindSpeed-LLM job that saves but never loads: --load added after --save",
                files={"job.yaml": _VCJOB, "train.sh": _SCRIPT, "pretrain_gpt.py": _ENTRY},
                expect=("train.sh:5:5",),
                unsafe=True,
                fixed={
                    "train.sh": _SCRIPT.replace(
                        "--save ${CKPT_SAVE_DIR}", "--save ${CKPT_SAVE_DIR} --load ${CKPT_SAVE_DIR}"
                    )
                },
            ),
            Case(
                title="--load given",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": _SCRIPT.replace("--save-interval 500", "--save-interval 500 --load /ckpt/llama"),
                    "pretrain_gpt.py": _ENTRY,
                },
            ),
            Case(
                title="the arguments in a variable whose value is not known: --load may be there",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": _SCRIPT.replace("    --micro-batch-size 1 \\\n", "    $EXTRA_ARGS \\\n"),
                    "pretrain_gpt.py": _ENTRY,
                },
            ),
            Case(
                title="--save in a variable of known value: reported, no fix",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": '#!/bin/bash\nOUTPUT_ARGS="--save /ckpt/llama --save-interval 500"\n'
                    "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py $OUTPUT_ARGS\n",
                    "pretrain_gpt.py": _ENTRY,
                },
                expect=("train.sh:3",),
                unsafe=True,
                fixed={
                    "train.sh": '#!/bin/bash\nOUTPUT_ARGS="--save /ckpt/llama --save-interval 500"\n'
                    "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py $OUTPUT_ARGS\n"
                },
            ),
            Case(
                title="a job the cluster does not reschedule",
                files={"train.sh": _SCRIPT, "pretrain_gpt.py": _ENTRY},
            ),
            Case(
                title="another entry's --save is not Megatron's",
                files={"job.yaml": _VCJOB, "train.sh": _SCRIPT, "pretrain_gpt.py": "import torch\nimport torch_npu\n"},
            ),
        )
    )

    def check_job(self, job: Job):
        for _launch, cmd in pytorch_launches(job):
            entry = cmd.entry_file
            if entry is None or not entry.imports_module(*STACKS):
                continue
            arguments = _arguments(cmd)
            if arguments is None:
                continue
            save = next(
                (k for k, w in enumerate(arguments) if w.value == SAVE or (w.value or "").startswith(SAVE + "=")), None
            )
            if save is None or any((w.value or "").split("=")[0] in LOAD for w in arguments):
                continue
            word = arguments[save]
            yield self.report(
                word.span if written_in_command(cmd, word) else cmd.command.span,
                f"{SAVE} without --load in a job the cluster reschedules: --load is the switch of training-process "
                "recovery, so after a fault the training starts again from its first iteration",
                _fix(cmd, arguments, save),
            )


def _arguments(cmd: LaunchCommand) -> list[Word] | None:
    """The words after the entry; None when one of them is a variable whose value is not known."""
    at = cmd.entry_index
    if at is None:
        return None
    after = cmd.words[at + 1 :]
    if any(w.value is None and PURE_VARIABLE.match(w.text) for w in after):
        return None
    return after


def _fix(cmd: LaunchCommand, arguments: list[Word], save: int):
    """``--load VALUE`` after the ``--save VALUE`` written in the command itself."""
    word = arguments[save]
    src = cmd.script.source
    if "=" in word.text:
        value_word = word
    elif save + 1 < len(arguments):
        value_word = arguments[save + 1]
    else:
        return None
    if not (written_in_command(cmd, word) and written_in_command(cmd, value_word)):
        return None
    written = src.text[value_word.span.start : value_word.span.end]
    value = written.split("=", 1)[1] if value_word is word else written
    end = value_word.span.end
    return unsafe_fix(f"Add --load {value} after --save", edit(src, end, end, f" --load {value}"))
