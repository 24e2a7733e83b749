"""RL211: an AscendJob Pod without a container named ``ascend``, into which Ascend Operator writes the job's environment."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import OPERATOR_CONTAINER as CONTAINER
from recovery_lint.sources.manifest import Container, PodSpec

from ._common import manifest_source

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: qwen3
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: torch:latest
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            resources:
              limits:
                huawei.com/Ascend910: 8
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            image: torch:latest
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            resources:
              limits:
                huawei.com/Ascend910: 8
"""


class AscendJobContainerMisnamed(Rule):
    code = "RL211"
    scorecard = MISCONFIGURED
    name = "ascendjob-container-misnamed"
    phase = "rescheduling"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "An AscendJob Pod has no container named ascend: Ascend Operator sets none of the job's environment"
    what = """
A Pod template of an AscendJob none of whose containers is named `ascend`. Ascend Operator writes
the job's environment only into the container of that name: for PyTorch `MASTER_ADDR`,
`MASTER_PORT`, `RANK`, `WORLD_SIZE` and `LOCAL_WORLD_SIZE`, for MindSpore its scheduler address and
role (`MS_*`), for TensorFlow its cluster variables, and for every framework the variables of
process-level recovery and hot switch (`HCCL_ASYNC_ERROR_HANDLING=0`, `HIGH_AVAILABILITY`,
`PROCESS_RECOVER`…). The YAML reference says the name must currently be `ascend`. The finding
points at the name of the container that requests the NPUs (else the first one).
"""
    why = """
Without that environment a multi-Pod job cannot find its master: each Pod's launcher waits for a
rendezvous that never forms, or every Pod starts as rank 0 of a job of its own. Process-level
recovery and hot switch are configured on the job but never reach the training processes, so a
fault falls back to rescheduling every Pod.
"""
    example = """
```yaml
kind: AscendJob
...
          containers:
          - name: train        # RL211: Ascend Operator only sets the environment of "ascend"
```
Use instead:
```yaml
          containers:
          - name: ascend
```
"""
    fix = """
Unsafe: renames the container to `ascend`. The operator then adds its variables to the
container's `env`, and where the container sets one of them itself (`MASTER_PORT`, say) the
operator's entry comes last and wins: review the container's `env` after the fix. No fix for a
container without a name (there is no scalar to rewrite).
"""
    sources = (
        "MindCluster docs: 06_api/15_yaml_configuration.md, spec.replicaSpecs.[ReplicaType].template.spec.containers.name "
        "(容器名称，当前必须为ascend)",
        "ascend-operator: pkg/controllers/v1/env.go setPytorchEnv, setMindSporeEnv, setTensorflowEnv (only the "
        'container named api.DefaultContainerName); ascend-common/api/default_name.go DefaultContainerName = "ascend"',
    )
    cases = examples(
        lambda: (
            Case(title="the containers are named ascend", files={"job.yaml": _ACJOB}),
            Case(
                title="a container named train: renamed (unsafe)",
                files={"job.yaml": _ACJOB.replace("- name: ascend", "- name: train")},
                expect=("job.yaml:15:19", "job.yaml:26:19"),
                unsafe=True,
                fixed={"job.yaml": _ACJOB},
            ),
            Case(
                title="a sidecar beside the ascend container",
                files={
                    "job.yaml": _ACJOB.replace(
                        "          - name: ascend\n",
                        "          - name: log-agent\n            image: fluentbit:latest\n          - name: ascend\n",
                    )
                },
            ),
            Case(
                title="the NPU container is the one reported, not the sidecar before it",
                files={
                    "job.yaml": _ACJOB.replace(
                        "          - name: ascend\n",
                        "          - name: log-agent\n            image: fluentbit:latest\n          - name: pytorch\n",
                    )
                },
                expect=("job.yaml:17:19", "job.yaml:30:19"),
                unsafe=True,
                fixed={
                    "job.yaml": _ACJOB.replace(
                        "          - name: ascend\n",
                        "          - name: log-agent\n            image: fluentbit:latest\n          - name: ascend\n",
                    )
                },
            ),
            Case(
                title="a Volcano Job may name its containers as it likes",
                files={
                    "job.yaml": _ACJOB.replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1")
                    .replace("kind: AscendJob", "kind: Job")
                    .replace("- name: ascend", "- name: train")
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.is_ascendjob:
            return
        for pod in doc.pods:
            if not pod.main_containers or any(c.name == CONTAINER for c in pod.main_containers):
                continue
            container = _training_container(pod)
            name = container.node.scalar("name")
            fix = (
                unsafe_fix(f"Rename the container to {CONTAINER}", replace_scalar(src, name, CONTAINER))
                if name
                else None
            )
            said = f"container {container.name!r}" if container.name else "an unnamed container"
            yield self.report(
                container.name_span,
                f"the {pod.role or 'job'} Pod has no container named {CONTAINER} (it trains in {said}): Ascend Operator writes "
                "the job's environment (master address, rank, world size, process-recovery and hot-switch "
                "variables) into a container of that name only",
                fix,
            )


def _training_container(pod: PodSpec) -> Container:
    """The container that requests the NPUs, else the first."""
    for container in pod.main_containers:
        if any(r.startswith("huawei.com/") for r in container.resources):
            return container
    return pod.main_containers[0]
