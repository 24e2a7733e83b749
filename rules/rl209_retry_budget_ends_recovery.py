"""RL209: a resumable job whose rescheduling budget is not the one it sets."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job
from recovery_lint.premises import answer
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import ManifestDoc

from ._common import VOLCANO_DEFAULT_RETRIES, npu_evidence

_VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
spec:
  minAvailable: 2
  schedulerName: volcano
  maxRetry: 100
  tasks:
  - name: default
    replicas: 2
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
"""
_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: qwen3
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "force"
    fault-retry-times: "10"
spec:
  runPolicy:
    backoffLimit: 100
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: torch:latest
"""


def _resumable(job: Job) -> bool:
    """Resumable, or to be made so (RL201 asks for it): the job the scheduler reschedules."""
    return job.context.recovery != "none" or answer(job, "resumable-framework").held


class RetryBudgetEndsRecovery(Rule):
    code = "RL209"
    scorecard = MISCONFIGURED
    name = "retry-budget-ends-recovery"
    phase = "rescheduling"
    severity = Severity.WARNING
    fix_availability = "none"
    summary = "The job's rescheduling budget is not what it sets: recovery stops after a few faults"
    what = """
An NPU training job, resumable or one RL201 asks to make resumable, whose total number of
reschedulings is bounded by a value it does not set as such:

- a Volcano Job without `spec.maxRetry` (or with 0): the docs say it is rescheduled 3 times, then
  fails ("不配置maxRetry或配置maxRetry取值为0时，系统默认进行3次重调度");
- an AscendJob without `spec.runPolicy.backoffLimit` that sets `fault-retry-times`: Ascend Operator
  then takes `fault-retry-times` as the limit of all its restarts ("若不配置backoffLimit，但是配置了
  fault-retry-times参数，则使用fault-retry-times的重调度次数"), so the retry count of
  business-plane faults also ends every other recovery (a note: the limit is documented).
"""
    why = """
Each fault of a long run uses one rescheduling. When the budget is spent the job fails for good and
waits for someone to resubmit it, which costs far more than any rescheduling; on a large cluster
with a fault every few hours three reschedulings last a day.
"""
    example = """
```yaml
kind: Job                      # Volcano
spec:
  schedulerName: volcano       # RL209: no maxRetry, rescheduled 3 times
```
Use instead:
```yaml
spec:
  schedulerName: volcano
  maxRetry: 100
```
"""
    fix = """
No fix: how many reschedulings a job may use is the user's choice.
"""
    sources = (
        "MindCluster docs: 06_api/15_yaml_configuration.md, vcjob maxRetry (无maxRetry或maxRetry等于0…默认进行3次重调度) "
        "and acjob backoffLimit (若不配置backoffLimit，但是配置了fault-retry-times参数，则使用fault-retry-times的重调度次数)",
        "ascend-operator: pkg/controllers/v1/ascendjob_controller.go setFaultRetryTimesToBackoffLimits",
    )
    cases = examples(
        lambda: (
            Case(title="a Volcano Job with its own maxRetry", files={"job.yaml": _VCJOB}),
            Case(
                title="a Volcano Job without maxRetry is rescheduled 3 times",
                files={"job.yaml": _VCJOB.replace("  maxRetry: 100\n", "")},
                expect=("job.yaml:7:23",),
            ),
            Case(
                title="maxRetry 0 is the same",
                files={"job.yaml": _VCJOB.replace("maxRetry: 100", "maxRetry: 0")},
                expect=("job.yaml:11:13",),
            ),
            Case(title="an AscendJob with backoffLimit", files={"job.yaml": _ACJOB}),
            Case(
                title="an AscendJob without backoffLimit: fault-retry-times is the limit of every restart",
                files={"job.yaml": _ACJOB.replace("  runPolicy:\n    backoffLimit: 100\n", "")},
                expect=("job.yaml:9:24",),
            ),
            Case(
                title="an AscendJob without backoffLimit or fault-retry-times restarts without limit",
                files={
                    "job.yaml": _ACJOB.replace("  runPolicy:\n    backoffLimit: 100\n", "").replace(
                        '    fault-retry-times: "10"\n', ""
                    )
                },
            ),
            Case(
                title="a job that is not on NPUs",
                files={
                    "job.yaml": _VCJOB.replace("  maxRetry: 100\n", "").replace(
                        "    ring-controller.atlas: ascend-910b\n", ""
                    )
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or not doc.is_training_job or npu_evidence(doc) is None:
            return
        if doc.is_vcjob and _resumable(job):
            yield from self._volcano(doc)
        elif doc.is_ascendjob:
            yield from self._ascend(doc)  # the operator takes fault-retry-times as the limit in any case

    def _volcano(self, doc: ManifestDoc):
        spec = doc.root.map("spec")
        retry = spec.scalar("maxRetry") if spec is not None else None
        if retry is not None and not (retry.value.strip().isdigit() and int(retry.value) == 0):
            return
        fault = doc.label("fault-scheduling")
        at = retry.span if retry is not None else (fault.span if fault is not None else doc.span)
        said = "maxRetry is 0" if retry is not None else "no spec.maxRetry"
        yield self.report(
            at,
            f"{said}: Volcano restarts this job {VOLCANO_DEFAULT_RETRIES} times, then the job fails and "
            "waits to be resubmitted; set spec.maxRetry to the number of faults a run should survive",
        )

    def _ascend(self, doc: ManifestDoc):
        spec = doc.root.map("spec")
        policy = spec.map("runPolicy") if spec is not None else None
        if policy is not None and policy.scalar("backoffLimit") is not None:
            return
        retry = doc.label("fault-retry-times")
        if retry is None or not retry.value.strip().isdigit() or int(retry.value) <= 0:
            return
        yield self.report(
            retry.span,
            f"fault-retry-times {retry.value} is also the limit of all the job's restarts, as no "
            "spec.runPolicy.backoffLimit is set: after that many faults of any kind the job fails for good",
            severity=Severity.INFO,
        )
