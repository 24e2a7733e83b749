"""``--show-jobs``: how the repository was understood, job by job."""

from __future__ import annotations

from ..jobs import Job, Project


def _versions(job: Job) -> str:
    parts = []
    for component in ("torch", "torch-npu", "cann", "mindcluster", "mindio"):
        value = job.context.versions.get(component)
        if value:
            parts.append(f"{component} {value}")
    return ", ".join(parts) or "unknown"


def render_jobs(project: Project) -> str:
    lines: list[str] = []
    for job in project.jobs:
        ctx = job.context
        lines.append(job.id)
        lines.append(
            f"  platform: {ctx.platform or 'unknown'}; framework: {ctx.framework or 'unknown'}; "
            f"recovery: {ctx.recovery or 'unknown'}; versions: {_versions(job)}"
        )
        for launch in job.launches:
            if launch.container is not None:
                role = f"{launch.pod.role}/" if launch.pod and launch.pod.role else ""
                lines.append(f"  container {role}{launch.container.name or '?'}:")
            else:
                lines.append("  start-up:")
            if launch.inline is not None:
                lines.append(
                    f"    inline command at {job.manifest.path}:{launch.inline.events[0].span.line}"
                    if launch.inline.events
                    else "    inline command"
                )
            for script in launch.scripts:
                lines.append(f"    script {script.source.path}")
            for cmd in launch.commands:
                entry = (
                    cmd.entry_file.source.path
                    if cmd.entry_file
                    else (f"{cmd.entry.text} (not found)" if cmd.entry else "none")
                )
                lines.append(
                    f"    launch {cmd.launcher} at {cmd.command.span.path}:{cmd.command.span.line} -> entry {entry}"
                )
        if not job.launches:
            for entry in job.entries:
                lines.append(f"  python {entry.source.path}")
        lines.append("")
    if not project.jobs:
        lines.append("no jobs found")
    return "\n".join(lines) + "\n"
