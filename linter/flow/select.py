"""Select: which findings a run reports. One finding per place and message, the configuration's
per-file ignores applied, and in a run over named files or a folder of a larger repository the
findings (and withheld advice) of the jobs those files belong to."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import Config
from ..diagnostics import Diagnostic
from ..discover import ExcludeSet
from ..jobs import Job, Project
from ..kinds import MANIFEST
from ..parse import ParsedFile, yaml_named
from ..premises import Withheld
from ..registry import indexed_rules, matches
from .request import LintRequest


def named_yaml(files: list[ParsedFile], named: set[str]) -> tuple[list[ParsedFile], list[str]]:
    """A YAML file named on the command line that holds no Kubernetes object is read for its syntax
    (an error in it is reported), and the run says it was not checked otherwise."""
    if not named:
        return files, []
    out: list[ParsedFile] = []
    warnings: list[str] = []
    for f in files:
        if f.path in named and f.kind == MANIFEST and not f.relevant and f.source is not None and f.model is None:
            f = yaml_named(f.source)
            if not f.issues and _has_content(f.source.text):
                warnings.append(f"{f.path}: holds no Kubernetes object (no apiVersion or kind); not checked")
        out.append(f)
    return out, warnings


def _has_content(text: str) -> bool:
    """Whether a YAML text holds more than comments, blank lines and document markers: an empty file
    named on the command line is nothing to warn about."""
    for line in text.splitlines():
        bare = line.strip()
        if bare and not bare.startswith("#") and bare not in ("---", "..."):
            return True
    return False


def withheld_of(withheld: list[Withheld], request: LintRequest, project: Project | None = None) -> list[Withheld]:
    """The withheld advice a run speaks of: all of it, or in a run over named files that of their
    jobs, or in a folder that of the jobs whose files it reports (a job's id starts with its
    manifest's or script's path)."""
    shown = request.report_only
    if shown is None:
        return withheld
    if request.named and project is not None and request.whole_jobs:
        ids, _ = named_jobs(project, request.named)
        return [w for w in withheld if w.job in ids]
    return [w for w in withheld if w.job.split("#", 1)[0].removesuffix(" (standalone)") in shown]


def reported(diagnostics: list[Diagnostic], request: LintRequest, project: Project | None = None) -> list[Diagnostic]:
    """The findings a run shows: those in the paths given; in a run over named files (pre-commit, an
    editor) every finding of the jobs those files belong to, in any of their files, as the folder run
    reports them (a commit of a manifest, a sourced env script, a pin file or an entry alone changes
    the answer for the job's other files)."""
    shown = request.report_only
    if shown is None:
        return diagnostics
    named = request.named
    if not named:
        return [d for d in diagnostics if d.path in shown]
    if not request.whole_jobs:
        return [d for d in diagnostics if d.path in shown or any(c in named for c in d.context)]
    ids, files = named_jobs(project, named) if project is not None else (set(), set())
    return [
        d
        for d in diagnostics
        if d.path in shown
        or (set(d.origins) & ids if d.origins else d.path in files)
        or any(c in named for c in d.context)
    ]


def named_jobs(project: Project, named: set[str]) -> tuple[set[str], set[str]]:
    """The ids of the training jobs a named file belongs to (as its manifest, a script it runs or
    sources, an entry, a module the entry imports for its settings, a version declaration it reads),
    and every file of those jobs."""
    ids: set[str] = set()
    files: set[str] = set()
    for job in project.jobs:
        mine = job_file_set(job)
        if mine & named:
            ids.add(job.id)
            files |= mine
    return ids, files


def job_file_set(job: Job) -> set[str]:
    mine = set(job.files) | {p.source.path for p in job.pin_files}
    mine.update(m.source.path for modules in job.entry_modules.values() for m in modules)
    return mine


def dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One finding per place and message. A script shared by several jobs gets the same finding
    from each: it is kept once, attached to no single job (each job's scorecard counts it)."""
    seen: dict[tuple[object, ...], int] = {}
    out: list[Diagnostic] = []
    for d in diagnostics:
        key = (d.code, d.span.path, d.span.start, d.span.end, d.message)
        at = seen.get(key)
        if at is None:
            seen[key] = len(out)
            out.append(d)
            continue
        kept = out[at]
        if kept.job != d.job and kept.job is not None:
            kept = kept.with_job(None)
        if d.context and not set(d.context) <= set(kept.context):
            kept = replace(kept, context=tuple(dict.fromkeys((*kept.context, *d.context))))
        if d.origins and not set(d.origins) <= set(kept.origins):
            kept = replace(kept, origins=tuple(dict.fromkeys((*kept.origins, *d.origins))))
        out[at] = kept
    return out


def per_file_ignores(diagnostics: list[Diagnostic], config: Config, cwd: Path) -> list[Diagnostic]:
    if not config.per_file_ignores:
        return diagnostics
    rules = indexed_rules()
    root = config.root or cwd
    # matched as `exclude` is: .gitignore patterns relative to the config file's folder
    patterns = [(ExcludeSet([pattern], root), selectors) for pattern, selectors in config.per_file_ignores.items()]
    out = []
    for d in diagnostics:
        rel = _relative_to(Path(cwd, d.path), root)
        ignored = False
        for pattern, selectors in patterns:
            if pattern.match_relative(rel):
                rule = rules.get(d.code)
                if rule and any(matches(s, rule) for s in selectors):
                    ignored = True
        if not ignored:
            out.append(d)
    return out


def _relative_to(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
