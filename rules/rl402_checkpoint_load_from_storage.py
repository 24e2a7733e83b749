from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Project
from recovery_lint.rule import Case, Rule, examples

from ._mindio import findings

_RESUME = """\
import torch
import torch_npu


def resume(model, path):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    return state["step"]
"""

_RESUME_FIXED = _RESUME.replace("import torch\n", "import mindio_acp\nimport torch\n", 1).replace(
    "torch.load(", "mindio_acp.load("
)

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: resnet
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910
    fault-scheduling: "force"
    pod-rescheduling: "on"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch-npu:1.11.0
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""

_MINDSPEED = """\
import torch
from mindspeed_llm import megatron_adaptor
from megatron.training import pretrain

pretrain()
"""


class CheckpointLoadFromStorage(Rule):
    code = "RL402"
    name = "checkpoint-load-from-storage"
    phase = "checkpoint"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "Checkpoints are loaded with torch.load from storage; MindIO ACP restores them from memory"
    what = """
A `torch.load(...)` call (through any import alias) that reads back a checkpoint the job saved (its
path, or the function it is in, says resume, checkpoint, latest…; not pretrained weights, a dataset
cache or a vocabulary) in a training entry (a Python file a training launch runs that imports
`torch` or `torch_npu`) of a job that does not use MindIO ACP: none of the job's entries imports
`mindio_acp`.

A MindSpeed-LLM job on Megatron (an entry imports `mindspeed_llm` with its Megatron adaptor or
Megatron itself) loads through Megatron's checkpoint code; it
uses MindIO ACP when it imports `mindio_acp` and its launch environment sets
`MINDIO_AUTO_PATCH_MEGATRON=true` (or `1`). Otherwise one finding points at the `mindspeed_llm`
import (or at the `mindio_acp` import when only the variable is missing).

Not reported for jobs with process-level recovery or importing `mindio_ttp` (MindIO TFT, which
ACP does not combine with in MindSpeed-LLM), with MindIO or MindCluster known to be older than
6.0.RC2, or for MindSpore and TensorFlow jobs. Unknown versions get the advice, and the message
says so.
"""
    why = """
After a fault every rank of the rescheduled job reads its checkpoint back from shared storage
before training resumes; for a large model that read is a long part of the recovery, and all
ranks contend for the same storage. MindIO ACP keeps the checkpoints it saved in a memory file
system, so `mindio_acp.load` restores them from memory instead of storage.
"""
    example = """
```python
state = torch.load(path, map_location="cpu")    # RL402
```
Use instead:
```python
import mindio_acp
state = mindio_acp.load(path, map_location="cpu")
```
"""
    fix = """
Unsafe (MindIO ACP must be installed and running on the nodes): `torch.load(` becomes
`mindio_acp.load(` with the arguments kept, and `import mindio_acp` is inserted after the
module-level torch import when the file lacks it, in one fix. Offered only when the call passes
the path as its one positional argument and no keyword other than `map_location`, which is what
`mindio_acp.load(path, open_way, map_location)` accepts. MindSpeed-LLM jobs get the same fix as
RL401: `import mindio_acp` after the `mindspeed_llm` import and
`export MINDIO_AUTO_PATCH_MEGATRON=true` before the launch.
"""
    sources = (
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/03_usage_guidance "
        "(replace torch.load with mindio_acp.load; MindSpeed-LLM: MINDIO_AUTO_PATCH_MEGATRON=true)",
        "MindCluster docs: references/optimizing_saving_and_loading_checkpoints/05_api_reference "
        "(mindio_acp.load(path, open_way='memfs', map_location=None))",
        "MindCluster docs: 05_configuring_training_recovery Tables 5/6 (MindIO and MindCluster 6.0.RC2 or later)",
    )
    cases = examples(
        lambda: (
            Case(
                title="a resume helper loading from storage (Atlas training series job)",
                files={"job.yaml": _ACJOB, "train.sh": "torchrun train.py\n", "train.py": _RESUME},
                expect=("train.py:6:13",),
                unsafe=True,
                fixed={"train.py": _RESUME_FIXED},
            ),
            Case(
                title="from-import of load, in the entry a launch script runs",
                files={
                    "run.sh": "torchrun --nproc_per_node 8 resume.py\n",
                    "resume.py": "from torch import load\nimport torch_npu\n\nstate = load('/ckpt/last.pt')\n",
                },
                expect=("resume.py:4:9",),
                unsafe=True,
                fixed={
                    "resume.py": "from torch import load\nimport mindio_acp\nimport torch_npu\n\n"
                    "state = mindio_acp.load('/ckpt/last.pt')\n"
                },
            ),
            Case(
                title="weights_only has no MindIO ACP equivalent: reported without a fix",
                files={
                    "run.sh": "torchrun --nproc_per_node 8 resume.py\n",
                    "resume.py": "import torch\n\nstate = torch.load('/ckpt/last.pt', weights_only=True)\n",
                },
                expect=("resume.py:3",),
                unsafe=True,
                fixed={"resume.py": "import torch\n\nstate = torch.load('/ckpt/last.pt', weights_only=True)\n"},
            ),
            Case(
                title="a map_location mindio_acp.load does not accept: reported without a fix",
                files={
                    "run.sh": "torchrun --nproc_per_node 8 resume.py\n",
                    "resume.py": "import torch\n\nstate = torch.load(ckpt_path, map_location=torch.device('npu'))\n",
                },
                expect=("resume.py:3",),
                unsafe=True,
                fixed={
                    "resume.py": "import torch\n\nstate = torch.load(ckpt_path, map_location=torch.device('npu'))\n"
                },
            ),
            Case(
                title="pretrained weights and a dataset cache are not checkpoints the job saved",
                files={
                    "run.sh": "torchrun --nproc_per_node 8 train.py\n",
                    "train.py": "import torch\n\nstate = torch.load(args.pretrained_weight_path, map_location='cpu')\n"
                    "dataset, _ = torch.load(cache_path)\nweights = torch.load(path)\n"
                    "if args.pretrained:\n    best = torch.load('/home/checkpoint_model_best.pth.tar')\n",
                },
            ),
            Case(
                title="MindSpeed-LLM without MindIO ACP, no launch script: no fix",
                files={"pretrain_gpt.py": _MINDSPEED},
                expect=("pretrain_gpt.py:2",),
                unsafe=True,
                fixed={"pretrain_gpt.py": _MINDSPEED},
            ),
            Case(
                title="MindSpeed-LLM with mindio_acp and MINDIO_AUTO_PATCH_MEGATRON=1",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "export MINDIO_AUTO_PATCH_MEGATRON=1\ntorchrun pretrain_gpt.py\n",
                    "pretrain_gpt.py": _MINDSPEED.replace(
                        "megatron_adaptor\n", "megatron_adaptor\nimport mindio_acp\n"
                    ),
                },
            ),
            Case(
                title="the job imports mindio_acp",
                files={"train.py": _RESUME.replace("import torch_npu\n", "import torch_npu\nimport mindio_acp\n")},
            ),
            Case(
                title="process-level recovery (MindIO TFT)",
                files={
                    "job.yaml": _ACJOB.replace(
                        "spec:\n  replicaSpecs",
                        '  annotations:\n    recover-strategy: "recover"\nspec:\n  replicaSpecs',
                    ),
                    "train.sh": "torchrun train.py\n",
                    "train.py": _RESUME,
                },
            ),
            Case(
                title="MindCluster known to be older than 6.0.RC2",
                files={"train.py": _RESUME},
                config={"versions": {"mindcluster": "6.0.RC1"}},
            ),
            Case(
                title="a MindSpore job gets no PyTorch advice",
                files={
                    "job.yaml": _ACJOB.replace("framework: pytorch", "framework: mindspore"),
                    "train.sh": "msrun train.py\n",
                    "train.py": "import mindspore\nimport torch\n\nstate = torch.load('/ckpt/x.pt')\n",
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
