"""RL104: a HCCL_ASYNC_ERROR_HANDLING value the torch_npu release's start-up check rejects."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job
from recovery_lint.knowledge.data import WATCHDOG_VAR as NAME
from recovery_lint.knowledge.watchdog import watchdog_facts
from recovery_lint.premises import release_facts
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import pytorch_launches
from ._versions import declared, facts_of

_LAUNCH = "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"


class WatchdogValueRejected(Rule):
    code = "RL104"
    scorecard = MISCONFIGURED
    name = "watchdog-value-rejected"
    phase = "detection"
    severity = Severity.ERROR
    fix_availability = "none"
    summary = "HCCL_ASYNC_ERROR_HANDLING has a value the torch_npu release refuses: every process stops at start-up"
    what = """
`HCCL_ASYNC_ERROR_HANDLING` set, for a PyTorch training launch, to a value that the start-up check
of the torch_npu release in use rejects. From 6.0.0 torch_npu accepts `0` and `1` only; from 7.3.0
also `2` (detect without exiting) and `3`. Releases before 6.0.0 take any integer. When the release
is not known and the value is refused by some releases (`2` or `3`: 6.0.0 to 7.2.x), nothing is
reported and the run says which setting (`versions.torch-npu`) would tell.
"""
    why = """
The check runs when torch_npu reads its options: a refused value stops every training process at
start-up ("HCCL_ASYNC_ERROR_HANDLING should be 0 or 1"), and again after every rescheduling, so
the job never trains and each restart costs a full scheduling round.
"""
    example = """
```bash
export HCCL_ASYNC_ERROR_HANDLING=2    # RL104 with torch_npu 2.1.0.post10 (release 6.0.0)
```
Use instead:
```bash
export HCCL_ASYNC_ERROR_HANDLING=1
```
"""
    fix = """
No fix: which of the accepted values was meant (watchdog off, or on and exiting) is the user's
choice.
"""
    sources = (
        "Ascend/pytorch release tags: torch_npu/csrc/core/npu/register/OptionsManager.cpp "
        "CheckUseHcclAsyncErrorHandleEnable (TORCH_CHECK of the accepted values; recovery_lint "
        "schemas/torch_npu_releases.json)",
    )
    cases = examples(
        lambda: (
            Case(
                title="2 with release 6.0.0: every process stops at start-up",
                files={
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=2\n" + _LAUNCH,
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
                },
                expect=("train.sh:1",),
            ),
            Case(
                title="2 with release 7.3.0 is detect-only mode",
                files={
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=2\n" + _LAUNCH,
                    "requirements.txt": "torch==2.6.0\ntorch-npu==2.6.0.post5\n",
                },
            ),
            Case(
                title="release 5.0.0 takes any integer",
                files={
                    "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=2\n" + _LAUNCH,
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0\n",
                },
            ),
            Case(
                title="release unknown: withheld, the run names versions.torch-npu",
                files={"train.sh": "export HCCL_ASYNC_ERROR_HANDLING=3\n" + _LAUNCH},
                withheld=("release",),
            ),
            Case(
                title="0 and 1 are accepted everywhere",
                files={"train.sh": "export HCCL_ASYNC_ERROR_HANDLING=1\n" + _LAUNCH},
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        watchdog = watchdog_facts(facts_of(job))
        if watchdog.no_npu or watchdog.read is False:
            return
        seen: set[int] = set()
        for _, cmd in pytorch_launches(job):
            value = cmd.env.get(NAME)
            if value is None or value.known is None or value.span is None or id(value) in seen:
                continue
            seen.add(id(value))
            accepted = watchdog.accepts(value.known)
            if accepted is True:
                continue
            if accepted is False:
                allowed = ", ".join(str(v) for v in watchdog.values or ())
                yield self.report(
                    value.span,
                    f"{NAME}={value.known} is refused by the start-up check of {watchdog.basis}{declared(job)} "
                    f"(accepted: {allowed}): every training process stops at start-up, and again after every "
                    "rescheduling",
                )
                continue
            if watchdog.refusing(value.known):  # some of the releases it may run refuse it: which one runs?
                _, evidence = release_facts(job)
                yield self.withhold(job, "release", f"{NAME}={value.known}: {evidence or watchdog.basis}")
