"""RL315: A volume serves the rank table but is not named ranktable, so Ascend Operator writes none."""

from __future__ import annotations

import posixpath

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.edits import replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import PodSpec, Volume

from ._common import manifest_source
from ._ranktable import (
    ENV,
    PATH_KINDS,
    ROOT,
    VOLUME,
    launch_of,
    mounts_of,
    norm,
    ranktable_volume,
    serves_by_path,
    static_path,
    table_env,
    without_table,
)

_POD = """\
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            volumeMounts:
            - name: {name}
              mountPath: /user/serverid/devindex/config
          volumes:
          - name: {name}  # shared rank table directory
            hostPath:
              path: {path}
"""


def _job(name: str, path: str = "/user/mindx-dl/ranktable/default.t5") -> str:
    head = "apiVersion: mindxdl.gitee.com/v1\nkind: AscendJob\nmetadata:\n  name: t5\nspec:\n  replicaSpecs:\n"
    pod = _POD.format(name=name, path=path)
    return f"{head}    Master:\n      replicas: 1\n{pod}    Worker:\n      replicas: 1\n{pod}"


_MINDSPORE_META = "metadata:\n  name: t5\n  labels:\n    framework: mindspore\n"
_SCRIPT = f"export {ENV}=/user/serverid/devindex/config/hccl.json\ntorchrun train.py\n"


class RankTableVolumeMisnamed(Rule):
    code = "RL315"
    scorecard = MISCONFIGURED
    name = "ranktable-volume-misnamed"
    phase = "comm-init"
    severity = Severity.ERROR
    fix_availability = "sometimes"
    summary = "A volume serves the rank table but is not named ranktable, so Ascend Operator writes none"
    what = """
A `hostPath` or `nfs` volume of a workload whose rank table Ascend Operator writes (an AscendJob,
or a Volcano Job, Deployment or StatefulSet labelled `ring-controller.atlas`) that serves the rank table, because its path lies under
`/user/mindx-dl/ranktable/` or because a container mounts it at the directory of its
`RANK_TABLE_FILE`, while it is not named exactly `ranktable` (`rank-table`, `RankTable`,
`ranktable-dir` ...) and the Pod has no volume of that name. ConfigMap volumes (the legacy
`rings-config-*` form) are not this rule's concern.
"""
    why = """
Ascend Operator only turns on writing the rank table file for a job when one of its replica specs
has a volume named exactly `ranktable`. Under any other name the directory stays empty, torch_npu
silently falls back to negotiating the HCCL links, and every start and restart after a fault pays
for the slow communication setup.
"""
    example = """
```yaml
          volumes:
          - name: rank-table               # RL315
            hostPath:
              path: /user/mindx-dl/ranktable/default.t5
```
Use instead `name: ranktable`, in the volume and in every mount of it.
"""
    fix = """
Unsafe: renames the volume to `ranktable` and every `volumeMounts` entry of the same Pod that refers
to it. The name was set explicitly, and with the new name Ascend Operator starts writing the rank
table, which changes how the job sets up its links. No fix when the Pod has several such volumes, or
when no container mounts the volume (renamed, it would still bring the table to no process).
"""
    sources = (
        "ascend-operator: pkg/ranktable/plugins.go ShouldGenerateRankTable (AscendJob; Volcano Job, Deployment and "
        "StatefulSet with the ring-controller.atlas label or a ranktable volume)",
        "ascend-operator: pkg/ranktable/utils/util.go (hasRankTableVolume, rankTableName = ranktable)",
        "mindcluster-deploy samples: pytorch_multinodes_acjob_910b_with_ranktable.yaml (do not modify the name)",
    )
    cases = examples(
        lambda: (
            Case(
                title="a volume under the operator's directory named rank-table: volume and mounts renamed",
                files={"job.yaml": _job("rank-table"), "train.sh": _SCRIPT},
                expect=("job.yaml:18:19", "job.yaml:32:19"),
                unsafe=True,
                fixed={"job.yaml": _job("ranktable")},
            ),
            Case(
                title="a volume mounted at the RANK_TABLE_FILE directory",
                files={"job.yaml": _job("hccl-config", "/mnt/shared/default.t5"), "train.sh": _SCRIPT},
                expect=("job.yaml:18", "job.yaml:32"),
                unsafe=True,
                fixed={"job.yaml": _job("ranktable", "/mnt/shared/default.t5")},
            ),
            Case(
                title="the operator's rule holds for a MindSpore job too",
                files={"job.yaml": _job("rank-table").replace("metadata:\n  name: t5\n", _MINDSPORE_META)},
                expect=("job.yaml:20", "job.yaml:34"),
                unsafe=True,
                fixed={"job.yaml": _job("ranktable").replace("metadata:\n  name: t5\n", _MINDSPORE_META)},
            ),
            Case(
                title="named ranktable",
                files={"job.yaml": _job("ranktable"), "train.sh": _SCRIPT},
            ),
            Case(
                title="another volume with another path",
                files={"job.yaml": _job("data", "/data/datasets"), "train.sh": "torchrun train.py\n"},
            ),
            Case(
                title="the operator's root directory itself is not under it",
                files={"job.yaml": _job("rt-root", "/user/mindx-dl/ranktable/"), "train.sh": "torchrun train.py\n"},
            ),
            Case(
                title="a Volcano Job",
                files={
                    "job.yaml": _job("rank-table")
                    .replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1")
                    .replace("kind: AscendJob", "kind: Job"),
                    "train.sh": _SCRIPT,
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.rank_table_written:
            return
        for pod in doc.pods:
            if ranktable_volume(pod) is not None:
                continue
            serving = [v for v in pod.volumes if v.name.value and _serves(job, pod, v)]
            for volume in serving:
                old = volume.name.value
                fix = None
                mounted = any(mounts_of(c, old) for c in pod.containers)
                # renaming a volume no container mounts brings the table to no process: RL311's mount
                # would come next, and where the launch has no place for the wait it has no fix
                if len(serving) == 1 and mounted:
                    edits = [replace_scalar(src, volume.name, VOLUME)]
                    edits += [replace_scalar(src, m.name, VOLUME) for c in pod.containers for m in mounts_of(c, old)]
                    fix = safe_fix(
                        f"Rename the volume '{old}' to '{VOLUME}'", *edits, overrides=f"the volume name '{old}'"
                    )
                why = f"its path is under {ROOT}/" if serves_by_path(volume) else f"it is mounted where {ENV} points"
                message = (
                    f"The volume '{old}' serves the rank table ({why}), but Ascend Operator only writes the "
                    f"table for a volume named exactly '{VOLUME}': {without_table(job)}"
                )
                yield self.report(volume.name.span, message, fix)


def _serves(job: Job, pod: PodSpec, volume: Volume) -> bool:
    if volume.kind not in PATH_KINDS:
        return False
    if serves_by_path(volume):
        return True
    for container in pod.containers:
        launch = launch_of(job, container)
        path = static_path(table_env(launch)) if launch is not None else None
        if path is None:
            continue
        directory = posixpath.dirname(norm(path))
        if any(
            m.mount_path is not None and norm(m.mount_path.value) == directory
            for m in mounts_of(container, volume.name.value)
        ):
            return True
    return False
