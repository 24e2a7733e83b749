"""discover -> parse -> link -> run rules -> suppress: one call serves a check, every pass of the
fix loop, and the pre-commit mode.

What makes a large run fast lives in modules of its own, imported where a run first needs them: the
parse pool and the forked rule children (``pool.py``, above ``PARALLEL_THRESHOLD`` files or
``PARALLEL_RULES_THRESHOLD`` jobs), the Python files parsed ahead while the linker works
(``ahead.py``), and what is kept in the cache (``runcache.py``, only with a cache). Which files are
parsed up front, and in a run over named files which other files can reach them, is ``reach.py``."""

from __future__ import annotations

import bisect
import gc
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Config, cluster_settings
from .diagnostics import Diagnostic
from .discover import Candidate, ExcludeSet, discover, readable
from .fixpolicy import enforce
from .jobs import Job, Project, build_project
from .parse import ParsedFile, read_and_parse
from .premises import Withheld, training_file, withheld_for
from .reach import head, job_specs, split_candidates
from .rule import Rule
from .span import SourceText
from .suppress import Directive, DirectiveProblem, find_directives

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from .ahead import ParsedAhead

PARALLEL_THRESHOLD = 2000  # files; below this a process pool costs more than it saves (bench/)
CACHED_MODELS_THRESHOLD = 400  # files; a larger run in one process caches its findings, not its models
PARALLEL_RULES_THRESHOLD = 1000  # jobs; below this forking for the rules costs more than it saves


@dataclass
class LintRequest:
    paths: list[Path]
    cwd: Path
    config: Config
    rules: list[Rule]
    overrides: dict[str, str] = field(default_factory=dict)  # display path -> text (fix passes, stdin)
    report_only: set[str] | None = None  # display paths to report (a subfolder, or the files of pre-commit)
    folders: list[Path] = field(default_factory=list)  # folders given inside a larger repository (absolute)
    workers: int = 1
    cache: object | None = None  # a parse cache with get(key)/put(key, value)
    extra_candidates: list[Candidate] = field(
        default_factory=list
    )  # the files named, linted even if the walk skips them
    folder_files: list[Candidate] | None = None  # the walk of ``folders`` without excludes, if made already
    # a run over named files reports every finding of their jobs; an editor's buffer (standard input) only its own
    whole_jobs: bool = True
    # models an earlier pass of the fix loop parsed from the very text each file has in this request:
    # taken as they are, so that a pass parses only the files the previous one changed
    earlier: dict[str, ParsedFile] = field(default_factory=dict)
    progress: Callable[[int, int], None] | None = None  # called with (files parsed, files in total)

    @property
    def named(self) -> set[str]:
        """Display paths named on the command line (or read from standard input): always parsed."""
        return {c.display for c in self.extra_candidates}


@dataclass
class SuppressionState:
    directives: dict[str, list[Directive]]
    problems: dict[str, list[DirectiveProblem]]
    sources: dict[str, SourceText]
    selected: set[str]
    files: dict[str, ParsedFile] = field(default_factory=dict)  # what decides where a file's comments are


@dataclass
class LintResult:
    diagnostics: list[Diagnostic]
    files: list[ParsedFile]
    project: Project
    abs_paths: dict[str, Path]
    warnings: list[str]
    internal_errors: list[str]
    suppressed: int = 0
    # every finding of the linked jobs, also those outside ``report_only`` (the scorecard judges whole jobs)
    all_diagnostics: list[Diagnostic] = field(default_factory=list)
    withheld: list[Withheld] = field(default_factory=list)  # advice not given: a premise was unknown


def lint(request: LintRequest) -> LintResult:
    # The cyclic collector would rescan every model built so far at each of its passes, which makes a
    # large run superlinear; parsing and linking create almost no cyclic garbage, so it waits until the end.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _lint(request)
    finally:
        if collecting:
            gc.enable()


def gather(request: LintRequest, defer_python_checks: bool = True) -> tuple[list[Candidate], list[str]]:
    """The files a run lints, and warnings for paths that do not exist (see ``discover``)."""
    excludes = ExcludeSet(request.config.exclude, request.config.root or request.cwd)
    candidates, warnings = discover(request.paths, request.cwd, excludes, defer_python_checks=defer_python_checks)
    more = list(request.extra_candidates)
    if request.folders:
        # a folder named inside a larger repository is walked even where the walk from the root
        # skips it (an excluded folder named on the command line, as ruff does)
        inside = _folder_files(request, excludes)
        more = inside + more
    if more:  # one walk lists each file once; another walk, or a file added, may list one again
        seen = {c.display for c in candidates}
        for c in more:
            if c.display not in seen:
                seen.add(c.display)
                candidates.append(c)
    return candidates, warnings


def _folder_files(request: LintRequest, excludes: ExcludeSet) -> list[Candidate]:
    """The files of the folders given inside a larger repository: the walk made of them to know what
    to report, when nothing is excluded (a second walk cost a run over ModelZoo-PyTorch's
    ``PyTorch/built-in`` 0.3 s); a new walk otherwise."""
    if request.folder_files is not None and not excludes.regexes:
        return request.folder_files
    return discover(request.folders, request.cwd, excludes)[0]


def _lint(request: LintRequest, use_run_cache: bool = True) -> LintResult:
    candidates, warnings = gather(request)
    cache = request.cache
    run_key = None
    if cache is not None:  # an unchanged repository's findings come from the cache
        from .runcache import run_key_of, stored_result

        run_key = run_key_of(cache, request, candidates)
        if run_key is not None and use_run_cache:
            hit = stored_result(cache, run_key, request, candidates, warnings)
            if hit is not None:
                return hit
    eager, lazy = split_candidates(candidates, request)
    eager = [c for c in eager if readable(c)]
    digests = None
    if cache is not None:
        from .runcache import read_digests

        digests = read_digests(eager, request.overrides)
    by_display = {c.display: c for c in candidates}
    abs_paths = Locations(by_display)
    specs = job_specs(request.config, request.cwd)
    loader = _LazyParser(by_display, request)  # asked only for the files left pending
    pending = {c.display: c.kind for c in lazy}
    locations = {c.display: c.location for c in candidates}
    settings = cluster_settings(request.config)
    try:
        files = parse_all(eager, request, digests, loader.open_pool)
        relevant = [f for f in files if f.relevant]
        loader.parse_ahead(relevant, lazy)
        inside = [os.path.realpath(f) for f in request.folders] if request.folders else None
        project = build_project(relevant, request.config.versions, specs, pending, loader, locations, settings, inside)
        project.named = frozenset(request.named)
    finally:
        loader.close()  # files parsed ahead but never reached are dropped unseen
    if cache is not None:
        cache.flush()
    files = files + loader.parsed
    files, unchecked = _named_yaml(files, request.named)
    warnings = warnings + unchecked
    project.files = [*project.files, *(f for f in files if f.relevant and f.path not in project.by_path)]
    found, errors = run_rules(request.rules, project, min(request.workers, os.cpu_count() or 1))
    withheld = [w for w in found if isinstance(w, Withheld)]
    diagnostics = _dedupe([d for d in found if not isinstance(d, Withheld)])
    diagnostics = _per_file_ignores(diagnostics, request.config, request.cwd)
    shown = [f for f in files if f.relevant]
    state = SuppressionState(
        {},
        {},
        {f.path: f.source for f in shown if f.source},
        {r.code for r in request.rules},
        {f.path: f for f in shown},
    )
    diagnostics, suppressed = apply_suppressions(diagnostics, state)
    diagnostics += run_directive_rules(request.rules, state)
    diagnostics.sort(key=Diagnostic.sort_key)
    everything = list(diagnostics)
    withheld = withheld_of(list(dict.fromkeys(withheld)), request, project)
    diagnostics = reported(diagnostics, request, project)
    result = LintResult(diagnostics, files, project, abs_paths, warnings, errors, suppressed, everything, withheld)
    if run_key is not None and use_run_cache:
        from .runcache import store_result

        store_result(cache, run_key, result)
    return result


class Locations(Mapping):
    """Display path -> absolute ``Path`` of every candidate, made when asked (a fix writes a few)."""

    def __init__(self, by_display: dict[str, Candidate]) -> None:
        self._by_display = by_display

    def __getitem__(self, display: str) -> Path:
        return self._by_display[display].path

    def __iter__(self):
        return iter(self._by_display)

    def __len__(self) -> int:
        return len(self._by_display)


def _named_yaml(files: list[ParsedFile], named: set[str]) -> tuple[list[ParsedFile], list[str]]:
    """A YAML file named on the command line that holds no Kubernetes object is read for its syntax
    (an error in it is reported), and the run says it was not checked otherwise."""
    if not named:
        return files, []
    from .parse import yaml_named

    out: list[ParsedFile] = []
    warnings: list[str] = []
    for f in files:
        if f.path in named and f.kind == "manifest" and not f.relevant and f.source is not None and f.model is None:
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


class _LazyParser:
    """Parses a Python file the first time the linker reaches it (through the cache when there is one,
    or from the files parsed ahead in the pool)."""

    def __init__(self, candidates: dict[str, Candidate], request: LintRequest) -> None:
        self.candidates = candidates
        self.request = request
        self.parsed: list[ParsedFile] = []
        self.named = bool(request.named)
        self.ahead: ParsedAhead | None = None  # the run's pool and the files parsed ahead in it, once used

    def __call__(self, display: str) -> ParsedFile | None:
        c = self.candidates[display]
        if not readable(c):
            return None  # a FIFO, or a link out of the tree: as if it were not there
        before = self.request.earlier.get(display)
        if before is not None:
            self.parsed.append(before)
            return before
        cache = self.request.cache
        text = self.request.overrides.get(display)
        # parsed in the pool, exactly as here, and its pickle
        ready, blob = self.ahead.take(display) if self.ahead is not None else (None, None)
        if cache is None or text is not None:
            parsed = ready or read_and_parse(c.display, c.location, c.kind, text)
        else:
            from .runcache import cache_parsed, cached_model, read_digests

            digest = read_digests([c], {}).get(c.display)
            key, hit = cached_model(cache, c.display, c.kind, digest)
            parsed = hit or ready or read_and_parse(c.display, c.location, c.kind, None)
            if hit is None:
                cache_parsed(cache, key, parsed, digest, blob if parsed is ready else None)
        self.parsed.append(parsed)
        return parsed

    def open_pool(self, workers: int) -> Executor:
        """The run's process pool of ``workers`` processes (a large run parses its files in it), kept
        open for the Python files parsed ahead; ``close`` ends it."""
        return self._parsed_ahead().open(workers)

    def parse_ahead(self, parsed: list[ParsedFile], lazy: list[Candidate]) -> None:
        """Have the pool parse the Python files the linker will likely reach, given the parsed
        launchers: only in a run over folders on more than one core, when there are enough of them."""
        workers = min(self.request.workers, os.cpu_count() or 1)
        if workers < 2 or self.named:
            return  # nothing to guess: the parse-ahead's code is not even loaded
        self._parsed_ahead().start(parsed, lazy, self.request)

    def close(self) -> None:
        if self.ahead is not None:
            self.ahead.close()

    def _parsed_ahead(self) -> ParsedAhead:
        if self.ahead is None:
            from .ahead import ParsedAhead

            self.ahead = ParsedAhead()
        return self.ahead

    def contains(self, display: str, needles: tuple[bytes, ...]) -> bool:
        """Whether a file's first megabyte holds one of ``needles``; a file named on the command line
        or given as text only counts when parsed (a run over named files looks at nothing else)."""
        return not self.named and self.holds(display, needles)

    def holds(self, display: str, needles: tuple[bytes, ...]) -> bool:
        """Whether a file's first megabyte (or the text given for it) holds one of ``needles``, in any run."""
        c = self.candidates[display]
        text = self.request.overrides.get(display)
        if text is not None:
            return any(n.decode() in text for n in needles)
        if not readable(c):
            return False
        data = head(c.location)
        return any(n in data for n in needles)


# -- parsing -----------------------------------------------------------------------------------
def _parse_one(args: tuple[str, str, str, str | None]) -> ParsedFile:
    display, abs_path, kind, text = args
    return read_and_parse(display, abs_path, kind, text)


def parse_all(
    candidates: list[Candidate],
    request: LintRequest,
    digests: dict[str, str | None] | None,
    open_pool: Callable[[int], Executor],
) -> list[ParsedFile]:
    """Parse ``candidates`` (through the cache when there is one). A large run parses in the run's
    process pool (``open_pool(workers)``, ``pool.parse_in_pool``), which stays open for the Python
    files the linker will reach; the caller closes it."""
    jobs = [(c.display, c.location, c.kind, request.overrides.get(c.display)) for c in candidates]
    cache = request.cache if digests is not None else None
    results: dict[int, ParsedFile] = {}
    store = _keep_nothing
    if cache is not None:
        from .runcache import cached_models

        results, store = cached_models(cache, jobs, digests)
    for i, job in enumerate(jobs):
        before = request.earlier.get(job[0])
        if before is not None:
            results[i] = before
    todo = [i for i in range(len(jobs)) if i not in results]
    workers = min(request.workers, os.cpu_count() or 1)
    progress = request.progress or (lambda done, total: None)
    progress(len(results), len(jobs))
    if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
        from .pool import parse_in_pool  # only a large run loads the pool's code

        parse_in_pool(jobs, todo, workers, open_pool, results, store, progress)
    else:
        # pickling every model costs a fifth of parsing it: in one process, only small runs keep models
        keep = len(jobs) <= CACHED_MODELS_THRESHOLD
        for i in todo:
            results[i] = parsed = _parse_one(jobs[i])
            if keep:
                store(i, parsed, None)
            progress(len(results), len(jobs))
    if cache is not None:
        cache.flush()
    return [results[i] for i in range(len(jobs))]


def _keep_nothing(i: int, parsed: ParsedFile, blob: bytes | None) -> None:
    """Where a run without a cache keeps its models."""


# -- rules -------------------------------------------------------------------------------------
def run_rules(rules: list[Rule], project: Project, workers: int = 1) -> tuple[list[Diagnostic], list[str]]:
    tasks = _Hooks(rules, project)
    if (
        workers > 1
        and len(project.jobs) >= PARALLEL_RULES_THRESHOLD
        and hasattr(os, "fork")
        and sys.platform == "linux"
    ):
        from .pool import run_forked  # only a large run loads the pool's code

        outcome = run_forked(tasks, project, workers)
        if outcome is not None:
            return outcome
    return run_tasks(tasks, range(len(tasks)))


def run_tasks(tasks: _Hooks, indices) -> tuple[list[Diagnostic], list[str]]:
    """Run the hooks ``tasks[i]`` for each ``i`` of ``indices``, here (and in each forked child)."""
    diagnostics: list[Diagnostic] = []
    errors: list[str] = []
    for i in indices:
        rule, target = tasks[i]
        try:
            diagnostics.extend(tasks.run(rule, target))
        except Exception as exc:  # a broken rule must not hide the other findings
            import traceback

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


class _Hooks:
    """Every (rule, what it checks) pair of a run, in a fixed order: the project, then each file, then
    each job, rule by rule. The pairs are made when asked: a run over ten thousand files has tens of
    thousands of them, and a closure each cost 18 MiB."""

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
                    training_files = [f for f in project.files if training_file(f, project, self.paths.every)]
                files = training_files
            if "issues" in hooks:  # a parse-issue rule: the files holding one of its issues
                files = [f for f in files if any(issue.code == rule.code for issue in f.issues)]
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
    if any(not isinstance(d, Withheld) for d in found):
        return [*gate, *own]
    return own


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


def linked_files(project: Project) -> set[str]:
    """Paths of the files some manifest's job runs (its manifest, scripts and entries)."""
    return {path for job in project.jobs if job.manifest is not None for path in job.files}


def judged_in(job: Job, diagnostic: Diagnostic, linked: set[str]) -> bool:
    """A file linked into a manifest's job is judged in that job's context only: a standalone job
    that shares it (a local script sourcing the same env file) does not report on it."""
    if isinstance(diagnostic, Withheld):
        return True
    return job.manifest is not None or diagnostic.span.path not in linked


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
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


def _per_file_ignores(diagnostics: list[Diagnostic], config: Config, cwd: Path) -> list[Diagnostic]:
    if not config.per_file_ignores:
        return diagnostics
    from .registry import indexed_rules, matches

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


# -- suppressions ------------------------------------------------------------------------------
def apply_suppressions(diagnostics: list[Diagnostic], state: SuppressionState) -> tuple[list[Diagnostic], int]:
    kept = []
    suppressed = 0
    for d in diagnostics:
        if d.path not in state.directives:
            src = state.sources.get(d.path)
            found, problems = _directives(state, d.path) if src else ([], [])
            state.directives[d.path] = found
            state.problems[d.path] = problems
        if _suppress(d, state.directives[d.path]):
            suppressed += 1
        else:
            kept.append(d)
    for path in state.sources:
        if path not in state.directives:
            found, problems = _directives(state, path)
            state.directives[path] = found
            state.problems[path] = problems
    return kept, suppressed


def _directives(state: SuppressionState, path: str) -> tuple[list[Directive], list[DirectiveProblem]]:
    parsed = state.files.get(path)
    return find_directives(state.sources[path], parsed.kind if parsed else None, parsed.model if parsed else None)


def _suppress(d: Diagnostic, directives: list[Directive]) -> bool:
    hit = False
    for directive in directives:
        codes = {c for c, _ in directive.codes}
        if d.code not in codes:
            continue
        if directive.covers(d.span):
            directive.used.add(d.code)
            hit = True
    return hit


def run_directive_rules(rules: list[Rule], state: SuppressionState) -> list[Diagnostic]:
    """The findings of the rules that check suppression directives: none where no file has one (the
    rules are then not even imported)."""
    out: list[Diagnostic] = []
    if not any(state.directives.values()) and not any(state.problems.values()):
        return out
    for rule in rules:
        if "directives" in rule.hooks:
            out.extend(rule.check_directives(state))
    return out
