"""``--show-jobs``: how the repository was understood: each job with what it is and why, and every
file with whether recovery advice applies to it and why (text, or JSON with ``--output-format json``)."""

from __future__ import annotations

import json

from ..jobs import Job, LaunchCommand, Project
from ..premises import PREMISES, Answer, Withheld, answer, configured
from ..sources.versions import COMPONENTS
from .settle import remedy


def _versions(job: Job) -> str:
    versions = job.context.versions
    return ", ".join(versions.describe(c) for c in COMPONENTS if versions.get(c)) or "none declared"


def _entry(cmd: LaunchCommand) -> str:
    if cmd.entry_file is not None:
        return cmd.entry_file.source.path
    if cmd.entry is not None:
        return f"{cmd.entry.text} (not resolved: {cmd.entry_note})"
    return "none"


def _launcher(cmd: LaunchCommand) -> str:
    return f"{cmd.launcher} {cmd.subcommand}" if cmd.subcommand else cmd.launcher


def _scale(cmd: LaunchCommand) -> str:
    scale = cmd.scale
    if scale is None:
        return ""
    nodes = str(scale.nodes) if scale.nodes is not None else "unknown"
    per_node = str(scale.per_node) if scale.per_node is not None else "unknown"
    where = "; ".join(e for e in (scale.node_evidence, scale.evidence) if e)
    return f"{nodes} node(s) x {per_node} process(es) per node ({where})"


def _parallel_store(cmd: LaunchCommand) -> str:
    """What would put the launch on the Parallel Store (RL301's advice), for a distributed launch."""
    if not cmd.is_distributed:
        return ""
    advice, how = cmd.parallel_store_form
    return f"{advice}{f' ({how})' if how else ''}" if advice else f"no advice: {how}"


def _launch_facts(cmd: LaunchCommand) -> dict[str, str]:
    return {
        "scale": _scale(cmd),
        "ranks' environment": cmd.env_note,
        "parallel store": _parallel_store(cmd),
    }


def _withheld_by_premise(withheld: list[Withheld]) -> dict[str, list[Withheld]]:
    by: dict[str, list[Withheld]] = {}
    for w in withheld:
        by.setdefault(w.premise, []).append(w)
    return by


def _premise_line(name: str, found: Answer, withheld: list[Withheld]) -> str:
    """A premise as the job answers it; one that holds and still left some advice unknown (a release
    whose builds differ in what the advice needs) says so, as the run's "Advice withheld" line does."""
    line = f"  premise {name}: {found.status} ({found.located})"
    if withheld and not found.unknown:
        rules = ", ".join(dict.fromkeys(w.code for w in withheld))
        line += f"; unknown for {rules} ({withheld[0].evidence.rstrip('.')})"
    return line


def _platform(job: Job) -> str:
    """The platform as the premises read it: the manifest's label, else the configuration's."""
    if job.context.platform:
        return job.context.platform
    declared = configured(job, "platform")
    return f"{declared} (target.platform)" if declared else "unknown"


def _job_lines(job: Job, withheld: list[Withheld]) -> list[str]:
    ctx = job.context
    state = "judged" if job.judged else "not judged"
    lines = [
        job.id,
        f"  {state}: {job.verdict.role} ({job.verdict.reason})",
        f"  platform: {_platform(job)}; framework: {ctx.framework or 'unknown'}; "
        f"recovery: {ctx.recovery or 'unknown'}; versions: {_versions(job)}",
    ]
    if job.judged:
        by_premise = _withheld_by_premise(withheld)
        for name, found in premise_answers(job):
            lines.append(_premise_line(name, found, by_premise.get(name, [])))
        # one line per rule and premise: the places are --show-withheld's
        for w in {(w.code, w.premise, w.evidence, w.key): w for w in withheld}.values():
            key = w.settling_key
            lines.append(
                f"  advice withheld: {w.code} ({w.premise} unknown: {w.evidence.rstrip('.')}; {remedy(key, w.premise)})"
            )
    for span, note in ctx.notes:
        lines.append(f"  note: {note} ({span.path}:{span.line})")
    for path, why in ctx.versions.set_aside.items():
        lines.append(f"  note: the versions in {path} are not read for it: {why}, not an NPU stack")
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
                f"    launch {_launcher(cmd)} at {cmd.command.span.path}:{cmd.command.span.line} -> entry "
                f"{_entry(cmd)}{verdict}"
            )
            lines += [f"      {name}: {text}" for name, text in _launch_facts(cmd).items() if text]
    if not job.launches:
        for entry in job.entries:
            lines.append(f"  python {entry.source.path}")
    return lines


def premise_answers(job: Job) -> list[tuple[str, Answer]]:
    """Every job-level premise, answered for ``job``."""
    return [(name, answer(job, name)) for name in PREMISES if name != "training-file"]


def _of_job(withheld: list[Withheld], job: Job) -> list[Withheld]:
    return [w for w in withheld if w.job == job.id]


def render_jobs(project: Project, withheld: list[Withheld] | None = None) -> str:
    lines: list[str] = []
    for job in project.jobs + project.skipped:
        lines += _job_lines(job, _of_job(withheld or [], job))
        lines.append("")
    if not project.jobs and not project.skipped:
        lines += ["no jobs found", ""]
    if project.judgements:
        lines.append("files:")
        for path, verdict in sorted(project.judgements.items()):
            state = "judged" if verdict.judged else "not judged"
            lines.append(f"  {path}: {state}, {verdict.role} ({verdict.reason})")
    return "\n".join(lines).rstrip("\n") + "\n"


def _job_json(job: Job, withheld: list[Withheld]) -> dict[str, object]:
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
        "withheld": [
            {"rule": w.code, "premise": w.premise, "evidence": w.evidence, "key": w.settling_key}
            for w in {(w.code, w.premise, w.evidence, w.key): w for w in withheld}.values()
        ],
        "files": job.files,
        "launches": [
            {
                "launcher": cmd.launcher,
                "subcommand": cmd.subcommand,
                "family": cmd.row.family if cmd.row is not None else None,
                "nodes": cmd.scale.nodes if cmd.scale is not None else None,
                "processes_per_node": cmd.scale.per_node if cmd.scale is not None else None,
                **{name.replace("'", "").replace(" ", "_"): text or None for name, text in _launch_facts(cmd).items()},
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


def render_jobs_json(project: Project, withheld: list[Withheld] | None = None) -> str:
    document = {
        "jobs": [_job_json(j, _of_job(withheld or [], j)) for j in project.jobs + project.skipped],
        "files": [
            {"path": path, "judged": verdict.judged, "role": verdict.role, "reason": verdict.reason}
            for path, verdict in sorted(project.judgements.items())
        ],
    }
    return json.dumps(document, indent=2) + "\n"
