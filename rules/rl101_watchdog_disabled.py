"""RL101: The HCCL watchdog is off, so a network fault is only noticed after the HCCL execution timeout."""

from __future__ import annotations

from dataclasses import replace

from recovery_lint.diagnostics import Severity, safe_fix, unsafe_fix
from recovery_lint.jobs import EnvValue, Job, Launch, LaunchCommand
from recovery_lint.knowledge.data import WATCHDOG_NEW_VAR as NEW_NAME
from recovery_lint.knowledge.data import WATCHDOG_VAR as NAME
from recovery_lint.knowledge.data import documented_default
from recovery_lint.knowledge.releases import newest_release
from recovery_lint.knowledge.watchdog import watchdog_facts, watchdog_value
from recovery_lint.premises import Withheld, answer, release_facts, unread_source_evidence
from recovery_lint.rule import Case, Rule, WorstCase, examples

from . import _phases
from ._common import insert_env_before, pytorch_launches, set_env_value
from ._versions import declared
from ._watchdog import watchdog_forbidden

_MANIFEST = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
spec:
  tasks:
  - name: default
    replicas: 2
    template:
      spec:
        containers:
        - name: train
          command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""
_ACJOB = (
    _MANIFEST.replace("batch.volcano.sh/v1alpha1", "mindxdl.gitee.com/v1")
    .replace("kind: Job", "kind: AscendJob")
    .replace(
        "    ring-controller.atlas: ascend-910b\n", "    ring-controller.atlas: ascend-910b\n    framework: pytorch\n"
    )
    .replace("        - name: train\n", "        - name: ascend\n")  # the container the operator writes to
)
_PROCESS_LABELS = (
    '    fault-scheduling: grace\n    process-recover-enable: "on"\n  annotations:\n    recover-strategy: "recover"\n'
)
_LAUNCH = "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"
_CURRENT = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0: default 1, accepts 0 and 1
_OLD_DEFAULT = "torch==1.11.0\ntorch-npu==1.11.0.post14\n"  # release 6.0.rc2 for torch 1.11: default 0, a thread


def _dormant_process_recovery(job: Job) -> str | None:
    """An AscendJob that asks for process-level recovery, which is off only because fault-scheduling
    is: once that is turned on (RL201) the watchdog must be off (RL102), so turning it on here would
    be undone by the next fix."""
    doc = job.manifest
    if doc is None or job.context.recovery != "none" or not doc.asks_process_recovery:
        return None
    return (
        "the manifest asks for process-level recovery, which starts once fault-scheduling is on (RL201) "
        "and needs the watchdog off (RL102): decide between the two first"
    )


class WatchdogDisabled(Rule):
    code = "RL101"
    name = "watchdog-disabled"
    phase = "detection"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    holds_if = (
        (
            "release",
            "the job's torch_npu release leaves the watchdog off as the launch sets it: off by default "
            "(every torch 1.11 build, the 5.0.x builds for torch 2.1.0), or with no watchdog thread at all",
        ),
        ("multi-node", "the job spans more than one node, where an HCCL fault can hang the others"),
    )
    summary = "The HCCL watchdog is off, so a network fault is only noticed after the HCCL execution timeout"
    what = """
A PyTorch training launch whose torch_npu watchdog is off, judged against what the torch_npu
release in use does (the release table read from every release tag):

- `HCCL_ASYNC_ERROR_HANDLING` reads as `0` in the launch environment (torch_npu reads it with
  `strtol`, so `true` or an empty value is `0` too); or
- it is not set and every release the job may run leaves the watchdog off by default (every
  torch 1.11 build; the 5.0.x builds for torch 2.1.0); or
- only `TORCH_HCCL_ASYNC_ERROR_HANDLING` is set: no final release up to 26.1.0 reads that name,
  so the old name (or its default) decides; or
- the release reads the variable but starts no watchdog thread at all (the 5.0.x builds for torch
  2.1.0: `2.1.0`, `.post1`, `.post2`, `.post4`): no value turns fault detection on, and the finding
  asks for a release from 6.0.RC1 on instead.

The release comes from the job's declarations (pins, a README's version table, a version guard in
the entry, the configuration); a job a MindCluster manifest runs that declares none runs one of the
releases MindCluster 26.1.0 supports (7.3.x to 26.1.x), which all have the watchdog on by default,
so only an explicit `0` is reported there. A script no manifest runs is judged only where it spans
more than one node (nothing restarts a single-node run); where the release or the scale is not
known the advice is withheld and the run names the key that declares it. Not reported where the
watchdog does not exist (torch below 1.11, the 2.0.1 builds, a CUDA or ROCm torch build, a model
that may also run on torch 1.5 or 1.8), for AscendJobs with process-level recovery, which need it
off (RL102), where hot switch (`subHealthyStrategy: hotSwitch`) or operator-level retry
(`HCCL_OP_RETRY_ENABLE`) is on, which do not support it (RL105), or for MindSpore jobs. A value the
start-up check rejects is RL104.
"""
    why = """
With the watchdog off, a parameter-plane network fault is not reported by the failing collective;
the job only fails when `HCCL_EXEC_TIMEOUT` runs out (1836 s by default, about half an hour),
and only then can the cluster scheduler start recovery. With `HCCL_ASYNC_ERROR_HANDLING=1` the
torch_npu watchdog detects the failed communication and exits the process at once.
"""
    example = """
```bash
export HCCL_ASYNC_ERROR_HANDLING=0    # RL101
torchrun --nproc_per_node 8 train.py
```
Use instead:
```bash
export HCCL_ASYNC_ERROR_HANDLING=1
torchrun --nproc_per_node 8 train.py
```
"""
    fix = """
When the variable is unset and every release the job may run reads it, has the watchdog thread and
defaults it to `0`: safe, inserts `export HCCL_ASYNC_ERROR_HANDLING=1` on the line before the
launch command, at its indentation (a container `env` entry when there is no script). When some
of those releases do not read the variable (torch 1.11 builds before 5.0.RC3): the same
insertion, unsafe. A `0` the user wrote (or `TORCH_HCCL_ASYNC_ERROR_HANDLING` set beside it) is a
value set explicitly, perhaps on purpose: the fix rewriting it to `1` is unsafe; none when it is set
behind a condition, none on a release without a watchdog thread (the variable does nothing there),
and none for an AscendJob that asks for process-level recovery with fault-scheduling off (turning
fault-scheduling on, RL201's fix, starts that recovery, which needs the watchdog off).
"""
    sources = (
        "Ascend/pytorch release tags: torch_npu/csrc/core/npu/register/OptionsManager.cpp "
        "CheckUseHcclAsyncErrorHandleEnable (default and accepted values per release; recovery_lint "
        "schemas/torch_npu_releases.json)",
        "CANN environment variable reference: HCCL_EXEC_TIMEOUT (default 1836 s)",
        "MindCluster docs: 05_configuring_training_recovery, recovery time optimization (watchdog)",
        "Ascend/pytorch release tags: ProcessGroupHCCL.cpp (the watchdog thread first starts at 6.0.rc1; the 5.0.x "
        "builds for torch 2.1.0 start none)",
        "Ascend/mind-cluster docs: release_notes.md Table 5 (MindCluster 26.1.0 with TorchNPU 7.3.X, 26.0.X, 26.1.X)",
        "MindCluster docs: 01_solutions_principles (hot switch, operator-level retry: 不支持开启watchdog功能)",
    )
    cases = examples(
        lambda: (
            Case(
                title="an explicit 0 in the launch script: the user's value, an unsafe fix",
                files={
                    "job.yaml": _MANIFEST,
                    "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0  # keep\n" + _LAUNCH,
                    "requirements.txt": _CURRENT,
                },
                expect=("train.sh:2",),
                unsafe=True,
                fixed={"train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=1  # keep\n" + _LAUNCH},
            ),
            Case(
                title="the explicit value is not changed by the safe fixes",
                files={
                    "train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH,
                    "requirements.txt": _CURRENT,
                },
                expect=("train.sh:2",),
                fixed={"train.sh": "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH},
            ),
            Case(
                title="torch 1.11 with torch_npu 1.11.0.post14 (release 6.0.rc2) defaults the watchdog off: safe insertion",
                files={
                    "train.sh": "#!/bin/bash\nif true; then\n    " + _LAUNCH + "fi\n",
                    "requirements.txt": _OLD_DEFAULT,
                },
                expect=("train.sh:3",),
                fixed={
                    "train.sh": "#!/bin/bash\nif true; then\n    export HCCL_ASYNC_ERROR_HANDLING=1\n    "
                    + _LAUNCH
                    + "fi\n"
                },
            ),
            Case(
                title="torch_npu 2.1.0 (release 5.0.0) reads the variable but starts no watchdog: a newer release, no fix",
                files={"train.sh": "#!/bin/bash\n" + _LAUNCH, "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0\n"},
                expect=("train.sh:2",),
                unsafe=True,
                fixed={"train.sh": "#!/bin/bash\n" + _LAUNCH},
            ),
            Case(
                title="torch_npu 2.13.0, a build outside the release table (its 0-day tag reads "
                "TORCH_HCCL_ASYNC_ERROR_HANDLING first): unknown, withheld",
                files={
                    "job.yaml": _MANIFEST,
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\nexport TORCH_HCCL_ASYNC_ERROR_HANDLING=1\n"
                    + _LAUNCH,
                    "requirements.txt": "torch-npu==2.13.0\n",
                },
                withheld=("release",),
            ),
            Case(
                title="release unknown in a manifest's job: torch 1.11 and 2.x builds differ on the default, withheld",
                files={"job.yaml": _MANIFEST, "train.sh": "#!/bin/bash\n" + _LAUNCH},
            ),
            Case(
                title="an explicit 0 in a manifest's job, no version declared: off on every release MindCluster supports",
                files={"job.yaml": _MANIFEST, "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH},
                expect=("train.sh:1",),
                unsafe=True,
                fixed={"train.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\n" + _LAUNCH},
            ),
            Case(
                title="a model-zoo README declaring torch 1.11, a multi-node launch script: reported",
                files={
                    "test/train_full_16p.sh": "python3 -m torch.distributed.launch --nnodes 2 --nproc_per_node 8 "
                    "--node_rank $NODE_RANK --master_addr $MASTER ../train.py\n",
                    "train.py": "import torch\nimport torch_npu\n",
                    "README.md": "| Torch_Version | deps |\n| :-: | :-: |\n| PyTorch 1.11 | - |\n",
                },
                expect=("test/train_full_16p.sh:1",),
                unsafe=True,
                fixed={
                    "test/train_full_16p.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\npython3 -m torch.distributed.launch "
                    "--nnodes 2 --nproc_per_node 8 --node_rank $NODE_RANK --master_addr $MASTER ../train.py\n"
                },
            ),
            Case(
                title="the same model on one node: no cluster restarts it, so no finding",
                files={
                    "test/train_full_8p.sh": "python3 -m torch.distributed.launch --nproc_per_node 8 ../train.py\n",
                    "train.py": "import torch\nimport torch_npu\n",
                    "README.md": "| Torch_Version | deps |\n| :-: | :-: |\n| PyTorch 1.11 | - |\n",
                },
            ),
            Case(
                title="a torch 1.5/1.8 model: no torch_npu watchdog at all",
                files={
                    "test/train_full_16p.sh": "python3 -m torch.distributed.launch --nnodes 2 --nproc_per_node 8 "
                    "../train.py\n",
                    "train.py": 'import torch\nif torch.__version__ >= "1.8":\n    import torch_npu\n',
                    "README.md": "| Torch_Version | deps |\n| :-: | :-: |\n| PyTorch 1.5 | - |\n| PyTorch 1.8 | - |\n",
                },
            ),
            Case(
                title="hot switch does not support the watchdog: the job keeps it off",
                files={
                    "job.yaml": _ACJOB.replace(
                        "    framework: pytorch\n", "    framework: pytorch\n    subHealthyStrategy: hotSwitch\n"
                    ),
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH,
                    "requirements.txt": _CURRENT,
                },
            ),
            Case(
                title="operator-level retry does not support the watchdog either",
                files={
                    "train.sh": 'export HCCL_OP_RETRY_ENABLE="L0:0, L1:1, L2:1"\nexport HCCL_ASYNC_ERROR_HANDLING=0\n'
                    + _LAUNCH,
                    "requirements.txt": _CURRENT,
                },
            ),
            Case(
                title="release unknown, a script no manifest runs: no claim",
                files={"train.sh": _LAUNCH},
            ),
            Case(
                title="TORCH_HCCL_ASYNC_ERROR_HANDLING is read by no release: the old name's 0 decides",
                files={
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\nexport TORCH_HCCL_ASYNC_ERROR_HANDLING=1\n"
                    + _LAUNCH,
                    "requirements.txt": _CURRENT,
                },
                expect=("train.sh:1",),
            ),
            Case(
                title="unset on torch_npu 2.1.0.post10 (release 6.0.0): on by default",
                files={"train.sh": _LAUNCH, "requirements.txt": _CURRENT},
            ),
            Case(
                title="torch 1.8.1: no torch_npu release of it has the watchdog",
                files={
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH,
                    "requirements.txt": "torch==1.8.1\n",
                },
            ),
            Case(
                title="a CUDA torch build has no torch_npu watchdog",
                files={"train.sh": _LAUNCH, "requirements.txt": "torch==2.1.0+cu118\n"},
            ),
            Case(
                title="a recover-strategy with fault-scheduling off: Ascend Operator's 0 is for process recovery (RL201)",
                files={
                    "job.yaml": _ACJOB.replace(
                        "    framework: pytorch\n",
                        '    framework: pytorch\n    fault-scheduling: "off"\n  annotations:\n'
                        '    recover-strategy: "recover"\n',
                    ),
                    "train.sh": "#!/bin/bash\n" + _LAUNCH,
                    "requirements.txt": _OLD_DEFAULT,
                },
            ),
            Case(
                title="process-level recovery on an AscendJob needs the watchdog off",
                files={
                    "job.yaml": _ACJOB.replace(
                        "    framework: pytorch\n", "    framework: pytorch\n" + _PROCESS_LABELS
                    ),
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH,
                },
            ),
            Case(
                title="process-recover-enable on a Volcano Job does nothing: the watchdog is still needed",
                files={
                    "job.yaml": _MANIFEST.replace(
                        "    ring-controller.atlas: ascend-910b\n",
                        "    ring-controller.atlas: ascend-910b\n" + _PROCESS_LABELS,
                    ),
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\n" + _LAUNCH,
                    "requirements.txt": _CURRENT,
                },
                expect=("train.sh:1",),
            ),
            Case(
                title="a value set behind a condition: reported without a fix",
                files={
                    "train.sh": 'if [ "$DEBUG" = 1 ]; then\n    export HCCL_ASYNC_ERROR_HANDLING=0\nfi\n' + _LAUNCH,
                    "requirements.txt": _CURRENT,
                },
                expect=("train.sh:2",),
                unsafe=True,
                fixed={"train.sh": 'if [ "$DEBUG" = 1 ]; then\n    export HCCL_ASYNC_ERROR_HANDLING=0\nfi\n' + _LAUNCH},
            ),
            Case(
                title="a MindSpore job gets no PyTorch advice",
                files={"job.yaml": _MANIFEST.replace("bash /job/code/train.sh", "msrun train.py")},
            ),
        )
    )

    @classmethod
    def phase_status(cls, job: Job) -> tuple[str, str]:
        return _phases.pytorch_only(job) or _phases.detection(job)

    @classmethod
    def worst_case(cls, job: Job) -> WorstCase:
        return _phases.detection_worst_case(job)

    def check_job(self, job: Job):
        dormant = _dormant_process_recovery(job)
        for finding in self._findings(job):
            if dormant and finding.fix is not None:
                finding = replace(finding, fix=None, message=f"{finding.message}. No fix: {dormant}")
            yield finding

    def _findings(self, job: Job):
        if not job.context.pytorch or job.context.recovery == "process":
            return
        if watchdog_forbidden(job) or not pytorch_launches(job):
            return  # forbidden: RL105's subject, the watchdog must stay off there
        if job.manifest is None:
            # no cluster restarts a job of its own: detection matters where it spans nodes
            scale = answer(job, "multi-node")
            if scale.unknown:
                # the node count is asked for only where it would decide something: a finding, or
                # advice that still waits on the release
                found = list(self._for_release(job))
                if found:
                    yield self.withhold(job, "multi-node", scale.evidence)
                    yield from (w for w in found if isinstance(w, Withheld))
                return
            if not scale.held:
                return
        yield from self._for_release(job)

    def _for_release(self, job: Job):
        facts, evidence = release_facts(job)
        if facts is None:
            yield self.withhold(job, "release", evidence)
            return
        watchdog = watchdog_facts(facts)
        if watchdog.no_npu or watchdog.read is False:
            return
        if facts.mixed:  # torch 1.5 or 1.8 among the versions it may run: no torch_npu watchdog there at all
            yield self.withhold(job, "release", f"{facts.basis}: some of them have no torch_npu watchdog at all")
            return
        for launch, cmd in pytorch_launches(job):
            value = cmd.env.get(NAME)
            newer = cmd.env.get(NEW_NAME)
            if watchdog.thread is False and watchdog.read is True:
                yield self._no_thread(cmd, value, watchdog)
                continue
            if value is not None and value.known is not None:
                if watchdog_value(value.known) == 0 and value.span is not None:
                    yield self._explicit_off(job, cmd, value, newer, watchdog)
                continue
            if value is not None:
                continue  # set from elsewhere at run time: cannot be judged
            if cmd.may_set(NAME):  # a script sourced before the launch, not read, may set it
                if watchdog.on_by_default is False:
                    yield self.withhold(job, "launch-environment", unread_source_evidence(cmd))
                continue
            if watchdog.on_by_default is True:
                continue
            if watchdog.on_by_default is None:
                yield self.withhold(job, "release", f"{watchdog.basis}: they differ on the watchdog's default")
                continue
            yield self._unset(job, launch, cmd, newer, watchdog)

    def _no_thread(self, cmd: LaunchCommand, value: EnvValue | None, watchdog):
        return _no_thread_finding(self, cmd, value, watchdog)

    def _wait(self, cmd: LaunchCommand) -> str:
        wait = cmd.env.get("HCCL_EXEC_TIMEOUT")
        if wait is not None and wait.value:
            return f"HCCL_EXEC_TIMEOUT={wait.value} s"
        return f"HCCL_EXEC_TIMEOUT (default {documented_default('HCCL_EXEC_TIMEOUT') or 1836} s)"

    def _explicit_off(self, job: Job, cmd: LaunchCommand, value: EnvValue, newer: EnvValue | None, watchdog):
        assert value.span is not None
        message = f"{NAME}={value.known} turns the HCCL watchdog off: a network fault is only detected after {self._wait(cmd)}"
        if newer is not None and newer.known is not None and watchdog_value(newer.known) != 0:
            message += (
                f"; {NEW_NAME}={newer.known} does not help: {watchdog.basis}, and no release up to "
                f"{newest_release()} reads it"
            )
        if watchdog.thread is False:
            message += f". {_no_thread(watchdog)}"
            return self.report(
                value.span, message, related=[(cmd.command.span, "the training launch that inherits it")]
            )
        if watchdog.thread is None:
            message += f" ({watchdog.basis})"
        edits = None if value.conditional else set_env_value(job, value, "1")
        fix = safe_fix(f"Set {NAME}=1", *edits, overrides=f"{NAME}={value.known}") if edits else None
        return self.report(
            value.span, message, fix, related=[(cmd.command.span, "the training launch that inherits it")]
        )

    def _unset(self, job: Job, launch: Launch, cmd: LaunchCommand, newer: EnvValue | None, watchdog):
        where = declared(job)
        said = f"{NAME} is not set, which leaves the HCCL watchdog off. Here {watchdog.basis}{where}, which "
        said += "defaults it to 0" if watchdog.default == 0 else "does not turn it on by default"
        fix = None
        if watchdog.thread is False:
            said += f". {_no_thread(watchdog)}"
        elif watchdog.read is True and watchdog.thread is True:
            edits = insert_env_before(job, launch, cmd, NAME, "1")
            fix = safe_fix(f"Export {NAME}=1 before the launch", *edits) if edits else None
        else:  # some of the possible releases have no watchdog at all: setting it helps only on the others
            edits = insert_env_before(job, launch, cmd, NAME, "1")
            fix = unsafe_fix(f"Export {NAME}=1 before the launch", *edits) if edits else None
        if newer is not None:
            said += f"; {NEW_NAME} is set, but no release up to {newest_release()} reads it"
        return self.report(
            cmd.command.span,
            f"{said}: a network fault is only detected after {self._wait(cmd)}",
            fix,
            related=[(newer.span, f"{NEW_NAME} is ignored")] if newer is not None and newer.span else [],
        )


def _no_thread_finding(rule, cmd, value, watchdog):
    where = value.span if value is not None and value.span is not None else cmd.command.span
    set_to = f"{NAME}={value.known}" if value is not None and value.known is not None else f"{NAME} unset"
    return rule.report(
        where,
        f"The HCCL watchdog never runs here ({set_to}): {_no_thread(watchdog)}; a network fault is only "
        f"detected after {rule._wait(cmd)}",
        related=[(cmd.command.span, "the training launch")] if where is not cmd.command.span else [],
    )


def _no_thread(watchdog) -> str:
    """Why no value of the variable helps on the releases that read it but start no watchdog thread."""
    return (
        f"{watchdog.basis}: that release reads {NAME} but starts no watchdog thread (its abort API is not "
        "implemented), so no value turns fault detection on; a torch_npu release from 6.0.RC1 on has the watchdog"
    )
