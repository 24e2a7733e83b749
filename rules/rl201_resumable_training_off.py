"""RL201: an NPU training job that does not turn resumable training on."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import insert_entry, insert_nested_entry, replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.premises import answer
from recovery_lint.rule import Case, Rule, examples
from recovery_lint.sources.manifest import ManifestDoc
from recovery_lint.sources.yamlnodes import YMap

from . import _phases
from ._common import manifest_source, npu_evidence

RESUMABLE = ("grace", "force")
EXTERNAL_PREFIXES = ("external-grace", "external-force")


def wants_grace(doc: ManifestDoc) -> bool:
    """Process-level recovery needs graceful deletion."""
    process = doc.label("process-recover-enable")
    return doc.annotation("recover-strategy") is not None or (process is not None and process.value == "on")


_VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: resnet
  labels:
    ring-controller.atlas: ascend-910b  # product
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: default
    replicas: 1
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
          resources:
            requests:
              huawei.com/Ascend910: 8
"""

_PYTORCH = {"target": {"framework": "pytorch"}}
_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: qwen3
  labels:
    framework: pytorch
    fault-scheduling: "off"
  annotations:
    recover-strategy: "retry,recover"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch:latest
            resources:
              limits:
                huawei.com/Ascend910: 8
"""


class ResumableTrainingOff(Rule):
    code = "RL201"
    name = "resumable-training-off"
    phase = "rescheduling"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    also_asks = ("resumable-framework",)
    summary = "NPU training job without fault-scheduling grace/force: resumable training is off"
    what = """
A Volcano Job or AscendJob that runs on NPUs (a container requests `huawei.com/Ascend910*` or
`huawei.com/npu`, or the job or a pod template carries `ring-controller.atlas`) whose
`metadata.labels` have no `fault-scheduling` label, or one that is neither `grace` nor `force`
(`off`, or a value the scheduler does not accept), for a job that trains with PyTorch or
MindSpore, the frameworks the resumable-training support tables list (another framework gets no
advice; an unknown one is withheld until `target.framework` names it).
"""
    why = """
Without `fault-scheduling: grace` or `force` the MindCluster scheduler plugin does not handle the
job's faults: a failed chip or node is not isolated and the job is not rescheduled onto healthy
nodes to resume from its last checkpoint. Only the job's plain retry limit (vcjob `maxRetry`,
AscendJob `backoffLimit`) applies, so a fault can mean a job stuck on the faulty node or a manual
resubmission, which is far longer than a rescheduling.
"""
    example = """
```yaml
metadata:
  labels:
    ring-controller.atlas: ascend-910b    # RL201: no fault-scheduling label
```
Use instead:
```yaml
metadata:
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "force"
```
"""
    fix = """
Unsafe: adds `fault-scheduling: "force"` to the job labels (creating `metadata.labels` when
needed), or rewrites an `off` or unknown value; `"grace"` is used instead when the job has a
`recover-strategy` annotation or `process-recover-enable: "on"`, because process-level recovery
needs graceful deletion, and when a Pod sets `hostNetwork: true`, which force deletion does not
allow. A value that differs from `grace` or `force` only by case keeps its
word. Review before applying: resumable training also expects the launch script to resume from a
checkpoint (`RESUME_MODE_ENABLE=1`, RL103), and `grace` needs a `terminationGracePeriodSeconds`
below the scheduler's grace-over-time.
"""
    sources = (
        "MindCluster docs: 06_api/15_yaml_configuration (fault-scheduling: grace, force, off)",
        "MindCluster docs: 04_configuring_fault_handling_policies (Job-level rescheduling needs fault-scheduling; "
        "配置为force时Pod不能配置使用主机网络)",
        "MindCluster docs: 04_resumable_training/01_solutions_principles (Job- and Pod-level rescheduling support "
        "tables: MindSpore, PyTorch)",
        "ascend-for-volcano: rescheduling/type.go, rescheduling/job.go GetJobFaultRescheduleLabel",
    )
    cases = examples(
        lambda: (
            Case(
                title="Volcano Job on NPUs without fault-scheduling, PyTorch declared in the configuration",
                files={"job.yaml": _VCJOB},
                config=_PYTORCH,
                expect=("job.yaml:5:3",),
                unsafe=True,
                fixed={
                    "job.yaml": _VCJOB.replace(
                        "    ring-controller.atlas: ascend-910b  # product\n",
                        '    ring-controller.atlas: ascend-910b  # product\n    fault-scheduling: "force"\n',
                    )
                },
            ),
            Case(
                title="off on a process-recovery AscendJob becomes grace",
                files={"job.yaml": _ACJOB},
                expect=("job.yaml:7:23",),
                unsafe=True,
                fixed={"job.yaml": _ACJOB.replace('fault-scheduling: "off"', 'fault-scheduling: "grace"')},
            ),
            Case(
                title="no labels at all; huawei.com/npu on Atlas 950",
                config=_PYTORCH,
                files={
                    "job.yaml": _ACJOB.replace(
                        '  labels:\n    framework: pytorch\n    fault-scheduling: "off"\n'
                        '  annotations:\n    recover-strategy: "retry,recover"\n',
                        "",
                    ).replace("huawei.com/Ascend910: 8", "huawei.com/npu: 16")
                },
                expect=("job.yaml:4:9",),
                unsafe=True,
                fixed={
                    "job.yaml": _ACJOB.replace(
                        '  labels:\n    framework: pytorch\n    fault-scheduling: "off"\n'
                        '  annotations:\n    recover-strategy: "retry,recover"\n',
                        '  labels:\n    fault-scheduling: "force"\n',
                    ).replace("huawei.com/Ascend910: 8", "huawei.com/npu: 16")
                },
            ),
            Case(
                title="a misspelt value keeps its word",
                files={"job.yaml": _ACJOB.replace('fault-scheduling: "off"', "fault-scheduling: Force")},
                expect=("job.yaml:7:23",),
                unsafe=True,
                fixed={"job.yaml": _ACJOB.replace('fault-scheduling: "off"', "fault-scheduling: force")},
            ),
            Case(
                title="a MindSpore job gets the advice too",
                files={
                    "job.yaml": _ACJOB.replace("framework: pytorch", "framework: mindspore").replace(
                        '    fault-scheduling: "off"\n', ""
                    )
                },
                expect=("job.yaml:5:3",),
                unsafe=True,
                fixed={
                    "job.yaml": _ACJOB.replace("framework: pytorch", "framework: mindspore").replace(
                        '    fault-scheduling: "off"\n', '    fault-scheduling: "grace"\n'
                    )
                },
            ),
            Case(
                title="a Pod on the host network gets grace: force is not for it",
                files={"job.yaml": _VCJOB.replace("      spec:\n", "      spec:\n        hostNetwork: true\n")},
                config=_PYTORCH,
                expect=("job.yaml:5:3",),
                unsafe=True,
                fixed={
                    "job.yaml": _VCJOB.replace("      spec:\n", "      spec:\n        hostNetwork: true\n").replace(
                        "    ring-controller.atlas: ascend-910b  # product\n",
                        '    ring-controller.atlas: ascend-910b  # product\n    fault-scheduling: "grace"\n',
                    )
                },
            ),
            Case(
                title="TensorFlow is not in the resumable-training support tables",
                files={"job.yaml": _ACJOB.replace("framework: pytorch", "framework: tensorflow")},
            ),
            Case(
                title="framework unknown: withheld, target.framework would say",
                files={"job.yaml": _VCJOB},
                withheld=("resumable-framework",),
            ),
            Case(
                title="resumable with force",
                files={
                    "job.yaml": _VCJOB.replace(
                        "    ring-controller.atlas: ascend-910b  # product\n",
                        '    ring-controller.atlas: ascend-910b  # product\n    fault-scheduling: "force"\n',
                    )
                },
            ),
            Case(
                title="process-level recovery with grace",
                files={"job.yaml": _ACJOB.replace('fault-scheduling: "off"', 'fault-scheduling: "grace"')},
            ),
            Case(
                title="an external prefix the scheduler code knows",
                files={"job.yaml": _ACJOB.replace('fault-scheduling: "off"', 'fault-scheduling: "external-force"')},
            ),
            Case(
                title="no NPU: no resource request and no product label",
                files={
                    "job.yaml": _VCJOB.replace(
                        "  labels:\n    ring-controller.atlas: ascend-910b  # product\n", ""
                    ).replace(
                        "          resources:\n            requests:\n              huawei.com/Ascend910: 8\n", ""
                    )
                },
            ),
            Case(
                title="a Deployment is not rescheduled by the fault-scheduling plugin",
                files={
                    "deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n"
                    "    ring-controller.atlas: ascend-910b\nspec:\n  template:\n    spec:\n      containers:\n"
                    "      - name: c\n        image: i\n"
                },
            ),
        )
    )

    @classmethod
    def phase_status(cls, job: Job) -> tuple[str, str]:
        return _phases.rescheduling(job)

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.is_training_job:
            return
        evidence = npu_evidence(doc)
        if evidence is None:
            return
        current = doc.label("fault-scheduling")
        value = current.value if current is not None else None
        if value in RESUMABLE or (value or "").startswith(EXTERNAL_PREFIXES):
            return
        framework = answer(job, "resumable-framework")
        if not framework.held:
            if framework.unknown:
                yield self.withhold(job, "resumable-framework", framework.evidence)
            return
        host = next((pod.host_network for pod in doc.pods if pod.host_network is not None), None)
        # force deletion cannot be used by Pods on the host network (the docs); grace can
        target = "grace" if wants_grace(doc) or host is not None else "force"
        cost = (
            "faults are not handled by MindCluster resumable training (no isolation of the faulty node, "
            "no rescheduling to resume from the last checkpoint); only the job's plain retry limit applies"
        )
        why_grace = ""
        if target == "grace":
            why_grace = (
                " (process-level recovery needs grace)"
                if wants_grace(doc)
                else " (force is not for Pods on the host network)"
            )
        if current is not None:
            fixed = value.lower() if value.lower() in RESUMABLE else target
            fix = unsafe_fix(f'Set fault-scheduling to "{fixed}"', replace_scalar(src, current, fixed))
            said = 'is "off"' if value == "off" else f'"{value}" is neither grace nor force'
            yield self.report(current.span, f"NPU training job ({evidence}): fault-scheduling {said}: {cost}", fix)
            return
        message = f"NPU training job ({evidence}) without a fault-scheduling label: {cost}"
        metadata = doc.metadata
        labels_entry = metadata.entry("labels") if metadata is not None else None
        fix = None
        if doc.labels is not None and labels_entry is not None:
            fix = unsafe_fix(
                f'Add the label fault-scheduling: "{target}"{why_grace}',
                insert_entry(src, doc.labels, "fault-scheduling", f'"{target}"'),
            )
            span = labels_entry[0].span
        elif isinstance(metadata, YMap) and labels_entry is None and not metadata.flow:
            fix = unsafe_fix(
                f'Add metadata.labels with fault-scheduling: "{target}"{why_grace}',
                insert_nested_entry(src, metadata, "labels", "fault-scheduling", f'"{target}"'),
            )
            span = doc.name.span if doc.name is not None else doc.span
        else:
            span = labels_entry[0].span if labels_entry is not None else doc.span
        yield self.report(span, message, fix)
