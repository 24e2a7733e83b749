"""Helpers of the version rules: which pins a job or a lone pin file declares, and where to point
when a version comes from the recovery-lint configuration rather than from a file."""

from __future__ import annotations

from recovery_lint.jobs import Job, Project
from recovery_lint.knowledge.releases import NpuFacts, npu_facts
from recovery_lint.premises import release_facts
from recovery_lint.sources.versions import PinFile, VersionPin
from recovery_lint.span import Span

LABELS = {
    "torch": "torch",
    "torch-npu": "torch_npu",
    "cann": "CANN",
    "mindcluster": "MindCluster",
    "mindio": "MindIO",
    "mindspeed-llm": "MindSpeed-LLM",
}


def first_exact_pins(pin_file: PinFile) -> dict[str, VersionPin]:
    """The first exact pin of each component in one file (what a job reading only it would use)."""
    out: dict[str, VersionPin] = {}
    for pin in pin_file.pins:
        if pin.exact:
            out.setdefault(pin.component, pin)
    return out


def lone_pin_files(project: Project) -> list[PinFile]:
    """Pin files that no job reads (no manifest, script or Python file at or below their folder)."""
    used = {id(p) for job in project.jobs for p in job.pin_files}
    out = []
    for parsed in project.files:
        if isinstance(parsed.model, PinFile) and id(parsed.model) not in used:
            out.append(parsed.model)
    return out


def from_config(job: Job, component: str) -> bool:
    """True when the job's version of ``component`` is the configured one (no exact pin)."""
    versions = job.context.versions
    return versions.span(component) is None and component in versions.configured


def job_anchor(job: Job) -> Span | None:
    """Where a finding about a whole job points: its manifest name, else its first launch or file."""
    if job.manifest is not None:
        return job.manifest.name.span if job.manifest.name is not None else job.manifest.span
    for launch in job.launches:
        for cmd in launch.commands:
            return cmd.command.span
    for script in job.scripts:
        return script.source.span(0)
    for entry in job.entries:
        return entry.source.span(0)
    return None


def config_anchor(project: Project, component: str) -> Span | None:
    """One place for a finding about a configured version: the first job that relies on it."""
    for job in project.jobs:
        if from_config(job, component):
            span = job_anchor(job)
            if span is not None:
                return span
    return None


CONFIG_NOTE = "from the recovery-lint configuration, versions.{component}"


def facts_of(job: Job) -> NpuFacts:
    """What the job's declared torch and torch_npu say about the torch_npu release it runs (any of
    the versions a README or version-named requirements list, when no single one is pinned; for a
    job MindCluster runs that declares none, the releases the MindCluster docs support). Where
    nothing is known, every release of the table: no answer is shared by all of them."""
    facts, _ = release_facts(job)
    return facts if facts is not None else npu_facts(None, None)


def with_origin(reason: str, job: Job) -> str:
    """A knowledge reason followed by where the job's versions were read (no full stop)."""
    return f"{reason.rstrip('.')}{declared(job)}"


def declared(job: Job) -> str:
    """Where the job's torch and torch_npu versions were read, for messages: `` (torch_npu from
    requirements.txt:2)``, or why they are unknown."""
    versions = job.context.versions
    parts = []
    for component, label in (("torch-npu", "torch_npu"), ("torch", "torch")):
        origin = versions.origin(component)
        listed = versions.alternatives_origin(component)
        if origin is not None:
            parts.append(f"{label} from {origin}")
        elif listed is not None:
            parts.append(f"{label} {' or '.join(versions.alternatives(component))} listed in {listed}")
        elif component in versions.conflicts:
            parts.append(f"{label} {versions.conflicts[component]}")
    return f" ({'; '.join(parts)})" if parts else ""
