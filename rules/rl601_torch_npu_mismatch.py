"""RL601: The pinned torch_npu is built for another torch version than the one pinned."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Project
from recovery_lint.knowledge.releases import torch_npu_for_torch_mismatch
from recovery_lint.rule import Case, Rule, examples
from recovery_lint.span import Span

from ._versions import CONFIG_NOTE, config_anchor, first_exact_pins, lone_pin_files

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: ms
  labels:
    framework: mindspore
spec:
  replicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/run.sh"]
"""


class TorchNpuMismatch(Rule):
    code = "RL601"
    name = "torch-npu-mismatch"
    phase = "versions"
    severity = Severity.ERROR
    fix_availability = "none"
    summary = "The pinned torch_npu is built for another torch version than the one pinned"
    what = """
An exact torch_npu package pin whose version names another torch than the declared torch: a
torch_npu package version starts with the torch version it was built for (`2.1.0.post8` is for
torch 2.1.0, `2.3.1.post2` for torch 2.3.1). Checked for the versions of each PyTorch job (pins in
requirements files, `pyproject.toml` and Dockerfiles that its files sit under, and `versions` in
the configuration) and within each pin file that no job reads. A file that declares a GPU stack (a
CUDA or ROCm base image or package index, a name such as `requirements_gpu.txt`,
`docker/Dockerfile.cuda` or `docker-cuda/`, and no torch_npu or CANN pin) says nothing of an NPU
job: its torch is never paired with the job's torch_npu. Reported at the torch_npu pin, with the
torch pin as related location. A torch_npu release name such as `6.0.RC3` names no torch
and is not compared.
"""
    why = """
torch_npu is a compiled extension of one torch release; Ascend publishes each torch_npu build for
exactly one torch version. With another torch installed the adapter is unsupported and typically
fails to load, so the job fails at start-up and again at every restart after a fault, and no
recovery optimization takes effect.
"""
    example = """
```text
torch==2.1.0
torch-npu==2.3.1.post2    # RL601: built for torch 2.3.1
```
Use instead a matching pair:
```text
torch==2.1.0
torch-npu==2.1.0.post10
```
"""
    fix = "No fix: which of the two pins is the intended one cannot be told from the files."
    sources = (
        "Ascend/pytorch: COMPATIBILITY (each torch_npu package version with its torch version)",
        "Ascend/pytorch: setup.py generate_torch_npu_version (the package version starts with the torch version)",
    )
    cases = examples(
        lambda: (
            Case(
                title="torch_npu for torch 2.3.1 with torch 2.1.0",
                files={
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.3.1.post2  # NPU adapter\n",
                    "train.sh": "torchrun train.py\n",
                },
                expect=("requirements.txt:2:12",),
            ),
            Case(
                title="pins spread over a Dockerfile and a requirements file",
                files={
                    "Dockerfile": "FROM x\nRUN pip install torch_npu-2.1.0.post10-cp39-cp39-linux_aarch64.whl\n",
                    "requirements.txt": "torch==2.2.0\n",
                    "train.sh": "torchrun --nproc_per_node 8 train.py\n",
                    "train.py": "import torch\nimport torch_npu\n",
                },
                expect=("Dockerfile:2:27",),
            ),
            Case(
                title="a pin file that no job reads",
                files={"docker/requirements.txt": "torch===2.4.0\ntorch_npu==2.1.0.post8\n"},
                expect=("docker/requirements.txt:2:12",),
            ),
            Case(
                title="torch pinned, torch_npu from the configuration",
                files={"requirements.txt": "torch==1.11.0\n", "train.sh": "torchrun train.py\n"},
                config={"versions": {"torch-npu": "2.1.0.post10"}},
                expect=("requirements.txt:1:8",),
            ),
            Case(
                title="both from the configuration: reported once",
                files={"a.sh": "torchrun a.py\n", "b.sh": "torchrun b.py\n"},
                config={"versions": {"torch": "2.1.0", "torch-npu": "2.4.0.post2"}},
                expect=("a.sh:1:1",),
            ),
            Case(
                title="a CUDA image and a GPU requirements file beside the NPU job: their torch is not the job's",
                files={
                    "docker/Dockerfile.cuda": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install torch==2.9.1\n",
                    "docker/docker-cuda/Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.06-py3\nRUN pip install torch==2.8.0\n",
                    "requirements_gpu.txt": "torch==2.9.1\n",
                    "train.sh": "torchrun --nproc_per_node 8 train.py\n",
                },
                config={"versions": {"torch-npu": "2.1.0.post10"}},
            ),
            Case(
                title="a Dockerfile whose base image comes from an ARG naming a CUDA image",
                files={
                    "Dockerfile": "ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:23.09-py3\nFROM ${BASE_IMAGE}\n"
                    "RUN pip install torch==2.9.1\n",
                    "train.sh": "torchrun --nproc_per_node 8 train.py\n",
                },
                config={"versions": {"torch-npu": "2.1.0.post10"}},
            ),
            Case(
                title="a GPU requirements file in a folder of its own, beside the job's",
                files={
                    "requirements-cuda.txt": "torch==2.4.0\n",
                    "requirements/npu.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
                    "train.sh": "torchrun --nproc_per_node 8 train.py\n",
                },
            ),
            Case(
                title="matching pair",
                files={"requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10+git1a2b3c4\n"},
            ),
            Case(title="torch_npu as a release name", files={"requirements.txt": "torch==2.1.0\ntorch-npu==6.0.RC3\n"}),
            Case(
                title="only a lower bound for torch",
                files={"requirements.txt": "torch>=2.1.0\ntorch-npu==2.3.1.post2\n"},
            ),
            Case(
                title="torch unknown",
                files={"requirements.txt": "torch-npu==2.3.1.post2\n", "train.sh": "torchrun x.py\n"},
            ),
            Case(
                title="MindSpore job",
                files={
                    "job.yaml": _ACJOB,
                    "run.sh": "msrun --worker_num=16 train.py\n",
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.3.1.post2\n",
                },
            ),
        )
    )

    def check_project(self, project: Project):
        config_pair: tuple[str, str] | None = None
        for job in project.jobs:
            if not job.context.pytorch:
                continue
            versions = job.context.versions
            torch, torch_npu = versions.get("torch"), versions.get("torch-npu")
            if torch is None or torch_npu is None:
                continue
            built = torch_npu_for_torch_mismatch(torch, torch_npu)
            if built is None:
                continue
            span = versions.span("torch-npu") or versions.span("torch")
            if span is None:
                config_pair = (torch, torch_npu)
                continue
            yield self._finding(span, torch, torch_npu, built, versions.span("torch"))
        for pin_file in lone_pin_files(project):
            pins = first_exact_pins(pin_file)
            torch_pin, npu_pin = pins.get("torch"), pins.get("torch-npu")
            if torch_pin is None or npu_pin is None:
                continue
            built = torch_npu_for_torch_mismatch(torch_pin.version, npu_pin.version)
            if built is not None:
                yield self._finding(npu_pin.span, torch_pin.version, npu_pin.version, built, torch_pin.span)
        if config_pair is not None:
            anchor = config_anchor(project, "torch-npu")  # both versions are configured ones
            if anchor is not None:
                torch, torch_npu = config_pair
                built = torch_npu_for_torch_mismatch(torch, torch_npu) or ""
                note = CONFIG_NOTE.format(component="torch and versions.torch-npu")
                yield self._finding(anchor, torch, torch_npu, built, None, note)

    def _finding(self, span: Span, torch: str, torch_npu: str, built: str, torch_span: Span | None, note: str = ""):
        where = f" ({note})" if note else ""
        message = (
            f"torch_npu {torch_npu} is built for torch {built}, but torch {torch} is declared{where}: the "
            f"adapter does not support that torch, so the job fails at start-up and at every restart after a "
            f"fault. Pin torch=={built}, or a torch_npu build for torch {torch}"
        )
        return self.report(span, message, related=[(torch_span, f"torch {torch} is declared here")])
