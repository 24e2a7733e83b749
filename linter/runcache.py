"""What the lint flow keeps in the cache (``cache.py``) and takes back from it: the findings of a whole
run, keyed by a stat of every file and the run's scope, so that an unchanged repository is only
listed; and each file's parsed model, keyed by its content hash, so that after a change only the
changed files are parsed. The models are kept by runs in a process pool and by small runs in one
process (``engine.CACHED_MODELS_THRESHOLD``).

The engine loads this module, as it loads ``cache.py``, only for a run with a cache: a run with
``--no-cache`` (a pre-commit hook so configured, a test) pays for none of it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .engine import LintResult, Locations, _lint
from .parse import ParsedFile
from .span import to_bytes

if TYPE_CHECKING:
    from collections.abc import Callable

    from .diagnostics import Diagnostic
    from .discover import Candidate
    from .engine import LintRequest
    from .jobs import Project
    from .premises import Withheld


# -- the findings of a whole run ---------------------------------------------------------------
def run_key_of(cache, request: LintRequest, candidates: list[Candidate]) -> str | None:
    """The key of a run's findings: the stat of every file and what decides which of them are parsed
    and linked; None when a file cannot be stat'ed (the run's findings are then neither looked up
    nor kept)."""
    signature = stat_signature(candidates, request.overrides)
    if signature is None:
        return None
    return cache.key("run", str(request.cwd), str(request.config.root), _scope_key(request), signature)


def stored_result(
    cache, key: str, request: LintRequest, candidates: list[Candidate], warnings: list[str]
) -> LintResult | None:
    """The findings of the same run over the same files, if the cache holds them."""
    hit = cache.get_run(key)
    if isinstance(hit, tuple) and len(hit) == 5:
        return _cached_result(request, candidates, warnings, *hit)
    return None


def store_result(cache, key: str, result: LintResult) -> None:
    cache.put_run(
        key, (result.all_diagnostics, result.diagnostics, result.internal_errors, result.suppressed, result.withheld)
    )


def _scope_key(request: LintRequest) -> tuple[object, ...]:
    """What decides which files are parsed and linked, besides the files themselves: the same
    repository linted as a whole, as a subfolder or around a few named files gives other findings."""
    shown = sorted(request.report_only) if request.report_only is not None else None
    return (sorted(request.named), [str(f) for f in request.folders], shown, request.whole_jobs)


def stat_signature(candidates: list[Candidate], overrides: dict[str, str]) -> list[tuple[object, ...]] | None:
    """Path, kind, size, modification and change times and mode of every candidate (a text given in
    place of a file by its hash): a stat per file, where hashing would read every file of the repository."""
    from .cache import Cache

    out: list[tuple[object, ...]] = []
    for c in candidates:
        text = overrides.get(c.display)
        if text is not None:
            out.append((c.display, c.kind, Cache.digest(text.encode("utf-8", "surrogatepass"))))
            continue
        try:
            st = os.stat(c.location)
        except OSError:
            if c.unchecked_in is not None:
                continue  # a dangling link a listing could not rule out: never read, so no part of the run
            return None
        # the mode and the change time too: a file made unreadable (chmod) keeps its size and mtime
        out.append((c.display, c.kind, st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode, st.st_ctime_ns))
    return out


class _CachedResult(LintResult):
    """The findings of an unchanged repository, from the cache. The parsed files and the linked
    project are built (from the cached models) only when a report asks for them."""

    def __init__(self, request: LintRequest, *args: object) -> None:
        self._request = request
        self._files: list[ParsedFile] | None = None
        self._project: Project | None = None
        super().__init__(*args)  # type: ignore[arg-type]

    def _build(self) -> None:
        fresh = _lint(self._request, use_run_cache=False)
        self._files, self._project = fresh.files, fresh.project

    @property  # type: ignore[override]
    def files(self) -> list[ParsedFile]:
        if self._files is None:
            self._build()
        return self._files  # type: ignore[return-value]

    @files.setter
    def files(self, value: list[ParsedFile] | None) -> None:
        self._files = value

    @property  # type: ignore[override]
    def project(self) -> Project:
        if self._project is None:
            self._build()
        return self._project  # type: ignore[return-value]

    @project.setter
    def project(self, value: Project | None) -> None:
        self._project = value


def _cached_result(
    request: LintRequest,
    candidates: list[Candidate],
    warnings: list[str],
    everything: list[Diagnostic],
    diagnostics: list[Diagnostic],
    errors: list[str],
    suppressed: int,
    withheld: list[Withheld],
) -> LintResult:
    diagnostics = list(diagnostics)  # the run's key covers the files named: what it reported is what it reports
    abs_paths = Locations({c.display: c for c in candidates})
    return _CachedResult(
        request,
        diagnostics,
        None,
        None,
        abs_paths,
        warnings,
        list(errors),
        suppressed,
        list(everything),
        list(withheld),
    )


# -- the models of single files ----------------------------------------------------------------
def cached_models(
    cache, jobs: list[tuple[str, str, str, str | None]], digests: dict[str, str | None]
) -> tuple[dict[int, ParsedFile], Callable[[int, ParsedFile, bytes | None], None]]:
    """The models the cache holds for the files to parse (``jobs``: display path, absolute path,
    kind, text given), by index; and how to keep the model of the ``i``-th when it is parsed (with
    its pickle when a worker made one)."""
    keys: list[str | None] = [None] * len(jobs)
    found: dict[int, ParsedFile] = {}
    for i, (display, _, kind, _) in enumerate(jobs):
        keys[i], hit = cached_model(cache, display, kind, digests.get(display))
        if hit is not None:
            found[i] = hit

    def store(i: int, parsed: ParsedFile, blob: bytes | None) -> None:
        cache_parsed(cache, keys[i], parsed, digests.get(jobs[i][0]), blob)

    return found, store


def cached_model(cache, display: str, kind: str, digest: str | None) -> tuple[str | None, ParsedFile | None]:
    """A file's cache key (None without a cache or a digest) and the model stored under it, if any."""
    if cache is None or digest is None:
        return None, None
    key = cache.key("file", display, kind, digest)
    hit = cache.get_file(key)
    return key, hit if isinstance(hit, ParsedFile) else None


def cache_parsed(cache, key: str | None, parsed: ParsedFile, digest: str | None, blob: bytes | None = None) -> None:
    """Keep a model in the cache; ``blob`` is it pickled already (by a worker)."""
    if cache is None or key is None or not _cacheable(parsed, digest, cache):
        return
    import pickle  # a run without cache or pool does not load it

    cache.add_file(key, blob if blob is not None else pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL))


def _cacheable(parsed: ParsedFile, digest: str | None, cache) -> bool:
    """Store only a model of the very bytes that were hashed (the file may change in between)."""
    if digest is None or parsed.source is None or (not parsed.text and parsed.issues):
        return False
    return cache.digest(to_bytes(parsed.text)) == digest


def read_digests(candidates: list[Candidate], overrides: dict[str, str]) -> dict[str, str | None]:
    """A content hash of every candidate (None when it cannot be read), for the cache keys."""
    from .cache import Cache
    from .parse import MAX_FILE_BYTES

    out: dict[str, str | None] = {}
    for c in candidates:
        text = overrides.get(c.display)
        if text is not None:
            out[c.display] = Cache.digest(to_bytes(text))
            continue
        try:
            with open(c.location, "rb") as handle:
                out[c.display] = Cache.digest(handle.read(MAX_FILE_BYTES + 1))
        except OSError:
            out[c.display] = None
    return out
