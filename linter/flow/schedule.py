"""Schedule: each selected rule run on what it checks (the project, each file, each job), where
the premises it declares hold for the job; the findings of a job's rule carry the job, and the
advice a rule would give where a premise is unknown comes back as withheld."""

from __future__ import annotations

import bisect
import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..diagnostics import Diagnostic
from ..fixpolicy import enforce
from ..jobs import Job, Project, judged_in, linked_files
from ..parse import ParsedFile
from ..premises import Withheld, training_file, unreadable_entries, withheld_for
from ..rule import Rule

PARALLEL_RULES_THRESHOLD = 1000  # jobs; below this forking for the rules costs more than it saves


def run_rules(rules: list[Rule], project: Project, workers: int = 1) -> tuple[list[Diagnostic], list[str]]:
    """Every hook of ``rules`` over ``project`` (in forked children past the threshold): the findings
    and withheld advice, in a fixed order, and one error line for each hook that failed."""
    tasks = Hooks(rules, project)
    if (
        workers > 1
        and len(project.jobs) >= PARALLEL_RULES_THRESHOLD
        and hasattr(os, "fork")
        and sys.platform == "linux"
    ):
        from ..speed import pool  # loaded by a run that forks

        sources = [f.source for f in project.files if f.source is not None]
        outcome = pool.run_forked(len(tasks), lambda i: run_tasks(tasks, [i]), sources, workers)
        if outcome is not None:
            return outcome
    return run_tasks(tasks, range(len(tasks)))


def run_tasks(tasks: Hooks, indices) -> tuple[list[Diagnostic], list[str]]:
    """Run the hooks ``tasks[i]`` for each ``i`` of ``indices``, here (and in each forked child)."""
    diagnostics: list[Diagnostic] = []
    errors: list[str] = []
    for i in indices:
        rule, target = tasks[i]
        try:
            diagnostics.extend(tasks.run(rule, target))
        except Exception as exc:  # a broken rule must not hide the other findings
            where = traceback.extract_tb(exc.__traceback__)[-1]
            errors.append(
                f"{rule.code} failed on {_label(target)}: {type(exc).__name__}: {exc} "
                f"({Path(where.filename).name}:{where.lineno})"
            )
    return diagnostics, errors


class _ProjectPaths:
    """The file sets every rule's hooks check findings against, built once per run."""

    def __init__(self, project: Project) -> None:
        self.of_job = {id(job): set(job.files) for job in project.jobs}
        self.every = set().union(*self.of_job.values())
        self.linked = linked_files(project)
        self.unreadable = unreadable_entries(project)


class Hooks:
    """Every (rule, what it checks) pair of a run, in a fixed order: the project, then each file, then
    each job, rule by rule. The pairs are made when asked: a run over ten thousand files has tens of
    thousands of them, and a closure kept for each would hold memory for the whole run."""

    def __init__(self, rules: list[Rule], project: Project) -> None:
        self.paths = _ProjectPaths(project)
        self._starts: list[int] = []  # index of each segment's first pair
        self._segments: list[tuple[Rule, Sequence[object]]] = []
        count = 0
        training_files: list[ParsedFile] | None = None
        for rule in rules:
            hooks = rule.hooks
            files = project.files
            if "training-file" in rule.premises:
                if training_files is None:
                    paths = self.paths
                    training_files = [
                        f for f in project.files if training_file(f, project, paths.every, paths.unreadable)
                    ]
                files = training_files
            if "issues" in hooks:  # a parse-issue rule: the files holding one of its issues
                files = [f for f in files if any(issue.kind == rule.issue_kind for issue in f.issues)]
            for overridden, targets in (
                ("project" in hooks, (project,)),
                ("file" in hooks or "issues" in hooks, files),
                ("job" in hooks, project.jobs),
            ):
                if overridden and targets:
                    self._starts.append(count)
                    self._segments.append((rule, targets))
                    count += len(targets)
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> tuple[Rule, object]:
        at = bisect.bisect_right(self._starts, index) - 1
        rule, targets = self._segments[at]
        return rule, targets[index - self._starts[at]]

    def run(self, rule: Rule, target: object) -> list[Diagnostic | Withheld]:
        paths = self.paths
        if isinstance(target, Job):
            gate = withheld_for(rule, target) if rule.premises else None
            if gate == []:
                return []  # a premise fails: the advice does not apply
            ident = target.id if target.manifest else None
            found = _job_findings(rule, target, ident, paths.linked, paths.of_job[id(target)])
            if gate is None:
                return found
            return _as_withheld(gate, found)
        if isinstance(target, Project):
            view, out = _premised(rule, target)
            if view is not None:
                out += [d if isinstance(d, Withheld) else enforce(d, paths.every) for d in rule.check_project(view)]
            return out
        return [enforce(d, None) for d in rule.check_file(target)]  # type: ignore[arg-type]


def _as_withheld(gate: list[Withheld], found: list[Diagnostic | Withheld]) -> list[Diagnostic | Withheld]:
    """What a rule run on a job with an unknown premise amounts to: the premise is named as withheld
    advice only when the rule had advice to give there (a finding), never the finding itself."""
    own = [w for w in found if isinstance(w, Withheld)]
    advice = [d for d in found if not isinstance(d, Withheld)]
    # each finding the rule would have given, placed where it would be, once per premise it waits on
    return [*(g.at(d.span, d.message) for d in advice for g in gate), *own]


def _premised(rule: Rule, project: Project) -> tuple[Project | None, list[Diagnostic | Withheld]]:
    """The project as a rule that checks it whole sees it: only the jobs where the rule's premises
    hold (None when there is none, nor one where a premise is unknown); and the withheld advice of
    the jobs where one is unknown and the rule, run on that job alone, would have given advice."""
    if not rule.premises:
        return project, []
    jobs: list[Job] = []
    others: list[Job] = []
    unknown: list[tuple[Job, list[Withheld]]] = []
    for job in project.jobs:
        gate = withheld_for(rule, job)
        if gate is None:
            jobs.append(job)
            continue
        others.append(job)
        if gate:
            unknown.append((job, gate))
    if not jobs and not unknown:
        return None, []  # the advice applies to no job: the rule is not run (nor imported)
    withheld: list[Diagnostic | Withheld] = []
    for job, gate in unknown:
        alone = replace(project, jobs=[job], premise_skipped=[j for j in project.jobs if j is not job])
        withheld += _as_withheld(gate, list(rule.check_project(alone)))
    return replace(project, jobs=jobs, premise_skipped=others), withheld


def _label(target: object) -> str:
    """How a failed rule's error names what it was checking."""
    if isinstance(target, Job):
        return target.id
    if isinstance(target, Project):
        return "the project"
    return target.path  # type: ignore[attr-defined]


def _job_findings(
    rule: Rule, job: Job, ident: str | None, linked: set[str], paths: set[str]
) -> list[Diagnostic | Withheld]:
    context = (job.manifest.path,) if job.manifest is not None else ()
    origins = (job.id,)
    return [
        d if isinstance(d, Withheld) else enforce(replace(d, job=ident, context=context, origins=origins), paths)
        for d in rule.check_job(job)
        if isinstance(d, Withheld) or judged_in(job, d, linked)
    ]
