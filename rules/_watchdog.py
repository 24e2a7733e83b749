"""What the watchdog rules (RL101, RL105) share: where the MindCluster docs forbid the HCCL watchdog.

Hot switch (``subHealthyStrategy: hotSwitch``, which the docs support on an AscendJob only) and
operator-level retry (``HCCL_OP_RETRY_ENABLE`` with a level switched on) do not support the watchdog
("不支持开启watchdog功能"): there it must stay off, and asking for it would be wrong. A hot-switch
label on another workload does nothing (RL205), so it forbids nothing there.
"""

from __future__ import annotations

from recovery_lint.jobs import EnvValue, Job
from recovery_lint.lazyre import LazyPattern
from recovery_lint.span import Span

HOT_SWITCH_LABEL = "subHealthyStrategy"
HOT_SWITCH = "hotSwitch"
OP_RETRY = "HCCL_OP_RETRY_ENABLE"
# "L0:0, L1:1, L2:1": a retry level switched on
_LEVEL_ON = LazyPattern(r"\bL\d\s*:\s*1\b")  # compiled when a launch sets the variable


def op_retry_on(value: EnvValue | None) -> bool:
    return value is not None and value.known is not None and _LEVEL_ON.search(value.known) is not None


def watchdog_forbidden(job: Job) -> tuple[Span | None, str] | None:
    """Where and why the job must not run the watchdog: hot switch on its manifest, or operator-level
    retry switched on in a launch environment; None when neither is."""
    doc = job.manifest
    label = doc.label(HOT_SWITCH_LABEL) if doc is not None else None
    if doc is not None and doc.is_ascendjob and label is not None and label.value == HOT_SWITCH:
        return label.span, f"{HOT_SWITCH_LABEL}: {HOT_SWITCH} (hot switch) does not support the watchdog"
    for launch in job.launches:
        for cmd in launch.commands:
            value = cmd.env.get(OP_RETRY)
            if op_retry_on(value):
                assert value is not None
                return value.span, f"{OP_RETRY}={value.known} (operator-level retry) does not support the watchdog"
    return None
