"""Graceful deletion (fault-scheduling "grace"): the grace period a Pod may ask for under it."""

from __future__ import annotations

from recovery_lint.diagnostics import Fix, unsafe_fix
from recovery_lint.edits import replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.sources.manifest import ManifestDoc
from recovery_lint.sources.yamlnodes import YScalar
from recovery_lint.span import SourceText

GRACE_OVER_TIME_MAX = 3600  # the largest grace-over-time the Volcano plugin accepts (plugin/const.go)
DEFAULT_GRACE_OVER_TIME = 900  # when the plugin's configuration leaves it out


def period_unfit_for_grace(job: Job, doc: ManifestDoc) -> str:
    """Why a Pod's terminationGracePeriodSeconds would not be known to fit under graceful deletion
    (0 < period < grace-over-time, the YAML reference), '' when every Pod's does: 0, from the
    largest grace-over-time up, from the configured target.grace-over-time up, or from the default
    900 s up while the cluster's value is not declared."""
    limit = job.context.settings.get("target.grace-over-time")
    for pod in doc.pods:
        node = pod.node.scalar("terminationGracePeriodSeconds")
        if node is None or not node.value.strip().isdigit():
            continue
        seconds = int(node.value)
        if seconds == 0 or seconds >= GRACE_OVER_TIME_MAX:
            return (
                f"terminationGracePeriodSeconds {seconds} is outside what grace allows (0 < period < grace-over-time)"
            )
        bound = int(limit) if limit is not None else DEFAULT_GRACE_OVER_TIME
        if seconds >= bound:
            said = (
                "target.grace-over-time"
                if limit is not None
                else "the default grace-over-time, unless the cluster raised it"
            )
            return f"terminationGracePeriodSeconds {seconds} is not below {bound} s ({said})"
    return ""


def grace_instead(job: Job, doc: ManifestDoc, src: SourceText, fault: YScalar) -> tuple[Fix | None, str]:
    """The unsafe fix that turns fault-scheduling "force" into "grace", and '' ; or no fix and the
    message tail saying why (a Pod's grace period would not fit under grace: RL210's)."""
    unfit = period_unfit_for_grace(job, doc)
    if unfit:
        return None, f". No fix: {unfit}"
    return unsafe_fix('Set fault-scheduling to "grace"', replace_scalar(src, fault, "grace")), ""
