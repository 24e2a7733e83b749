"""RL213: fault-scheduling "force" for Pods on the host network, which the fault-handling guide rules out."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import manifest_source
from ._grace import grace_instead

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llama
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "force"
    pod-rescheduling: "on"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          hostNetwork: true
          containers:
          - name: ascend
            image: torch:latest
"""


class ForceDeletionOnHostNetwork(Rule):
    code = "RL213"
    scorecard = MISCONFIGURED
    name = "force-deletion-on-host-network"
    phase = "rescheduling"
    severity = Severity.WARNING
    premises = ("rescheduling",)
    fix_availability = "sometimes"
    summary = 'fault-scheduling "force" on Pods that use the host network, which the docs rule out'
    what = """
A job the cluster reschedules with `fault-scheduling: "force"` whose Pods use `hostNetwork: true`.
The fault-handling guide says it for Job-level, Pod-level and process-level rescheduling alike:
"配置为force时Pod不能配置使用主机网络" (with force the Pods cannot use the host network), and adds
that force may make a rescheduling fail and repeat until it succeeds.
"""
    why = """
Force deletion does not wait for the faulty Pod to stop. On the host network its replacement binds
the node's own ports, which the old processes may still hold: the new Pod fails to start and the
rescheduling is tried again and again, each round costing the time a recovery was meant to save.
"""
    example = """
```yaml
metadata:
  labels:
    fault-scheduling: "force"      # RL213 with hostNetwork: true below
...
        spec:
          hostNetwork: true
```
Use instead:
```yaml
    fault-scheduling: "grace"
```
"""
    fix = """
Unsafe: sets `fault-scheduling` to `"grace"`, under which the Pods' `terminationGracePeriodSeconds`
takes effect; no fix where a Pod's period would not fit under grace (0, or not below the
scheduler's grace-over-time: 900 s unless `target.grace-over-time` says more).
"""
    sources = (
        "MindCluster docs: 04_resumable_training/03_configuration/02_configuring_fault_handling_policies.md, 配置Job级别"
        "重调度, 配置Pod级别重调度, 配置进程级别重调度 (配置为force时Pod不能配置使用主机网络，配置force时可能存在重调度失败并"
        "触发多次重调度直到成功的现象)",
        "MindCluster docs: 06_api/15_yaml_configuration.md, terminationGracePeriodSeconds (0 < period < grace-over-time)",
    )
    cases = examples(
        lambda: (
            Case(
                title="force on the host network: grace instead (unsafe)",
                files={"job.yaml": _ACJOB},
                expect=("job.yaml:8:23",),
                unsafe=True,
                fixed={"job.yaml": _ACJOB.replace('"force"', '"grace"')},
            ),
            Case(title="grace on the host network", files={"job.yaml": _ACJOB.replace('"force"', '"grace"')}),
            Case(
                title="force on the Pods' own network",
                files={"job.yaml": _ACJOB.replace("          hostNetwork: true\n", "")},
            ),
            Case(
                title="hostNetwork: false",
                files={"job.yaml": _ACJOB.replace("hostNetwork: true", "hostNetwork: false")},
            ),
            Case(
                title="a grace period grace would not allow: reported, no fix",
                files={
                    "job.yaml": _ACJOB.replace(
                        "          hostNetwork: true\n",
                        "          hostNetwork: true\n          terminationGracePeriodSeconds: 0\n",
                    )
                },
                expect=("job.yaml:8:23",),
                unsafe=True,
                fixed={
                    "job.yaml": _ACJOB.replace(
                        "          hostNetwork: true\n",
                        "          hostNetwork: true\n          terminationGracePeriodSeconds: 0\n",
                    )
                },
            ),
            Case(
                title="a job the cluster does not reschedule",
                files={"job.yaml": _ACJOB.replace('    fault-scheduling: "force"\n', "")},
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        fault = doc.label("fault-scheduling") if doc is not None else None
        if src is None or fault is None or fault.value != "force":
            return
        hosts = [pod.host_network for pod in doc.pods if pod.host_network is not None]
        if not hosts:
            return
        fix, tail = grace_instead(job, doc, src, fault)
        yield self.report(
            fault.span,
            'fault-scheduling "force" while the Pods use the host network, which the fault-handling guide rules out: '
            "a replacement Pod can find the node's ports still held by the one force-deleted, and the rescheduling "
            "fails and repeats" + tail,
            fix,
            related=[(hosts[0].span, "the host network")],
        )
