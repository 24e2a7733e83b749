"""Helpers of the RankTable rules (RL310-RL315): the `ranktable` volume, its mounts, the
`RANK_TABLE_FILE` each container's training process sees, and the edits that add them.

Ascend Operator writes `<root>/<namespace>.<job name>/hccl.json` (root `/user/mindx-dl/ranktable`)
for an AscendJob that has a volume named exactly `ranktable`; the training container mounts that
directory and points `RANK_TABLE_FILE` at `<mountPath>/hccl.json`.
"""

from __future__ import annotations

import posixpath
import re

from recovery_lint.diagnostics import Edit
from recovery_lint.edits import append_item, insert_sequence_entry
from recovery_lint.jobs import EnvValue, Job, Launch
from recovery_lint.sources.manifest import Container, ManifestDoc, PodSpec, Volume, VolumeMount
from recovery_lint.sources.yamlnodes import YScalar
from recovery_lint.span import SourceText

VOLUME = "ranktable"
ROOT = "/user/mindx-dl/ranktable"
DEFAULT_MOUNT = (
    "/user/mindx-dl/ranktable"  # the recovery-time guide's form; /user/serverid/devindex/config is the other
)
TABLE = "hccl.json"
ENV = "RANK_TABLE_FILE"
PATH_KINDS = ("hostPath", "nfs")


def norm(path: str) -> str:
    return posixpath.normpath(re.sub(r"/+", "/", path.strip()))


def host_root(job: Job) -> tuple[str, bool]:
    """The host directory Ascend Operator writes rank tables under, and whether it is configured
    (else the operator's default is assumed: the directory is a setting of its deployment)."""
    configured = job.context.settings.get("ranktable-host-root")
    return (norm(configured), True) if configured else (ROOT, False)


def host_dir(job: Job) -> str | None:
    """Where the operator writes this job's rank table on the hosts; None when the namespace is not
    in the manifest."""
    doc = job.manifest
    name = job_dir_name(doc) if doc is not None else None
    return f"{host_root(job)[0]}/{name}" if name else None


def job_dir_name(doc: ManifestDoc) -> str | None:
    """``<namespace>.<job name>``, or None when the namespace is not in the manifest (``kubectl -n``
    decides it) or the job has no name."""
    if not doc.job_name or not doc.namespace_declared:
        return None
    return f"{doc.namespace}.{doc.job_name}"


def table_file(mount_path: str) -> str:
    return posixpath.join(norm(mount_path), TABLE)


def ranktable_volume(pod: PodSpec) -> Volume | None:
    for volume in pod.volumes:
        if volume.name.value == VOLUME:
            return volume
    return None


def table_volume(pod: PodSpec) -> Volume | None:
    """The volume a pod takes its rank table from: the one named ``ranktable``, else a hostPath/nfs
    volume in the operator's rank table directory."""
    return ranktable_volume(pod) or next((v for v in pod.volumes if serves_by_path(v)), None)


def mounts_of(container: Container, name: str) -> list[VolumeMount]:
    return [m for m in container.mounts if m.name.value == name]


def covers(mount_path: str, path: str) -> bool:
    """True when a mount at ``mount_path`` makes ``path`` visible in the container."""
    mount, target = norm(mount_path), norm(path)
    return target == mount or target.startswith(mount.rstrip("/") + "/")


def launch_of(job: Job, container: Container) -> Launch | None:
    for launch in job.launches:
        if launch.container is container:
            return launch
    return None


def table_env(launch: Launch) -> EnvValue | None:
    """``RANK_TABLE_FILE`` as the training process of this container sees it (not operator-made)."""
    value = launch.launch_env.get(ENV)
    return value if value is not None and value.origin != "operator" else None


def static_path(value: EnvValue | None) -> str | None:
    """The value when it is a fixed absolute path."""
    if value is None or value.value is None or not value.value.startswith("/"):
        return None
    return value.value


def env_key(value: EnvValue) -> tuple[object, ...]:
    span = value.span
    return (span.path, span.start, span.end) if span is not None else (id(value),)


def ray_cluster(job: Job) -> bool:
    """Whether the job's start-up forms a Ray cluster (``ray start``, ``ray job submit``), as verl and
    MindSpeed-RL jobs do: Ray places the workers and their ranks, not the operator's rank table."""
    from recovery_lint.sources.shell import Command

    for launch in job.launches:
        for script in [*launch.scripts, *([launch.inline] if launch.inline is not None else [])]:
            for event in script.events:
                if isinstance(event, Command) and len(event.words) > 1:
                    program, verb = event.words[0].value, event.words[1].value
                    if program is not None and program.rsplit("/", 1)[-1] == "ray" and verb in ("start", "job"):
                        return True
    return False


def uses_rank_table(job: Job) -> bool:
    """Whether the job already takes its rank table from somewhere (any of the known forms)."""
    doc = job.manifest
    if doc is not None:
        for pod in doc.pods:
            if any(operator_table(volume) for volume in pod.volumes):
                return True
            # a container that mounts a 'ranktable' volume is in RankTable mode even when the pod
            # does not declare it (the other RankTable rules judge that mount)
            if any(m.name.value == VOLUME for c in pod.containers for m in c.mounts):
                return True
    return any(table_env(launch) is not None for launch in job.launches)


def operator_table(volume: Volume) -> bool:
    """A volume that carries the table the operator writes: the ``ranktable`` one, a hostPath/nfs one in
    its directory, or the legacy ``rings-config-*`` ConfigMap (its status is written the same way)."""
    if volume.name.value == VOLUME or serves_by_path(volume):
        return True
    return volume.config_map is not None and volume.config_map.value.startswith(RINGS_CONFIG_PREFIX)


def serves_by_path(volume: Volume) -> bool:
    """A hostPath/nfs volume whose path lies in the operator's rank table directory."""
    if volume.kind not in PATH_KINDS or volume.path is None:
        return False
    return norm(volume.path.value).startswith(ROOT + "/")


def without_table(job: Job) -> str:
    """What a missing rank table costs, in the words that fit the job's framework."""
    if job.context.pytorch:
        return "torch_npu finds no rank table and silently falls back to negotiating the HCCL links"
    return "the training processes find no rank table"


def replica_count(doc: ManifestDoc) -> int:
    """Pods the job runs: replicas summed over its tasks or replica types (a missing count is one)."""
    return sum(pod.replicas if pod.replicas is not None else 1 for pod in doc.pods)


RINGS_CONFIG_PREFIX = "rings-config-"


def configmap_tables(doc: ManifestDoc) -> list[tuple[YScalar, list[VolumeMount]]]:
    """Each ``rings-config-*`` ConfigMap volume (the legacy rank table) a container mounts: the
    ConfigMap's name and the mounts."""
    out = []
    for pod in doc.pods:
        for volume in pod.volumes:
            name = volume.config_map
            if volume.kind != "configMap" or name is None or not name.value.startswith(RINGS_CONFIG_PREFIX):
                continue
            mounts = [m for c in pod.containers for m in c.mounts if m.name.value == volume.name.value and m.mount_path]
            if mounts:
                out.append((name, mounts))
    return out


# -- edits -------------------------------------------------------------------------------------
def volume_edit(src: SourceText, job: Job, pod: PodSpec, path: str | None = None) -> Edit | None:
    """A ``ranktable`` hostPath volume for ``pod``: at ``path`` (another replica's volume), else where
    the operator writes this job's table."""
    path = path or host_dir(job)
    if path is None:
        return None
    fields = [("name", VOLUME), ("hostPath", [("path", path), ("type", "Directory")])]
    if pod.volumes_node is not None:
        return append_item(src, pod.volumes_node, fields)
    return insert_sequence_entry(src, pod.node, "volumes", fields)


def mount_edit(src: SourceText, container: Container, mount_path: str) -> Edit:
    fields = [("name", VOLUME), ("mountPath", mount_path)]
    if container.mounts_node is not None:
        return append_item(src, container.mounts_node, fields)
    return insert_sequence_entry(src, container.node, "volumeMounts", fields)


def unique(edits: list[Edit | None]) -> list[Edit]:
    """Drop missing and repeated edits (one script shared by several containers), keeping order."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for e in edits:
        if e is None:
            continue
        key = (e.path, e.span.start, e.span.end, e.content)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


TIMEOUT = "HCCL_CONNECT_TIMEOUT"
CONNECT_TIMEOUT = 600
# the official rank_table.sh polls the same way: 60 tries, 5 s apart, for "status":"completed"
WAIT_FOR_TABLE = (
    'for _ in $(seq 60); do grep -Eq \'"status" *: *"completed"\' "$RANK_TABLE_FILE" 2>/dev/null && break; '
    "sleep 5; done"
)


COMPLETED = "completed"  # the table's "status" once Ascend Operator has written every Pod in


def waits_for_table(launch: Launch) -> bool:
    """Whether the launch's start-up scripts wait for the table (a start-up that mentions
    ``completed`` anywhere is taken to)."""
    inline = [launch.inline] if launch.inline is not None else []
    return any(COMPLETED in script.source.text for script in [*launch.scripts, *inline])


def rank_table_lines(cmd, value: str) -> list[str]:
    """What turns RankTable mode on for a launch in a script: RANK_TABLE_FILE, a connect timeout of at
    least 300 s where none, or a shorter one, is set (torch_npu warns below it with a rank table), and a wait until
    Ascend Operator has written the table."""
    lines = [f"export {ENV}={value}"]
    timeout = cmd.env.get(TIMEOUT)
    known = (timeout.known or "").strip() if timeout is not None else ""
    # unset, or set below what RankTable mode needs (the fix that turns it on is unsafe anyway)
    if timeout is None or (known.isdigit() and int(known) < 300):
        lines.append(f"export {TIMEOUT}={CONNECT_TIMEOUT}  # torch_npu asks for 300 s or more with a rank table")
    lines.append(WAIT_FOR_TABLE)
    return lines
