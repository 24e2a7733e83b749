"""RL317: RankTable mode with a connect timeout torch_npu warns about."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.jobs import Job
from recovery_lint.knowledge.features import feature_support
from recovery_lint.premises import release_facts, unread_source_evidence
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples

from ._common import insert_env_before, pytorch_launches, set_env_value
from ._ranktable import CONNECT_TIMEOUT, ENV, TIMEOUT

MINIMUM = 300  # ProcessGroupHCCL::createHCCLCommEx: "recommended ... 300 seconds or more"

_PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0: reads RANK_TABLE_FILE
_TABLE = "export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json\n"
_LAUNCH = "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"


class RankTableConnectTimeout(Rule):
    code = "RL317"
    scorecard = MISCONFIGURED
    name = "ranktable-connect-timeout"
    phase = "comm-init"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    holds_if = (("release", "the job's torch_npu release reads RANK_TABLE_FILE (6.0.RC3 and later)"),)
    also_asks = ("release",)
    summary = "RankTable mode with HCCL_CONNECT_TIMEOUT below 300 s: the link setup may time out"
    what = """
A PyTorch training launch in RankTable mode (`RANK_TABLE_FILE` set, on a torch_npu release that
reads it) whose `HCCL_CONNECT_TIMEOUT` is unset or below 300 s. torch_npu checks this when it
builds a process group from the rank table and warns: "When creating an HCCL process group using
the RANK_TABLE_FILE method, the connection may time out. It is recommended to set the timeout
duration of HCCL_CONNECT_TIMEOUT to 300 seconds or more." Unset counts as 0 there (HCCL's own
default is shorter than 300 s). The launch must build a process group: a distributed launcher
(torchrun and the like), or a plain `python` launch known to start several processes.
"""
    why = """
With a rank table every rank connects to its peers at once, without the negotiation that spreads
the connections out: on a large job the link setup takes longer than a short connect timeout, and
the job fails at start-up and again after every rescheduling, the phase RankTable mode was meant
to shorten.
"""
    example = """
```bash
export RANK_TABLE_FILE=/user/mindx-dl/ranktable/hccl.json
export HCCL_CONNECT_TIMEOUT=120        # RL317
torchrun --nnodes 2 --nproc_per_node 8 train.py
```
Use instead:
```bash
export HCCL_CONNECT_TIMEOUT=600
```
"""
    fix = """
Unset: `export HCCL_CONNECT_TIMEOUT=600` is inserted before the launch (a container `env` entry
when the container runs the launch itself), safe. Set below 300: the value becomes 600 where it is
set, unsafe (a value set explicitly); no fix behind a condition.
"""
    sources = (
        "Ascend/pytorch: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp createHCCLCommEx (the warning below 300 s, "
        "from 6.0.rc3 on) and csrc/core/npu/register/OptionsManager.cpp GetHCCLConnectTimeout (unset is 0)",
        "Ascend/pytorch docs: environment_variable/collective_communication/RANK_TABLE_FILE.md (建议将"
        "HCCL_CONNECT_TIMEOUT的超时时间适当增大)",
    )
    cases = examples(
        lambda: (
            Case(
                title="unset in RankTable mode: exported before the launch",
                files={"train.sh": _TABLE + _LAUNCH, "requirements.txt": _PINS},
                expect=("train.sh:2:1",),
                fixed={"train.sh": _TABLE + "export HCCL_CONNECT_TIMEOUT=600\n" + _LAUNCH},
            ),
            Case(
                title="120 s: the user's value, an unsafe fix",
                files={"train.sh": _TABLE + "export HCCL_CONNECT_TIMEOUT=120\n" + _LAUNCH, "requirements.txt": _PINS},
                expect=("train.sh:2:8",),
                unsafe=True,
                fixed={"train.sh": _TABLE + "export HCCL_CONNECT_TIMEOUT=600\n" + _LAUNCH},
            ),
            Case(
                title="a sourced script that cannot be read may set it (no fix may override what it sets)",
                files={
                    "train.sh": "source ./site_env.sh\n" + _TABLE + _LAUNCH,
                    "requirements.txt": _PINS,
                },
                withheld=("launch-environment",),
            ),
            Case(
                title="1800 s",
                files={"train.sh": _TABLE + "export HCCL_CONNECT_TIMEOUT=1800\n" + _LAUNCH, "requirements.txt": _PINS},
            ),
            Case(title="not in RankTable mode", files={"train.sh": _LAUNCH, "requirements.txt": _PINS}),
            Case(
                title="a release that does not read RANK_TABLE_FILE (RL314's)",
                files={"train.sh": _TABLE + _LAUNCH, "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post4\n"},
            ),
            Case(
                title="release unknown: withheld",
                files={"train.sh": _TABLE + _LAUNCH},
                withheld=("release",),
            ),
        )
    )

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        # torch_npu warns when it builds a process group from the table: a distributed launcher's ranks
        # do; a plain python launch only where it is known to start several processes
        launches = [
            (launch, cmd)
            for launch, cmd in pytorch_launches(job)
            if _table_set(cmd) and (cmd.is_distributed or (cmd.scale is not None and cmd.scale.multi))
        ]
        if not launches:
            return
        facts, evidence = release_facts(job)
        if facts is None:
            yield self.withhold(job, "release", evidence)
            return
        support = feature_support("rank_table", facts)
        if support.status == "missing":
            return  # RL314: the release does not read the table
        if support.status == "unknown":
            yield self.withhold(job, "release", support.reason)
            return
        seen: set[tuple[str, int]] = set()
        for launch, cmd in launches:
            value = cmd.env.get(TIMEOUT)
            if value is None and cmd.may_set(TIMEOUT):  # a script sourced before the launch, not read, may set it
                yield self.withhold(job, "launch-environment", unread_source_evidence(cmd))
                continue
            if value is None:
                edits = insert_env_before(job, launch, cmd, TIMEOUT, str(CONNECT_TIMEOUT))
                yield self.report(
                    cmd.command.span,
                    f"{TIMEOUT} is not set in RankTable mode: torch_npu warns that the link setup may time out and "
                    f"asks for {MINIMUM} s or more",
                    safe_fix(f"Export {TIMEOUT}={CONNECT_TIMEOUT} before the launch", *edits) if edits else None,
                )
                continue
            seconds = _seconds(value.known)
            if seconds is None or seconds >= MINIMUM or value.span is None:
                continue
            key = (value.span.path, value.span.start)
            if key in seen:
                continue
            seen.add(key)
            edits = None if value.conditional else set_env_value(job, value, str(CONNECT_TIMEOUT))
            yield self.report(
                value.span,
                f"{TIMEOUT}={value.known} in RankTable mode: torch_npu warns that the link setup may time out below "
                f"{MINIMUM} s",
                safe_fix(f"Set {TIMEOUT}={CONNECT_TIMEOUT}", *edits, overrides=f"{TIMEOUT}={value.known}")
                if edits
                else None,
                related=[(cmd.command.span, "the training launch")],
            )


def _table_set(cmd) -> bool:
    value = cmd.env.get(ENV)
    return value is not None and bool((value.known or "").strip())


def _seconds(text: str | None) -> int | None:
    try:
        return int((text or "").strip())
    except ValueError:
        return None
