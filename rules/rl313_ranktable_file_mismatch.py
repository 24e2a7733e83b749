"""RL313: RANK_TABLE_FILE is not <mountPath of the ranktable volume>/hccl.json."""

from __future__ import annotations

from dataclasses import dataclass, field

from recovery_lint.diagnostics import Severity, safe_fix, unsafe_fix
from recovery_lint.edits import insert_lines_before
from recovery_lint.jobs import EnvValue, Job, Launch, LaunchCommand
from recovery_lint.knowledge.features import feature_support
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.span import Span

from ._common import pytorch_launches, set_env_value
from ._ranktable import (
    ENV,
    VOLUME,
    WAIT_FOR_TABLE,
    env_key,
    launch_of,
    mounts_of,
    norm,
    rank_table_lines,
    table_env,
    table_file,
)
from ._versions import facts_of

_POD = """\
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
{env}            volumeMounts:
            - name: ranktable
              mountPath: {mount}
          volumes:
          - name: ranktable
            hostPath:
              path: /user/mindx-dl/ranktable/default.llama
              type: Directory
"""


def _job(mount: str, env: str = "", worker_mount: str | None = None) -> str:
    head = "apiVersion: mindxdl.gitee.com/v1\nkind: AscendJob\nmetadata:\n  name: llama\n  labels:\n"
    head += "    framework: pytorch\nspec:\n  replicaSpecs:\n"
    master = _POD.format(mount=mount, env=env)
    worker = _POD.format(mount=worker_mount or mount, env=env)
    return f"{head}    Master:\n      replicas: 1\n{master}    Worker:\n      replicas: 1\n{worker}"


def _script(path: str | None) -> str:
    export = f"export {ENV}={path}\n" if path is not None else ""
    return f"#!/bin/bash\nexport HCCL_CONNECT_TIMEOUT=1800\n{export}torchrun --nnodes=2 train.py\n"


_DOC_FORM = "/user/mindx-dl/ranktable"
_SAMPLE_FORM = "/user/serverid/devindex/config"
_CONTAINER_ENV = '            env:\n            - name: RANK_TABLE_FILE\n              value: "{value}"\n'


@dataclass(eq=False, repr=False)
class _Finding:
    """One RANK_TABLE_FILE setting (or its absence) that disagrees with the mount."""

    span: Span
    value: EnvValue | None
    command: tuple[Launch, LaunchCommand] | None  # the launch when the variable is unset
    wrong: bool = False  # some container that sees this setting mounts the table elsewhere
    expected: set[str | None] = field(default_factory=set)
    mounts: set[str] = field(default_factory=set)  # where the containers seeing it mount the volume


class RankTableFileMismatch(Rule):
    code = "RL313"
    scorecard = MISCONFIGURED
    name = "ranktable-file-mismatch"
    phase = "comm-init"
    severity = Severity.ERROR
    fix_availability = "sometimes"
    summary = "RANK_TABLE_FILE is not <mountPath of the ranktable volume>/hccl.json"
    what = """
A PyTorch container of a workload whose rank table Ascend Operator writes (an AscendJob, or a
Volcano Job, Deployment or StatefulSet labelled `ring-controller.atlas` or with the volume) that mounts the `ranktable` volume while the `RANK_TABLE_FILE` its training
process sees is not `<that mountPath>/hccl.json`. Both documented mount paths are fine
(`/user/mindx-dl/ranktable`, as in the recovery-time guide, and `/user/serverid/devindex/config`,
as in the sample manifests); what matters is that the variable and the mount agree. Also reported
when the variable is not set at all before a visible PyTorch launch (unless the torch_npu version
is known to be too old for RankTable mode). A value built from variables is not judged.
"""
    why = """
torch_npu only uses the rank table when `RANK_TABLE_FILE` names it; when the path does not exist
it silently falls back to negotiating the HCCL links. The job then pays for a RankTable setup
that never takes effect, and for the slow communication setup at every start and after every
fault.
"""
    example = """
```yaml
            volumeMounts:
            - name: ranktable
              mountPath: /user/serverid/devindex/config
```
```bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json    # RL313
```
Use instead:
```bash
export RANK_TABLE_FILE=/user/serverid/devindex/config/hccl.json
```
"""
    fix = """
Unsafe. When the variable is set, its value is rewritten to `<mountPath>/hccl.json` where it is
written (script export or container `env`): a value set explicitly changes. When it is unset,
`export RANK_TABLE_FILE=<mountPath>/hccl.json` is inserted before the launch command (a container
`env` entry when the launcher is the container command). Either way RankTable link setup starts
to work, which changes how the job sets up its links. No fix when containers sharing one script
mount the volume at different paths.
"""
    sources = (
        "ascend-operator: pkg/ranktable/plugins.go ShouldGenerateRankTable (AscendJob; Volcano Job, Deployment and "
        "StatefulSet with the ring-controller.atlas label or a ranktable volume)",
        "Ascend/pytorch docs: environment_variable/collective_communication/RANK_TABLE_FILE.md",
        "MindCluster docs: 05_configuring_training_recovery, Table 4 (mountPath and RANK_TABLE_FILE)",
        "mindcluster-deploy samples: ranktable acjobs and train_start.sh (/user/serverid/devindex/config)",
    )
    cases = examples(
        lambda: (
            Case(
                title="the guide's file name with the samples' mount path: the value set explicitly, an unsafe fix",
                files={"job.yaml": _job(_SAMPLE_FORM), "train.sh": _script(f"{_DOC_FORM}/hccl.json")},
                expect=("train.sh:3:8",),
                unsafe=True,
                fixed={"train.sh": _script(f"{_SAMPLE_FORM}/hccl.json")},
            ),
            Case(
                title="a container env value with another file name",
                files={"job.yaml": _job(_DOC_FORM, _CONTAINER_ENV.format(value=f"{_DOC_FORM}/rank_table.json"))},
                expect=("job.yaml:17:15", "job.yaml:35:15"),
                unsafe=True,
                fixed={"job.yaml": _job(_DOC_FORM, _CONTAINER_ENV.format(value=f"{_DOC_FORM}/hccl.json"))},
            ),
            Case(
                title="unset before torchrun: unsafe export",
                files={"job.yaml": _job(_DOC_FORM + "/"), "train.sh": _script(None)},
                expect=("train.sh:3:1",),
                unsafe=True,
                fixed={
                    "train.sh": _script(f"{_DOC_FORM}/hccl.json").replace("torchrun", WAIT_FOR_TABLE + "\ntorchrun")
                },
            ),
            Case(
                title="replicas sharing one script mount the volume at different paths: no fix",
                files={
                    "job.yaml": _job(_DOC_FORM, worker_mount=_SAMPLE_FORM),
                    "train.sh": _script(f"{_DOC_FORM}/hccl.json"),
                },
                expect=("train.sh:3:8",),
                unsafe=True,
                fixed={"train.sh": _script(f"{_DOC_FORM}/hccl.json")},
            ),
            Case(
                title="consistent, the guide's form",
                files={"job.yaml": _job(_DOC_FORM), "train.sh": _script(f"{_DOC_FORM}/hccl.json")},
            ),
            Case(
                title="consistent, the samples' form",
                files={"job.yaml": _job(_SAMPLE_FORM + "/"), "train.sh": _script(f"{_SAMPLE_FORM}//hccl.json")},
            ),
            Case(title="the launch script is not in the repository", files={"job.yaml": _job(_DOC_FORM)}),
            Case(
                title="a value built from a variable",
                files={"job.yaml": _job(_DOC_FORM), "train.sh": _script("${RT_DIR}/hccl.json")},
            ),
            Case(
                title="unset with a torch_npu too old for RankTable mode (that is RL314)",
                files={
                    "job.yaml": _job(_DOC_FORM),
                    "train.sh": _script(None),
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post6\n",
                },
            ),
            Case(
                title="a MindSpore job: torch_npu's fallback does not apply",
                files={
                    "job.yaml": _job(_SAMPLE_FORM).replace("framework: pytorch", "framework: mindspore"),
                    "train.sh": _script(f"{_DOC_FORM}/hccl.json").replace("torchrun", "msrun"),
                },
            ),
            Case(
                title="a Volcano Job with a ranktable volume: Ascend Operator writes its table too",
                files={
                    "job.yaml": _job(_SAMPLE_FORM)
                    .replace("mindxdl.gitee.com/v1", "batch.volcano.sh/v1alpha1")
                    .replace("kind: AscendJob", "kind: Job"),
                    "train.sh": _script(f"{_DOC_FORM}/hccl.json"),
                },
                expect=("train.sh:3:8",),
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        if doc is None or not doc.rank_table_written or not job.context.pytorch:
            return
        status = feature_support("rank_table", facts_of(job)).status
        commands = pytorch_launches(job)
        findings: dict[tuple[object, ...], _Finding] = {}
        # what every container that runs a launch command expects (None: no rank table mount): an
        # export inserted before a command shared by containers must suit all of them
        runs: dict[tuple[str, int], set[str | None]] = {}
        for pod in doc.pods:
            for container in pod.containers:
                mount = next((m for m in mounts_of(container, VOLUME) if m.mount_path is not None), None)
                launch = launch_of(job, container)
                if launch is not None:
                    wants = table_file(mount.mount_path.value) if mount is not None else None
                    for c in launch.commands:
                        runs.setdefault((c.command.span.path, c.command.span.start), set()).add(wants)
                if mount is None or launch is None:
                    continue
                expected = table_file(mount.mount_path.value)
                value = table_env(launch)
                if value is not None:
                    if value.value is None or value.span is None:
                        continue
                    found = findings.setdefault(env_key(value), _Finding(value.span, value, None))
                    found.wrong = found.wrong or norm(value.value) != expected
                elif status in ("available", "unknown"):  # else RL314 says the release cannot use it
                    own = [(owner, cmd) for owner, cmd in commands if owner is launch]
                    if not own:
                        continue
                    cmd = own[0][1]
                    key = ("unset", cmd.command.span.path, cmd.command.span.start)
                    found = findings.setdefault(key, _Finding(cmd.command.span, None, own[0], wrong=True))
                else:
                    continue
                found.expected.add(expected)
                found.mounts.add(norm(mount.mount_path.value))
        for key, found in findings.items():
            if key[0] == "unset":
                found.expected |= runs.get((key[1], key[2]), set())
            if found.wrong:
                yield self._report(job, found, status)

    def _report(self, job: Job, found: _Finding, status: str):
        mounts = " and ".join(sorted(found.mounts))
        agreed = len(found.expected) == 1
        target = next(iter(found.expected)) if agreed else ""
        if found.value is not None:
            message = f"{ENV}={found.value.value} is not the rank table: the '{VOLUME}' volume is mounted at {mounts}"
            message += f", so the table is {target}" if agreed else " in the containers that run this"
            message += "; torch_npu silently falls back to negotiating the HCCL links when the file is missing"
            edits = set_env_value(job, found.value, target) if agreed else None
            fix = (
                safe_fix(
                    f"Set {ENV} to {target}",
                    *edits,
                    overrides=f"{ENV}={found.value.value}",
                    conditional=found.value.conditional,
                )
                if edits
                else None
            )
            return self.report(found.span, message, fix)
        _launch, cmd = found.command
        message = (
            f"The '{VOLUME}' volume is mounted at {mounts}, but {ENV} is not set for this launch: torch_npu "
            f"negotiates the HCCL links at every start and restart instead of reading the rank table"
        )
        fix = None
        if agreed and status != "undocumented":  # the release is outside the documented support: RL314
            # as RL310's fix: the table, a connect timeout torch_npu does not warn about, and a wait for
            # the table; only in a script, where the wait can be written
            edit = None
            if cmd.script.exact and not cmd.script.argv:
                edit = insert_lines_before(cmd.script, cmd.command.statement, rank_table_lines(cmd, target))
            if edit is not None:
                fix = unsafe_fix(f"Export {ENV}={target} and wait for the table before the launch", edit)
        return self.report(found.span, message, fix)
