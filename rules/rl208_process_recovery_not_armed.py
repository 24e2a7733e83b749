"""RL208: process-level recovery asked for, without what the docs say it needs to start."""

from __future__ import annotations

from dataclasses import dataclass

from recovery_lint.diagnostics import Severity, safe_fix, unsafe_fix
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import Container, ManifestDoc, PodSpec
from recovery_lint.sources.yamlnodes import YScalar
from recovery_lint.span import SourceText

from ._common import env_entries, manifest_source
from ._grace import grace_instead
from ._podlevel import has_taskd_port, taskd_port_edits

# the strategies for which both the YAML reference and the configuration guide ask for fault-retry-times
NEEDS_RETRY_BUDGET = ("recover", "elastic-training")
POD_IP_FIELDS = [("name", "POD_IP"), ("valueFrom", [("fieldRef", [("fieldPath", "status.podIP")])])]
TTP_PORT = "TTP_PORT"
TTP_PORT_FIELDS = [("name", TTP_PORT), ("value", '"8000"')]

_JOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: qwen3
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    fault-retry-times: "10"
  annotations:
    recover-strategy: "retry,recover,dump"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: mindspeed-llm:2.3.0
            command: ["/bin/bash", "-c", "bash /job/code/train_start.sh"]
            env:
            - name: POD_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.podIP
            ports:
            - containerPort: 9601
              name: taskd-port
"""
_NO_POD_IP = _JOB.replace(
    "            - name: POD_IP\n              valueFrom:\n                fieldRef:\n                  fieldPath: status.podIP\n",
    "            - name: XDL_IP\n              value: x\n",
)
_WITH_TTP = _JOB.replace(
    "                  fieldPath: status.podIP\n",
    '                  fieldPath: status.podIP\n            - name: TTP_PORT\n              value: "8000"\n',
)
_NO_PORT = _JOB.replace("            ports:\n            - containerPort: 9601\n              name: taskd-port\n", "")


class ProcessRecoveryNotArmed(Rule):
    code = "RL208"
    scorecard = MISCONFIGURED
    name = "process-recovery-not-armed"
    phase = "rescheduling"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "Process-level recovery is asked for, but the job lacks what the docs say it needs to start"
    what = """
An AscendJob with a `recover-strategy` annotation (process-level recovery: `retry`, `recover`,
`recover-in-place`, `elastic-training`, `dump`, `exit`) or with `subHealthyStrategy: hotSwitch`
(hot switch, which pauses the training processes through the same TaskD and MindIO) that lacks one
of the pieces every example of the MindCluster docs carries:

- the `POD_IP` environment variable from `status.podIP` in a training container ("如果不配置此参数
  会影响训练任务的正常拉起": MindIO and TaskD talk over it);
- the TaskD port (`containerPort: 9601`, `name: taskd-port`) on a training container;
- for PyTorch, `TTP_PORT` in the container's environment (its `env` or its start-up): TaskD's
  controller raises without it and the recovery is never armed (with `dump`, RL210 asks for it
  beside the `ttp-port`);
- `fault-retry-times` among the labels, for `recover` or `elastic-training` ("如需使用进程级恢复，必须
  配置此参数"; the configuration guide's table does not ask for it for `retry` and
  `recover-in-place` alone, so those are left alone);
- `fault-scheduling: "grace"`: the YAML reference asks for grace for process-level rescheduling
  and online recovery; the configuration guide's example allows `force` and the official samples
  use it, so `force` is a note, not a warning.
"""
    why = """
Process-level recovery repairs a fault while the healthy training processes stay up, in seconds
instead of the minutes of a rescheduling. When a piece is missing it does not start: TaskD and
MindIO cannot reach each other without `POD_IP` and the port, the business-plane fault it handles
is not retried without `fault-retry-times`, and with force deletion the faulty Pod is killed
before it is repaired. Every fault then takes the slow path of a Job- or Pod-level rescheduling,
which the annotation was meant to avoid.
"""
    example = """
```yaml
metadata:
  annotations:
    recover-strategy: "retry,recover"
...
          containers:
          - name: ascend          # RL208: no POD_IP, no taskd-port
```
Use instead:
```yaml
          containers:
          - name: ascend
            env:
            - name: POD_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.podIP
            ports:
            - containerPort: 9601
              name: taskd-port
```
"""
    fix = """
Safe: the `POD_IP` entry (from `status.podIP`) is appended to the `env` of every container that
lacks it, and the TaskD port to its `ports`, creating the lists when needed; no fix for a container
whose list is written in flow style. Unsafe: `TTP_PORT` is added as `"8000"`, the docs' port (check
that it is free on the nodes); `fault-scheduling: "force"` becomes `"grace"`, which
also makes `terminationGracePeriodSeconds` take effect (no fix where a Pod's period would not fit
under grace: 0, or not below grace-over-time, 900 s unless `target.grace-over-time` says more). No fix for a missing `fault-retry-times`:
how many retries the job gets is the user's choice.
"""
    sources = (
        "MindCluster docs: 04_resumable_training/03_configuration/02_configuring_fault_handling_policies.md, 配置进程级"
        "别重调度 / 配置进程级在线恢复 (POD_IP from status.podIP: 如果不配置此参数会影响训练任务的正常拉起; containerPort "
        "9601 taskd-port)",
        "MindCluster docs: 06_api/15_yaml_configuration.md, fault-retry-times (如需使用进程级恢复，必须配置此参数) and "
        "fault-scheduling (进程级别重调度和进程级在线恢复场景，需将本参数配置为grace); the configuration guide's parameter "
        "table (fault-retry-times not needed for recover-in-place and retry)",
        "taskd: taskd/python/framework/manager/controller.py init_controller (POD_IP and TTP_PORT, or a ValueError)",
        "MindCluster docs: 02_configuring_fault_handling_policies.md, 配置亚健康热切 (POD_IP and the taskd-port for "
        "hotSwitch; TASKD_PROCESS_ENABLE on)",
    )
    cases = examples(
        lambda: (
            Case(title="the sample's pieces are all there", files={"job.yaml": _JOB}),
            Case(
                title="no POD_IP: appended from status.podIP",
                files={"job.yaml": _NO_POD_IP},
                expect=("job.yaml:19:19",),
                fixed={
                    "job.yaml": _NO_POD_IP.replace(
                        "              value: x\n",
                        "              value: x\n            - name: POD_IP\n              valueFrom:\n"
                        "                fieldRef:\n                  fieldPath: status.podIP\n",
                    )
                },
            ),
            Case(
                title="no TaskD port: added",
                files={"job.yaml": _NO_PORT},
                expect=("job.yaml:19:19",),
                fixed={
                    "job.yaml": _NO_PORT
                    + "            ports:\n              - containerPort: 9601\n                name: taskd-port\n"
                },
            ),
            Case(
                title="recover without fault-retry-times: no fix, the budget is the user's",
                files={"job.yaml": _JOB.replace('    fault-retry-times: "10"\n', "")},
                expect=("job.yaml:10:23",),
            ),
            Case(
                title="retry alone needs no fault-retry-times (the configuration table)",
                files={
                    "job.yaml": _WITH_TTP.replace('    fault-retry-times: "10"\n', "").replace(
                        '"retry,recover,dump"', '"retry"'
                    )
                },
            ),
            Case(
                title="no TTP_PORT without dump: TaskD's controller raises at start-up (unsafe: the docs' port)",
                files={"job.yaml": _JOB.replace('"retry,recover,dump"', '"retry,recover"')},
                expect=("job.yaml:19:19",),
                unsafe=True,
                fixed={"job.yaml": _WITH_TTP.replace('"retry,recover,dump"', '"retry,recover"')},
            ),
            Case(
                title="TTP_PORT exported by the launch script",
                files={
                    "job.yaml": _JOB.replace('"retry,recover,dump"', '"retry,recover"'),
                    "train_start.sh": "export TTP_PORT=8000\ntorchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py\n",
                },
            ),
            Case(
                title="hot switch needs POD_IP, the TaskD port and TTP_PORT as process-level recovery does",
                files={
                    "job.yaml": _NO_PORT.replace(
                        '    fault-retry-times: "10"\n  annotations:\n    recover-strategy: "retry,recover,dump"\n',
                        '    subHealthyStrategy: "hotSwitch"\n',
                    )
                },
                expect=("job.yaml:17:19", "job.yaml:17:19"),
            ),
            Case(
                title="force deletion: grace is what the YAML reference asks",
                files={"job.yaml": _JOB.replace('fault-scheduling: "grace"', 'fault-scheduling: "force"')},
                expect=("job.yaml:8:23",),
                unsafe=True,
                fixed={"job.yaml": _JOB},
            ),
            Case(
                title="force with a grace period grace would not allow: no fix",
                files={
                    "job.yaml": _JOB.replace('fault-scheduling: "grace"', 'fault-scheduling: "force"').replace(
                        "        spec:\n          containers:\n",
                        "        spec:\n          terminationGracePeriodSeconds: 4000\n          containers:\n",
                    )
                },
                expect=("job.yaml:8:23",),
                unsafe=True,
                fixed={
                    "job.yaml": _JOB.replace('fault-scheduling: "grace"', 'fault-scheduling: "force"').replace(
                        "        spec:\n          containers:\n",
                        "        spec:\n          terminationGracePeriodSeconds: 4000\n          containers:\n",
                    )
                },
            ),
            Case(
                title="a Volcano Job has no process-level recovery (RL102 says so)",
                files={
                    "job.yaml": _NO_POD_IP.replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1").replace(
                        "kind: AscendJob", "kind: Job"
                    )
                },
            ),
            Case(
                title="no recover-strategy: nothing asked",
                files={
                    "job.yaml": _NO_POD_IP.replace('  annotations:\n    recover-strategy: "retry,recover,dump"\n', "")
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.is_ascendjob:
            return
        strategy = doc.recover_strategy
        hot = doc.hot_switch
        training = doc.main_containers()
        if (strategy is None and hot is None) or not training:
            return
        armed = _Armed(strategy, "process-level recovery") if strategy is not None else _Armed(hot, "hot switch")
        yield from self._pod_ip(src, training, armed)
        yield from self._taskd_port(src, doc, training, armed)
        strategies = strategy.value.split(",") if strategy is not None else []  # not trimmed: RL205's
        if job.context.framework == "pytorch" and "dump" not in strategies:  # with dump RL210 asks for TTP_PORT
            yield from self._ttp_port(src, job, training, armed)
        if strategy is None:
            return
        if any(s in NEEDS_RETRY_BUDGET for s in strategies) and doc.label("fault-retry-times") is None:
            yield self.report(
                strategy.span,
                f"recover-strategy {strategy.value} without a fault-retry-times label: the YAML reference says "
                "process-level recovery must set it; without it the business-plane fault the recovery handles is "
                "not retried and the job is rescheduled instead",
            )
        fault = doc.label("fault-scheduling")
        if fault is not None and fault.value == "force":
            fix, tail = grace_instead(job, doc, src, fault)
            yield self.report(
                fault.span,
                'fault-scheduling "force" with process-level recovery: the YAML reference asks for "grace" for '
                "process-level rescheduling and online recovery (the faulty Pod is deleted gracefully), while the "
                "configuration guide's example allows either and the official samples use force" + tail,
                fix,
                related=[(strategy.span, "process-level recovery is asked for here")],
                severity=Severity.INFO,
            )

    def _pod_ip(self, src: SourceText, training: list[tuple[PodSpec, Container]], armed: _Armed):
        lacking = [c for _, c in training if not any(v.name.value == "POD_IP" for v in c.env)]
        if not lacking:
            return
        edits = env_entries(src, lacking, POD_IP_FIELDS)
        first = lacking[0]
        yield self.report(
            first.name_span,
            f"container {first.name or '(unnamed)'} has no POD_IP from status.podIP, which {armed.feature} "
            "needs: MindIO and TaskD talk over it, and without it the docs say the training does not start properly",
            safe_fix("Add POD_IP from status.podIP to the env", *edits) if edits else None,
            related=[(armed.where.span, f"{armed.feature} is asked for here")],
        )

    def _taskd_port(self, src: SourceText, doc: ManifestDoc, training, armed: _Armed):
        lacking = [c for _, c in training if not has_taskd_port(c)]
        if not lacking:
            return
        edits = taskd_port_edits(src, doc)
        first = lacking[0]
        yield self.report(
            first.name_span,
            f"container {first.name or '(unnamed)'} opens no TaskD port (containerPort 9601, name taskd-port), which "
            f"every {armed.feature} example of the docs adds on every Pod",
            safe_fix("Add containerPort 9601 named taskd-port", *edits) if edits else None,
            related=[(armed.where.span, f"{armed.feature} is asked for here")],
        )

    def _ttp_port(self, src: SourceText, job: Job, training, armed: _Armed):
        """TTP_PORT, where TaskD's controller reaches MindIO: without it the controller raises at start
        (taskd controller.py init_controller) and the recovery is never armed."""
        lacking = [c for _, c in training if not _sets(job, c, TTP_PORT)]
        if not lacking:
            return
        edits = env_entries(src, lacking, TTP_PORT_FIELDS)
        first = lacking[0]
        yield self.report(
            first.name_span,
            f"container {first.name or '(unnamed)'} sets no {TTP_PORT}, which {armed.feature} needs: TaskD's "
            "controller raises without it at start-up, so the recovery is never armed",
            unsafe_fix(f"Add {TTP_PORT}=8000 (the docs' port) to the env", *edits) if edits else None,
            related=[(armed.where.span, f"{armed.feature} is asked for here")],
        )


@dataclass(eq=False, repr=False)
class _Armed:
    """What asks for the recovery that needs TaskD and MindIO: the label or annotation, and its name."""

    where: YScalar
    feature: str


def _sets(job: Job, container: Container, name: str) -> bool:
    """Whether ``name`` reaches the container's processes: its env, or its start-up (which may also
    source a script that is not read)."""
    if any(v.name.value == name for v in container.env):
        return True
    return any(
        launch.may_set(name) or any(c.may_set(name) for c in launch.commands)
        for launch in job.launches
        if launch.container is container
    )
