"""RL311: RANK_TABLE_FILE points where no volume is mounted, or the ranktable volume is mounted nowhere."""

from __future__ import annotations

import posixpath
import re

from recovery_lint.diagnostics import Edit, Severity, unsafe_fix
from recovery_lint.edits import insert_lines_before
from recovery_lint.jobs import EnvValue, Job, Launch, LaunchCommand
from recovery_lint.knowledge.features import feature_support
from recovery_lint.lazyre import LazyPattern
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import Container, PodSpec

from ._common import container_env_entry, manifest_source, pytorch_launches
from ._ranktable import (
    DEFAULT_MOUNT,
    ENV,
    VOLUME,
    WAIT_FOR_TABLE,
    covers,
    env_key,
    launch_of,
    mount_edit,
    mounts_of,
    norm,
    ranktable_volume,
    serves_by_path,
    static_path,
    table_env,
    table_file,
    unique,
    volume_edit,
    waits_for_table,
    without_table,
)
from ._versions import facts_of

_POD = """\
      template:
        spec:
          containers:
          - name: ascend
            image: pytorch-npu:24.0
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            volumeMounts:
            - name: code
              mountPath: /job/code
{mount}          volumes:
          - name: code
            hostPath:
              path: /data/code
{volume}"""
_RT_MOUNT = "            - name: ranktable\n              mountPath: {path}\n"
_RT_VOLUME = """\
          - name: ranktable  # Ascend Operator looks for this name
            hostPath:
              path: /user/mindx-dl/ranktable/default.bert
              type: Directory
"""
_ADDED_VOLUME = """\
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/default.bert
              type: Directory
"""
_HEAD = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: bert
  namespace: default
  labels:
    framework: pytorch
spec:
  replicaSpecs:
"""


def _job(mount: str = "", volume: str = "", head: str = _HEAD) -> str:
    pod = _POD.format(mount=mount, volume=volume)
    return f"{head}    Master:\n      replicas: 1\n{pod}    Worker:\n      replicas: 1\n{pod}"


def _script(path: str) -> str:
    return f"#!/bin/bash\nexport {ENV}={path}\ntorchrun --nnodes=2 train.py\n"


_DOC_FORM = "/user/mindx-dl/ranktable"
_SAMPLE_FORM = "/user/serverid/devindex/config"
_VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: resnet
spec:
  tasks:
  - name: default
    replicas: 2
    template:
      spec:
        containers:
        - name: train
          command: ["python", "/job/code/main.py"]
          env:
          - name: RANK_TABLE_FILE
            value: /user/serverid/devindex/config/hccl.json
"""
_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
spec:
  replicas: 2
  selector:
    matchLabels:
      app: gpt
  template:
    metadata:
      labels:
        app: gpt
        ring-controller.atlas: ascend-910b
    spec:
      containers:
      - name: train
        command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""
_MISNAMED = _job(
    "            - name: rt\n              mountPath: /rt\n", _RT_VOLUME.replace("- name: ranktable", "- name: rt")
)


class RankTableNotMounted(Rule):
    code = "RL311"
    scorecard = MISCONFIGURED
    name = "ranktable-not-mounted"
    phase = "comm-init"
    severity = Severity.ERROR
    fix_availability = "sometimes"
    summary = "RANK_TABLE_FILE points where no volume is mounted, or the ranktable volume is mounted nowhere"
    what = """
Either of two ways the rank table never reaches the training process of a job with a manifest:
- a fixed, absolute `RANK_TABLE_FILE` in a container's launch environment (container `env`,
  inline command or launch script) whose directory no volume mount of that container covers,
  while the container does not mount the `ranktable` volume elsewhere (that is RL313);
- a replica (AscendJob) or task (Volcano Job, Deployment, StatefulSet) whose Pod has a volume named `ranktable` that none of its containers mounts.

A `RANK_TABLE_FILE` built from variables, and scripts that no manifest runs, are not judged.
"""
    why = """
torch_npu reads the rank table from `RANK_TABLE_FILE`; when the path does not exist it silently
falls back to negotiating the HCCL links, so the job pays for the slow communication setup at
every start and after every fault while its author believes RankTable mode is on. The operator
only writes the file into the shared directory: the container sees it only through a mount.
"""
    example = """
```yaml
          containers:
          - name: ascend
            volumeMounts: []              # RL311: nothing mounted at /user/mindx-dl/ranktable
          volumes:
          - name: ranktable
            hostPath: {path: /user/mindx-dl/ranktable/default.bert, type: Directory}
```
```bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
```
Use instead a mount of the `ranktable` volume at `/user/mindx-dl/ranktable` in the container.
"""
    fix = """
Unsafe: mounts the `ranktable` volume at the directory of `RANK_TABLE_FILE` (or,
for an unmounted volume, at the directory the container's `RANK_TABLE_FILE` names, else where
another replica mounts it or its `RANK_TABLE_FILE` points, else `/user/mindx-dl/ranktable`) in each
container concerned, exports `RANK_TABLE_FILE` for a container whose launch does not set it (unless
the torch_npu version cannot use the table), and adds
the volume (hostPath `/user/mindx-dl/ranktable/<namespace>.<job name>`, type `Directory`) to
Pods that lack it. Review it: the directory must exist on storage shared with Ascend Operator.
No fix for a workload whose rank table Ascend Operator does not write (only an AscendJob, or a
Volcano Job, Deployment or StatefulSet labelled `ring-controller.atlas` or with a volume named
`ranktable`, gets one), nor while the Pod
has a misnamed volume under `/user/mindx-dl/ranktable/` (RL315 renames it first).
"""
    sources = (
        "ascend-operator: pkg/ranktable/plugins.go ShouldGenerateRankTable (AscendJob; Volcano Job, Deployment and "
        "StatefulSet with the ring-controller.atlas label or a ranktable volume)",
        "Ascend/pytorch docs: environment_variable/collective_communication/RANK_TABLE_FILE.md (a missing "
        "file makes torch_npu fall back to negotiation)",
        "MindCluster docs: 05_configuring_training_recovery, Table 4 (ranktable volume and mount)",
        "ascend-operator: pkg/ranktable/utils/util.go (the table is written for a volume named ranktable)",
    )
    cases = examples(
        lambda: (
            Case(
                title="RANK_TABLE_FILE exported, no volume at all: mount and volume added to both replicas",
                files={"job.yaml": _job(), "train.sh": _script(f"{_DOC_FORM}/hccl.json")},
                expect=("train.sh:2:8",),
                unsafe=True,
                fixed={
                    "job.yaml": _job(_RT_MOUNT.format(path=_DOC_FORM), _ADDED_VOLUME),
                    "train.sh": _script(f"{_DOC_FORM}/hccl.json"),
                },
            ),
            Case(
                title="the ranktable volume is mounted by no container: mounted where the script reads it",
                files={"job.yaml": _job(volume=_RT_VOLUME), "train.sh": _script(f"{_SAMPLE_FORM}/hccl.json")},
                expect=("job.yaml:25:19", "job.yaml:44:19"),
                unsafe=True,
                fixed={"job.yaml": _job(_RT_MOUNT.format(path=_SAMPLE_FORM), _RT_VOLUME)},
            ),
            Case(
                title="the volume mounted by no container, and a sourced script not in the repository: no fix (it may "
                "export another path and wait for the table there)",
                files={
                    "job.yaml": _job(volume=_RT_VOLUME),
                    "train.sh": "#!/bin/bash\nsource /opt/scripts/rank_table.sh\ntorchrun --nnodes=2 train.py\n",
                },
                expect=("job.yaml:25:19", "job.yaml:44:19"),
                unsafe=True,
                fixed={"job.yaml": _job(volume=_RT_VOLUME)},
            ),
            Case(
                title="a Volcano Job whose container env points at an unmounted directory: no fix",
                files={"job.yaml": _VCJOB},
                expect=("job.yaml:15:13",),
                unsafe=True,
                fixed={"job.yaml": _VCJOB},
            ),
            Case(
                title="a Deployment that trains (a torchrun launch), labelled ring-controller.atlas: Ascend Operator "
                "writes its rank table",
                files={"job.yaml": _DEPLOYMENT, "train.sh": _script(f"{_DOC_FORM}/hccl.json")},
                expect=("train.sh:2:8",),
            ),
            Case(
                title="a Deployment that serves is no training job",
                files={
                    "job.yaml": _DEPLOYMENT.replace("bash /job/code/train.sh", "bash /job/code/serve.sh"),
                    "serve.sh": f"#!/bin/bash\nexport {ENV}={_DOC_FORM}/hccl.json\npython -m vllm.entrypoints.api_server\n",
                },
            ),
            Case(
                title="mounted at the documented path",
                files={
                    "job.yaml": _job(_RT_MOUNT.format(path=_DOC_FORM), _RT_VOLUME),
                    "train.sh": _script(f"{_DOC_FORM}/hccl.json"),
                },
            ),
            Case(
                title="mounted at the path of the sample manifests",
                files={
                    "job.yaml": _job(_RT_MOUNT.format(path=_SAMPLE_FORM), _RT_VOLUME),
                    "train.sh": _script(f"{_SAMPLE_FORM}/hccl.json"),
                },
            ),
            Case(
                title="the ranktable volume mounted at another directory is RL313",
                files={
                    "job.yaml": _job(_RT_MOUNT.format(path=_SAMPLE_FORM), _RT_VOLUME),
                    "train.sh": _script(f"{_DOC_FORM}/hccl.json"),
                },
            ),
            Case(
                title="a mount of a parent directory covers the file",
                files={
                    "job.yaml": _job("            - name: user\n              mountPath: /user/\n"),
                    "train.sh": _script(f"{_DOC_FORM}/hccl.json"),
                },
            ),
            Case(
                title="a misnamed volume in the operator's directory: no fix until RL315 renamed it",
                files={"job.yaml": _MISNAMED, "train.sh": _script(f"{_DOC_FORM}/hccl.json")},
                expect=("train.sh:2:8",),
                unsafe=True,
                fixed={"job.yaml": _MISNAMED},
            ),
            Case(title="a script that no manifest runs", files={"train.sh": _script(f"{_DOC_FORM}/hccl.json")}),
            Case(
                title="RANK_TABLE_FILE built from a variable",
                files={"job.yaml": _job(), "train.sh": _script("${RANK_TABLE_DIR}/hccl.json")},
            ),
            Case(
                title="a table the container writes itself needs no volume",
                files={
                    "job.yaml": _job(),
                    "train.sh": "#!/bin/bash\nexport RANK_TABLE_FILE=/job/rt/hccl.json\n"
                    "python gen_rank_table.py --out ${RANK_TABLE_FILE}\ntorchrun --nnodes=2 train.py\n",
                },
            ),
            Case(
                title="never a volume over /tmp: reported without a fix",
                files={"job.yaml": _job(), "train.sh": _script("/tmp/hccl.json")},
                expect=("train.sh:2",),
                unsafe=True,
                fixed={"train.sh": _script("/tmp/hccl.json")},
            ),
            Case(title="no rank table at all (that is RL310)", files={"job.yaml": _job(), "train.sh": _script("")}),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None:
            return
        unmounted: set[int] = set()
        if doc.rank_table_written:
            for pod in doc.pods:
                volume = ranktable_volume(pod)
                if volume is None or not pod.containers or any(mounts_of(c, VOLUME) for c in pod.containers):
                    continue
                unmounted.add(id(pod))
                yield self._unmounted_volume(job, pod, volume)
        groups: dict[tuple[object, ...], tuple[EnvValue, str, list[tuple[PodSpec, Container]]]] = {}
        for pod in doc.pods:
            if id(pod) in unmounted:
                continue
            for container in pod.containers:
                launch = launch_of(job, container)
                value = table_env(launch) if launch is not None else None
                path = static_path(value)
                if value is None or path is None or value.span is None or written_by_job(job, path):
                    continue
                if mounts_of(container, VOLUME) or any(
                    m.mount_path is not None and covers(m.mount_path.value, path) for m in container.mounts
                ):
                    continue
                entry = groups.setdefault(env_key(value), (value, path, []))
                entry[2].append((pod, container))
        for value, path, places in groups.values():
            yield self._unmounted_path(job, value, path, places)

    def _unmounted_volume(self, job: Job, pod: PodSpec, volume):
        src = manifest_source(job)
        mount_at = {id(c): _mount_path_for(job, c) for c in pod.containers}
        edits = [mount_edit(src, c, mount_at[id(c)]) for c in pod.containers] if src else []
        # a container that now mounts the table but whose launch does not name it (RL313) gets RANK_TABLE_FILE,
        # unless the torch_npu version cannot use the table (RL314)
        exports = feature_support("rank_table", facts_of(job)).status in ("available", "unknown")
        launches = pytorch_launches(job) if src and exports else []
        for c in pod.containers if src and exports else []:
            launch = launch_of(job, c)
            if launch is not None and table_env(launch) is None:
                value = table_file(mount_at[id(c)])
                own = [(o, cmd) for o, cmd in launches if o is launch]
                for owner, cmd in own:
                    edits.append(_export_and_wait(owner, cmd, value))
                    edits += _sharers_mount(job, src, pod, volume, cmd, mount_at[id(c)])
                if not own:
                    # a script sourced at start-up and not read may set another path, which wins over the env
                    edits.append(None if launch.unread_sources else container_env_entry(job, c, ENV, value))
        edits = [] if any(e is None for e in edits) else unique(edits)
        paths = sorted(set(mount_at.values()))
        fix = unsafe_fix(f"Mount the ranktable volume at {', '.join(paths)}", *edits) if edits else None
        role = f"replica {pod.role}" if pod.role else "the Pod"
        message = (
            f"The '{VOLUME}' volume of {role} is mounted by no container: Ascend Operator writes the rank "
            f"table there, but {without_table(job)}"
        )
        return self.report(volume.name.span, message, fix)

    def _unmounted_path(self, job: Job, value: EnvValue, path: str, places: list[tuple[PodSpec, Container]]):
        directory = posixpath.dirname(norm(path))
        message = (
            f"{ENV}={path} points into {directory}, where no volume is mounted in a container that runs this "
            f"launch: {without_table(job)}"
        )
        if directory in SYSTEM_DIRECTORIES:
            message += (
                f". No fix: a volume mounted over {directory} would hide the container's own files there; mount the "
                f"'{VOLUME}' volume at a directory of its own and point {ENV} into it"
            )
            return self.report(value.span, message, related=_containers(places))
        return self.report(value.span, message, self._mount_fix(job, directory, places), related=_containers(places))

    def _mount_fix(self, job: Job, directory: str, places: list[tuple[PodSpec, Container]]):
        doc = job.manifest
        src = manifest_source(job)
        if doc is None or src is None or not doc.rank_table_written:
            return None
        if any(v.name.value != VOLUME and serves_by_path(v) for pod, _ in places for v in pod.volumes):
            return None  # RL315 renames that volume first; a second one would clash with it
        edits: list[Edit | None] = []
        pods: list[PodSpec] = []
        for pod, container in places:
            edits.append(mount_edit(src, container, directory))
            if pod not in pods:
                pods.append(pod)
        added_volume = False
        for pod in pods:
            if ranktable_volume(pod) is None:
                edits.append(volume_edit(src, job, pod))
                added_volume = True
        if any(e is None for e in edits):
            return None
        what = " (and add the volume)" if added_volume else ""
        return unsafe_fix(f"Mount the ranktable volume at {directory}{what}", *unique(edits))


# directories a volume must never be mounted over: they hold the image's own files
SYSTEM_DIRECTORIES = frozenset(
    {"/", "/tmp", "/var", "/var/tmp", "/usr", "/etc", "/home", "/root", "/opt", "/bin", "/lib", "/run", "/dev"}
)
# a command that writes a file: a redirection, tee/cp/mv/ln, or a Python program given the path
_WRITES = LazyPattern(r">|\btee\b|\bcp\b|\bmv\b|\bln\b|\bpython[0-9.]*\b|\.py\b")


def _export_and_wait(launch: Launch, cmd: LaunchCommand, value: str) -> Edit | None:
    """RANK_TABLE_FILE and the wait for the table before a launch in a script, as RL310's fix writes
    them (RL318 asks for the wait wherever the table is read); None where the wait cannot be written
    (a launch in the manifest or in a variable)."""
    if not cmd.script.exact or cmd.script.argv or cmd.in_manifest:
        return None
    if cmd.unread_sources:
        return None  # a sourced script not in the repository may export another path and wait for a table there
    lines = [f"export {ENV}={value}", *([] if waits_for_table(launch) else [WAIT_FOR_TABLE])]
    return insert_lines_before(cmd.script, cmd.command.statement, lines)


def written_by_job(job: Job, path: str) -> bool:
    """Whether one of the job's scripts writes the rank table itself (a container that generates its
    own table needs no volume): a line other than the assignment that names the path, or the
    variable, in a command that writes a file."""
    names = (path, f"${ENV}", f"${{{ENV}}}")
    for script in job.scripts:
        text = script.source.text
        if not any(n in text for n in names):  # most scripts: no line to read
            continue
        for line in text.splitlines():
            code = line.split("#", 1)[0]
            if not any(n in code for n in names) or re.match(rf"\s*(export\s+)?{ENV}=", code):
                continue
            if _WRITES.search(code):
                return True
    return False


def _containers(places: list[tuple[PodSpec, Container]]) -> list[tuple[object, str]]:
    return [
        (
            c.node.span,
            f"container '{c.name or '?'}'" + (f" of {pod.role}" if pod.role else "") + " mounts nothing there",
        )
        for pod, c in places
    ]


def _sharers_mount(job: Job, src, pod: PodSpec, volume, cmd, path: str) -> list[Edit | None]:
    """An export written into a script that other replicas run too reaches them as well: their
    containers get the same mount (and their Pods the volume), or the fix would leave them
    pointing at a directory nothing is mounted on."""
    doc = job.manifest
    out: list[Edit | None] = []
    for other in doc.pods if doc is not None else []:
        if other is pod:
            continue
        for container in other.containers:
            launch = launch_of(job, container)
            runs_it = launch is not None and any(
                c.command.span.path == cmd.command.span.path and c.command.span.start == cmd.command.span.start
                for c in launch.commands
            )
            if not runs_it or mounts_of(container, VOLUME):
                continue
            out.append(mount_edit(src, container, path))
            if ranktable_volume(other) is None:  # the same host directory as this replica's volume
                same = volume.path.value if volume.kind == "hostPath" and volume.path is not None else None
                out.append(volume_edit(src, job, other, same))
    return out


def _mount_path_for(job: Job, container: Container) -> str:
    """Where a container should mount the ranktable volume: where its RANK_TABLE_FILE points,
    else where another container of the job mounts it or points it, else the documented directory."""
    launch = launch_of(job, container)
    path = static_path(table_env(launch)) if launch is not None else None
    if path is not None:
        return posixpath.dirname(norm(path))
    for other in job.launches:
        if other.container is not None:
            for mount in mounts_of(other.container, VOLUME):
                if mount.mount_path is not None:
                    return norm(mount.mount_path.value)
    for other in job.launches:  # else where another container's RANK_TABLE_FILE points: one table for the job
        path = static_path(table_env(other))
        if path is not None:
            return posixpath.dirname(norm(path))
    return DEFAULT_MOUNT
