"""RL310: A multi-node PyTorch AscendJob negotiates HCCL links instead of reading a rank table."""

from __future__ import annotations

from recovery_lint.diagnostics import Edit, Severity, unsafe_fix
from recovery_lint.edits import insert_lines_before
from recovery_lint.jobs import Job, Launch, LaunchCommand
from recovery_lint.knowledge.features import feature_support
from recovery_lint.rule import Case, Rule, examples

from ._common import manifest_source, pytorch_launches
from ._ranktable import (
    DEFAULT_MOUNT,
    ENV,
    host_dir,
    mount_edit,
    rank_table_lines,
    ray_cluster,
    replica_count,
    table_file,
    unique,
    uses_rank_table,
    volume_edit,
)
from ._versions import facts_of, with_origin

_POD = """\
      template:
        spec:
          containers:
          - name: ascend  # the training container
            image: pytorch-npu:24.0
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            volumeMounts:
            - name: code
              mountPath: /job/code
          volumes:
          - name: code
            hostPath:
              path: /data/code
"""
_JOB = f"""\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt3
  namespace: train
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
spec:
  replicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
{_POD}    Worker:
      replicas: 3
      restartPolicy: Never
{_POD}"""
_SCRIPT = "#!/bin/bash\nexport RESUME_MODE_ENABLE=1\ntorchrun --nnodes=4 --nproc_per_node=8 train.py\n"
_PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"
_MOUNT_ADDED = """\
            - name: code
              mountPath: /job/code
            - name: ranktable
              mountPath: /user/mindx-dl/ranktable
"""
_VOLUME_ADDED = """\
            hostPath:
              path: /data/code
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/train.gpt3
              type: Directory
"""


def _fixed_job(job: str) -> str:
    return job.replace("            - name: code\n              mountPath: /job/code\n", _MOUNT_ADDED).replace(
        "            hostPath:\n              path: /data/code\n", _VOLUME_ADDED
    )


_ARGV_JOB = _JOB.replace('["/bin/bash", "-c", "bash /job/code/train.sh"]', '["torchrun", "/job/code/train.py"]')
_ADDED_LINES = (
    "export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json\n"
    "export HCCL_CONNECT_TIMEOUT=600  # torch_npu asks for 300 s or more with a rank table\n"
    'for _ in $(seq 60); do grep -Eq \'"status" *: *"completed"\' "$RANK_TABLE_FILE" 2>/dev/null && break; '
    "sleep 5; done\n"
)


class RankTableModeUnused(Rule):
    code = "RL310"
    name = "ranktable-mode-unused"
    phase = "comm-init"
    severity = Severity.INFO
    fix_availability = "sometimes"
    summary = "A multi-node PyTorch AscendJob negotiates HCCL links instead of reading a rank table"
    what = """
A PyTorch AscendJob whose replica specs add up to more than one Pod (multi-node) and that uses no
rank table in any form: no volume named `ranktable`, no hostPath/nfs volume under
`/user/mindx-dl/ranktable/`, no `rings-config-*` ConfigMap volume, and no `RANK_TABLE_FILE` in
any container's launch environment. Silent for a job whose start-up forms a Ray cluster (`ray
start`, `ray job submit`: verl, MindSpeed-RL), where Ray places the workers and their ranks and the
docs describe no rank table, and when the torch_npu release is known not to read
`RANK_TABLE_FILE` (before 6.0.rc3, and every torch 1.11 build); when the release is unknown, or
outside the documented support (6.0.RC3 itself), the finding says so.
"""
    why = """
Without a rank table every rank collects the addresses of all the others by negotiation when the
communication groups are created, at the first start and again after every fault. In RankTable
mode Ascend Operator writes the cluster's rank table (`hccl.json`) to a shared directory and
torch_npu builds the HCCL links directly from it, which shortens the communication setup phase of
every recovery, more so as the job grows.
"""
    example = """
```yaml
kind: AscendJob
spec:
  replicaSpecs:        # RL310: 4 Pods, no ranktable volume
    Master: {replicas: 1, ...}
    Worker: {replicas: 3, ...}
```
Use instead, in every replica's Pod template and the launch script:
```yaml
          containers:
          - volumeMounts:
            - name: ranktable
              mountPath: /user/mindx-dl/ranktable
          volumes:
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/<namespace>.<job name>
              type: Directory
```
```bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
```
"""
    fix = """
Unsafe, one fix over the manifest and the launch script together: adds the `ranktable` volume
(hostPath `<root>/<namespace>.<job name>`, type `Directory`; the root is `ranktable-host-root` or
the operator's default `/user/mindx-dl/ranktable`) to every replica's Pod, mounts it at
`/user/mindx-dl/ranktable` in every container, and just before each training launch exports
`RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json`, `HCCL_CONNECT_TIMEOUT=600` when it is not
set (torch_npu warns below 300 s in RankTable mode) and waits until the table says
`"status":"completed"`, as the official `rank_table.sh` does: a Pod rescheduled at Pod level starts
before the operator has rewritten the table. No fix when a launch is written in the manifest
itself (the wait cannot be added there), the manifest has no namespace, or the torch_npu release
is one the docs do not support RankTable link setup with (the fixed job would be RL314's). Review it: the directory
must exist on storage shared with Ascend Operator (`mkdir -m 777`, or owned by `hwMindX`) or the
Pods do not start.
"""
    sources = (
        "MindCluster docs: 05_configuring_training_recovery, Table 4 (RankTable link setup: volume, mount, "
        "RANK_TABLE_FILE, torch_npu newer than 6.0.RC3)",
        "ascend-operator: pkg/ranktable/utils/util.go (hasRankTableVolume, rankTableName = ranktable)",
        "Recovery-time optimization guide (seed), item 3c",
    )
    cases = examples(
        lambda: (
            Case(
                title="a Ray cluster (verl): Ray places the ranks, no rank table advice",
                files={
                    "job.yaml": _JOB,
                    "train.sh": "#!/bin/bash\nray start --head --port 6379\nray job submit -- python3 -m verl.trainer.main_ppo\n",
                    "requirements.txt": _PINS,
                },
            ),
            Case(
                title="a release before the documented RankTable support: reported, not fixed",
                files={
                    "job.yaml": _JOB,
                    "train.sh": _SCRIPT,
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",  # 6.0.rc3
                },
                expect=("job.yaml:10:3",),
                unsafe=True,
                fixed={
                    "job.yaml": _JOB,
                    "train.sh": _SCRIPT,
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",
                },
            ),
            Case(
                title="four Pods without RankTable mode: manifest and script fixed together",
                files={"job.yaml": _JOB, "train.sh": _SCRIPT, "requirements.txt": _PINS},
                expect=("job.yaml:10:3",),
                unsafe=True,
                fixed={
                    "job.yaml": _fixed_job(_JOB),
                    "train.sh": _SCRIPT.replace("torchrun", _ADDED_LINES + "torchrun"),
                    "requirements.txt": _PINS,
                },
            ),
            Case(
                title="the launch in the container command: the wait for the table cannot be added, no fix",
                files={"job.yaml": _ARGV_JOB},
                expect=("job.yaml:10",),
                unsafe=True,
                fixed={"job.yaml": _ARGV_JOB},
            ),
            Case(
                title="the safe fixes alone leave the job as it is",
                files={"job.yaml": _JOB, "train.sh": _SCRIPT, "requirements.txt": _PINS},
                expect=("job.yaml:10",),
                fixed={"job.yaml": _JOB, "train.sh": _SCRIPT},
            ),
            Case(
                title="a single Pod",
                files={"job.yaml": _JOB.split("    Worker:\n")[0], "train.sh": _SCRIPT},
            ),
            Case(
                title="RankTable mode already used",
                files={"job.yaml": _fixed_job(_JOB), "train.sh": _SCRIPT},
            ),
            Case(
                title="rank table from a ConfigMap",
                files={
                    "job.yaml": _JOB.replace(
                        "            hostPath:\n              path: /data/code\n",
                        "            configMap:\n              name: rings-config-gpt3\n",
                    ),
                    "train.sh": _SCRIPT,
                },
            ),
            Case(
                title="RANK_TABLE_FILE exported although the volume is missing (that is RL311)",
                files={"job.yaml": _JOB, "train.sh": f"export {ENV}=/user/mindx-dl/ranktable/hccl.json\n" + _SCRIPT},
            ),
            Case(
                title="torch_npu 2.1.0.post6 (release 6.0.rc2) does not read RANK_TABLE_FILE",
                files={
                    "job.yaml": _JOB,
                    "train.sh": _SCRIPT,
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post6\n",
                },
            ),
            Case(
                title="MindSpore AscendJob",
                files={"job.yaml": _JOB.replace("framework: pytorch", "framework: mindspore"), "train.sh": _SCRIPT},
            ),
            Case(
                title="a Volcano Job is not written by Ascend Operator",
                files={
                    "job.yaml": _JOB.replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1").replace(
                        "kind: AscendJob", "kind: Job"
                    ),
                    "train.sh": _SCRIPT,
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or not doc.is_ascendjob or not job.context.pytorch:
            return
        pods = replica_count(doc)
        if pods <= 1 or uses_rank_table(job) or ray_cluster(job):
            return
        if any(launch.launch_may_set(ENV) for launch in job.launches):
            return  # a script sourced before the launch, not read, may set RANK_TABLE_FILE
        support = feature_support("rank_table", facts_of(job))
        if support.status == "missing":
            return
        spec = doc.root.map("spec")
        key = spec.entry("replicaSpecs") if spec is not None else None
        span = key[0].span if key is not None else doc.span
        note = "" if support.status == "available" else f" ({with_origin(support.reason, job)})"
        commands = pytorch_launches(job)
        # a launch written in the manifest (or not exactly in a script) has no place for the wait
        in_manifest = any(cmd.in_manifest or not cmd.script.exact for _, cmd in commands)
        # outside the documented support the fixed job would be RL314's: tell, do not fix
        fix = self._fix(job, commands) if support.status != "undocumented" and not in_manifest else None
        why = ""
        if support.status == "undocumented":
            why = ". No fix: the MindCluster docs do not support RankTable link setup with this release"
        elif fix is None and in_manifest:
            why = (
                ". No fix: the launch is written in the manifest, where the wait for the table the operator "
                "writes (status completed) cannot be added"
            )
        message = (
            f"Multi-node PyTorch AscendJob ({pods} Pods) without RankTable mode: the ranks negotiate their "
            f"HCCL links at every start and every restart after a fault; with a 'ranktable' volume and "
            f"{ENV}, Ascend Operator writes the rank table and torch_npu sets up the links from it{note}{why}"
        )
        yield self.report(span, message, fix)

    def _fix(self, job: Job, commands: list[tuple[Launch, LaunchCommand]]):
        """The volume, its mounts, and before each training launch (each in a script): RANK_TABLE_FILE,
        a connect timeout of at least 300 s, and a wait until the operator has written the table (after
        a Pod-level rescheduling the new Pod starts before its table is complete)."""
        doc = job.manifest
        src = manifest_source(job)
        folder = host_dir(job)
        if doc is None or src is None or folder is None or not commands:
            return None
        value = table_file(DEFAULT_MOUNT)
        edits: list[Edit | None] = []
        for pod in doc.pods:
            for container in pod.containers:
                edits.append(mount_edit(src, container, DEFAULT_MOUNT))
            edits.append(volume_edit(src, job, pod))
        for _, cmd in commands:
            edits.append(insert_lines_before(cmd.script, cmd.command.statement, rank_table_lines(cmd, value)))
        if any(e is None for e in edits):
            return None
        return unsafe_fix(
            f"Add the ranktable volume ({folder}), mount it at {DEFAULT_MOUNT}, export {ENV}={value} and "
            "wait for the table before the launch",
            *unique(edits),
        )
