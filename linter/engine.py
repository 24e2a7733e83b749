"""The lint run: gather -> read -> link -> schedule the rules (premises decide where each runs) ->
select what is reported -> suppress. One call serves a check, every pass of the fix loop, the
pre-commit mode and an editor's buffer.

Each stage is a module of ``flow/`` over the records of ``flow/request.py``. What makes a large run
fast (the process pool, parse-ahead, the cache) is the speed wing's (``speed/``), handed what it
works on; with ``LintRequest.speed`` off, none of it runs and the findings are the same."""

from __future__ import annotations

import os
from contextlib import nullcontext

from .config import cluster_settings
from .diagnostics import Diagnostic
from .discover import Candidate, Candidates, ListedFiles, readable
from .flow.gather import gather
from .flow.reach import job_specs, split_candidates
from .flow.read import Reader, read_sources, read_up_front, workers_of
from .flow.request import CachedResult, LintRequest, LintResult, Locations
from .flow.schedule import run_rules
from .flow.select import dedupe, named_yaml, per_file_ignores, reported, withheld_of
from .flow.suppression import SuppressionState, apply_suppressions, run_directive_rules
from .jobs import Project
from .link.linker import build_project
from .parse import ParsedFile
from .premises import Withheld
from .speed.memory import collector_paused

__all__ = ["LintRequest", "LintResult", "lint"]


def lint(request: LintRequest, use_run_cache: bool = True) -> LintResult:
    """The findings of the run ``request`` asks for."""
    with collector_paused() if request.speed else nullcontext():
        return _lint(request, use_run_cache)


def _lint(request: LintRequest, use_run_cache: bool) -> LintResult:
    candidates, warnings, later = gather(request)
    cache = request.cache if request.speed else None
    run_key = None
    # a run over named files is run because they changed (pre-commit, an editor): its key, a stat of
    # every file of the repository, would miss and cost more than the parsing the model cache saves
    if cache is not None and use_run_cache and not request.named:
        from .speed import runcache  # the cache's code: loaded by a run with a cache

        run_key = runcache.run_key_of(cache, _scope(request), candidates, request.overrides)
    if run_key is not None and use_run_cache:
        hit = _cached(request, run_key, candidates, warnings)
        if hit is not None:
            return hit
    by_display = Candidates({c.display: c for c in candidates}, later)
    files, project = _read_and_link(request, candidates, by_display, later)
    files, unchecked = named_yaml(files, request.named)
    project.files = [*project.files, *(f for f in files if f.relevant and f.path not in project.by_path)]
    found, errors = run_rules(request.rules, project, workers_of(request))
    errors = project.link_errors + errors
    withheld = [w for w in found if isinstance(w, Withheld)]
    diagnostics = dedupe([d for d in found if not isinstance(d, Withheld)])
    diagnostics = per_file_ignores(diagnostics, request.config, request.cwd)
    diagnostics, suppressed = _suppress(diagnostics, files, request)
    everything = list(diagnostics)
    result = LintResult(
        reported(diagnostics, request, project),
        files,
        project,
        Locations(by_display),
        warnings + unchecked,
        errors,
        suppressed,
        everything,
        withheld_of(list(dict.fromkeys(withheld)), request, project),
    )
    if cache is not None and run_key is not None and use_run_cache:
        kept = (
            result.all_diagnostics,
            result.diagnostics,
            result.internal_errors,
            result.suppressed,
            result.withheld,
            result.linted(),
        )
        runcache.store_run(cache, run_key, kept)
    return result


def _read_and_link(
    request: LintRequest, candidates: list[Candidate], by_display: Candidates, later: ListedFiles | None
) -> tuple[list[ParsedFile], Project]:
    """Every file parsed up front, the jobs linked from them (the linker has the Python files it
    reaches parsed as it goes, from ``later`` too), and the files parsed on the way. ``by_display``
    holds every candidate, and those of ``later`` as links make them."""
    eager, lazy = split_candidates(candidates, request)
    eager = [c for c in eager if readable(c)]
    cache = request.cache if request.speed else None
    digests = None
    if cache is not None:
        from .speed import runcache

        digests = runcache.read_digests(eager, request.overrides)
    reader = Reader(by_display, request)
    pending = {c.display: c.kind for c in lazy}
    locations = {c.display: c.location for c in candidates}
    try:
        files = read_up_front(eager, request, digests, reader.open_pool)
        relevant = [f for f in files if f.relevant]
        reader.parse_ahead(relevant, lazy)
        inside = [os.path.realpath(f) for f in request.folders] if request.folders else None
        specs = job_specs(request.config, request.cwd)
        settings = cluster_settings(request.config)
        versions = request.config.versions
        aside = [f for f in files if not f.relevant]
        project = build_project(relevant, versions, specs, pending, reader, locations, settings, inside, aside, later)
        project.named = frozenset(request.named)
    finally:
        reader.close()  # files parsed ahead but never reached are dropped unseen
    if cache is not None:
        cache.flush()
    return files + reader.parsed, project


def _suppress(diagnostics: list[Diagnostic], files: list[ParsedFile], request: LintRequest) -> tuple[list, int]:
    """The findings no inline directive covers, with those of the directive rules, in order; and how
    many the directives covered."""
    shown = [f for f in files if f.relevant]
    sources = {f.path: f.source for f in shown if f.source}
    state = SuppressionState({}, {}, sources, {r.code for r in request.rules}, {f.path: f for f in shown})
    kept, suppressed = apply_suppressions(diagnostics, state)
    kept += run_directive_rules(request.rules, state)
    kept.sort(key=Diagnostic.sort_key)
    return kept, suppressed


def _scope(request: LintRequest) -> tuple[object, ...]:
    """What decides which files are parsed and linked, besides the files themselves: the same
    repository linted as a whole, as a subfolder or around a few named files gives other findings."""
    shown = sorted(request.report_only) if request.report_only is not None else None
    named = (sorted(request.named), [str(f) for f in request.folders], shown, request.whole_jobs)
    return (str(request.cwd), str(request.config.root), named)


def _cached(request: LintRequest, key: str, candidates: list[Candidate], warnings: list[str]) -> LintResult | None:
    """The findings of the same run over the same files, when the cache holds them."""
    from .speed import runcache

    hit = runcache.stored_run(request.cache, key)
    if hit is None or len(hit) != 6:
        return None
    everything, diagnostics, errors, suppressed, withheld, linted = hit
    return CachedResult(
        lambda: lint(request, use_run_cache=False),
        list(linted),
        lambda paths: read_sources(paths, candidates, request.overrides),
        diagnostics=list(diagnostics),
        abs_paths=Locations({c.display: c for c in candidates}),
        warnings=warnings,
        internal_errors=list(errors),
        suppressed=suppressed,
        all_diagnostics=list(everything),
        withheld=list(withheld),
    )
