"""RL403: MindIO ACP is used with MindIO or MindCluster older than 6.0.RC2."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job
from recovery_lint.knowledge.features import mindio_support
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._examples import PYTORCH_VCJOB as _VCJOB
from ._mindio_names import ACP, imports_of

_LAUNCH = "torchrun --nproc_per_node 8 train.py\n"
_TRAIN = """\
import torch
import torch_npu
import mindio_acp


def save(state, path):
    mindio_acp.save(state, path)
"""


class MindioUnsupportedVersion(Rule):
    code = "RL403"
    scorecard = MISCONFIGURED
    name = "mindio-unsupported-version"
    phase = "checkpoint"
    severity = Severity.ERROR
    premises = ("pytorch", "mindio-acp-import")
    fix_availability = "none"
    summary = "MindIO ACP is used with MindIO or MindCluster older than 6.0.RC2"
    what = """
A PyTorch job whose Python files import `mindio_acp` while the declared MindIO version (a
`mindio-acp`/`mindio-ttp` pin or wheel) or MindCluster version (a `taskd` pin or a MindX DL
package) is known to be older than 6.0.RC2. The finding points at the import; the version pins
are related locations. Unknown versions are not reported.
"""
    why = """
MindIO ACP's asynchronous checkpoint save and in-memory checkpoint restore need MindIO and the
cluster scheduling components at 6.0.RC2 or later. With older versions the job that was changed
to use MindIO ACP does not get the shorter rollback and checkpoint load it was changed for.
"""
    example = """
```text
# requirements.txt
mindio-acp==6.0.RC1    # RL403 on the `import mindio_acp` of the training code
```
Use MindIO 6.0.RC2 or later with MindCluster 6.0.RC2 or later.
"""
    fix = "No fix: upgrading MindIO or the cluster components is a deployment decision."
    sources = (
        "MindCluster docs: 05_configuring_training_recovery Tables 5/6 (MindIO ACP needs the cluster scheduling "
        "components and MindIO 6.0.RC2 or later)",
        "seed: recovery-time optimizations 4a/4b (cluster scheduler and MindIO 6.0.RC2 or later)",
    )
    cases = examples(
        lambda: (
            Case(
                title="MindIO pinned older than 6.0.RC2",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": _TRAIN,
                    "requirements.txt": "torch==2.1.0\nmindio-acp==6.0.RC1\n",
                },
                expect=("train.py:3:1",),
            ),
            Case(
                title="MindCluster (TaskD) older than 6.0.RC2 in the image of a job",
                files={
                    "job.yaml": _VCJOB,
                    "train.sh": "torchrun train.py\n",
                    "train.py": _TRAIN,
                    "Dockerfile": "FROM pytorch-npu:2.1.0\nRUN pip install taskd-6.0.RC1-py3-none-linux_aarch64.whl\n",
                },
                expect=("train.py:3",),
            ),
            Case(
                title="versions recent enough",
                files={
                    "train.sh": _LAUNCH,
                    "train.py": _TRAIN,
                    "requirements.txt": "mindio-acp==6.0.RC2\ntaskd==7.0.RC1\n",
                },
            ),
            Case(title="versions unknown: not reported", files={"train.sh": _LAUNCH, "train.py": _TRAIN}),
            Case(
                title="old MindIO but MindIO ACP not used",
                files={"train.py": "import torch\n", "requirements.txt": "mindio-acp==6.0.RC1\n"},
            ),
            Case(
                title="a MindSpore job gets no PyTorch finding",
                files={
                    "job.yaml": _VCJOB.replace("bash /job/code/train.sh", "msrun /job/code/train.py"),
                    "train.py": "import mindspore\nimport mindio_acp\n",
                    "requirements.txt": "mindio-acp==6.0.RC1\n",
                },
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        versions = job.context.versions
        verdict, reason = mindio_support(versions.get("mindio"), versions.get("mindcluster"))
        if verdict is not False:
            return
        related = [
            (versions.span(component), f"{label} version declared here")
            for component, label in (("mindio", "MindIO"), ("mindcluster", "MindCluster"))
        ]
        for entry in job.entries:
            for imp in imports_of(entry, ACP):
                yield self.report(
                    imp.span,
                    f"MindIO ACP is used with versions that do not support it: {reason}",
                    related=related,
                )
