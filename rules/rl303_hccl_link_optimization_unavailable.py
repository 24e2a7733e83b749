"""RL303: CANN is older than 8.0.RC2, which brings the native HCCL link setup optimization."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Project
from recovery_lint.knowledge.features import hccl_link_optimization
from recovery_lint.rule import Case, Rule, examples

from ._versions import CONFIG_NOTE, config_anchor, from_config

_CONSEQUENCE = (
    " Every start and every restart after a fault then sets up HCCL links without it; "
    "an image with CANN 8.0.RC2 or later shortens communication setup with no configuration"
)


class HcclLinkOptimizationUnavailable(Rule):
    code = "RL303"
    name = "hccl-link-optimization-unavailable"
    phase = "comm-init"
    severity = Severity.INFO
    fix_availability = "none"
    summary = "CANN is older than 8.0.RC2, which brings the native HCCL link setup optimization"
    what = """
A CANN version known to be older than 8.0.RC2: an exact pin (a CANN toolkit, kernels, nnae or
nnal package name such as `Ascend-cann-toolkit_7.0.0_linux-aarch64.run`, or a `CANN_VERSION`
variable) in a Dockerfile or requirements file that a job's files sit under (or a `docker/` folder
beside them), or `versions.cann` in the configuration. Reported at the pin. An unknown CANN
version is not reported, nor a pin file that no training job reads (an inference sample's image
says nothing of a training job's recovery).
"""
    why = """
After every fault all ranks set up their HCCL links again, and that setup grows with the number of
devices. From CANN 8.0.RC2, HCCL negotiates links asynchronously on several threads, which
shortens this phase of every recovery without any configuration. An older CANN leaves that time
on the table.
"""
    example = """
```dockerfile
RUN bash Ascend-cann-toolkit_7.0.0_linux-aarch64.run --install    # RL303
```
Use instead an image built on CANN 8.0.RC2 or later:
```dockerfile
RUN bash Ascend-cann-toolkit_8.0.RC2_linux-aarch64.run --install
```
"""
    fix = "No fix: upgrading CANN is an image change that needs a matching driver and torch_npu."
    sources = (
        "MindCluster docs: 05_configuring_training_recovery, Table 3 (HCCL link setup optimization, CANN 8.0.RC2 "
        "or later, nothing to configure)",
        "Recovery-time optimization guide (seed), item 3b",
    )
    cases = examples(
        lambda: (
            Case(
                title="CANN toolkit 7.0.0 installed in the image",
                files={
                    "Dockerfile": "FROM ubuntu:22.04\nRUN bash Ascend-cann-toolkit_7.0.0_linux-aarch64.run --install\n",
                    "train.sh": "torchrun train.py\n",
                },
                expect=("Dockerfile:2:30",),
            ),
            Case(
                title="8.0.RC1 is still older than 8.0.RC2",
                files={"docker/Dockerfile": "FROM x\nARG CANN_VERSION=8.0.RC1\n", "train.sh": "torchrun train.py\n"},
                expect=("docker/Dockerfile:2:18",),
            ),
            Case(
                title="an image no training job uses",
                files={"inference/paddle/Dockerfile": "FROM x\nARG CANN_VERSION=5.1.RC1\n"},
            ),
            Case(
                title="CANN from the configuration: reported once, at the first job relying on it",
                files={"a.sh": "torchrun a.py\n", "b.sh": "torchrun b.py\n"},
                config={"versions": {"cann": "7.0.RC1"}},
                expect=("a.sh:1:1",),
            ),
            Case(
                title="CANN 8.0.RC2",
                files={"Dockerfile": "FROM x\nRUN bash Ascend-cann-toolkit_8.0.RC2_linux-x86_64.run --install\n"},
            ),
            Case(
                title="CANN 8.0.0 from the configuration",
                files={"a.sh": "torchrun a.py\n"},
                config={"versions": {"cann": "8.0.0"}},
            ),
            Case(title="CANN unknown", files={"train.sh": "torchrun train.py\n", "requirements.txt": "torch==2.1.0\n"}),
            Case(
                title="a pinned CANN wins over the configured one",
                files={
                    "Dockerfile": "FROM x\nARG CANN_VERSION=8.1.RC1\n",
                    "train.sh": "torchrun train.py\n",
                },
                config={"versions": {"cann": "7.0.0"}},
            ),
        )
    )

    def check_project(self, project: Project):
        for job in project.jobs:
            versions = job.context.versions
            cann = versions.get("cann")
            span = versions.span("cann")
            if cann is None or span is None:
                continue
            available, reason = hccl_link_optimization(cann)
            if available is False:
                yield self.report(span, reason + _CONSEQUENCE)
        configured = next(
            (j.context.versions.configured.get("cann") for j in project.jobs if from_config(j, "cann")), None
        )
        if configured is not None:
            available, reason = hccl_link_optimization(configured)
            anchor = config_anchor(project, "cann")
            if available is False and anchor is not None:
                note = CONFIG_NOTE.format(component="cann")
                yield self.report(anchor, f"{reason[:-1]} ({note}).{_CONSEQUENCE}")
