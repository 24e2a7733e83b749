"""RL318: RankTable mode under Pod- or process-level rescheduling, launched without waiting for the table."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, unsafe_fix
from recovery_lint.edits import insert_lines_before
from recovery_lint.jobs import Job, LaunchCommand
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import pytorch_launches
from ._ranktable import ENV, WAIT_FOR_TABLE

COMPLETED = "completed"  # the table's "status" once Ascend Operator has written every Pod in

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
    premises = ("pytorch",)
    fix_availability = "sometimes"
    summary = "RankTable mode under Pod-level rescheduling, launched without waiting for the table to be completed"
    what = """
A PyTorch launch in RankTable mode (`RANK_TABLE_FILE` set) of a job with Pod- or process-level
rescheduling whose start-up scripts never wait for the table's `"status"` to read `"completed"`.
After a Pod is rescheduled, Ascend Operator sets the table back to initializing and writes it again
once every Pod has its new address; the samples' `rank_table.sh` polls the status before the launch
for that reason. A start-up that mentions `completed` anywhere is taken to wait.
"""
    why = """
The ranks of the rescheduled job start at once and read the table the operator is rewriting: with
the old Pod set, or none, their link setup fails or waits for HCCL_CONNECT_TIMEOUT, and the job is
restarted again, turning a Pod-level recovery of minutes into several.
"""
    example = """
```bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
torchrun ... train.py            # RL318: nothing waits for "status": "completed"
```
Use instead:
```bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
for _ in $(seq 60); do grep -Eq '"status" *: *"completed"' "$RANK_TABLE_FILE" && break; sleep 5; done
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
        "mind-cluster samples: basic-training/ranktable/rank_table.sh check_hccl_status (polls until completed)",
        "MindCluster docs: api/hccl.json_file_description.md (status: initializing / completed)",
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
                title="Job-level rescheduling restarts every Pod together",
                files={"job.yaml": _ACJOB.replace('    pod-rescheduling: "on"\n', ""), "train.sh": _SCRIPT},
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
        if job.context.recovery not in ("pod", "process"):
            return
        for launch, cmd in pytorch_launches(job):
            table = cmd.env.get(ENV)
            if table is None or not cmd.is_torch_launcher:
                continue
            if any(COMPLETED in script.source.text for script in launch.scripts):
                continue
            yield self.report(
                cmd.command.span,
                f"{ENV} is read at launch in a job with {job.context.recovery}-level rescheduling, and nothing waits "
                f'for the table\'s "status" to be "{COMPLETED}": after a rescheduling Ascend Operator rewrites it, '
                "and ranks that read it first fail their link setup",
                _fix(cmd),
            )


def _fix(cmd: LaunchCommand):
    if cmd.in_manifest or not cmd.exact:
        return None
    found = insert_lines_before(cmd.script, cmd.command.statement, [WAIT_FOR_TABLE])
    return unsafe_fix('Wait for the rank table\'s "completed" status before the launch', found) if found else None
