"""``--show-jobs``: how the repository was understood: each job with what it is and why, and every
file with whether recovery advice applies to it and why (text, or JSON with ``--output-format json``)."""

from __future__ import annotations

import json

from ..jobs import Job, LaunchCommand, Project
from ..premises import PREMISES, Answer, answer
from ..sources.versions import COMPONENTS


def _versions(job: Job) -> str:
    versions = job.context.versions
    return ", ".join(versions.describe(c) for c in COMPONENTS if versions.get(c)) or "none declared"


def _entry(cmd: LaunchCommand) -> str:
    if cmd.entry_file is not None:
        return cmd.entry_file.source.path
    if cmd.entry is not None:
        return f"{cmd.entry.text} (not resolved: {cmd.entry_note})"
    return "none"


def _job_lines(job: Job) -> list[str]:
    ctx = job.context
    state = "judged" if job.judged else "not judged"
    lines = [
        job.id,
        f"  {state}: {job.verdict.role} ({job.verdict.reason})",
        f"  platform: {ctx.platform or 'unknown'}; framework: {ctx.framework or 'unknown'}; "
        f"recovery: {ctx.recovery or 'unknown'}; versions: {_versions(job)}",
    ]
    if job.judged:
        for name, found in premise_answers(job):
            lines.append(f"  premise {name}: {found.status} ({found.located})")
    for span, note in ctx.notes:
        lines.append(f"  note: {note} ({span.path}:{span.line})")
    for launch in job.launches:
        if launch.container is not None:
            role = f"{launch.pod.role}/" if launch.pod and launch.pod.role else ""
            lines.append(f"  container {role}{launch.container.name or '?'}:")
        else:
            lines.append("  start-up:")
        if launch.inline is not None and job.manifest is not None:
            where = f" at {job.manifest.path}:{launch.inline.events[0].span.line}" if launch.inline.events else ""
            lines.append(f"    inline command{where}")
        if launch.note:
            lines.append(f"    note: {launch.note}")
        for script in launch.scripts:
            lines.append(f"    script {script.source.path}")
        for cmd in launch.commands:
            verdict = f" [{cmd.verdict.role}: {cmd.verdict.reason}]" if cmd.verdict is not None else ""
            lines.append(
                f"    launch {cmd.launcher} at {cmd.command.span.path}:{cmd.command.span.line} -> entry "
                f"{_entry(cmd)}{verdict}"
            )
    if not job.launches:
        for entry in job.entries:
            lines.append(f"  python {entry.source.path}")
    return lines


def premise_answers(job: Job) -> list[tuple[str, Answer]]:
    """Every job-level premise, answered for ``job``."""
    return [(name, answer(job, name)) for name in PREMISES if name != "training-file"]


def render_jobs(project: Project) -> str:
    lines: list[str] = []
    for job in project.jobs + project.skipped:
        lines += _job_lines(job)
        lines.append("")
    if not project.jobs and not project.skipped:
        lines += ["no jobs found", ""]
    if project.judgements:
        lines.append("files:")
        for path, verdict in sorted(project.judgements.items()):
            state = "judged" if verdict.judged else "not judged"
            lines.append(f"  {path}: {state}, {verdict.role} ({verdict.reason})")
    return "\n".join(lines).rstrip("\n") + "\n"


def _job_json(job: Job) -> dict[str, object]:
    ctx = job.context
    return {
        "id": job.id,
        "judged": job.judged,
        "role": job.verdict.role,
        "reason": job.verdict.reason,
        "platform": ctx.platform,
        "framework": ctx.framework,
        "recovery": ctx.recovery,
        "versions": {
            c: {"version": ctx.versions.get(c), "from": ctx.versions.origin(c)}
            for c in COMPONENTS
            if ctx.versions.get(c) is not None
        },
        "premises": (
            {name: {"status": found.status, "evidence": found.located} for name, found in premise_answers(job)}
            if job.judged
            else {}
        ),
        "files": job.files,
        "launches": [
            {
                "launcher": cmd.launcher,
                "path": cmd.command.span.path,
                "line": cmd.command.span.line,
                "entry": cmd.entry_file.source.path if cmd.entry_file is not None else None,
                "entry_as_written": cmd.entry.text if cmd.entry is not None else None,
                "entry_note": cmd.entry_note or None,
                "role": cmd.verdict.role if cmd.verdict is not None else None,
                "reason": cmd.verdict.reason if cmd.verdict is not None else None,
            }
            for launch in job.launches
            for cmd in launch.commands
        ],
    }


def render_jobs_json(project: Project) -> str:
    document = {
        "jobs": [_job_json(j) for j in project.jobs + project.skipped],
        "files": [
            {"path": path, "judged": verdict.judged, "role": verdict.role, "reason": verdict.reason}
            for path, verdict in sorted(project.judgements.items())
        ],
    }
    return json.dumps(document, indent=2) + "\n"
