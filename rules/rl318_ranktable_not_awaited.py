"""RL318: a launch reads the rank table Ascend Operator writes without waiting for it to be completed."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import insert_lines_before
from recovery_lint.jobs import Job, Launch, LaunchCommand
from recovery_lint.knowledge.features import feature_support
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import pytorch_launches
from ._ranktable import (
    COMPLETED,
    ENV,
    WAIT_FOR_TABLE,
    covers,
    launch_of,
    operator_table,
    static_path,
    waits_for_table,
)
from ._versions import facts_of

_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: gpt
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    pod-rescheduling: "on"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            volumeMounts:
            - name: ranktable
              mountPath: /user/mindx-dl/ranktable
          volumes:
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/default.gpt
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
            volumeMounts:
            - name: ranktable
              mountPath: /user/mindx-dl/ranktable
          volumes:
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/default.gpt
"""
_SCRIPT = """\
#!/bin/bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
export HCCL_CONNECT_TIMEOUT=600
torchrun --nnodes 2 --nproc_per_node 8 --node_rank $RANK --master_addr $MASTER_ADDR --master_port 6000 train.py
"""
_WAIT = """\
#!/bin/bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
until grep -q '"status": *"completed"' "$RANK_TABLE_FILE"; do sleep 5; done
torchrun --nnodes 2 --nproc_per_node 8 train.py
"""


class RanktableNotAwaited(Rule):
    code = "RL318"
    scorecard = MISCONFIGURED
    name = "ranktable-not-awaited"
    phase = "comm-init"
    severity = Severity.WARNING
    premises = ("pytorch", "release")
    fix_availability = "sometimes"
    holds_if = (("release", "the job's torch_npu release reads RANK_TABLE_FILE (6.0.RC3 and later)"),)
    summary = "A launch reads the rank table Ascend Operator writes without waiting for it to be completed"
    what = """
A PyTorch launch whose `RANK_TABLE_FILE` is a fixed path, in a workload whose rank table Ascend
Operator writes (an AscendJob, or a Volcano Job, Deployment or StatefulSet labelled
`ring-controller.atlas` or with a `ranktable` volume), while nothing in its start-up scripts waits
for the table's `"status"` to read `"completed"`. The operator writes the table as `initializing`
and completes it only once every Pod has its address; when the Pod set changes (a Pod-level
rescheduling) it sets it back to `initializing` and writes it again. The official samples'
`rank_table.sh` polls the status before every launch, in basic training as in the resumable samples.
A start-up that mentions `completed` anywhere is taken to wait. Not reported when the file lies in
a volume of the user's own (the operator does not write it), when a script sourced before the
launch cannot be read (it may wait), or when the torch_npu release is known not to read
`RANK_TABLE_FILE` (before 6.0.rc3); withheld while the release is unknown.
"""
    why = """
The ranks that start first read a table without the other Pods, or the old Pod set after a
rescheduling: their link setup fails or waits for `HCCL_CONNECT_TIMEOUT`, and the job is restarted
again, turning a recovery of minutes into several.
"""
    example = """
```bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
torchrun ... train.py            # RL318: nothing waits for "status": "completed"
```
Use instead:
```bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
for _ in $(seq 60); do grep -Eq '"status" *: *"completed"' "$RANK_TABLE_FILE" 2>/dev/null && break; sleep 5; done
torchrun ... train.py
```
"""
    fix = """
Unsafe: inserts, before the launch, a loop that waits up to 5 minutes for the table's status to
read `completed` (a launch that starts the job without the table's other fields still starts after
it). No fix for a launch written in a manifest or in a variable.
"""
    sources = (
        "ascend-operator: pkg/controllers/v1/pod.go handleCompletedRankTable (a changed Pod set: status back to "
        "initializing, the table regenerated), buildNewRankTable (completed once every Pod is in)",
        "ascend-operator: pkg/ranktable/plugins.go ShouldGenerateRankTable (the workloads whose table it writes)",
        "mind-cluster samples: basic-training/ranktable/rank_table.sh and the resumable samples' rank_table.sh, "
        "check_hccl_status (polls until completed)",
    )
    cases = examples(
        lambda: (
            Case(
                title="Pod-level rescheduling, RankTable mode, no wait: the wait is inserted (unsafe)",
                files={"job.yaml": _ACJOB, "train.sh": _SCRIPT},
                expect=("train.sh:4:1",),
                unsafe=True,
                fixed={
                    "train.sh": _SCRIPT.replace("torchrun", WAIT_FOR_TABLE + "\ntorchrun"),
                },
            ),
            Case(title="the start-up waits for completed", files={"job.yaml": _ACJOB, "train.sh": _WAIT}),
            Case(
                title="a sourced rank_table.sh that waits",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "#!/bin/bash\nsource rank_table.sh\ncheck_hccl_status\n"
                    "torchrun --nnodes 2 --nproc_per_node 8 train.py\n",
                    "rank_table.sh": "export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json\n"
                    "function check_hccl_status() {\n"
                    '  until grep -q completed "$RANK_TABLE_FILE"; do sleep 5; done\n}\n',
                },
            ),
            Case(
                title="Job-level rescheduling, or none: the operator writes the table anew at every start",
                files={
                    "job.yaml": _ACJOB.replace('    pod-rescheduling: "on"\n', "").replace(
                        '    fault-scheduling: "grace"\n', ""
                    ),
                    "train.sh": _SCRIPT,
                },
                expect=("train.sh:4:1",),
                unsafe=True,
                fixed={"train.sh": _SCRIPT.replace("torchrun", WAIT_FOR_TABLE + "\ntorchrun")},
            ),
            Case(
                title="a table of the user's own in a ConfigMap: the operator never writes it",
                files={
                    "job.yaml": _ACJOB.replace(
                        "name: ranktable\n              mountPath: /user/mindx-dl/ranktable",
                        "name: my-table\n              mountPath: /user/mindx-dl/ranktable",
                    ),
                    "train.sh": _SCRIPT,
                },
            ),
            Case(
                title="the legacy rings-config ConfigMap, whose status the operator writes the same way",
                files={
                    "job.yaml": _ACJOB.replace(
                        "hostPath:\n              path: /user/mindx-dl/ranktable/default.gpt",
                        "configMap:\n              name: rings-config-gpt",
                    ),
                    "train.sh": _SCRIPT,
                },
                expect=("train.sh:4:1",),
                unsafe=True,
                fixed={"train.sh": _SCRIPT.replace("torchrun", WAIT_FOR_TABLE + "\ntorchrun")},
            ),
            Case(
                title="a script sourced before the launch that is not in the repository may wait",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": _SCRIPT.replace("torchrun", "source /opt/wait_table.sh\ntorchrun"),
                },
            ),
            Case(
                title="not in RankTable mode",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": _SCRIPT.replace("export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json\n", ""),
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or not doc.rank_table_written:
            return
        if feature_support("rank_table", facts_of(job)).status == "missing":
            return  # the release does not read RANK_TABLE_FILE: no rank reads the table (RL314's case)
        for launch, cmd in pytorch_launches(job):
            table = static_path(cmd.env.get(ENV))
            if table is None or not cmd.is_torch_launcher or cmd.unread_sources:
                continue
            if waits_for_table(launch) or _own_volume(job, launch, table):
                continue
            yield self.report(
                cmd.command.span,
                f'{ENV}={table} is read at launch and nothing waits for the table\'s "status" to be '
                f'"{COMPLETED}": Ascend Operator writes it as initializing until every Pod has its address, and '
                "again after a rescheduling; ranks that read it first fail their link setup",
                _fix(cmd),
            )


def _own_volume(job: Job, launch: Launch, table: str) -> bool:
    """Whether the table lies in a volume of the user's own in the container (a ConfigMap or a
    directory other than the operator's): a file the operator never writes."""
    doc = job.manifest
    for pod in doc.pods if doc is not None else ():
        operators = {v.name.value for v in pod.volumes if operator_table(v)}
        for container in pod.containers:
            if launch_of(job, container) is not launch:
                continue
            for mount in container.mounts:
                covering = mount.mount_path is not None and covers(mount.mount_path.value, table)
                if covering and mount.name.value not in operators:
                    return True
    return False


def _fix(cmd: LaunchCommand):
    if cmd.in_manifest or not cmd.exact:
        return None
    found = insert_lines_before(cmd.script, cmd.command.statement, [WAIT_FOR_TABLE])
    return unsafe_fix('Wait for the rank table\'s "completed" status before the launch', found) if found else None
