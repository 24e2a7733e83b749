"""RL203: a Volcano Job asks for Pod-level rescheduling but its policies restart the whole job."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import append_item, insert_sequence_entry
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import Policy
from recovery_lint.sources.yamlnodes import YScalar, YSeq
from recovery_lint.span import SourceText

from ._common import manifest_source
from ._podlevel import policy_groups, policy_removal

_POLICIES_TEXT = """\
  policies:  # job lifecycle
    # restart everything on eviction
    - event: PodEvicted
      action: RestartJob  # sample default
"""
_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec:
  minAvailable: 2
  schedulerName: volcano
  policies:  # job lifecycle
    # restart everything on eviction
    - event: PodEvicted
      action: RestartJob  # sample default
  maxRetry: 3
  tasks:
  - name: default
    replicas: 2
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
"""

_PATH_JOB = _JOB.replace(_POLICIES_TEXT, "").replace(
    'pod-rescheduling: "on"\n', 'pod-rescheduling: "on"\n  annotations:\n    huawei.com/recover_policy_path: pod\n'
)
_RETRY = _JOB.replace('    pod-rescheduling: "on"\n', '    pod-rescheduling: "on"\n    fault-retry-times: "3"\n')
_POLICIES = """\
  policies:  # job lifecycle
    # restart everything on eviction
    - event: PodEvicted
      action: RestartJob  # sample default
"""


def _alone_on_line(src: SourceText, key: YScalar) -> bool:
    start = src.line_start(src.line_of(key.span.start))
    return not src.text[start : key.span.start].strip()


# the Volcano events a node or chip fault raises on the job's Pods ("*": any event)
FAULT_EVENTS = ("PodEvicted", "PodFailed", "Unknown", "TaskFailed", "*")
ENDING = ("AbortJob", "TerminateJob")  # the job stops for good: no rescheduling at all


def _restarts_job(policy: Policy) -> bool:
    if policy.action == "RestartJob":
        return True
    if policy.action not in ENDING:
        return False
    events = (policy.event,) if policy.event else policy.events
    return not events or any(e in FAULT_EVENTS for e in events)


class PodReschedulingRestartsJob(Rule):
    code = "RL203"
    scorecard = MISCONFIGURED
    name = "pod-rescheduling-restarts-job"
    phase = "rescheduling"
    severity = Severity.WARNING
    premises = ("rescheduling",)
    fix_availability = "sometimes"
    summary = "Pod-level rescheduling is on, but a Volcano policy still restarts the whole job"
    what = """
A resumable Volcano Job (`fault-scheduling` `grace`/`force`) with `pod-rescheduling: "on"` whose
`spec.policies`, or a task's own `policies`, still contain `action: RestartJob` (the samples ship
`event: PodEvicted` / `action: RestartJob` for Job-level rescheduling), or `AbortJob` /
`TerminateJob` on an event a fault raises (`PodEvicted`, `PodFailed`, `Unknown`, `TaskFailed`,
`*`, or no event), which end the job instead of restarting it. Also a Volcano Job with
`huawei.com/recover_policy_path: pod` (Pod-level recovery, never upgraded to the job) that has no
`PodFailed` / `RestartTask` policy, which the docs ask for with it.
"""
    why = """
Pod-level rescheduling replaces only the Pods of the faulty node while the others wait. A
`RestartJob` policy makes the Volcano job controller kill and recreate every Pod of the job when
the faulty Pod is evicted or fails, so each fault costs a full job restart again (all ranks
reload the checkpoint and rebuild their communication groups). The MindCluster docs ask to delete
`policies` for Pod-level rescheduling (and to keep only `PodFailed` / `Ignore` when
`fault-retry-times` is used).
"""
    example = """
```yaml
metadata:
  labels:
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec:
  policies:                 # RL203
    - event: PodEvicted
      action: RestartJob
```
Use instead:
```yaml
metadata:
  labels:
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec: {}
```
"""
    fix = """
Unsafe: removes the `policies` entries, as the docs ask for Pod-level rescheduling, and the whole
`policies` key when nothing is left in it; every comment on the removed lines is kept on its own
line. Only the documented companions stay: `PodFailed` / `Ignore` when `fault-retry-times` asks
for unconditional retry, `PodFailed` / `RestartTask` with `huawei.com/recover_policy_path: pod`.
Review: without the policy a Pod that is evicted for another reason no longer restarts the job.
No fix for a flow-style list that keeps some of its entries. For `recover_policy_path: pod`, unsafe:
the `PodFailed` / `RestartTask` policy is added to `spec.policies`.
"""
    sources = (
        "MindCluster docs: 06_api/15_yaml_configuration (vcjob policies; delete policies for Pod-level rescheduling)",
        "MindCluster docs: 06_configuring_the_job_yaml_file (PodFailed / Ignore with fault-retry-times)",
        "MindCluster docs: 06_api/01_volcano.md and 15_yaml_configuration.md, huawei.com/recover_policy_path (pod：只支持"
        "Pod级重调度…当使用vcjob时，需要配置该策略：policies: -event:PodFailed -action:RestartTask)",
        "MindCluster docs: 01_solutions_principles (Pod-level rescheduling)",
    )
    cases = examples(
        lambda: (
            Case(
                title="recover_policy_path pod without PodFailed -> RestartTask",
                files={"job.yaml": _PATH_JOB},
                expect=("job.yaml:10:37",),
                unsafe=True,
                fixed={"job.yaml": _PATH_JOB + "  policies:\n    - event: PodFailed\n      action: RestartTask\n"},
            ),
            Case(
                title="recover_policy_path on the Pod template: the scheduler reads it from the Pods too",
                files={
                    "job.yaml": _JOB.replace(_POLICIES_TEXT, "").replace(
                        "    template:\n      spec:\n",
                        "    template:\n      metadata:\n        annotations:\n"
                        "          huawei.com/recover_policy_path: pod\n      spec:\n",
                    )
                },
                expect=("job.yaml:19:43",),
            ),
            Case(
                title="recover_policy_path pod with its policy",
                files={
                    "job.yaml": _PATH_JOB.replace(
                        "  maxRetry: 3\n", "  maxRetry: 3\n  policies:\n  - event: PodFailed\n    action: RestartTask\n"
                    )
                },
            ),
            Case(
                title="AbortJob on PodFailed ends the job at the first fault",
                files={
                    "job.yaml": _JOB.replace("event: PodEvicted", "event: PodFailed").replace(
                        "action: RestartJob", "action: AbortJob"
                    )
                },
                expect=("job.yaml:15:15",),
            ),
            Case(
                title="TerminateJob on TaskCompleted is how a job ends, not a fault",
                files={
                    "job.yaml": _JOB.replace("event: PodEvicted", "event: TaskCompleted").replace(
                        "action: RestartJob", "action: TerminateJob"
                    )
                },
            ),
            Case(
                title="the sample RestartJob policy with Pod-level rescheduling: the whole key goes, comments stay",
                files={"job.yaml": _JOB},
                expect=("job.yaml:15:15",),
                unsafe=True,
                fixed={
                    "job.yaml": _JOB.replace(
                        _POLICIES,
                        "  # job lifecycle\n    # restart everything on eviction\n      # sample default\n",
                    )
                },
            ),
            Case(
                title="only the RestartJob item goes when PodFailed / Ignore is kept for unconditional retry",
                files={
                    "job.yaml": _RETRY.replace(
                        "      action: RestartJob  # sample default\n",
                        "      action: RestartJob  # sample default\n    - event: PodFailed\n      action: Ignore\n",
                    )
                },
                expect=("job.yaml:16",),
                unsafe=True,
                fixed={
                    "job.yaml": _RETRY.replace(
                        "    - event: PodEvicted\n      action: RestartJob  # sample default\n",
                        "      # sample default\n    - event: PodFailed\n      action: Ignore\n",
                    )
                },
            ),
            Case(
                title="a task's own policies, in flow style",
                files={
                    "job.yaml": _JOB.replace(_POLICIES, "").replace(
                        "    replicas: 2\n",
                        "    replicas: 2\n    policies: [{event: PodFailed, action: RestartJob}]\n",
                    )
                },
                expect=("job.yaml:16",),
                unsafe=True,
                fixed={"job.yaml": _JOB.replace(_POLICIES, "")},
            ),
            Case(
                title="process-level recovery with Pod-level rescheduling on",
                files={
                    "job.yaml": _JOB.replace(
                        '    pod-rescheduling: "on"\n', '    pod-rescheduling: "on"\n    process-recover-enable: "on"\n'
                    )
                },
                expect=("job.yaml:16",),
                unsafe=True,
                fixed={
                    "job.yaml": _JOB.replace(
                        '    pod-rescheduling: "on"\n', '    pod-rescheduling: "on"\n    process-recover-enable: "on"\n'
                    ).replace(
                        _POLICIES,
                        "  # job lifecycle\n    # restart everything on eviction\n      # sample default\n",
                    )
                },
            ),
            Case(
                title="Job-level rescheduling keeps its RestartJob policy",
                files={"job.yaml": _JOB.replace('    pod-rescheduling: "on"\n', "")},
            ),
            Case(
                title="pod-rescheduling without fault-scheduling does nothing; the policy is the only restart left",
                files={"job.yaml": _JOB.replace('    fault-scheduling: "grace"\n', "")},
            ),
            Case(
                title="Pod-level rescheduling with PodFailed / Ignore only",
                files={"job.yaml": _JOB.replace("PodEvicted", "PodFailed").replace("RestartJob", "Ignore")},
            ),
            Case(
                title="an AscendJob has no Volcano policies",
                files={
                    "job.yaml": _JOB.replace("batch.volcano.sh/v1alpha1", "mindxdl.gitee.com/v1").replace(
                        "kind: Job", "kind: AscendJob"
                    )
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.is_vcjob or job.context.recovery not in ("pod", "process"):
            return
        label = doc.label("pod-rescheduling")
        if label is None or label.value != "on":
            return
        yield from self._pod_only_path(src, doc)
        for group in policy_groups(doc):
            offenders = [p for p in group.policies if _restarts_job(p)]
            if not offenders:
                continue
            where = group.where
            edits = policy_removal(src, group.policies, group.remove, group.entry)
            fix = unsafe_fix(f"Remove {where}, as Pod-level rescheduling needs", *edits) if edits else None
            first = offenders[0]
            action = first.node.scalar("action")
            events = first.event or ", ".join(first.events) or "any event"
            if first.action == "RestartJob":
                effect = (
                    f"restart the whole job ({events} -> RestartJob): Volcano recreates every Pod, so each fault "
                    "costs a full job restart instead of a Pod-level rescheduling"
                )
            else:
                effect = (
                    f"end the whole job ({events} -> {first.action}): Volcano stops every Pod for good, so a fault "
                    "ends the training instead of rescheduling the faulty Pod"
                )
            yield self.report(
                action.span if action is not None else first.node.span,
                f'pod-rescheduling is "on" but {where} {effect}',
                fix,
                related=[(label.span, "Pod-level rescheduling is requested here")],
            )

    def _pod_only_path(self, src: SourceText, doc):
        """``huawei.com/recover_policy_path: pod`` on a Volcano Job needs a ``PodFailed -> RestartTask``
        policy (the docs), or the failed Pod's task is not restarted and the job waits."""
        path = doc.scheduling_annotation(POLICY_PATH)
        if path is None or path.value != "pod":
            return
        policies = [*doc.policies, *(p for pod in doc.pods for p in pod.policies)]
        if any(p.handles("PodFailed") and p.action == "RestartTask" for p in policies):
            return
        fix = None
        spec = doc.root.map("spec")
        entry = doc.policies_entry
        fields = [("event", "PodFailed"), ("action", "RestartTask")]
        if entry is None and spec is not None:
            fix = unsafe_fix(
                "Add the policy PodFailed -> RestartTask", insert_sequence_entry(src, spec, "policies", fields)
            )
        elif entry is not None and isinstance(entry[1], YSeq):
            fix = unsafe_fix("Add the policy PodFailed -> RestartTask", append_item(src, entry[1], fields))
        yield self.report(
            path.span,
            f"{POLICY_PATH}: pod keeps recovery at the Pod level, which on a Volcano Job needs the policy event "
            "PodFailed, action RestartTask (the docs); without it the failed Pod's task is not restarted",
            fix,
        )


POLICY_PATH = "huawei.com/recover_policy_path"
