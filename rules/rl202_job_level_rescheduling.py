from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import insert_entry, replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.rule import Case, Rule

from ._common import manifest_source

_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b  # platform
    fault-scheduling: "grace"
spec:
  tasks:
  - name: default
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
"""


class JobLevelRescheduling(Rule):
    code = "RL202"
    name = "job-level-rescheduling"
    phase = "rescheduling"
    severity = Severity.WARNING
    fix_availability = "always"
    summary = "Resumable job without Pod-level rescheduling: every fault deletes and reschedules all Pods"
    what = """
A resumable training job (label `fault-scheduling` is `grace` or `force`) without the label
`pod-rescheduling: "on"`, and without process-level recovery. The cluster scheduler then uses its
default, Job-level rescheduling.
"""
    why = """
With Job-level rescheduling a single faulty node makes the scheduler delete, recreate and
reschedule every Pod of the job, and every rank reloads its checkpoint and rebuilds its
communication groups. Pod-level rescheduling replaces only the Pods on the faulty node, and the
healthy ones wait, which shortens the rescheduling phase of every fault.
"""
    example = """
```yaml
metadata:
  labels:
    fault-scheduling: "grace"    # RL202: no pod-rescheduling label
```
Use instead:
```yaml
metadata:
  labels:
    fault-scheduling: "grace"
    pod-rescheduling: "on"
```
"""
    fix = """
Unsafe: adds `pod-rescheduling: "on"` to the job labels (or turns an `off` value to `on`).
For PyTorch, Pod-level rescheduling also needs the TaskD patch in the image (`pip install` the
TaskD wheel and patch `torch/distributed/run.py`) and the `taskd-port` (9601); a Volcano Job must
also drop its `RestartJob` policies (RL203). Review before applying.
"""
    sources = (
        "MindCluster docs: 04_configuring_fault_handling_policies (Job-level and Pod-level rescheduling)",
        "MindCluster docs: 06_api/15_yaml_configuration (pod-rescheduling: on)",
        "ascend-for-volcano: util/type.go SinglePodTag=pod-rescheduling, EnableFunc=on",
    )
    cases = (
        Case(
            title="grace without pod-rescheduling",
            files={"job.yaml": _JOB},
            expect=("job.yaml:7",),
            unsafe=True,
            fixed={
                "job.yaml": _JOB.replace(
                    '    fault-scheduling: "grace"\n',
                    '    fault-scheduling: "grace"\n    pod-rescheduling: "on"\n',
                )
            },
        ),
        Case(
            title="pod-rescheduling set to off",
            files={
                "job.yaml": _JOB.replace(
                    '    fault-scheduling: "grace"\n',
                    '    fault-scheduling: "grace"\n    pod-rescheduling: "off"\n',
                )
            },
            expect=("job.yaml:8",),
            unsafe=True,
            fixed={
                "job.yaml": _JOB.replace(
                    '    fault-scheduling: "grace"\n',
                    '    fault-scheduling: "grace"\n    pod-rescheduling: "on"\n',
                )
            },
        ),
        Case(
            title="Pod-level rescheduling already on",
            files={
                "job.yaml": _JOB.replace(
                    '    fault-scheduling: "grace"\n',
                    '    fault-scheduling: "grace"\n    pod-rescheduling: "on"\n',
                )
            },
        ),
        Case(
            title="not resumable at all (that is RL201)",
            files={"job.yaml": _JOB.replace('    fault-scheduling: "grace"\n', "")},
        ),
        Case(
            title="process-level recovery",
            files={
                "job.yaml": _JOB.replace(
                    '    fault-scheduling: "grace"\n',
                    '    fault-scheduling: "grace"\n    process-recover-enable: "on"\n',
                )
            },
        ),
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or not doc.is_training_job or job.context.recovery != "job" or doc.labels is None:
            return
        src = manifest_source(job)
        fault = doc.label("fault-scheduling")
        taskd = " PyTorch also needs the TaskD patch in the image." if job.context.pytorch else ""
        current = doc.label("pod-rescheduling")
        if current is not None:
            fix = unsafe_fix('Set pod-rescheduling to "on"', replace_scalar(src, current, "on"))
            yield self.report(
                current.span,
                f'pod-rescheduling is "{current.value}": every fault deletes and reschedules all Pods of the job '
                f"(Job-level rescheduling).{taskd}",
                fix,
            )
            return
        fix = unsafe_fix(
            'Add the label pod-rescheduling: "on"', insert_entry(src, doc.labels, "pod-rescheduling", '"on"')
        )
        yield self.report(
            fault.span if fault else doc.labels.span,
            f'fault-scheduling "{fault.value if fault else ""}" without pod-rescheduling: "on": every fault '
            f"deletes and reschedules all Pods of the job (Job-level rescheduling).{taskd}",
            fix,
        )
