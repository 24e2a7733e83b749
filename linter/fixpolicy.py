"""The safe-fix policy, in one place.

A fix is applied without review (``--fix``, the pre-commit fix hook) only when it cannot change a
working job. So a fix a rule offers as safe becomes unsafe, with the reason added to the finding,
when it

- changes a value the user set explicitly (the rule says which, ``Fix.overrides``): the value may
  be deliberate, and only the user can tell;
- changes a setting that applies only behind a condition (``Fix.conditional``): the other branch
  may be the one the cluster runs;
- edits a file outside the job's launch path (its manifest, the scripts its containers run, its
  training entries): that file may serve other jobs or nothing at all.

Rules describe what their fix touches; this module alone decides what that means for its safety.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from .diagnostics import Applicability, Diagnostic


def reasons(diagnostic: Diagnostic, launch_paths: Collection[str] | None) -> list[str]:
    """Why the policy forbids applying this diagnostic's fix without review; empty when it allows it."""
    fix = diagnostic.fix
    if fix is None or fix.applicability is not Applicability.SAFE:
        return []
    out = []
    if fix.overrides:
        out.append(f"it changes {fix.overrides}, set explicitly")
    if fix.conditional:
        out.append("the setting applies only when a condition holds")
    if launch_paths is not None:
        outside = sorted(p for p in fix.paths if p not in launch_paths)
        if outside:
            out.append(f"it edits {', '.join(outside)}, outside the job's launch path")
    return out


def enforce(diagnostic: Diagnostic, launch_paths: Collection[str] | None) -> Diagnostic:
    """The diagnostic with its fix made unsafe when the policy requires it, and the reason said; no
    fix at all when it edits a file read in another encoding than UTF-8 (a Python file declaring
    ``# coding: gbk``), which the fix engine would not write back byte for byte."""
    fix = diagnostic.fix
    if fix is not None:
        foreign = sorted({e.path for e in fix.edits if e.span.source.encoding != "utf-8"})
        if foreign:
            codec = next(e.span.source.encoding for e in fix.edits if e.path == foreign[0])
            message = f"{diagnostic.message} (No fix: {foreign[0]} is encoded in {codec}, which fixes do not write.)"
            return replace(diagnostic, fix=None, message=message)
    why = reasons(diagnostic, launch_paths)
    if not why:
        return diagnostic
    caution = "; ".join(why)
    fix = replace(diagnostic.fix, applicability=Applicability.UNSAFE)  # type: ignore[arg-type]
    return replace(diagnostic, fix=fix, message=f"{diagnostic.message} (The fix is unsafe: {caution}.)")
