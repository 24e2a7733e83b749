"""RL502: Binary operators (jit_compile=False) and the operator compile cache are configured together."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job
from recovery_lint.knowledge.features import compile_mode_support
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._compile import CACHE, cache_setting, compile_mode_calls

_TRAIN = """\
import torch
import torch_npu

torch.npu.set_compile_mode(jit_compile=False)
"""

_VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910
    fault-scheduling: "grace"
spec:
  tasks:
  - name: default
    template:
      spec:
        containers:
        - name: train
          image: pytorch-npu:2.1.0
          env:
          - name: ASCEND_CACHE_PATH
            value: /shared/op_cache
          command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""


class CompileModeConflict(Rule):
    code = "RL502"
    scorecard = MISCONFIGURED
    name = "compile-mode-conflict"
    phase = "compile"
    severity = Severity.WARNING
    premises = ("pytorch", "npu-entry")
    fix_availability = "none"
    summary = "Binary operators (jit_compile=False) and the operator compile cache are configured together"
    what = """
A PyTorch training file of the job (one that imports `torch_npu`) calls
`set_compile_mode(jit_compile=False)` (binary operators) while the launch environment that runs
it, or the file itself through `os.environ`, sets `ASCEND_CACHE_PATH` (the operator compile
cache, which works with `jit_compile=True`). The finding points at the call; the cache settings
are related locations. Not reported when CANN is known to be older than 8.0.RC2, where neither
optimization exists, nor for MindSpore and TensorFlow jobs.
"""
    why = """
The two recovery-time optimizations of operator compilation exclude each other: binary operators
skip online compilation, and the compile cache only speeds up online compilation. Configuring both
means one of them is dead configuration, and which one the job actually relies on after a
restart is left to chance when the code or the environment is changed later.
"""
    example = """
```bash
export ASCEND_CACHE_PATH=/shared/op_cache    # compile cache...
```
```python
torch.npu.set_compile_mode(jit_compile=False)    # RL502: ...and binary operators
```
Keep one: drop `ASCEND_CACHE_PATH` (and `ASCEND_MAX_OP_CACHE_SIZE`) to use binary operators,
or call `set_compile_mode(jit_compile=True)` to use the cache.
"""
    fix = "No fix: which of the two to keep is the user's choice."
    sources = (
        "MindCluster docs: 05_configuring_training_recovery Tables 7/8 (operator binary and operator compile cache "
        "are mutually exclusive; both need CANN 8.0.RC2 or later)",
        "Ascend/op-plugin docs: (beta) torch_npu-npu-set_compile_mode",
    )
    cases = examples(
        lambda: (
            Case(
                title="binary operators with ASCEND_CACHE_PATH in the container env",
                files={"job.yaml": _VCJOB, "train.sh": "torchrun train.py\n", "train.py": _TRAIN},
                expect=("train.py:4:1",),
            ),
            Case(
                title="set by a launch script on an A2 job",
                files={
                    "job.yaml": _VCJOB.replace("ascend-910\n", "ascend-910b\n").replace(
                        "          env:\n          - name: ASCEND_CACHE_PATH\n            value: /shared/op_cache\n", ""
                    ),
                    "train.sh": "export ASCEND_CACHE_PATH=/shared/op_cache\ntorchrun train.py\n",
                    "train.py": _TRAIN,
                },
                expect=("train.py:4",),
            ),
            Case(
                title="set in the entry itself",
                files={
                    "train.sh": "torchrun --nproc_per_node 8 train.py\n",
                    "train.py": "import os\n" + _TRAIN + 'os.environ["ASCEND_CACHE_PATH"] = "/shared/op_cache"\n',
                },
                expect=("train.py:5",),
            ),
            Case(
                title="the compile cache with online compile is consistent",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "torchrun train.py\n",
                    "train.py": _TRAIN.replace("jit_compile=False", "jit_compile=True"),
                },
            ),
            Case(
                title="binary operators alone",
                files={"train.sh": "torchrun --nproc_per_node 8 train.py\n", "train.py": _TRAIN},
            ),
            Case(
                title="CANN known to be older than 8.0.RC2",
                files={"job.yaml": _VCJOB, "train.sh": "torchrun train.py\n", "train.py": _TRAIN},
                config={"versions": {"cann": "7.0.0"}},
            ),
            Case(
                title="a MindSpore job gets no PyTorch finding",
                files={
                    "job.yaml": _VCJOB.replace("bash /job/code/train.sh", "msrun /job/code/train.py"),
                    "train.py": _TRAIN.replace("import torch\n", "import mindspore\nimport torch\n"),
                },
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        if compile_mode_support(job.context.versions.get("cann"))[0] is False:
            return
        for file in job.entries:
            if not file.imports_module("torch_npu"):
                continue
            calls = [call for call, arg in compile_mode_calls(file) if arg is not None and arg.value is False]
            if not calls:
                continue
            cache = cache_setting(job, file)
            if not cache.spans:
                continue
            for call in calls:
                yield self.report(
                    call.span,
                    f"jit_compile=False selects binary operators, but {CACHE} also configures the operator compile "
                    "cache, which only serves online compilation: the two exclude each other, keep one",
                    related=[(span, f"{CACHE} set here") for span in cache.spans],
                )
