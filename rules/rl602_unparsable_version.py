"""RL602: A declared torch, torch_npu, CANN, MindCluster or MindIO version cannot be read."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Project
from recovery_lint.kinds import PIN_KINDS
from recovery_lint.knowledge.releases import version_problem
from recovery_lint.parse import ParsedFile
from recovery_lint.rule import Case, Rule, examples
from recovery_lint.sources.versions import COMPONENTS, PinFile

from ._versions import CONFIG_NOTE, LABELS, config_anchor, job_anchor


def _readable_form(version: str) -> str:
    """A wildcard specifier (``2.1.*``) is read by its fixed part."""
    return version[:-2] if version.endswith(".*") else version


class UnparsableVersion(Rule):
    code = "RL602"
    name = "unparsable-version"
    phase = "versions"
    severity = Severity.ERROR
    fix_availability = "none"
    summary = "A declared torch, torch_npu, CANN, MindCluster or MindIO version cannot be read"
    what = """
A version of torch, torch_npu, CANN, MindCluster or MindIO that the linter cannot read: any
declared pin in a requirements or constraints file, a `pyproject.toml` dependency string or a
Dockerfile (`pip install` arguments, wheel file names, CANN and MindCluster package names,
`*_VERSION` variables), whether or not a job reads that file, and each value of `versions` in the
configuration. A file that declares a GPU stack (a CUDA or ROCm base image or package index, a name
such as `requirements_gpu.txt` or `Dockerfile.cuda`, and no torch_npu or CANN pin) is read by no
rule and not checked. torch and torch_npu package versions follow PEP 440 (`2.1.0`, `2.1.0.post10`, a
`+git` build suffix is fine); torch_npu may also be named by its release (`6.0.RC3`); CANN,
MindCluster and MindIO use Ascend release names (`8.0.RC2`, `6.0.0`, `8.0.RC2.alpha002`). The
message says which form was expected.
"""
    why = """
Every version-dependent rule (Parallel Store, RankTable, watchdog default, MindIO, CANN features)
treats an unreadable version as unknown, so the findings that protect recovery time fall back to
assumptions; a typo in a pin may also mean the image does not contain what the author intended.
"""
    example = """
```text
torch-npu==2.1.0-6.0.rc3       # RL602: a branch name, not a package version (2.1.0.post8)
```
```dockerfile
ARG CANN_VERSION=8.0           # RL602: a CANN release looks like 8.0.RC2 or 8.0.0
```
"""
    fix = "No fix: the intended version cannot be guessed."
    sources = (
        "PEP 440 (package versions of torch and torch_npu)",
        "Ascend/pytorch: COMPATIBILITY (torch_npu package versions and release lines)",
        "CANN and MindCluster release names in the MindCluster docs (references/appendix)",
    )
    cases = examples(
        lambda: (
            Case(
                title="a CANN variable and a torch_npu pin that cannot be read",
                files={
                    "Dockerfile": "FROM x\nARG CANN_VERSION=8.0\nRUN pip install torch==2.1.0 torch-npu==v2.1.0-6.0.rc3\n",
                },
                expect=("Dockerfile:2:18", "Dockerfile:3:41"),
            ),
            Case(
                title="an ARG default that is no version at all; a variable is not a version",
                files={
                    "Dockerfile": "FROM x\nARG TORCH_NPU_VERSION=banana\nARG TORCH_VERSION=${BASE_TORCH}\n"
                    "ENV CANN_VERSION 8.0.RC2\n# TORCH_VERSION is set above\n",
                },
                expect=("Dockerfile:2:23",),
            ),
            Case(
                title="in a pin file that no job reads, and in pyproject.toml",
                files={
                    "images/requirements.txt": "torch==2.one\n",
                    "pyproject.toml": '[project]\ndependencies = ["mindio-acp==latest-1"]\n',
                },
                expect=("images/requirements.txt:1:8", "pyproject.toml:2:30"),
            ),
            Case(
                title="a configured version: reported once",
                files={"a.sh": "torchrun a.py\n", "b.sh": "torchrun b.py\n"},
                config={"versions": {"cann": "eight"}},
                expect=("a.sh:1:1",),
            ),
            Case(
                title="readable versions, bounds and wildcards",
                files={
                    "requirements.txt": (
                        "torch==2.1.*\ntorch-npu>=2.1.0.post10+git1a2b3c4\nmindio-acp==6.0.RC2\ntaskd==7.0.RC1\n"
                    ),
                    "Dockerfile": "FROM x\nRUN bash Ascend-cann-toolkit_8.0.RC2.alpha002_linux-aarch64.run\n",
                },
            ),
            Case(
                title="readable configured versions",
                files={"a.sh": "torchrun a.py\n"},
                config={"versions": {"torch": "2.1.0", "torch-npu": "6.0.RC3", "cann": "8.0.0", "mindio": "6.0.RC2"}},
            ),
        )
    )

    def check_file(self, parsed: ParsedFile):
        if parsed.kind not in PIN_KINDS or not isinstance(parsed.model, PinFile) or parsed.model.gpu_stack:
            return  # a GPU stack's versions are read by no rule
        for pin in parsed.model.pins:
            expected = version_problem(pin.component, _readable_form(pin.version))
            if expected is not None:
                label = LABELS[pin.component]
                yield self.report(
                    pin.span,
                    f"{label} version '{pin.version}' cannot be read: {expected}; the rules that depend "
                    f"on the {label} version treat it as unknown",
                )

    def check_project(self, project: Project):
        if not project.jobs:
            return
        configured = project.jobs[0].context.versions.configured
        for component in COMPONENTS:
            value = configured.get(component)
            if value is None:
                continue
            expected = version_problem(component, value)
            anchor = config_anchor(project, component) or job_anchor(project.jobs[0])
            if expected is None or anchor is None:
                continue
            label = LABELS[component]
            yield self.report(
                anchor,
                f"{label} version '{value}' ({CONFIG_NOTE.format(component=component)}) cannot be read: "
                f"{expected}; the rules that depend on the {label} version treat it as unknown",
            )
