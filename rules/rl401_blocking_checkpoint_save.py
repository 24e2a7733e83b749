from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Project
from recovery_lint.rule import Case, Rule, examples

from ._examples import PYTORCH_VCJOB as _VCJOB
from ._mindio import findings

_TRAIN = """\
import os

import torch
import torch_npu  # registers the NPU device


def save_checkpoint(model, step, root):
    path = os.path.join(root, f"iter_{step:07d}.pt")
    torch.save({"model": model.state_dict(), "step": step}, path)


if __name__ == "__main__":
    save_checkpoint(torch.nn.Linear(4, 4).npu(), 0, "/ckpt")
"""

_TRAIN_FIXED = _TRAIN.replace("import torch\n", "import mindio_acp\nimport torch\n", 1).replace(
    "    torch.save(", "    mindio_acp.save("
)

_LAUNCH = "torchrun --nproc_per_node 8 train.py\n"
_PROCESS_ACJOB = (
    _VCJOB.replace("batch.volcano.sh/v1alpha1", "mindxdl.gitee.com/v1")
    .replace("kind: Job", "kind: AscendJob")
    .replace('"grace"\n', '"grace"\n    framework: pytorch\n    process-recover-enable: "on"\n')
)
_MINDSPEED = """\
import torch
from mindspeed_llm import megatron_adaptor
from megatron.training import pretrain


if __name__ == "__main__":
    pretrain()
"""


class BlockingCheckpointSave(Rule):
    code = "RL401"
    name = "blocking-checkpoint-save"
    phase = "checkpoint"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "Checkpoints are saved with torch.save, which blocks training; MindIO ACP saves asynchronously"
    what = """
A `torch.save(...)` call (through any import alias) in PyTorch training code (a Python file of the
job that imports `torch` or `torch_npu`) of a job that does not use MindIO ACP: none of the job's
Python files imports `mindio_acp`. For a standalone Python file, the file itself decides.

A MindSpeed-LLM job on Megatron (an entry imports `mindspeed_llm` with its Megatron adaptor or
Megatron itself) saves through Megatron's checkpoint code; it
uses MindIO ACP when it imports `mindio_acp` and its launch environment sets
`MINDIO_AUTO_PATCH_MEGATRON=true` (or `1`). Otherwise one finding points at the `mindspeed_llm`
import (or at the `mindio_acp` import when only the variable is missing).

Not reported when MindIO ACP cannot help: a job with process-level recovery or one that imports
`mindio_ttp` (MindIO TFT, with which ACP's periodic-checkpoint acceleration is documented as
incompatible in MindSpeed-LLM), MindIO or MindCluster known to be older than 6.0.RC2, and
MindSpore or TensorFlow jobs. Unknown versions get the advice, and the message says so.
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
import torch
torch.save(state, f"/ckpt/iter_{step}.pt")    # RL401
```
Use instead:
```python
import torch
import mindio_acp
mindio_acp.save(state, f"/ckpt/iter_{step}.pt")
```
For MindSpeed-LLM, add `import mindio_acp` after `from mindspeed_llm import megatron_adaptor`
and `export MINDIO_AUTO_PATCH_MEGATRON=true` to the launch script.
"""
    fix = """
Unsafe (the MindIO ACP wheel and its server must be installed on the nodes, and
`mindio_acp.initialize()` may need to be called): `torch.save(` becomes `mindio_acp.save(` with
the arguments kept, and `import mindio_acp` is inserted after the module-level torch import when
the file lacks it, both in one fix. Offered only for `torch.save(obj, path)` with two positional
arguments, the form `mindio_acp.save(obj, path)` accepts. For MindSpeed-LLM the fix inserts
`import mindio_acp` after the `mindspeed_llm` import and `export MINDIO_AUTO_PATCH_MEGATRON=true`
before every launch command (a container `env` entry when there is no script).
"""
    sources = (
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/03_usage_guidance "
        "(replace torch.save/torch.load; MindSpeed-LLM: import mindio_acp, MINDIO_AUTO_PATCH_MEGATRON=true)",
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/05_api_reference "
        "(mindio_acp.save(obj, path, open_way='memfs'))",
        "MindCluster docs: 05_configuring_training_recovery Tables 5/6 (MindIO and MindCluster 6.0.RC2 or later)",
        "MindCluster docs: fault_recovery_acceleration/03_usage_guidance (ACP incompatible with MindIO TFT in "
        "MindSpeed-LLM)",
    )
    cases = examples(
        lambda: (
            Case(
                title="a training entry a launch script runs, versions unknown: import placed where a sorter keeps it",
                files={"train.sh": _LAUNCH, "train.py": _TRAIN},
                expect=("train.py:9:5",),
                unsafe=True,
                fixed={"train.py": _TRAIN_FIXED},
            ),
            Case(
                title="two saves through an alias, CRLF: one import for both fixes",
                files={
                    "train.sh": "torchrun --nproc_per_node 8 train.py\n",
                    "train.py": "import torch as th\r\nimport torch_npu\r\n\r\n\r\ndef save(m, opt):\r\n"
                    '    th.save(m.state_dict(), "/ckpt/model.pt")\r\n    th.save(opt.state_dict(), "/ckpt/optim.pt")\r\n',
                },
                expect=("train.py:6", "train.py:7"),
                unsafe=True,
                fixed={
                    "train.py": "import mindio_acp\r\nimport torch as th\r\nimport torch_npu\r\n\r\n\r\ndef save(m, opt):\r\n"
                    '    mindio_acp.save(m.state_dict(), "/ckpt/model.pt")\r\n'
                    '    mindio_acp.save(opt.state_dict(), "/ckpt/optim.pt")\r\n'
                },
            ),
            Case(
                title="the entry of an A2 (ascend-910b) job, launched through a script",
                files={"job.yaml": _VCJOB, "train.sh": "torchrun train.py\n", "train.py": _TRAIN},
                expect=("train.py:9",),
                unsafe=True,
                fixed={"train.py": _TRAIN_FIXED},
            ),
            Case(
                title="arguments mindio_acp.save does not take: reported without a fix",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": "import torch\n\ntorch.save(model.state_dict(), path, _use_new_zipfile_serialization=False)\n",
                },
                expect=("train.py:3",),
                unsafe=True,
                fixed={
                    "train.py": "import torch\n\ntorch.save(model.state_dict(), path, _use_new_zipfile_serialization=False)\n"
                },
            ),
            Case(
                title="a file object is not the path string mindio_acp.save takes: reported without a fix",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": "import torch\n\nwith open(name, 'wb') as f:\n    torch.save(model.state_dict(), f)\n",
                },
                expect=("train.py:4",),
                unsafe=True,
                fixed={
                    "train.py": "import torch\n\nwith open(name, 'wb') as f:\n    torch.save(model.state_dict(), f)\n"
                },
            ),
            Case(
                title="arguments, features and in-memory buffers are not checkpoints",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": "import io\nimport torch\n\ntorch.save(args, 'args.bin')\ntorch.save(features, cached_features_file)\n"
                    "buf = io.BytesIO()\ntorch.save(model.state_dict(), buf)\n",
                },
            ),
            Case(
                title="a unit test is not training",
                files={
                    "tests/test_ckpt.py": "import unittest\nimport torch\nimport torch_npu\n\n\nclass T(unittest.TestCase):\n"
                    "    def test_save(self):\n        torch.save(model.state_dict(), '/tmp/x.pt')\n"
                },
            ),
            Case(
                title="MindSpeed-LLM without MindIO ACP: import it and turn on the Megatron patch",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "#!/bin/bash\ntorchrun pretrain_gpt.py\n",
                    "pretrain_gpt.py": _MINDSPEED,
                },
                expect=("pretrain_gpt.py:2",),
                unsafe=True,
                fixed={
                    "pretrain_gpt.py": _MINDSPEED.replace(
                        "from mindspeed_llm import megatron_adaptor\n",
                        "from mindspeed_llm import megatron_adaptor\nimport mindio_acp\n",
                    ),
                    "train.sh": "#!/bin/bash\nexport MINDIO_AUTO_PATCH_MEGATRON=true\ntorchrun pretrain_gpt.py\n",
                },
            ),
            Case(
                title="one MindSpeed-LLM entry, three launch scripts: one finding, one fix for all of them",
                files={
                    "pretrain_gpt.py": _MINDSPEED,
                    **{
                        f"examples/run{k}.sh": "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py\n"
                        for k in (1, 2, 3)
                    },
                },
                expect=("pretrain_gpt.py:2",),
                unsafe=True,
                fixed={
                    "pretrain_gpt.py": _MINDSPEED.replace(
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
                    "pretrain_gpt.py": _MINDSPEED.replace(
                        "megatron_adaptor\n", "megatron_adaptor\nimport mindio_acp  # checkpoint acceleration\n"
                    ),
                },
                expect=("pretrain_gpt.py:3",),
                unsafe=True,
                fixed={"train.sh": "export MINDIO_AUTO_PATCH_MEGATRON=true\ntorchrun pretrain_gpt.py\n"},
            ),
            Case(
                title="MindSpeed-LLM's FSDP2 path saves through its own checkpoint manager: no Megatron to patch",
                files={
                    "train.sh": "#!/bin/bash\ntorchrun --nnodes 2 --nproc_per_node 8 train_fsdp2.py\n",
                    "train_fsdp2.py": "import torch\nfrom mindspeed_llm.fsdp2.train.trainer import Trainer\n\n"
                    "if __name__ == '__main__':\n    Trainer().train()\n",
                },
            ),
            Case(
                title="MindSpeed-LLM using MindIO ACP",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "export MINDIO_AUTO_PATCH_MEGATRON=true\ntorchrun pretrain_gpt.py\n",
                    "pretrain_gpt.py": _MINDSPEED.replace("megatron_adaptor\n", "megatron_adaptor\nimport mindio_acp\n")
                    + "torch.save({}, '/tmp/x.pt')\n",
                },
            ),
            Case(
                title="an entry that imports mindio_acp uses MindIO ACP",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": _TRAIN.replace("import torch\n", "import torch\nimport mindio_acp\n", 1),
                },
            ),
            Case(
                title="process-level recovery (an AscendJob) uses MindIO TFT, which ACP does not combine with",
                files={"job.yaml": _PROCESS_ACJOB, "train.sh": "torchrun train.py\n", "train.py": _TRAIN},
            ),
            Case(
                title="MindIO known to be older than 6.0.RC2",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": _TRAIN,
                    "requirements.txt": "torch==2.1.0\nmindio-acp==6.0.RC1\n",
                },
            ),
            Case(
                title="not PyTorch code: numpy.save is not a torch checkpoint",
                files={"train.sh": _LAUNCH, "train.py": "import numpy as np\n\nnp.save('/data/x.npy', [1, 2])\n"},
            ),
            Case(
                title="a MindSpore job gets no PyTorch advice",
                files={
                    "job.yaml": _VCJOB.replace("bash /job/code/train.sh", "msrun --worker_num=8 /job/code/train.py"),
                    "train.py": "import mindspore\nimport torch\n\ntorch.save({}, '/tmp/x.pt')\n",
                },
            ),
        )
    )

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
