"""RL204: Pod-level rescheduling with the rank table mounted from a rings-config ConfigMap."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._ranktable import configmap_tables

_JOB = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: rings-config-gpt
  labels:
    ring-controller.atlas: ascend-910b
data:
  hccl.json: |
    {"status":"initializing"}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec:
  tasks:
  - name: default
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
          volumeMounts:
          - name: ascend-910-config
            mountPath: /user/serverid/devindex/config
        volumes:
        - name: ascend-910-config
          configMap:
            name: rings-config-gpt
"""
_PROCESS = (
    _JOB.split("---\n")[0]
    + """---
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
  annotations:
    recover-strategy: "recover"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: torch:latest
            volumeMounts:
            - name: ascend-910-config
              mountPath: /user/serverid/devindex/config
          volumes:
          - name: ascend-910-config
            configMap:
              name: rings-config-gpt
"""
)


class ConfigMapRanktableWithPodRescheduling(Rule):
    code = "RL204"
    scorecard = MISCONFIGURED
    name = "configmap-ranktable-with-pod-rescheduling"
    phase = "rescheduling"
    severity = Severity.WARNING
    premises = ("rescheduling",)
    fix_availability = "none"
    summary = "Pod- or process-level rescheduling with the rank table mounted from a rings-config ConfigMap"
    what = """
A resumable job with `pod-rescheduling: "on"`, or an AscendJob with process-level recovery (a
`recover-strategy` annotation), whose containers mount the rank table from a ConfigMap named
`rings-config-<job name>` (the legacy way, where the cluster fills `hccl.json` into the ConfigMap).
"""
    why = """
The MindCluster docs warn not to deliver the rank table through a ConfigMap with Pod-level or
process-level rescheduling (or on large clusters): rescheduling may fail, and the job then falls back to a
slower recovery or does not recover at all. With Ascend Operator the rank table is written to a
shared file instead: an AscendJob volume named `ranktable` (hostPath or NFS under
`/user/mindx-dl/ranktable/<namespace>.<job name>`).
"""
    example = """
```yaml
metadata:
  labels:
    pod-rescheduling: "on"
spec:
  ...
        volumes:
        - name: ascend-910-config
          configMap:
            name: rings-config-gpt      # RL204
```
Use instead (AscendJob, rank table written by Ascend Operator):
```yaml
        volumes:
        - name: ranktable
          hostPath:
            path: /user/mindx-dl/ranktable/default.gpt
```
"""
    fix = """
No fix: moving to the operator-written rank table changes the job kind or the volume and the
launch script together, which needs review.
"""
    sources = (
        "MindCluster docs: 04_resumable_training/01_solutions_principles, Pod-level rescheduling and 进程级别重调度 "
        "使用约束 (请勿使用ConfigMap挂载RankTable文件)",
        "MindCluster docs: 06_configuring_the_job_yaml_file",
        "MindCluster docs: api/hccl.json_file_description, api/ascend_operator (rings-config ConfigMap)",
    )
    cases = examples(
        lambda: (
            Case(
                title="Pod-level rescheduling with the rings-config ConfigMap",
                files={"job.yaml": _JOB},
                expect=("job.yaml:33:19",),
            ),
            Case(
                title="process-level recovery on an AscendJob with the rings-config ConfigMap",
                files={"job.yaml": _PROCESS},
                expect=("job.yaml:36:21",),
            ),
            Case(
                title="Job-level rescheduling may keep the ConfigMap",
                files={"job.yaml": _JOB.replace('    pod-rescheduling: "on"\n', "")},
            ),
            Case(
                title="pod-rescheduling off",
                files={"job.yaml": _JOB.replace('pod-rescheduling: "on"', 'pod-rescheduling: "off"')},
            ),
            Case(
                title="not resumable: pod-rescheduling alone does nothing",
                files={"job.yaml": _JOB.replace('    fault-scheduling: "grace"\n', "")},
            ),
            Case(
                title="the ConfigMap volume is declared but not mounted",
                files={
                    "job.yaml": _JOB.replace(
                        "          volumeMounts:\n          - name: ascend-910-config\n"
                        "            mountPath: /user/serverid/devindex/config\n",
                        "",
                    )
                },
            ),
            Case(
                title="another ConfigMap",
                files={"job.yaml": _JOB.replace("name: rings-config-gpt\n", "name: reset-config-gpt\n")},
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or not doc.is_training_job or job.context.recovery not in ("pod", "process"):
            return
        label = doc.label("pod-rescheduling")
        strategy = doc.annotation("recover-strategy") if job.context.recovery == "process" else None
        if strategy is not None:
            asked, where = "process-level recovery (recover-strategy)", strategy
        elif label is not None and label.value == "on":
            asked, where = 'pod-rescheduling is "on"', label
        else:
            return
        for name, mounts in configmap_tables(doc):
            yield self.report(
                name.span,
                f"the rank table comes from ConfigMap {name.value} (mounted at {mounts[0].mount_path.value}) with "
                f"{asked}: the MindCluster docs warn that the rescheduling may fail with a ConfigMap rank table; use "
                "the shared file Ascend Operator writes (a volume named ranktable)",
                related=[(where.span, "the recovery is requested here")]
                + [(m.mount_path.span, "mounted here") for m in mounts],
            )
