"""RL202: Resumable job without Pod-level rescheduling: every fault deletes and reschedules all Pods."""

from __future__ import annotations

import posixpath

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import insert_entry, replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.rule import Case, Rule, examples
from recovery_lint.sources.manifest import ManifestDoc
from recovery_lint.sources.yamlnodes import YScalar
from recovery_lint.span import SourceText

from ._common import manifest_source
from ._podlevel import blockers, missing_taskd, not_applicable, policy_groups, policy_removal, taskd_port_edits

_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b  # platform
    fault-scheduling: "grace"
spec:
  minAvailable: 2
  tasks:
  - name: default
    replicas: 2
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
"""
_GRACE = '    fault-scheduling: "grace"\n'
_WITH_LABEL = _GRACE + '    pod-rescheduling: "on"\n'
_PORT = "          ports:\n            - containerPort: 9601\n              name: taskd-port\n"
_FIXED = _JOB.replace(_GRACE, _WITH_LABEL) + _PORT
_RESTART_JOB = "  minAvailable: 2\n  policies:\n  - event: PodEvicted\n    action: RestartJob\n"
_TASKD_IMAGE = (
    "FROM torch\nRUN pip install taskd.whl && sed -i '/import os/i import taskd.python.adaptor.patch' run.py\n"
)
_TASKD_SCRIPT = "python manager.py &\ntorchrun --nproc_per_node 8 train.py\n"
_CONFIGMAP = (
    "          volumeMounts:\n          - name: ascend-910-config\n"
    "            mountPath: /user/serverid/devindex/config\n"
    "        volumes:\n        - name: ascend-910-config\n          configMap:\n"
    "            name: rings-config-gpt\n"
)
_ACJOB = _JOB.replace("batch.volcano.sh/v1alpha1", "mindxdl.gitee.com/v1").replace("kind: Job", "kind: AscendJob")
_POD_LEVEL = (
    _JOB.replace(_GRACE, _WITH_LABEL).replace(
        "image: torch:latest", 'command: ["/bin/bash", "-c", "bash /job/code/train.sh"]'
    )
    + _PORT
)
_PROCESS = _GRACE + '    process-recover-enable: "on"\n  annotations:\n    recover-strategy: "recover"\n'


class JobLevelRescheduling(Rule):
    code = "RL202"
    name = "job-level-rescheduling"
    phase = "rescheduling"
    severity = Severity.WARNING
    premises = ("rescheduling",)
    fix_availability = "sometimes"
    summary = "Resumable job without Pod-level rescheduling: every fault deletes and reschedules all Pods"
    what = """
A resumable training job (label `fault-scheduling` is `grace` or `force`) of several Pods without
the label `pod-rescheduling: "on"`, and without process-level recovery (an AscendJob feature). The
cluster scheduler then uses its default, Job-level rescheduling. Not reported where Pod-level
rescheduling does not apply: a job of a single Pod, TensorFlow, MindSpore on Atlas 850/950
(`ascend-npu`).

Also a job with Pod-level rescheduling, but no `recover-strategy` and no hot switch, whose launch
script starts the TaskD manager (`python manager.py`, `start_taskd_manager`) without
`export TASKD_PROCESS_ENABLE="off"`: unset, TaskD takes it for on and waits for the process-level
recovery (MindIO's `POD_IP` and `TTP_PORT`, ClusterD's registration) the job does not have, so the
Pod-level rescheduling falls back to the whole job.
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
Unsafe: adds `pod-rescheduling: "on"` to the job labels (or turns another value to `on`), adds the
TaskD port (`containerPort: 9601`, `name: taskd-port`) to every container that lacks it, and on a
Volcano Job removes the `policies` (every entry, as the docs say; the `PodFailed -> Ignore` of
unconditional retry stays). The message says what the repository does not show and no manifest
edit can add: for PyTorch, the TaskD patch in the image and the TaskD manager on rank 0. No fix
where the docs say Pod-level rescheduling fails as the job is written (a rank table from a
`rings-config-` ConfigMap, RL204; `force` with `hostNetwork: true`): the message says what to
change first.
"""
    sources = (
        "MindCluster docs: 04_resumable_training/01_solutions_principles (Pod-level rescheduling: constraints, "
        "supported products and frameworks)",
        "MindCluster docs: 03_configuration/02_configuring_fault_handling_policies (configuring Pod-level "
        "rescheduling: TaskD patch, taskd-port 9601, TaskD manager; force cannot use host network)",
        "MindCluster docs: 06_api/15_yaml_configuration (pod-rescheduling: on; Volcano Job policies)",
        "ascend-for-volcano: util/type.go SinglePodTag=pod-rescheduling, EnableFunc=on",
        "MindCluster docs: 02_configuring_fault_handling_policies, 配置Pod级别重调度 (若任务YAML中“recover-strategy”未配置恢复策略"
        '且未开启亚健康热切，需要配置export TASKD_PROCESS_ENABLE="off"); taskd: framework/manager/manager.py (unset counts as on)',
    )
    cases = examples(
        lambda: (
            Case(
                title="Pod-level rescheduling: the TaskD manager starts without TASKD_PROCESS_ENABLE=off",
                files={"job.yaml": _POD_LEVEL, "train.sh": _TASKD_SCRIPT, "Dockerfile": _TASKD_IMAGE},
                expect=("train.sh:1:1",),
            ),
            Case(
                title="Pod-level rescheduling: TASKD_PROCESS_ENABLE=off before the manager",
                files={
                    "job.yaml": _POD_LEVEL,
                    "train.sh": 'export TASKD_PROCESS_ENABLE="off"\n' + _TASKD_SCRIPT,
                    "Dockerfile": _TASKD_IMAGE,
                },
            ),
            Case(
                title="grace without pod-rescheduling: label and TaskD port; TaskD itself is said to be missing",
                files={"job.yaml": _JOB},
                expect=("job.yaml:7",),
                unsafe=True,
                fixed={"job.yaml": _FIXED},
            ),
            Case(
                title="pod-rescheduling set to off, the Volcano RestartJob policy removed with it",
                files={
                    "job.yaml": _JOB.replace(_GRACE, _GRACE + '    pod-rescheduling: "off"\n').replace(
                        "  minAvailable: 2\n", _RESTART_JOB
                    ),
                    "Dockerfile": _TASKD_IMAGE,
                    "train.sh": _TASKD_SCRIPT,
                },
                expect=("job.yaml:8",),
                unsafe=True,
                fixed={"job.yaml": _FIXED},
            ),
            Case(title="Pod-level rescheduling already on", files={"job.yaml": _JOB.replace(_GRACE, _WITH_LABEL)}),
            Case(title="not resumable at all (that is RL201)", files={"job.yaml": _JOB.replace(_GRACE, "")}),
            Case(
                title="a single Pod: nothing to reschedule alone",
                files={"job.yaml": _JOB.replace("replicas: 2", "replicas: 1")},
            ),
            Case(title="process-level recovery on an AscendJob", files={"job.yaml": _ACJOB.replace(_GRACE, _PROCESS)}),
            Case(
                title="process-recover-enable on a Volcano Job does nothing: still Job-level",
                files={"job.yaml": _JOB.replace(_GRACE, _PROCESS)},
                expect=("job.yaml:7",),
            ),
            Case(
                title="a ConfigMap rank table: the docs say Pod-level rescheduling may fail, so no fix",
                files={"job.yaml": _JOB + _CONFIGMAP},
                expect=("job.yaml:7",),
                unsafe=True,
                fixed={"job.yaml": _JOB + _CONFIGMAP},
            ),
            Case(
                title="TensorFlow is not supported",
                files={
                    "job.yaml": _JOB + "          env:\n          - name: framework\n            value: TensorFlow\n"
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.is_training_job:
            return
        if job.context.recovery == "pod":
            yield from self._taskd_process_enable(job, doc)
        if job.context.recovery != "job":
            return
        if doc.labels is None or not_applicable(job) is not None:
            return
        fault = doc.label("fault-scheduling")
        current = doc.label("pod-rescheduling")
        if current is not None:
            where, said = current.span, f'pod-rescheduling is "{current.value}"'
        else:
            where = fault.span if fault else doc.labels.span
            said = f'fault-scheduling "{fault.value if fault else ""}" without pod-rescheduling: "on"'
        message = f"{said}: every fault deletes and reschedules all Pods of the job (Job-level rescheduling)"
        stop = blockers(doc)
        if stop:
            yield self.report(where, f"{message}. Before Pod-level rescheduling: {'; '.join(stop)}")
            return
        missing = missing_taskd(job)
        if missing:
            message += f". Pod-level rescheduling of PyTorch also needs {' and '.join(missing)}"
        yield self.report(where, message, _fix(src, doc, current))

    def _taskd_process_enable(self, job: Job, doc: ManifestDoc):
        """A Pod-level job without process-level recovery or hot switch that starts the TaskD manager
        must tell it so: unset, TASKD_PROCESS_ENABLE counts as on, and the manager then waits for
        MindIO and ClusterD's process-level recovery that this job does not have."""
        hot = doc.label("subHealthyStrategy")
        if doc.annotation("recover-strategy") is not None or (hot is not None and hot.value == "hotSwitch"):
            return
        for script in job.scripts:
            start = next((c for c in script.commands if _starts_taskd_manager(c)), None)
            if start is None:
                continue
            value = _env_at(job, script, TASKD_ENABLE)
            if value is None and _env_open_at(job, script):
                continue  # a script sourced before, not read, may set it
            if value is not None and (value.known is None or value.known.strip().lower() == "off"):
                continue  # off, or set at run time
            said = f"{TASKD_ENABLE}={value.known}" if value is not None else f"{TASKD_ENABLE} is not set (on)"
            yield self.report(
                start.span,
                f"the TaskD manager starts with {said} in a job with Pod-level rescheduling but no recover-strategy "
                'and no hot switch: the docs ask for export TASKD_PROCESS_ENABLE="off" there, or the manager waits '
                "for a process-level recovery that never comes (POD_IP and TTP_PORT, ClusterD's registration)",
                related=[(value.span, "set here")] if value is not None and value.span is not None else [],
            )
            return


TASKD_ENABLE = "TASKD_PROCESS_ENABLE"


def _starts_taskd_manager(command) -> bool:
    """``python manager.py`` or a command whose words call the TaskD manager API."""
    words = [w.value or w.text for w in command.words]
    return any(posixpath.basename(w) == "manager.py" for w in words[:3]) or any(
        "start_taskd_manager" in w for w in words
    )


def _env_at(job: Job, script, name: str):
    """The variable as the script's commands see it: from the job's launch commands in that script,
    else the end of the launch."""
    for launch in job.launches:
        if script in launch.scripts:
            for cmd in launch.commands:
                if cmd.script is script and name in cmd.env:
                    return cmd.env[name]
            return launch.env.get(name)
    return None


def _env_open_at(job: Job, script) -> bool:
    """Whether a script sourced before ``script``'s commands could not be read (see ``_env_at``)."""
    for launch in job.launches:
        if script in launch.scripts:
            cmds = [cmd for cmd in launch.commands if cmd.script is script]
            return any(cmd.unread_sources for cmd in cmds) if cmds else bool(launch.unread_sources)
    return False


def _fix(src: SourceText, doc: ManifestDoc, current: YScalar | None):
    if current is not None:
        edits = [replace_scalar(src, current, "on")]
    else:
        edits = [insert_entry(src, doc.labels, "pod-rescheduling", '"on"')]  # type: ignore[arg-type]
    for group in policy_groups(doc):
        if not group.remove:
            continue
        found = policy_removal(src, group.policies, group.remove, group.entry)
        if not found:
            return None
        edits += found
    ports = taskd_port_edits(src, doc)
    if ports is None:
        return None
    edits += ports
    return unsafe_fix('Turn on Pod-level rescheduling (pod-rescheduling "on", TaskD port, no Volcano policies)', *edits)
