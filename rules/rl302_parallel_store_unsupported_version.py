"""RL302: torch_npu_run is used with torch/torch_npu versions that cannot run the Parallel Store."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job, LaunchCommand
from recovery_lint.knowledge.features import feature_support
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._versions import facts_of, with_origin

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llm
  labels:
    framework: {framework}
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""


class ParallelStoreUnsupportedVersion(Rule):
    code = "RL302"
    scorecard = MISCONFIGURED
    name = "parallel-store-unsupported-version"
    phase = "comm-init"
    severity = Severity.ERROR
    premises = ("pytorch", "torch-npu-run-launch")
    fix_availability = "none"
    summary = "torch_npu_run is used with torch/torch_npu versions that cannot run the Parallel Store"
    what = """
A PyTorch launch through `torch_npu_run` (or `python -m torch_npu.distributed.run`) in a job whose
torch_npu release does not ship it (looked up in the release table by the exact package version):
torch_npu_run exists from 6.0.rc1 for torch 1.11 and from 6.0.rc3 for torch 2.1.0, 2.3.1 and 2.4.0
(never for 2.2.0, nor for 2.0.1 or older torch). Where the release ships it but the MindCluster docs
support it only from a later release (6.0.RC3 itself, 6.0.RC1 for torch 1.11), the finding is a
note, not an error. `python -m torch_npu.distributed.run` is reported only where the module does
not exist: the torch 1.11 builds from 5.0.rc2.1 to 5.0.1.2 have it as plain torchrun (no Parallel
Store, but the job starts), so nothing fails there. Versions come from the closest declaration (a `pip install` in the job's
scripts, requirements, `pyproject.toml`, a Dockerfile, also in a `docker/` folder beside the job's
folders) or from `versions` in the configuration; unknown releases are not reported.
"""
    why = """
`torch_npu_run` exists to make rendezvous fast after every fault (a multi-threaded TCPStore
instead of torchrun's single-threaded one). With a torch_npu that predates it, the command is
missing, so the job cannot start at all and every restart after a fault fails the same way:
recovery never completes.
"""
    example = """
```text
# requirements.txt
torch==2.2.0
torch-npu==2.2.0.post2      # release 6.0.rc2: no build for torch 2.2.0 ships torch_npu_run
```
```bash
torch_npu_run --nnodes=2 --nproc_per_node=8 train.py    # RL302
```
Use a torch_npu of a release that ships it (torch 2.1.0 with 2.1.0.post10 or later), or launch
with `torchrun` until the image is upgraded.
"""
    fix = """
No fix: the remedy is an image with a newer torch_npu (or a different launcher), which the linter
cannot choose for you.
"""
    sources = (
        "MindCluster docs: 03/05_configuring_training_recovery (Parallel Store: torch 1.11.0 with torch_npu newer "
        "than 6.0.RC1; torch >= 2.1.0 with torch_npu newer than 6.0.RC3)",
        "Ascend/pytorch: setup.py (torch_npu_run console script) and torch_npu/distributed/run.py",
        "Ascend/pytorch: COMPATIBILITY (torch_npu package versions per release line)",
    )
    cases = examples(
        lambda: (
            Case(
                title="torch_npu_run with torch_npu of release 6.0.RC3 for torch 2.1.0: it ships there, a note",
                files={
                    "train.sh": "#!/bin/bash\ntorch_npu_run --nnodes=2 train.py\n",
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",
                },
                expect=("train.sh:2:1",),
            ),
            Case(
                title="python -m torch_npu.distributed.run with torch 2.0.1, pinned in a Dockerfile",
                files={
                    "train.sh": "python3 -m torch_npu.distributed.run --nproc_per_node=8 train.py\n",
                    "Dockerfile": "FROM base\nRUN pip install torch==2.0.1 torch-npu==2.0.1.post1\n",
                },
                expect=("train.sh:1:1",),
            ),
            Case(
                title="torch 1.11.0 with a 6.0.RC1 torch_npu, from the configuration: a note",
                files={"train.sh": "torch_npu_run train.py\n"},
                config={"versions": {"torch": "1.11.0", "torch-npu": "1.11.0.post11"}},
                expect=("train.sh:1:1",),
            ),
            Case(
                title="torch_npu 2.1.0.post6 (release 6.0.rc2) does not ship torch_npu_run",
                files={"train.sh": "torch_npu_run train.py\n", "requirements.txt": "torch_npu==2.1.0.post6\n"},
                expect=("train.sh:1:1",),
            ),
            Case(
                title="supported versions",
                files={
                    "train.sh": "torch_npu_run train.py\n",
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
                },
            ),
            Case(
                title="torch 1.11.0 with a 6.0.RC2 torch_npu",
                files={
                    "train.sh": "torch_npu_run train.py\n",
                    "requirements.txt": "torch==1.11.0\ntorch-npu==1.11.0.post14\n",
                },
            ),
            Case(title="versions unknown", files={"train.sh": "torch_npu_run train.py\n"}),
            Case(
                title="python -m torch_npu.distributed.run on a 5.0.x torch 1.11 build runs as plain torchrun: it starts",
                files={
                    "train.sh": "python3 -m torch_npu.distributed.run --nnodes 2 train.py\n",
                    "requirements.txt": "torch==1.11.0\ntorch-npu==1.11.0.post8\n",
                },
            ),
            Case(
                title="torch_npu_run itself on that build: no such command",
                files={
                    "train.sh": "torch_npu_run --nnodes 2 train.py\n",
                    "requirements.txt": "torch==1.11.0\ntorch-npu==1.11.0.post8\n",
                },
                expect=("train.sh:1:1",),
            ),
            Case(
                title="a lower bound is not a known version",
                files={
                    "train.sh": "torch_npu_run train.py\n",
                    "requirements.txt": "torch==2.1.0\ntorch-npu>=2.1.0.post8\n",
                },
            ),
            Case(
                title="torchrun with old versions is not this rule",
                files={"train.sh": "torchrun train.py\n", "requirements.txt": "torch==2.2.0\ntorch-npu==2.2.0.post2\n"},
            ),
            Case(
                title="MindSpore AscendJob",
                files={
                    "job.yaml": _ACJOB.format(framework="mindspore"),
                    "train.sh": "torch_npu_run train.py\n",
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",
                },
            ),
            Case(
                title="PyTorch AscendJob running the script",
                files={
                    "job.yaml": _ACJOB.format(framework="pytorch"),
                    "train.sh": "torch_npu_run train.py\n",
                    "requirements.txt": "torch==2.2.0\ntorch-npu==2.2.0.post2\n",
                },
                expect=("train.sh:1:1",),
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        if not any(c.launcher == "torch_npu_run" for launch in job.launches for c in launch.torch_commands):
            return
        facts = facts_of(job)
        support = feature_support("torch_npu_run", facts)
        if support.status not in ("missing", "undocumented"):
            return
        # ``python -m torch_npu.distributed.run`` starts wherever the module exists: in the torch 1.11
        # builds from 5.0.rc2.1 to 5.0.1.2 it is plain torchrun, without the Parallel Store
        module = feature_support("distributed_run_module", facts)
        versions = job.context.versions
        related = [
            (versions.span("torch"), f"torch {versions.get('torch')} is declared here"),
            (versions.span("torch-npu"), f"torch_npu {versions.get('torch-npu')} is declared here"),
        ]
        reason = f"{with_origin(support.reason, job)}."
        for launch in job.launches:
            for cmd in launch.torch_commands:
                if cmd.launcher != "torch_npu_run":
                    continue
                as_module = cmd.launcher_words[1] - cmd.launcher_words[0] > 1
                if as_module and support.status == "missing" and module.status != "missing":
                    continue  # it starts (as plain torchrun where the module has no parallel rendezvous)
                yield self._finding(cmd, support.status, reason, related)

    def _finding(self, cmd: LaunchCommand, status: str, reason: str, related):
        start, end = cmd.launcher_words
        words = cmd.command.words[start:end]
        written = " ".join(w.text for w in words)
        span = words[0].span
        if cmd.script.exact and not cmd.script.argv:
            span = cmd.script.source.span(words[0].span.start, words[-1].span.end)
        if status == "undocumented":
            message = f"'{written}' runs with a release outside the documented support: {reason}"
            return self.report(span, message, related=related, severity=Severity.INFO)
        message = (
            f"'{written}' cannot run with the declared versions: {reason} The job fails at start-up and "
            f"after every fault; upgrade torch_npu or launch with torchrun"
        )
        return self.report(span, message, related=related)
