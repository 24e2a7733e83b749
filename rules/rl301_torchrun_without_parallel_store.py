from __future__ import annotations

from recovery_lint.diagnostics import Applicability, Fix, Severity
from recovery_lint.edits import edit, replace_words
from recovery_lint.jobs import Job, LaunchCommand
from recovery_lint.knowledge import parallel_store_support
from recovery_lint.rule import Case, Rule

SAFE_LAUNCHERS = ("torchrun", "torch.distributed.run")


class TorchrunWithoutParallelStore(Rule):
    code = "RL301"
    name = "torchrun-without-parallel-store"
    phase = "comm-init"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    summary = "PyTorch is launched with torchrun instead of torch_npu_run (Parallel Store)"
    what = """
A PyTorch launch through `torchrun`, `python -m torch.distributed.run` or
`python -m torch.distributed.launch` (whatever the interpreter word is, for example
`${DLS_PROGRAM_EXECUTOR} -m torch.distributed.launch`), in a launch script or in a manifest's
inline command, unless the known torch/torch_npu versions cannot run `torch_npu_run`.
"""
    why = """
torchrun exchanges rendezvous data through TCPStore, whose single-threaded server slows down as
the number of ranks grows; after every fault all ranks rendezvous again. `torch_npu_run` runs the
same launcher with the Parallel Store (a multi-threaded TCPStore), which shortens communication
setup on every restart. It accepts every torchrun argument.
"""
    example = """
```bash
torchrun --nnodes=2 --nproc_per_node=8 train.py    # RL301
```
Use instead:
```bash
torch_npu_run --nnodes=2 --nproc_per_node=8 train.py
```
"""
    fix = """
Replaces the launcher words with `torch_npu_run`, keeping every argument. Safe for `torchrun`
and `python -m torch.distributed.run` when the pinned torch and torch_npu versions are known to
support it (torch 1.11.0 with a torch_npu release newer than 6.0.RC1; torch 2.1.0 or later with
one newer than 6.0.RC3). Unsafe when the versions are unknown, and always unsafe for
`torch.distributed.launch`, whose scripts expect a `--local_rank` argument that torchrun-style
launchers pass as the `LOCAL_RANK` variable instead.
"""
    sources = (
        "MindCluster docs: 05_configuring_training_recovery (Parallel Store version requirements)",
        "Ascend/pytorch: torch_npu/distributed/run.py (torch_npu_run forces the parallel rendezvous backend)",
        "Ascend/pytorch docs: developer_notes/distributed/torch_npu_run.md",
    )
    cases = (
        Case(
            title="torchrun with versions that support torch_npu_run: safe fix",
            files={
                "train.sh": "torchrun --nnodes=2 \\\n    train.py  # launch\n",
                "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
            },
            expect=("train.sh:1:1",),
            fixed={"train.sh": "torch_npu_run --nnodes=2 \\\n    train.py  # launch\n"},
        ),
        Case(
            title="an interpreter variable with torch.distributed.launch: unsafe fix",
            files={"train.sh": "${DLS_PROGRAM_EXECUTOR} -m torch.distributed.launch $ARGS train.py\n"},
            expect=("train.sh:1:1",),
            unsafe=True,
            fixed={"train.sh": "torch_npu_run $ARGS train.py\n"},
        ),
        Case(
            title="versions that cannot run torch_npu_run",
            files={
                "train.sh": "torchrun train.py\n",
                "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",
            },
        ),
        Case(title="already torch_npu_run", files={"train.sh": "torch_npu_run train.py\n"}),
    )

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        torch = job.context.versions.get("torch")
        torch_npu = job.context.versions.get("torch-npu")
        supported, reason = parallel_store_support(torch, torch_npu)
        if supported is False:
            return
        for launch in job.launches:
            for cmd in launch.commands:
                if cmd.launcher not in ("torchrun", "torch.distributed.run", "torch.distributed.launch"):
                    continue
                yield self._finding(job, cmd, supported, reason)

    def _finding(self, job: Job, cmd: LaunchCommand, supported: bool | None, reason: str):
        start, end = cmd.launcher_words
        words = cmd.command.words[start:end]
        written = " ".join(w.text for w in words)
        safe = supported is True and cmd.launcher in SAFE_LAUNCHERS
        edits = None
        if cmd.script.argv:
            if end - start == 1 and job.manifest_file is not None:
                edits = [edit(job.manifest_file.source, words[0].span.start, words[0].span.end, "torch_npu_run")]
        else:
            one = replace_words(cmd.script, words, "torch_npu_run")
            edits = [one] if one else None
        fix = None
        if edits:
            fix = Fix(
                f"Replace '{written}' with 'torch_npu_run'",
                tuple(edits),
                Applicability.SAFE if safe else Applicability.UNSAFE,
            )
        note = f" ({reason.rstrip('.')})" if supported is None else " (the pinned versions support it)"
        span = words[0].span
        if cmd.script.exact and not cmd.script.argv:
            span = cmd.script.source.span(words[0].span.start, words[-1].span.end)
        message = (
            f"'{written}' rendezvous through the single-threaded TCPStore; launch with torch_npu_run "
            f"to use the Parallel Store{note}"
        )
        return self.report(span, message, fix)
