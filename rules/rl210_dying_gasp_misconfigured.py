"""RL210: the dying-gasp checkpoint (dump, graceExit) or the graceful deletion it runs in, misconfigured."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job
from recovery_lint.premises import answer
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import Container, ManifestDoc

from ._grace import DEFAULT_GRACE_OVER_TIME, GRACE_OVER_TIME_MAX

TTP_PORT = "TTP_PORT"
TTP_PORT_NAME = "ttp-port"

_JOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: qwen3
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    subHealthyStrategy: "graceExit"
  annotations:
    recover-strategy: "dump"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          terminationGracePeriodSeconds: 360
          containers:
          - name: ascend
            env:
            - name: TTP_PORT
              value: "8000"
            ports:
            - containerPort: 8000
              name: ttp-port
"""


class DyingGaspMisconfigured(Rule):
    code = "RL210"
    scorecard = MISCONFIGURED
    name = "dying-gasp-misconfigured"
    phase = "rescheduling"
    severity = Severity.WARNING
    fix_availability = "none"
    also_asks = ("grace-over-time",)
    summary = "The dying-gasp checkpoint or the graceful deletion it runs in cannot work as configured"
    what = """
The pieces of the dying-gasp checkpoint (临终CKPT: the last checkpoint a faulty Pod writes before it
goes) and of the graceful deletion it runs in, checked against the MindCluster docs:

- `subHealthyStrategy: graceExit` without the `dump` strategy in `recover-strategy` ("使用graceExit
  策略时，需保证任务开启了临终CKPT保存功能"; `dump` exists on an AscendJob only);
- `dump` in `recover-strategy` while a training container opens no `ttp-port` or sets no `TTP_PORT`,
  or `TTP_PORT` differs from the `ttp-port` containerPort ("请注意上下保持一致");
- with `fault-scheduling: "grace"`, a `terminationGracePeriodSeconds` that is not below the
  scheduler's `grace-over-time` (the docs: 0 < terminationGracePeriodSeconds < grace-over-time).
  Above 3600 s, the largest grace-over-time the plugin accepts, it is wrong on every cluster; from
  the configured `target.grace-over-time` on it is wrong on that cluster; without it a period of
  900 s (the default grace-over-time) or more is withheld until the setting is declared. A period
  of 0 kills the Pod at once, with no time for the graceful exit. With `force` the field has no
  effect and is left alone.
"""
    why = """
The dying-gasp checkpoint saves the training state at the moment of the fault, so the rescheduled
job resumes from there instead of from the last periodic checkpoint: without it (or when MindIO
cannot reach the process over the TTP port) the job loses every step since that checkpoint. A
grace period the scheduler does not wait for is cut short: the Pod is force-deleted in the middle
of its save, and the half-written checkpoint is useless.
"""
    example = """
```yaml
metadata:
  labels:
    subHealthyStrategy: "graceExit"     # RL210: no dump strategy
```
Use instead:
```yaml
metadata:
  labels:
    subHealthyStrategy: "graceExit"
  annotations:
    recover-strategy: "dump"
```
"""
    fix = """
No fix: the port, the strategies and the grace period are the user's to choose; the message says
what to add.
"""
    sources = (
        "MindCluster docs: 06_api/15_yaml_configuration.md, subHealthyStrategy (使用graceExit策略时，需保证任务开启了"
        "临终CKPT保存功能) and terminationGracePeriodSeconds (0 < … < grace-over-time; 只有当fault-scheduling配置为grace"
        "时，该字段才生效)",
        "MindCluster docs: 04_resumable_training/03_configuration/03_configuring_training_recovery.md, 临终CKPT (dump "
        "strategy; ttp-port containerPort and TTP_PORT, 请注意上下保持一致)",
        "ascend-for-volcano: plugin/const.go (DefaultGraceOverTime 900, maxGraceOverTime 3600)",
    )
    cases = examples(
        lambda: (
            Case(title="the dying-gasp sample", files={"job.yaml": _JOB}),
            Case(
                title="graceExit without dump",
                files={"job.yaml": _JOB.replace('recover-strategy: "dump"', 'recover-strategy: "retry"')},
                expect=("job.yaml:9:25",),
            ),
            Case(
                title="dump with TTP_PORT differing from the ttp-port",
                files={"job.yaml": _JOB.replace('value: "8000"', 'value: "8001"')},
                expect=("job.yaml:23:22",),
            ),
            Case(
                title="dump without a ttp-port",
                files={
                    "job.yaml": _JOB.replace(
                        "            ports:\n            - containerPort: 8000\n              name: ttp-port\n", ""
                    )
                },
                expect=("job.yaml:20:19",),
            ),
            Case(
                title="a grace period longer than any grace-over-time",
                files={
                    "job.yaml": _JOB.replace(
                        "terminationGracePeriodSeconds: 360", "terminationGracePeriodSeconds: 4000"
                    )
                },
                expect=("job.yaml:18:42",),
            ),
            Case(
                title="the grace period of the official sample equals the configured grace-over-time",
                files={
                    "job.yaml": _JOB.replace("terminationGracePeriodSeconds: 360", "terminationGracePeriodSeconds: 900")
                },
                config={"target": {"grace-over-time": 900}},
                expect=("job.yaml:18:42",),
            ),
            Case(
                title="grace-over-time not configured: withheld",
                files={
                    "job.yaml": _JOB.replace("terminationGracePeriodSeconds: 360", "terminationGracePeriodSeconds: 900")
                },
                withheld=("grace-over-time",),
            ),
            Case(
                title="a grace period of 0 leaves no time for the graceful exit",
                files={
                    "job.yaml": _JOB.replace("terminationGracePeriodSeconds: 360", "terminationGracePeriodSeconds: 0")
                },
                expect=("job.yaml:18:42",),
            ),
            Case(
                title="with force the grace period has no effect",
                files={
                    "job.yaml": _JOB.replace(
                        "terminationGracePeriodSeconds: 360", "terminationGracePeriodSeconds: 4000"
                    ).replace('fault-scheduling: "grace"', 'fault-scheduling: "force"')
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or not doc.is_training_job:
            return
        strategy = doc.recover_strategy
        strategies = strategy.value.split(",") if strategy is not None else []
        sub = doc.label("subHealthyStrategy")
        if sub is not None and sub.value == "graceExit" and "dump" not in strategies:
            where = "add dump to its recover-strategy" if doc.is_ascendjob else "dump exists on an AscendJob only"
            yield self.report(
                sub.span,
                "subHealthyStrategy graceExit needs the dying-gasp checkpoint (the dump strategy), which this job does "
                f"not turn on ({where}): a sub-healthy node is left without saving the training state",
            )
        if strategy is not None and "dump" in strategies:
            yield from self._ttp(doc, strategy)
        yield from self._grace_period(job, doc)

    def _ttp(self, doc: ManifestDoc, strategy):
        for _pod, container in doc.main_containers():
            port = _ttp_container_port(container)
            env = next((v for v in container.env if v.name.value == TTP_PORT), None)
            at = container.name_span
            if port is None or env is None:
                missing = " and ".join(
                    m for m, absent in (("ttp-port containerPort", port is None), ("TTP_PORT", env is None)) if absent
                )
                yield self.report(
                    at,
                    f"recover-strategy has dump, but container {container.name or '(unnamed)'} has no {missing}: MindIO "
                    "reaches the process for its dying-gasp checkpoint over that port (8000 in the docs)",
                    related=[(strategy.span, "the dump strategy")],
                )
            elif env.value is not None and env.value.value.strip() != port.value.strip():
                yield self.report(
                    env.value.span,
                    f"TTP_PORT is {env.value.value} but the ttp-port containerPort is {port.value}: the docs ask for the "
                    "same port in both, or MindIO cannot reach the process for the dying-gasp checkpoint",
                    related=[(port.span, "the ttp-port")],
                )

    def _grace_period(self, job: Job, doc: ManifestDoc):
        fault = doc.label("fault-scheduling")
        if fault is None or fault.value != "grace":
            return
        configured = answer(job, "grace-over-time")
        limit = job.context.settings.get("target.grace-over-time")
        for pod in doc.pods:
            node = pod.node.scalar("terminationGracePeriodSeconds")
            if node is None or not node.value.strip().isdigit():
                continue
            seconds = int(node.value)
            if seconds == 0:
                yield self.report(
                    node.span,
                    "terminationGracePeriodSeconds 0 with grace: the Pod is killed the moment it is deleted, with no "
                    "time for the graceful exit or a dying-gasp save; the YAML reference asks for more than 0 and "
                    "less than grace-over-time",
                    related=[(fault.span, "graceful deletion")],
                )
                continue
            if seconds >= GRACE_OVER_TIME_MAX:
                bound, said = GRACE_OVER_TIME_MAX, "the largest grace-over-time the scheduler accepts"
            elif limit is not None and seconds >= int(limit):
                bound, said = int(limit), "the cluster's grace-over-time (target.grace-over-time)"
            else:
                if limit is None and seconds >= DEFAULT_GRACE_OVER_TIME:  # too long unless the cluster raised it
                    yield self.withhold(
                        job,
                        "grace-over-time",
                        f"terminationGracePeriodSeconds {seconds}: {configured.evidence}",
                        at=node.span,
                    )
                continue
            yield self.report(
                node.span,
                f"terminationGracePeriodSeconds {seconds} is not below {said} ({bound} s): with grace the scheduler "
                "force-deletes the Pod before the period ends, in the middle of its dying-gasp save",
                related=[(fault.span, "graceful deletion")],
            )


def _ttp_container_port(container: Container):
    ports = container.node.seq("ports")
    for item in ports.maps() if ports is not None else ():
        if item.text("name") == TTP_PORT_NAME:
            return item.scalar("containerPort")
    return None
