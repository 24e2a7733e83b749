"""RL402: Checkpoints are loaded with torch.load from storage; MindIO ACP restores them from memory."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Project
from recovery_lint.rule import Case, Rule, examples

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

_TRAIN_FIXED_SAVE_ONLY = DEEPSPEED_TRAIN.replace(
    "import deepspeed\n", "import deepspeed\nimport mindio_acp\n", 1
).replace("    torch.save({", "    mindio_acp.save({")


class CheckpointLoadFromStorage(Rule):
    code = "RL402"
    name = "checkpoint-load-from-storage"
    phase = "checkpoint"
    severity = Severity.WARNING
    premises = ("pytorch", "without-mindio-tft", "mindio-acp-stack", "mindio")
    fix_availability = "sometimes"
    summary = "Checkpoints are loaded with torch.load from storage; MindIO ACP restores them from memory"
    what = """
The resume path of a training job reading its rollback checkpoint with `torch.load(...)` (through
any import alias), on a stack MindIO ACP supports: a load whose path, function or condition says
resume, checkpoint, latest… (not pretrained weights, a fine-tune or previous-stage starting point,
a teacher, a best model, a dataset cache or a vocabulary) in a job whose training loop saves that
checkpoint again and again (RL401). The stack and version premises are RL401's: DeepSpeed or
MindSpeed-LLM 2.3 with torch 2.7.1 and MindIO 6.0.RC2 or later, declared in the repository or the
configuration; where they are unknown the advice is withheld.

Also reported, whatever else holds: a `torch.load` that reads a path the job's `mindio_acp.save`
writes (written the same way): MindIO ACP saves in a format of its own, which `torch.load` cannot
read, so the job could not resume.

A MindSpeed-LLM 2.3 job on Megatron loads through Megatron's checkpoint code; it uses MindIO ACP
when it imports `mindio_acp` and its launch environment sets `MINDIO_AUTO_PATCH_MEGATRON=true` (or
`1`); otherwise one finding points at the `mindspeed_llm` import. Not reported with process-level
recovery, hot switch, a MindSpeed-LLM launch with its high availability on (`--enable-high-availability`,
`HIGH_AVAILABILITY`) or an entry importing `mindio_ttp` (MindIO TFT), nor for MindSpore or TensorFlow jobs.
"""
    why = """
After a fault every rank of the rescheduled job reads its checkpoint back from shared storage
before training resumes; for a large model that read is a long part of the recovery, and all
ranks contend for the same storage. MindIO ACP keeps the checkpoints it saved in a memory file
system, so `mindio_acp.load` restores them from memory instead of storage.
"""
    example = """
```python
if os.path.exists(CKPT):
    state = torch.load(CKPT, map_location="cpu")    # RL402
```
Use instead (together with `mindio_acp.save` for the checkpoint, RL401):
```python
import mindio_acp
state = mindio_acp.load(CKPT, map_location="cpu")
```
"""
    fix = """
Unsafe, and the same fix as RL401: the job's rollback saves and resume loads are converted together
(`torch.save(` to `mindio_acp.save(`, `torch.load(` to `mindio_acp.load(`, `import mindio_acp`
added), only when they write the checkpoint path the same way, the calls fit the API
(`map_location` None or `'cpu'`) and no other launch runs the edited file. A load left reading a
path that `mindio_acp.save` writes gets `torch.load(` to `mindio_acp.load(` alone (unsafe too).
`mindio_acp.load` reads `torch.save` files as well, through `torch.load` with `weights_only=True`,
which refuses pickled objects other than tensors and plain containers: checkpoints written before
the change may need `mindio_acp.convert` or a new save.
"""
    sources = (
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/03_usage_guidance "
        "(replace torch.load with mindio_acp.load; MindSpeed-LLM: MINDIO_AUTO_PATCH_MEGATRON=true)",
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/05_api_reference "
        "(mindio_acp.load(path, open_way='memfs', map_location=None))",
        "Ascend/mind-cluster component/mindio/acp: acc_io.py (map_location 'cpu' only), read_handler.py "
        "(torch.load fallback with weights_only), serialization.py (MindIO ACP's own format)",
        "MindCluster docs: 05_configuring_training_recovery Tables 5/6 (MindIO and MindCluster 6.0.RC2 or later)",
    )
    cases = examples(
        lambda: (
            Case(
                title="the resume load of a DeepSpeed job's rollback checkpoint: one joint fix with the save",
                files={"train.sh": DEEPSPEED_LAUNCH, "train.py": DEEPSPEED_TRAIN, "requirements.txt": DEEPSPEED_PINS},
                expect=("train.py:18:17",),
                unsafe=True,
                fixed={"train.py": DEEPSPEED_TRAIN_ACP},
            ),
            Case(
                title="a save converted without its load: torch.load cannot read MindIO ACP's format",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "train.py": _TRAIN_FIXED_SAVE_ONLY,
                    "requirements.txt": DEEPSPEED_PINS,
                },
                expect=("train.py:19:17",),
                unsafe=True,
                fixed={
                    "train.py": DEEPSPEED_TRAIN_ACP.replace(
                        "import deepspeed\nimport mindio_acp\n", "import deepspeed\nimport mindio_acp\n"
                    )
                },
            ),
            Case(
                title="map_location=torch.device('cpu') is not what mindio_acp.load takes: reported, no fix",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "requirements.txt": DEEPSPEED_PINS,
                    "train.py": DEEPSPEED_TRAIN.replace('map_location="cpu"', "map_location=torch.device('cpu')"),
                },
                expect=("train.py:18:17",),
                unsafe=True,
                fixed={"train.py": DEEPSPEED_TRAIN.replace('map_location="cpu"', "map_location=torch.device('cpu')")},
            ),
            Case(
                title="pretrained weights loaded for a fine-tune are no resume",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "requirements.txt": DEEPSPEED_PINS,
                    "train.py": DEEPSPEED_TRAIN.replace(
                        "    start = 0\n",
                        "    start = 0\n    if args.pretrained:\n        engine.module.load_state_dict(torch.load(args.pretrained))\n",
                    )
                    .replace(
                        'state = torch.load(CKPT, map_location="cpu")',
                        'state = mindio_acp.load(CKPT, map_location="cpu")',
                    )
                    .replace("    torch.save({", "    mindio_acp.save({")
                    .replace("import deepspeed\n", "import deepspeed\nimport mindio_acp\n"),
                },
            ),
            Case(
                title="no rollback save in the job: its loads are no resume of a checkpoint it writes",
                files={
                    "train.sh": DEEPSPEED_LAUNCH,
                    "requirements.txt": DEEPSPEED_PINS,
                    "train.py": "import deepspeed\nimport torch\n\nstate = torch.load(args.resume_ckpt)\n",
                },
            ),
            Case(
                title="versions not declared: withheld",
                files={"train.sh": DEEPSPEED_LAUNCH, "train.py": DEEPSPEED_TRAIN},
            ),
            Case(
                title="MindSpeed-LLM 2.3 without MindIO ACP: the same finding and fix as RL401",
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
        )
    )

    def check_project(self, project: Project):
        yield from findings(
            self,
            project,
            "load",
            "reads the checkpoint back from storage after every fault; MindIO ACP's mindio_acp.load restores the "
            "checkpoints it saved from memory",
            "after a fault Megatron loads the checkpoint back from storage with torch.load instead of restoring it "
            "from memory",
        )
