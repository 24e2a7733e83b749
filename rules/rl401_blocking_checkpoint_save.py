"""RL401: Checkpoints are saved with torch.save, which blocks training; MindIO ACP saves asynchronously."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job, Project
from recovery_lint.rule import Case, Rule, examples

from . import _phases
from ._examples import (
    DEEPSPEED_LAUNCH,
    DEEPSPEED_PINS,
    DEEPSPEED_TRAIN,
    DEEPSPEED_TRAIN_ACP,
    MINDSPEED_ENTRY,
    MINDSPEED_PINS,
)
from ._examples import PYTORCH_VCJOB as _VCJOB
from ._mindio import findings

_PROCESS_ACJOB = (
    _VCJOB.replace("batch.volcano.sh/v1alpha1", "mindxdl.gitee.com/v1")
    .replace("kind: Job", "kind: AscendJob")
    .replace(
        '"grace"\n',
        '"grace"\n    framework: pytorch\n    process-recover-enable: "on"\n  annotations:\n    recover-strategy: "recover"\n',
    )
)

_HOT_SWITCH_ACJOB = (
    _VCJOB.replace("batch.volcano.sh/v1alpha1", "mindxdl.gitee.com/v1")
    .replace("kind: Job", "kind: AscendJob")
    .replace('"grace"\n', '"grace"\n    framework: pytorch\n    subHealthyStrategy: hotSwitch\n')
)


class BlockingCheckpointSave(Rule):
    code = "RL401"
    name = "blocking-checkpoint-save"
    phase = "checkpoint"
    severity = Severity.WARNING
    premises = ("pytorch", "without-mindio-tft", "mindio-acp-stack", "mindio")
    fix_availability = "sometimes"
    summary = "Checkpoints are saved with torch.save, which blocks training; MindIO ACP saves asynchronously"
    what = """
The rollback checkpoint of a training job saved with `torch.save(...)` (through any import alias),
on a stack MindIO ACP supports. The rollback checkpoint is the training state (a model or
optimizer state dict, a checkpoint dict) that the training loop saves again and again (the call is
in a loop, or in a function a loop of the same file calls) and that the job's resume path reads back
(a `torch.load` on the resume path of the same job). A best model, a final export, a weights file
written after training, small auxiliary state and a job with no resume path are not reported.

MindIO ACP's guide supports fixed versions of DeepSpeed, X1 and MindSpeed-LLM only, with torch
2.7.1: the finding needs the job's entry to import `deepspeed` (or its launcher to be `deepspeed`)
or `mindspeed_llm`, the versions to be declared (a pin, a README version table, or
`versions.torch` / `versions.mindspeed-llm` / `versions.mindio` in the configuration) and MindIO to
be 6.0.RC2 or later. A job whose versions are not declared is not guessed about: the run ends with
the keys that would settle it.

A MindSpeed-LLM 2.3 job on Megatron saves through Megatron's checkpoint code; it uses MindIO ACP
when it imports `mindio_acp` and its launch environment sets `MINDIO_AUTO_PATCH_MEGATRON=true` (or
`1`). Otherwise one finding points at the `mindspeed_llm` import (or at the `mindio_acp` import
when only the variable is missing). Not reported with process-level recovery or an entry that
imports `mindio_ttp` (MindIO TFT, which cannot be installed beside ACP), nor where MindSpeed-LLM's
high availability runs TFT: a launch passing `--enable-high-availability` (or another of its
switches), `HIGH_AVAILABILITY` in the launch environment, or an AscendJob with
`subHealthyStrategy: hotSwitch` (Ascend Operator sets `HIGH_AVAILABILITY=recover` for it). Nor for
MindSpore or TensorFlow jobs.
"""
    why = """
`torch.save` serializes the whole state and writes it to shared storage while training waits.
Because every save stalls the job, checkpoints are taken rarely, and a fault rolls training back
to the last one: all steps since then are computed again. MindIO ACP's `mindio_acp.save` writes
the checkpoint into a memory file system and persists it in the background, so checkpoints can be
taken often and a fault loses far fewer steps.
"""
    example = """
```python
for epoch in range(start, epochs):
    train_one_epoch(engine)
    torch.save({"model": engine.module.state_dict(), "epoch": epoch}, CKPT)    # RL401
```
Use instead:
```python
import mindio_acp
...
    mindio_acp.save({"model": engine.module.state_dict(), "epoch": epoch}, CKPT)
```
and read it back with `mindio_acp.load(CKPT, map_location="cpu")`. For MindSpeed-LLM, add
`import mindio_acp` after `from mindspeed_llm import megatron_adaptor` and
`export MINDIO_AUTO_PATCH_MEGATRON=true` to the launch script.
"""
    fix = """
Unsafe (the MindIO ACP wheel and its server must be installed on the nodes). `mindio_acp.save`
writes MindIO ACP's own format, which `torch.load` cannot read, so a save is converted only
together with every load of the job's resume path: each `torch.save(` becomes `mindio_acp.save(`
and each `torch.load(` becomes `mindio_acp.load(`, arguments kept, with `import mindio_acp` added
where an import sorter keeps it, in one fix. Offered only when the saves and loads write their
checkpoint path the same way (the only way to show that the loads read what the saves write), the
calls fit the API (`mindio_acp.save(obj, path)` with a path string; `mindio_acp.load(path,
map_location=None or 'cpu')`), and no other launch (a test, a CI script, a job these premises do
not hold for) runs the edited file, which the unconditional import would reach. Otherwise the
finding says why there is no fix. For MindSpeed-LLM the fix inserts `import mindio_acp` after the
`mindspeed_llm` import and `export MINDIO_AUTO_PATCH_MEGATRON=true` before every launch command
(a container `env` entry when there is no script).
"""
    sources = (
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/03_usage_guidance "
        "(只支持DeepSpeed框架、X1框架、MindSpeed-LLM、K8s的固定版本; replace torch.save/torch.load; MindSpeed-LLM "
        "2.3.0 branch: import mindio_acp, MINDIO_AUTO_PATCH_MEGATRON=true)",
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/02_installation_and_deployment "
        "(Torch 2.7.1)",
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/05_api_reference "
        "(mindio_acp.save(obj, path, open_way='memfs'); mindio_acp.load map_location None or 'cpu')",
        "Ascend/mind-cluster component/mindio/acp: serialization.py (MindIO ACP's own file format, ending "
        "b'mindio\\x00')",
        "MindCluster docs: 05_configuring_training_recovery Tables 5/6 (MindIO and MindCluster 6.0.RC2 or later)",
        "MindCluster docs: fault_recovery_acceleration/03_usage_guidance (ACP incompatible with MindIO TFT in "
        "MindSpeed-LLM)",
    )
    cases = examples(
        lambda: (
            Case(
                title="a DeepSpeed job's rollback checkpoint, saved in the loop and read back on resume: one joint fix",
                files={"train.sh": DEEPSPEED_LAUNCH, "train.py": DEEPSPEED_TRAIN, "requirements.txt": DEEPSPEED_PINS},
                expect=("train.py:11:5",),
                unsafe=True,
                fixed={"train.py": DEEPSPEED_TRAIN_ACP},
            ),
            Case(
                title="a best model and a final export are no rollback checkpoint",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "requirements.txt": DEEPSPEED_PINS,
                    "train.py": "import deepspeed\nimport torch\n\nfor epoch in range(10):\n    acc = step()\n"
                    "    if acc > best:\n        torch.save(model.state_dict(), 'model_best.pth')\n"
                    "torch.save(model.state_dict(), 'final.pth')\nif args.resume:\n"
                    "    model.load_state_dict(torch.load(args.resume))\n",
                },
            ),
            Case(
                title="a fine-tune script: a pretrained load and per-epoch saves, but no resume path",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "requirements.txt": DEEPSPEED_PINS,
                    "train.py": "import deepspeed\nimport torch\n\nif args.pretrained:\n"
                    "    model.load_state_dict(torch.load(args.pretrained))\nfor epoch in range(3):\n"
                    "    step()\n    torch.save(model.state_dict(), f'ckpt_{epoch}.pt')\n",
                },
            ),
            Case(
                title="the resume load reads a path written otherwise: reported, no fix (no load is shown to match)",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "requirements.txt": DEEPSPEED_PINS,
                    "train.py": DEEPSPEED_TRAIN.replace("torch.load(CKPT", "torch.load(args.resume"),
                },
                expect=("train.py:11:5",),
                unsafe=True,
                fixed={"train.py": DEEPSPEED_TRAIN.replace("torch.load(CKPT", "torch.load(args.resume")},
            ),
            Case(
                title="a test script also runs the entry: the import would reach it, so no fix",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "tests/run_ckpt.sh": "python3 ../train.py --epochs 1\n",
                    "train.py": DEEPSPEED_TRAIN,
                    "requirements.txt": DEEPSPEED_PINS,
                },
                expect=("train.py:11:5",),
                unsafe=True,
                fixed={"train.py": DEEPSPEED_TRAIN},
            ),
            Case(
                title="plain PyTorch: MindIO ACP documents DeepSpeed, X1 and MindSpeed-LLM only",
                files={
                    "train.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
                    "train.py": DEEPSPEED_TRAIN.replace("import deepspeed\n", "").replace(
                        "engine, optimizer, _, _ = deepspeed.initialize(model=torch.nn.Linear(4, 4).npu())",
                        "engine, optimizer = build()",
                    ),
                    "requirements.txt": DEEPSPEED_PINS,
                },
            ),
            Case(
                title="versions not declared: withheld (declare versions.torch and versions.mindio)",
                files={"train.sh": DEEPSPEED_LAUNCH, "train.py": DEEPSPEED_TRAIN},
            ),
            Case(
                title="the versions in the configuration",
                files={"train.sh": DEEPSPEED_LAUNCH, "train.py": DEEPSPEED_TRAIN},
                config={"versions": {"torch": "2.7.1", "mindio": "7.3.0"}},
                expect=("train.py:11:5",),
                unsafe=True,
                fixed={"train.py": DEEPSPEED_TRAIN_ACP},
            ),
            Case(
                title="torch 2.1.0: MindIO ACP's installation table names torch 2.7.1",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "train.py": DEEPSPEED_TRAIN,
                    "requirements.txt": DEEPSPEED_PINS.replace("2.7.1", "2.1.0"),
                },
            ),
            Case(
                title="MindIO known to be older than 6.0.RC2",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "train.py": DEEPSPEED_TRAIN,
                    "requirements.txt": DEEPSPEED_PINS.replace("7.3.0", "6.0.RC1"),
                },
            ),
            Case(
                title="a unit test is not training",
                files={
                    "requirements.txt": DEEPSPEED_PINS,
                    "tests/test_ckpt.py": "import unittest\nimport deepspeed\nimport torch\n\n\n"
                    "class T(unittest.TestCase):\n    def test_save(self):\n"
                    "        for i in range(2):\n            torch.save(model.state_dict(), '/tmp/ckpt.pt')\n",
                },
            ),
            Case(
                title="MindSpeed-LLM 2.3 without MindIO ACP: import it and turn on the Megatron patch",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "#!/bin/bash\ntorchrun pretrain_gpt.py\n",
                    "pretrain_gpt.py": MINDSPEED_ENTRY,
                    "requirements.txt": MINDSPEED_PINS,
                },
                expect=("pretrain_gpt.py:2",),
                unsafe=True,
                fixed={
                    "pretrain_gpt.py": MINDSPEED_ENTRY.replace(
                        "from mindspeed_llm import megatron_adaptor\n",
                        "from mindspeed_llm import megatron_adaptor\nimport mindio_acp\n",
                    ),
                    "train.sh": "#!/bin/bash\nexport MINDIO_AUTO_PATCH_MEGATRON=true\ntorchrun pretrain_gpt.py\n",
                },
            ),
            Case(
                title="one MindSpeed-LLM entry, three launch scripts: one finding, one fix for all of them",
                files={
                    "pretrain_gpt.py": MINDSPEED_ENTRY,
                    "requirements.txt": MINDSPEED_PINS,
                    **{
                        f"examples/run{k}.sh": "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py\n"
                        for k in (1, 2, 3)
                    },
                },
                expect=("pretrain_gpt.py:2",),
                unsafe=True,
                fixed={
                    "pretrain_gpt.py": MINDSPEED_ENTRY.replace(
                        "from mindspeed_llm import megatron_adaptor\n",
                        "from mindspeed_llm import megatron_adaptor\nimport mindio_acp\n",
                    ),
                    **{
                        f"examples/run{k}.sh": "export MINDIO_AUTO_PATCH_MEGATRON=true\n"
                        "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py\n"
                        for k in (1, 2, 3)
                    },
                },
            ),
            Case(
                title="MindSpeed-LLM importing mindio_acp with the patch off: a value set explicitly",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "export MINDIO_AUTO_PATCH_MEGATRON=false\ntorchrun pretrain_gpt.py\n",
                    "requirements.txt": MINDSPEED_PINS,
                    "pretrain_gpt.py": MINDSPEED_ENTRY.replace(
                        "megatron_adaptor\n", "megatron_adaptor\nimport mindio_acp  # checkpoint acceleration\n"
                    ),
                },
                expect=("pretrain_gpt.py:3",),
                unsafe=True,
                fixed={"train.sh": "export MINDIO_AUTO_PATCH_MEGATRON=true\ntorchrun pretrain_gpt.py\n"},
            ),
            Case(
                title="MindSpeed-LLM 26.1: the ACP guide is written for the 2.3 branch",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "#!/bin/bash\ntorchrun pretrain_gpt.py\n",
                    "pretrain_gpt.py": MINDSPEED_ENTRY,
                    "requirements.txt": MINDSPEED_PINS.replace("2.3.0", "26.1.0"),
                },
            ),
            Case(
                title="MindSpeed-LLM's FSDP2 path saves through its own checkpoint manager: no Megatron to patch",
                files={
                    "train.sh": "#!/bin/bash\ntorchrun --nnodes 2 --nproc_per_node 8 train_fsdp2.py\n",
                    "requirements.txt": MINDSPEED_PINS,
                    "train_fsdp2.py": "import torch\nfrom mindspeed_llm.fsdp2.train.trainer import Trainer\n\n"
                    "if __name__ == '__main__':\n    Trainer().train()\n",
                },
            ),
            Case(
                title="MindSpeed-LLM using MindIO ACP",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "export MINDIO_AUTO_PATCH_MEGATRON=true\ntorchrun pretrain_gpt.py\n",
                    "requirements.txt": MINDSPEED_PINS,
                    "pretrain_gpt.py": MINDSPEED_ENTRY.replace(
                        "megatron_adaptor\n", "megatron_adaptor\nimport mindio_acp\n"
                    ),
                },
            ),
            Case(
                title="saves already through MindIO ACP",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "requirements.txt": DEEPSPEED_PINS,
                    "train.py": DEEPSPEED_TRAIN_ACP,
                },
            ),
            Case(
                title="process-level recovery (an AscendJob) uses MindIO TFT, which ACP does not combine with",
                files={
                    "job.yaml": _PROCESS_ACJOB,
                    "train.sh": "deepspeed train.py\n",
                    "train.py": DEEPSPEED_TRAIN,
                    "requirements.txt": DEEPSPEED_PINS,
                },
            ),
            Case(
                title="MindSpeed-LLM launched with --enable-high-availability runs MindIO TFT: no ACP advice",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "#!/bin/bash\ntorchrun pretrain_gpt.py --enable-high-availability\n",
                    "pretrain_gpt.py": MINDSPEED_ENTRY,
                    "requirements.txt": MINDSPEED_PINS,
                },
            ),
            Case(
                title="HIGH_AVAILABILITY in the launch environment turns on MindIO TFT",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "#!/bin/bash\nexport HIGH_AVAILABILITY=dump\ntorchrun pretrain_gpt.py\n",
                    "pretrain_gpt.py": MINDSPEED_ENTRY,
                    "requirements.txt": MINDSPEED_PINS,
                },
            ),
            Case(
                title="hot switch on an AscendJob: Ascend Operator sets HIGH_AVAILABILITY=recover (MindIO TFT)",
                files={
                    "job.yaml": _HOT_SWITCH_ACJOB,
                    "train.sh": "#!/bin/bash\ntorchrun pretrain_gpt.py\n",
                    "pretrain_gpt.py": MINDSPEED_ENTRY,
                    "requirements.txt": MINDSPEED_PINS,
                },
            ),
            Case(
                title="a MindSpore job gets no PyTorch advice",
                files={
                    "job.yaml": _VCJOB.replace("bash /job/code/train.sh", "msrun --worker_num=8 /job/code/train.py"),
                    "train.py": "import mindspore\nimport torch\n\ntorch.save({}, '/tmp/x.pt')\n",
                    "requirements.txt": DEEPSPEED_PINS,
                },
            ),
        )
    )

    @classmethod
    def phase_status(cls, job: Job) -> tuple[str, str]:
        return _phases.pytorch_only(job) or _phases.checkpoint(job)

    def check_project(self, project: Project):
        yield from findings(
            self,
            project,
            "save",
            "blocks training until the checkpoint is on storage, so checkpoints are rare and a fault rolls back further; "
            "MindIO ACP's mindio_acp.save writes to memory and persists in the background",
            "Megatron saves checkpoints with torch.save, which blocks training until they are on storage, so "
            "checkpoints are rare and a fault rolls back further",
        )
