"""Read: each file parsed once into its located model; the manifests, scripts and version files up
front, the Python files when the linker first reaches one (``Reader``).

With the speed wing on (``LintRequest.speed``), models come from the cache when it holds them, a
large run parses in a process pool, and the Python files the linker will likely reach are parsed
ahead in that pool; the models are the same either way."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ..discover import Candidate, readable
from ..parse import MAX_FILE_BYTES, ParsedFile, read_and_parse, read_source
from ..span import SourceText
from .reach import head
from .request import LintRequest

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from ..speed.ahead import ParsedAhead

# The speed wing is loaded by the runs that use it: the cache's code with a cache, the pool's for a
# large run on several cores (a one-file run in a pre-commit hook needs neither).

PARALLEL_THRESHOLD = 2000  # files; below this a process pool costs more than it saves (bench/)
CACHED_MODELS_THRESHOLD = 400  # files; a larger run in one process caches its findings, not its models

Job = tuple[str, str, str, "str | None"]  # display path, absolute path, kind, the text given for it


def workers_of(request: LintRequest) -> int:
    """The processes a run may use: one without the speed wing, else those asked for, at most the cores."""
    return min(request.workers, os.cpu_count() or 1) if request.speed else 1


def read_sources(paths: set[str], candidates: list[Candidate], overrides: dict[str, str]) -> dict[str, SourceText]:
    """The texts of those of ``paths`` that are candidates, as a parse reads them (or as given in
    place of the file), without parsing them: what a report of findings kept from an earlier run
    quotes."""
    by_display = {c.display: c for c in candidates if c.display in paths}
    found: dict[str, SourceText] = {}
    for path, c in by_display.items():
        text = overrides.get(path)
        source = SourceText(path, text) if text is not None else read_source(path, c.location, c.kind)
        if source is not None:
            found[path] = source
    return found


def read_up_front(
    candidates: list[Candidate],
    request: LintRequest,
    digests: dict[str, str | None] | None,
    open_pool: Callable[[int], Executor],
) -> list[ParsedFile]:
    """Parse ``candidates`` (through the cache when there is one). A large run parses in the run's
    process pool (``open_pool(workers)``), which stays open for the Python files the linker will
    reach; the caller closes it."""
    jobs: list[Job] = [(c.display, c.location, c.kind, request.overrides.get(c.display)) for c in candidates]
    cache = request.cache if digests is not None else None
    results: dict[int, ParsedFile] = {}
    store = _keep_nothing
    if cache is not None:
        from ..speed import runcache

        results, store = runcache.cached_models(cache, jobs, digests)
    for i, job in enumerate(jobs):
        before = request.earlier.get(job[0])
        if before is not None:
            results[i] = before
    todo = [i for i in range(len(jobs)) if i not in results]
    workers = workers_of(request)
    progress = request.progress or (lambda done, total: None)
    progress(len(results), len(jobs))
    if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
        from ..speed import pool

        pool.parse_in_pool(jobs, todo, workers, open_pool, results, store, progress)
    else:
        keep = len(jobs) <= CACHED_MODELS_THRESHOLD  # pickling a model costs a fifth of parsing it
        for i in todo:
            results[i] = parsed = read_and_parse(*jobs[i])
            if keep:
                store(i, parsed, None)
            progress(len(results), len(jobs))
    if cache is not None:
        cache.flush()
    return [results[i] for i in range(len(jobs))]


def _keep_nothing(i: int, parsed: ParsedFile, blob: bytes | None) -> None:
    """Where a run without a cache keeps its models."""


class Reader:
    """Parses a Python file the first time the linker reaches it (through the cache when there is one,
    or from the files parsed ahead in the pool), and answers the linker's byte scans of files it has
    not parsed."""

    def __init__(self, candidates: Mapping[str, Candidate], request: LintRequest) -> None:
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
        ready, blob = self.ahead.take(display) if self.ahead is not None else (None, None)
        if cache is None or text is not None:
            parsed = ready or read_and_parse(c.display, c.location, c.kind, text)
        else:
            from ..speed import runcache

            digest = runcache.read_digests([c], {}).get(c.display)
            key, hit = runcache.cached_model(cache, c.display, c.kind, digest)
            parsed = hit or ready or read_and_parse(c.display, c.location, c.kind, None)
            if hit is None:
                runcache.cache_parsed(cache, key, parsed, digest, blob if parsed is ready else None)
        self.parsed.append(parsed)
        return parsed

    def imports_of(self, display: str) -> list[str]:
        """The module-level imports of a Python file not parsed (a module on the way from an entry
        to where it loads torch_npu): its statements only, not its model."""
        from ..sources.python_parse import module_level_imports

        c = self.candidates[display]
        text = self.request.overrides.get(display)
        if text is not None:
            return module_level_imports(text.encode("utf-8", "surrogateescape"))
        if not readable(c):
            return []
        try:
            with open(c.location, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return []
        return module_level_imports(data) if len(data) <= MAX_FILE_BYTES else []

    def open_pool(self, workers: int) -> Executor:
        """The run's process pool of ``workers`` processes (a large run parses its files in it), kept
        open for the Python files parsed ahead; ``close`` ends it."""
        return self._parsed_ahead().open(workers)

    def parse_ahead(self, parsed: list[ParsedFile], lazy: list[Candidate]) -> None:
        """Have the pool parse the Python files the linker will likely reach, given the parsed
        launchers: only in a run over folders on more than one core, when there are enough of them."""
        workers = workers_of(self.request)
        if workers < 2 or self.named:
            return
        overrides = self.request.overrides
        self._parsed_ahead().start(parsed, lazy, workers, overrides, self.request.cache is not None)

    def close(self) -> None:
        if self.ahead is not None:
            self.ahead.close()

    def _parsed_ahead(self) -> ParsedAhead:
        if self.ahead is None:
            from ..speed.ahead import ParsedAhead

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
