"""RL314: RankTable mode is configured with a torch_npu release that does not read RANK_TABLE_FILE."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job
from recovery_lint.knowledge.features import feature_support
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.span import Span

from ._ranktable import ENV, table_env, table_volume
from ._versions import facts_of, with_origin

_JOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt
  labels:
    framework: {framework}
spec:
  replicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: ascend
            volumeMounts:
            - name: ranktable
              mountPath: /user/mindx-dl/ranktable
          volumes:
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/default.gpt
"""
_SCRIPT = f"#!/bin/bash\nexport {ENV}=/user/serverid/devindex/config/hccl.json\ntorchrun train.py\n"


class RankTableUnsupportedVersion(Rule):
    code = "RL314"
    scorecard = MISCONFIGURED
    name = "ranktable-unsupported-version"
    phase = "comm-init"
    severity = Severity.ERROR
    fix_availability = "none"
    summary = "RankTable mode is configured with a torch_npu release that does not read RANK_TABLE_FILE"
    what = """
A PyTorch job in RankTable mode (an AscendJob with a volume named `ranktable` or a hostPath/nfs
volume under `/user/mindx-dl/ranktable/`, or a `RANK_TABLE_FILE` in a launch environment) whose
torch_npu release does not read `RANK_TABLE_FILE` (looked up by the exact package version in the
release table: it is read from 6.0.rc3 on, never by a torch 1.11 build). Where the release reads
it but the MindCluster docs support RankTable mode only from a later release (6.0.RC3 itself),
the finding is a note, not an error. Reported at the `RANK_TABLE_FILE` setting, else at that
volume, with the torch_npu pin as related location. An unknown release is not reported.
"""
    why = """
A torch_npu that does not read `RANK_TABLE_FILE` builds its HCCL communicators by negotiation: the
rank table the operator writes does not shorten communication setup, the links are still
negotiated at every start and after every fault, while the manifest and scripts suggest the
optimization is on.
"""
    example = """
```text
torch==2.1.0
torch-npu==2.1.0.post6     # release 6.0.rc2: does not read RANK_TABLE_FILE
```
```yaml
          volumes:
          - name: ranktable          # RL314
```
Use a torch_npu of a release that reads it (for torch 2.1.0: 2.1.0.post10 or later).
"""
    fix = "No fix: the remedy is an image with a newer torch_npu."
    sources = (
        "MindCluster docs: 05_configuring_training_recovery, Table 4 (RankTable link setup needs torch_npu newer "
        "than 6.0.RC3)",
        "Ascend/pytorch release tags: torch_npu/csrc reads RANK_TABLE_FILE from 6.0.rc3 (recovery_lint "
        "schemas/torch_npu_releases.json)",
    )
    cases = examples(
        lambda: (
            Case(
                title="ranktable volume with torch_npu 2.1.0.post8 (6.0.RC3)",
                files={
                    "job.yaml": _JOB.format(framework="pytorch"),
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",
                },
                expect=("job.yaml:19:19",),
            ),
            Case(
                title="RANK_TABLE_FILE in a script, torch_npu wheel of 6.0.RC3 in the Dockerfile",
                files={
                    "train.sh": _SCRIPT,
                    "Dockerfile": "FROM x\nCOPY torch_npu-2.4.0-cp310-cp310-manylinux_2_17_aarch64.whl /tmp/\n",
                },
                expect=("train.sh:2:8",),
            ),
            Case(
                title="both a ranktable volume and RANK_TABLE_FILE: reported at the variable",
                files={
                    "job.yaml": _JOB.format(framework="pytorch").replace(
                        "          - name: ascend\n",
                        "          - name: ascend\n            env:\n            - name: RANK_TABLE_FILE\n"
                        "              value: /user/mindx-dl/ranktable/hccl.json\n",
                    ),
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",
                },
                expect=("job.yaml:16:15",),
            ),
            Case(
                title="a release name from the configuration",
                files={"train.sh": _SCRIPT},
                config={"versions": {"torch-npu": "6.0.RC2"}},
                expect=("train.sh:2",),
            ),
            Case(
                title="a volume under the operator's directory, even misnamed (RL315), is RankTable mode",
                files={
                    "job.yaml": _JOB.format(framework="pytorch").replace("- name: ranktable", "- name: rank-table"),
                    "requirements.txt": "torch-npu==1.11.0.post14\n",
                },
                expect=("job.yaml:19:19",),
            ),
            Case(
                title="torch_npu of release 6.0.0",
                files={
                    "job.yaml": _JOB.format(framework="pytorch"),
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
                },
            ),
            Case(title="torch_npu unknown", files={"job.yaml": _JOB.format(framework="pytorch"), "train.sh": _SCRIPT}),
            Case(
                title="MindSpore job",
                files={
                    "job.yaml": _JOB.format(framework="mindspore"),
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",
                },
            ),
            Case(
                title="no RankTable mode",
                files={"train.sh": "torchrun train.py\n", "requirements.txt": "torch-npu==2.1.0.post8\n"},
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        support = feature_support("rank_table", facts_of(job))
        if support.status not in ("missing", "undocumented"):
            return
        versions = job.context.versions
        torch_npu = versions.get("torch-npu")
        volume_span: Span | None = None
        if job.manifest is not None and job.manifest.is_ascendjob:
            for pod in job.manifest.pods:
                volume = table_volume(pod)
                if volume is not None:
                    volume_span = volume.name.span
                    break
        env_span = next(
            (v.span for v in (table_env(launch) for launch in job.launches) if v is not None and v.span is not None),
            None,
        )
        # the setting first: fixes of the other RankTable rules add volumes, never this variable
        span = env_span or volume_span
        if span is None:
            return
        related = [(versions.span("torch-npu"), f"torch_npu {torch_npu} is declared here")]
        if volume_span is not None and env_span is not None:
            related.append((volume_span, "the rank table volume is declared here"))
        reason = f"{with_origin(support.reason, job)}."
        if support.status == "undocumented":
            yield self.report(
                span,
                f"RankTable mode with a release outside the documented support: {reason}",
                related=related,
                severity=Severity.INFO,
            )
            return
        message = (
            f"RankTable mode with a torch_npu that does not read {ENV}: {reason} The HCCL links are still "
            "negotiated at every start and restart; use a torch_npu release that reads it (6.0.rc3 or later)"
        )
        yield self.report(span, message, related=related)
