"""RL206: unconditional retry (fault-retry-times > 0) without restartPolicy Never / PodFailed -> Ignore."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.lazyre import LazyPattern
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import Policy

from ._common import manifest_source

ATOI = LazyPattern(r"^[+-]?[0-9]+$")
# products the unconditional retry documentation does not list (it names Atlas 800T A2 / 900 A2 PoD)
UNDOCUMENTED_PLATFORMS = ("ascend-910", "ascend-npu")


def retry_times(text: str) -> int:
    """The label as the scheduler reads it (Go strconv.Atoi; anything unreadable counts as 0)."""
    return int(text) if ATOI.match(text) and len(text) < 20 else 0


def _ignores_pod_failed(policies: list[Policy]) -> bool:
    return any(p.handles("PodFailed") and p.action == "Ignore" for p in policies)


_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: qwen3
  labels:
    framework: pytorch
    fault-scheduling: "grace"
    fault-retry-times: "10"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch:latest
    Worker:
      replicas: 3
      restartPolicy: OnFailure  # from an older sample
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch:latest
"""

_VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    fault-scheduling: "grace"
    fault-retry-times: "3"
    pod-rescheduling: "on"
spec:
  policies:
    - event: PodFailed
      action: Ignore
  maxRetry: 3
  tasks:
  - name: default
    replicas: 2
    template:
      spec:
        restartPolicy: 'OnFailure'
        containers:
        - name: train
          image: torch:latest
"""


class FaultRetryNeedsNeverRestart(Rule):
    code = "RL206"
    scorecard = MISCONFIGURED
    name = "fault-retry-needs-never-restart"
    phase = "rescheduling"
    severity = Severity.ERROR
    fix_availability = "sometimes"
    summary = (
        "fault-retry-times above 0 without restartPolicy Never (or, on a Volcano Job, a PodFailed -> Ignore policy)"
    )
    what = """
A job whose `fault-retry-times` label is above 0 (unconditional retry on service-plane faults)
while a Pod's effective `restartPolicy` is explicitly something other than `Never`
(`OnFailure`, `Always`, `ExitCode`), or, on a Volcano Job, while no `policies` entry
(job-level or the task's own) says `event: PodFailed` / `action: Ignore`.

The effective restart policy of an AscendJob replica is the replica-level `restartPolicy`: Ascend
Operator overwrites the pod template's value with it, and it defaults to `Never`. On a Volcano Job
it is the pod template's; when it is not written there the rule says nothing about it.
The label is read the way the scheduler reads it (`strconv.Atoi`): a value that is not a number
counts as 0 (RL205 reports it).
"""
    why = """
Unconditional retry lets MindCluster restart the training after a service-plane fault without a
full rescheduling, up to `fault-retry-times` times. It only works when a failed Pod stays failed
and is left to the retry handling: MindCluster requires `restartPolicy: Never`, and on a Volcano
Job a `PodFailed` -> `Ignore` policy. With `OnFailure` the kubelet restarts the failed container
in place instead, and with another Volcano policy the job controller acts on the failure itself,
so the retry does not happen as configured and the fault takes the slow path.
"""
    example = """
```yaml
metadata:
  labels:
    fault-retry-times: "3"
spec:
  replicaSpecs:
    Worker:
      restartPolicy: OnFailure    # RL206
```
Use instead:
```yaml
    Worker:
      restartPolicy: Never
```
"""
    fix = """
Unsafe: rewrites the `restartPolicy` value to `Never`, keeping its quoting. Review: the container
is then no longer restarted in place after a crash that is not a fault. A missing `PodFailed` ->
`Ignore` policy on a Volcano Job has no automatic fix (the other policies of the job need a
decision).
"""
    sources = (
        "MindCluster docs: 06_api/15_yaml_configuration.md, spec.replicaSpecs.[ReplicaType].restartPolicy (当配置业务面故障"
        '无条件重试时，容器重启策略取值必须为"Never") and spec.policies (使用业务面故障无条件重试时…需要将event配置为'
        "PodFailed；action配置为Ignore)",
        "MindCluster docs: 06_api/01_volcano.md, fault-retry-times (任务发生业务面故障可以重调度的次数)",
        "MindCluster docs: 06_configuring_the_job_yaml_file (unconditional retry job YAML)",
        "ascend-operator: constants.go DefaultRestartPolicy=Never; pod.go setRestartPolicy",
    )
    cases = examples(
        lambda: (
            Case(
                title="Atlas training series (ascend-910): unconditional retry is not documented there",
                files={
                    "job.yaml": _ACJOB.replace(
                        "framework: pytorch\n", "framework: pytorch\n    ring-controller.atlas: ascend-910\n"
                    )
                },
                expect=("job.yaml:9",),
            ),
            Case(
                title="an AscendJob replica with OnFailure",
                files={"job.yaml": _ACJOB},
                expect=("job.yaml:21:22",),
                unsafe=True,
                fixed={"job.yaml": _ACJOB.replace("restartPolicy: OnFailure", "restartPolicy: Never")},
            ),
            Case(
                title="a Volcano Job with PodFailed / Ignore but a quoted OnFailure",
                files={"job.yaml": _VCJOB},
                expect=("job.yaml:19:24",),
                unsafe=True,
                fixed={"job.yaml": _VCJOB.replace("restartPolicy: 'OnFailure'", "restartPolicy: 'Never'")},
            ),
            Case(
                title="a Volcano Job keeping the sample PodEvicted -> RestartJob policy only",
                files={
                    "job.yaml": _VCJOB.replace("PodFailed", "PodEvicted")
                    .replace("Ignore", "RestartJob")
                    .replace("'OnFailure'", "Never")
                },
                expect=("job.yaml:7:24",),
                unsafe=True,
                fixed={
                    "job.yaml": _VCJOB.replace("PodFailed", "PodEvicted")
                    .replace("Ignore", "RestartJob")
                    .replace("'OnFailure'", "Never")
                },
            ),
            Case(
                title="a MindSpore job needs it too (unconditional retry is framework-independent)",
                files={"job.yaml": _ACJOB.replace("framework: pytorch", "framework: mindspore")},
                expect=("job.yaml:21:22",),
                unsafe=True,
                fixed={
                    "job.yaml": _ACJOB.replace("framework: pytorch", "framework: mindspore").replace(
                        "restartPolicy: OnFailure", "restartPolicy: Never"
                    )
                },
            ),
            Case(
                title="AscendJob replicas default to Never; a pod template value is overwritten by the operator",
                files={
                    "job.yaml": _ACJOB.replace("      restartPolicy: Never\n", "")
                    .replace("      restartPolicy: OnFailure  # from an older sample\n", "")
                    .replace("        spec:\n", "        spec:\n          restartPolicy: OnFailure\n", 1)
                },
            ),
            Case(
                title="no unconditional retry",
                files={"job.yaml": _ACJOB.replace('fault-retry-times: "10"', 'fault-retry-times: "0"')},
            ),
            Case(
                title="a value that is not a number counts as 0",
                files={"job.yaml": _ACJOB.replace('fault-retry-times: "10"', 'fault-retry-times: "ten"')},
            ),
            Case(
                title="a Volcano Job with the documented setting; restartPolicy Never",
                files={"job.yaml": _VCJOB.replace("'OnFailure'", "Never")},
            ),
            Case(
                title="a task's own PodFailed policy (events list) and no restartPolicy written",
                files={
                    "job.yaml": _VCJOB.replace("  policies:\n    - event: PodFailed\n      action: Ignore\n", "")
                    .replace("        restartPolicy: 'OnFailure'\n", "")
                    .replace(
                        "    replicas: 2\n",
                        "    replicas: 2\n    policies:\n    - events: [PodFailed]\n      action: Ignore\n",
                    )
                },
            ),
            Case(
                title="not a training job",
                files={
                    "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n"
                    '    fault-retry-times: "3"\nspec:\n  restartPolicy: Always\n  containers:\n  - name: c\n'
                    "    image: i\n"
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.is_training_job:
            return
        label = doc.label("fault-retry-times")
        times = retry_times(label.value) if label is not None else 0
        if label is None or times <= 0:
            return
        platform = job.context.platform
        if platform in UNDOCUMENTED_PLATFORMS:
            yield self.report(
                label.span,
                f'fault-retry-times "{label.value}" on {platform}: the MindCluster docs describe unconditional retry '
                "for Atlas 800T A2 and Atlas 900 A2 PoD (ascend-910b) only, so it may not take effect here",
                severity=Severity.INFO,
            )
            return
        related = [(label.span, f"fault-retry-times {times}")]
        for pod in doc.pods:
            policy = pod.restart_policy
            if policy is None or policy.value == "Never":
                continue
            where = f"replica {pod.role}" if doc.is_ascendjob and pod.role else f"task {pod.role or '(unnamed)'}"
            effect = (
                "Ascend Operator itself recreates Pods that exit with a retryable code"
                if policy.value == "ExitCode"
                else "a failed container is restarted in place"
            )
            yield self.report(
                policy.span,
                f'{where} has restartPolicy {policy.value} with fault-retry-times "{label.value}": unconditional '
                f"retry needs restartPolicy Never; otherwise {effect} and the fault is not retried as configured",
                unsafe_fix("Set restartPolicy to Never", replace_scalar(src, policy, "Never")),
                related=related,
            )
        if not doc.is_vcjob or _ignores_pod_failed(doc.policies):
            return
        lacking = [pod for pod in doc.pods if not _ignores_pod_failed(pod.policies)]
        if not lacking:
            return
        names = ", ".join(pod.role or "(unnamed)" for pod in lacking)
        policies_span = doc.policies_entry[0].span if doc.policies_entry is not None else None
        yield self.report(
            label.span,
            f'fault-retry-times "{label.value}" on a Volcano Job without a PodFailed -> Ignore policy (task {names}): '
            "unconditional retry needs `policies: - event: PodFailed, action: Ignore` so that the job controller "
            "leaves the failed Pod to the retry handling",
            related=[(policies_span, "the job's policies")] if policies_span is not None else [],
        )
