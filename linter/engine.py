"""discover -> parse -> link -> run rules -> suppress: one call serves a check, every pass of the
fix loop, and the pre-commit mode."""

from __future__ import annotations

import bisect
import contextlib
import gc
import os
import posixpath
import re
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .config import Config, cluster_settings
from .diagnostics import Diagnostic
from .discover import Candidate, ExcludeSet, discover, readable
from .fixpolicy import enforce
from .jobs import Job, JobSpec, Project, build_project, folder_and_ancestors
from .lazyre import LazyPattern
from .parse import PIN_KINDS, SHELL_KINDS, ParsedFile, read_and_parse
from .premises import Withheld, training_file, withheld_for
from .record import Record, field, replace
from .roles import ci_path, vendored
from .rule import Rule
from .span import SourceText, to_bytes
from .suppress import Directive, DirectiveProblem, find_directives

TYPE_CHECKING = False  # as in record.py: typing is not imported at run time
if TYPE_CHECKING:
    from concurrent.futures import Executor

PARALLEL_THRESHOLD = 2000  # files; below this a process pool costs more than it saves (bench/)
CACHED_MODELS_THRESHOLD = 400  # files; a larger run in one process caches its findings, not its models
PARALLEL_RULES_THRESHOLD = 1000  # jobs; below this forking for the rules costs more than it saves


class LintRequest(Record):
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
    progress: Callable[[int, int], None] | None = None  # called with (files parsed, files in total)

    @property
    def named(self) -> set[str]:
        """Display paths named on the command line (or read from standard input): always parsed."""
        return {c.display for c in self.extra_candidates}


class SuppressionState(Record):
    directives: dict[str, list[Directive]]
    problems: dict[str, list[DirectiveProblem]]
    sources: dict[str, SourceText]
    selected: set[str]
    files: dict[str, ParsedFile] = field(default_factory=dict)  # what decides where a file's comments are


class LintResult(Record):
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
    if cache is not None:
        signature = stat_signature(candidates, request.overrides)
        if signature is not None:
            run_key = cache.key("run", str(request.cwd), str(request.config.root), _scope_key(request), signature)
            if use_run_cache:
                hit = cache.get_run(run_key)
                if isinstance(hit, tuple) and len(hit) == 5:
                    return _cached_result(request, candidates, warnings, *hit)
    eager, lazy = split_candidates(candidates, request)
    eager = [c for c in eager if readable(c)]
    digests = read_digests(eager, request.overrides) if cache is not None else None
    by_display = {c.display: c for c in candidates}
    abs_paths = Locations(by_display)
    specs = _job_specs(request.config, request.cwd)
    loader = _LazyParser(by_display, request)  # asked only for the files left pending
    pending = {c.display: c.kind for c in lazy}
    locations = {c.display: c.location for c in candidates}
    settings = cluster_settings(request.config)
    try:
        files = parse_all(eager, request, digests, loader.ahead.open)
        relevant = [f for f in files if f.relevant]
        loader.ahead.start(relevant, lazy, request)
        inside = [os.path.realpath(f) for f in request.folders] if request.folders else None
        project = build_project(relevant, request.config.versions, specs, pending, loader, locations, settings, inside)
        project.named = frozenset(request.named)
    finally:
        loader.ahead.close()  # files parsed ahead but never reached are dropped unseen
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
    if cache is not None and run_key is not None and use_run_cache:
        cache.put_run(run_key, (everything, diagnostics, errors, suppressed, withheld))
    return LintResult(diagnostics, files, project, abs_paths, warnings, errors, suppressed, everything, withheld)


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


def split_candidates(candidates: list[Candidate], request: LintRequest) -> tuple[list[Candidate], list[Candidate]]:
    """The files parsed up front, and the files parsed only when a link reaches them.

    A run over folders parses every manifest, script and version declaration up front, and Python
    files when a launch or a manifest reaches them. A run over named files (pre-commit, an editor)
    parses the named files and the manifests and scripts that can reach them (those whose text
    names them, transitively); everything else only when a link asks for it."""
    named = request.named
    if not named and request.folders:
        # folders inside a larger repository: their files, and what can reach them from outside
        inside = request.report_only or set()
        outside = [c for c in candidates if c.display not in inside]
        reaching = _reaching_folders(outside, request.folders)
        wanted = inside | reaching
        return _split(candidates, lambda c: c.display in wanted and _up_front(c))
    if not named:
        return _split(candidates, _up_front)
    wanted = named | _reaching(candidates, named) | _configured_manifests(request, named)
    # two passes without a call per file: most of a large repository's listing goes to the second
    return [c for c in candidates if c.display in wanted], [c for c in candidates if c.display not in wanted]


def _configured_manifests(request: LintRequest, named: set[str]) -> set[str]:
    """The manifests the configuration links to a named file (``[[jobs]]``: a manifest whose command
    names no file of the repository, and the scripts and entry it runs)."""
    out: set[str] = set()
    for spec in _job_specs(request.config, request.cwd):
        linked = {*spec.scripts, *([spec.entry] if spec.entry else [])}
        if linked & named:
            out.add(spec.manifest.split("#", 1)[0])
    return out


def _split(candidates: list[Candidate], eager: Callable[[Candidate], bool]) -> tuple[list[Candidate], list[Candidate]]:
    """The candidates parsed up front, and the rest, in one pass."""
    first: list[Candidate] = []
    rest: list[Candidate] = []
    for c in candidates:
        (first if eager(c) else rest).append(c)
    return first, rest


def _up_front(candidate: Candidate) -> bool:
    # Python files and READMEs are read when a job reaches them (an entry, versions of its folder)
    return candidate.kind not in LAZY_KINDS and not _aside(candidate)


LAZY_KINDS = frozenset({"python", "readme"})


def _reaching_folders(outside: list[Candidate], folders: list[Path]) -> set[str]:
    """Manifests and scripts outside the given folders that can run something inside them: a
    reference from outside has to name the folder (see ``_reaching``)."""
    names = {os.fsencode(f.name) for f in folders}
    found: set[str] = set()
    for c in outside:
        if c.kind in LAUNCHING_KINDS and any(name in _head(c.location) for name in names):
            found.add(c.display)
    return found


def _aside(candidate: Candidate) -> bool:
    """A script of vendored third-party code or of a test suite: no job of its own, so it is parsed
    only when a training launch reaches it (ESPnet recipes alone are thousands of scripts)."""
    return candidate.kind in SHELL_KINDS and (
        vendored(candidate.display) is not None or ci_path(candidate.display) is not None
    )


LAUNCHING_KINDS = frozenset({"manifest", "shell", "maybe-shell"})
REACH_DEPTH = 4  # manifest -> script -> sourced script -> entry: a longer chain is not linked either


def _reaching(candidates: list[Candidate], named: set[str]) -> set[str]:
    """Manifests and scripts that can run one of the named files, and those that can run them.

    A reference resolves against the referring file's folder and its ancestors (``jobs.FileIndex``),
    so a file in folder F can reach T only by naming T's path relative to the deepest folder the
    two share: that text is searched for in each manifest and script. A named version file reaches
    every manifest and script below its folder."""
    launchers = [c for c in candidates if c.kind in LAUNCHING_KINDS and c.display not in named]
    found: set[str] = set()
    pin_folders = [
        os.path.dirname(c.location) + os.sep for c in candidates if c.display in named and c.kind in PIN_KINDS
    ]
    if pin_folders:
        found.update(c.display for c in launchers if c.location.startswith(tuple(pin_folders)))
    texts: dict[str, bytes] = {}
    targets = [c.location for c in candidates if c.display in named or c.display in found]
    for _ in range(REACH_DEPTH):
        # a search of each file for any target's name; the precise needles only where a name occurs
        # (``in`` for each name: a third of the time of one regular expression for one name, less
        # for several)
        wanted = [(os.fsencode(os.path.basename(t)), t) for t in targets]
        names = list(dict.fromkeys(n for n, _ in wanted))
        more: list[str] = []
        for c in launchers:
            if c.display in found:
                continue
            data = texts.get(c.display)
            if data is None:
                data = texts[c.display] = _head(c.location)
            if not any(name in data for name in names):
                continue
            if any(name in data and _names(data, c.location, t) for name, t in wanted):
                found.add(c.display)
                more.append(c.location)
        if not more:
            break
        targets = more
    return found


def _needle(referrer: str, target: str) -> bytes:
    """What a file must contain to name ``target``: its path below the deepest shared folder."""
    shared = os.path.commonpath([os.path.dirname(referrer), os.path.dirname(target)])
    return os.fsencode(os.path.relpath(target, shared))


def _names(data: bytes, referrer: str, target: str) -> bool:
    """Whether a file's text can run ``target``: it writes its path below the folder the two share,
    or (a container that changes into the folder first: ``cd /job/code/scripts; bash train_start.sh``)
    each folder of that path and the file's name, as words of their own."""
    needle = _needle(referrer, target)
    if needle in data:
        return True
    parts = needle.split(b"/")
    return len(parts) > 1 and all(re.search(rb"(?<![\w.-])" + re.escape(p) + rb"(?![\w-])", data) for p in parts)


def _head(path: Path | str) -> bytes:
    # os-level calls: a buffered file object per file costs more than the read of a small script
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the scan
    except OSError:
        return b""
    try:
        data = os.read(fd, FIRST_READ)  # most scripts fit: no buffer of the largest size per file
        if len(data) == FIRST_READ:
            data += os.read(fd, MAX_SCAN_BYTES - FIRST_READ)
        return data
    except OSError:
        return b""
    finally:
        os.close(fd)


MAX_SCAN_BYTES = 1 << 20
FIRST_READ = 1 << 16


class _LazyParser:
    """Parses a Python file the first time the linker reaches it (through the cache when there is one,
    or from the files parsed ahead in the pool)."""

    def __init__(self, candidates: dict[str, Candidate], request: LintRequest) -> None:
        self.candidates = candidates
        self.request = request
        self.parsed: list[ParsedFile] = []
        self.named = bool(request.named)
        self.ahead = _ParsedAhead()

    def __call__(self, display: str) -> ParsedFile | None:
        c = self.candidates[display]
        if not readable(c):
            return None  # a FIFO, or a link out of the tree: as if it were not there
        cache = self.request.cache
        text = self.request.overrides.get(display)
        ready, blob = self.ahead.take(display)  # parsed in the pool, exactly as here, and its pickle
        if cache is None or text is not None:
            parsed = ready or read_and_parse(c.display, c.location, c.kind, text)
        else:
            digest = read_digests([c], {}).get(c.display)
            key, hit = _cached(cache, c.display, c.kind, digest)
            parsed = hit or ready or read_and_parse(c.display, c.location, c.kind, None)
            if hit is None:
                _cache_parsed(cache, key, parsed, digest, blob if parsed is ready else None)
        self.parsed.append(parsed)
        return parsed

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
        data = _head(c.location)
        return any(n in data for n in needles)


POOL_SWITCH_INTERVAL = 0.0001  # seconds; see _ParsedAhead.open
PARSE_AHEAD_THRESHOLD = 200  # Python files; fewer are parsed as the linker reaches them (bench/)
# a file name ending in .py as a script or a manifest writes it, with the folders before it
_PY_MENTION = LazyPattern(r"[A-Za-z0-9_./+-]*[A-Za-z0-9_+-]\.py\b")  # compiled when a run guesses ahead
_PY_END = LazyPattern(r"\.py\b")
_PATH_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-")


def _py_mentions(text: str) -> set[str]:
    """What ``_PY_MENTION.findall`` finds in ``text``, searched only in the runs of path characters
    around each ``.py``: over a whole file the pattern retries at every character of every run
    (0.7 s over the 2,400 launchers of the 10,000-file bench, 0.01 s this way)."""
    found: set[str] = set()
    end = 0  # where the last run searched ends; a run holding two ``.py`` is searched once
    size = len(text)
    for match in _PY_END.finditer(text):
        if match.start() < end:
            continue
        start = match.start()
        while start and text[start - 1] in _PATH_CHARS:
            start -= 1
        end = match.end()
        while end < size and text[end] in _PATH_CHARS:
            end += 1
        # one character past the run, so that ``\b`` sees what follows it as in the whole text
        found.update(_PY_MENTION.findall(text, start, end + 1))
    return found


class _ParsedAhead:
    """Python files the linker will probably reach, parsed by a process pool while the linker works
    (it is a single process, and would otherwise parse them one by one as it reaches them). Only a
    guess at what to parse early: the linker still decides what it reaches; a file it asks for before
    its chunk is back is parsed on the spot, and one it never asks for is dropped unseen. A large run
    opens the pool earlier, for the files parsed up front (``parse_all``)."""

    def __init__(self) -> None:
        self.pool = None
        self.chunk_of: dict[str, int] = {}  # display path -> its chunk, while neither parsed nor taken back
        self.chunks: list[list[tuple[str, str, str, str | None]]] = []
        self.futures: list = []  # of each chunk queued and not taken yet, else None
        self.front = 0  # chunks[:front] are back from the pool, taken back or parsed here
        self.ready: dict[str, tuple[ParsedFile, bytes | None]] = {}  # parsed, not asked for yet
        self.keep_pickles = False  # for the cache
        self.switch_interval: float | None = None  # this process's own, while the pool is open

    def open(self, workers: int) -> Executor:
        """The run's pool of ``workers`` processes, started on first use; the caller calls ``close``
        whatever happens. (This process works beside them: ``pool_size``.)"""
        if self.pool is None:
            from concurrent.futures import ProcessPoolExecutor

            with signals_held():  # the workers start here, and the pool is known to close() once they have
                self.pool = pool = ProcessPoolExecutor(max_workers=workers, initializer=_init_worker)
                pool.submit(int)  # a pool forks its workers at the first task
            # The pool's threads in this process hand each chunk to a worker and take back its
            # models; while this thread parses or links, each waits up to the switch interval for the
            # interpreter lock, and the worker waits with it (a chunk's models fill the pipe several
            # times over): at the default 5 ms the worker sat idle for a fifth of the 10,000-file
            # bench's linking, at 0.5 ms it waited 0.13-0.15 s in each phase, at 0.1 ms 0.06-0.11 s.
            self.switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self.switch_interval, POOL_SWITCH_INTERVAL))
        return self.pool

    def start(self, parsed: list[ParsedFile], lazy: list[Candidate], request: LintRequest) -> None:
        """Queue the likely entries, given the parsed launchers (nothing for a small run, one core or
        named files)."""
        workers = min(request.workers, os.cpu_count() or 1)
        if workers < 2 or request.named:
            return
        likely = [c for c in _likely_entries(parsed, lazy) if readable(c)]
        if len(likely) < PARSE_AHEAD_THRESHOLD:
            return
        jobs = [(c.display, c.location, c.kind, request.overrides.get(c.display)) for c in likely]
        helpers = pool_size(workers)
        size = max(1, min(8, len(jobs) // (helpers * 8)))
        self.chunks = [jobs[k : k + size] for k in range(0, len(jobs), size)]
        self.chunk_of = {job[0]: n for n, chunk in enumerate(self.chunks) for job in chunk}
        pool = self.open(helpers)
        self.keep_pickles = request.cache is not None
        # queued in about the order the linker reaches them: the pool keeps ahead of the linker, and
        # the linker, when it catches up, parses a chunk further on rather than wait (queued last
        # first to meet halfway, the pool sat idle while the linker went through the pool's half)
        self.futures = [pool.submit(_parse_chunk, chunk) for chunk in self.chunks]
        self.front = 0

    def take(self, display: str) -> tuple[ParsedFile | None, bytes | None]:
        """The model of a file parsed ahead and its pickle (None without a cache or when parsed here),
        once its chunk is back (each is handed out once); (None, None) otherwise."""
        self._collect()
        found = self.ready.pop(display, None)
        if found is not None:
            return found
        n = self.chunk_of.pop(display, None)
        if n is None:
            return None, None
        future = self.futures[n]
        if future.cancel():  # not started: the caller parses it, and the rest of the chunk as it reaches them
            self.futures[n] = None
            for job in self.chunks[n]:
                self.chunk_of.pop(job[0], None)
            return None, None
        while not future.done() and self._parse_queued_after(n):
            pass  # the pool is on it: rather than wait, this process parses what the pool would do next
        self._unpack(n, future.result(), display)
        return self.ready.pop(display)

    def _parse_queued_after(self, n: int) -> bool:
        """Take back the first chunk after the ``n``-th that the pool has not started and parse it
        here; False when there is none."""
        for m in range(n + 1, len(self.futures)):
            future = self.futures[m]
            if future is not None and future.cancel():
                self.futures[m] = None
                for job in self.chunks[m]:
                    if self.chunk_of.pop(job[0], None) is not None:  # not asked for yet
                        self.ready[job[0]] = (_parse_one(job), None)
                return True
        return False

    def _collect(self) -> None:
        """Unpickle the chunks the pool has sent back, in the order it parses them: kept as pickles
        until the linker asked for them, they added 12 MiB to the 10,000-file bench's peak."""
        while self.front < len(self.futures):
            future = self.futures[self.front]
            if future is not None:
                if not future.done():
                    return
                self._unpack(self.front, future.result())
            self.front += 1

    def _unpack(self, n: int, blobs: list[bytes], asked: str | None = None) -> None:
        import pickle

        self.futures[n] = None
        for job, blob in zip(self.chunks[n], blobs, strict=True):
            if job[0] == asked or self.chunk_of.pop(job[0], None) is not None:  # not taken back, not parsed
                self.ready[job[0]] = (pickle.loads(blob), blob if self.keep_pickles else None)

    def close(self) -> None:
        """Ends the pool (at once: what it still parses is not wanted) and drops what was not taken."""
        if self.pool is not None:
            # a stop signal arriving halfway would leave the workers running (they ignore it): it waits
            with signals_held():
                for future in self.futures:
                    if future is not None:
                        future.cancel()
                _end_pool(self.pool)
                self.pool = None
        if self.switch_interval is not None:
            sys.setswitchinterval(self.switch_interval)
            self.switch_interval = None
        self.chunk_of.clear()
        self.ready.clear()
        self.futures = []


def _likely_entries(parsed: list[ParsedFile], lazy: list[Candidate]) -> list[Candidate]:
    """The pending Python files a script or a manifest names: by file name, when the naming file is
    in the Python file's folder or below it (``python3 ${cur_path}/../train.py`` from ``test/``), or by
    the path it writes, from its own folder or one above it (``python src/train.py``,
    ``python3 ${cur_path}/examples/main.py``)."""
    near: dict[str, set[str]] = {}  # file name -> folders holding, at some depth, a file naming it
    exact: set[str] = set()
    for f in parsed:
        if f.kind not in LAUNCHING_KINDS or f.source is None or ".py" not in f.source.text:
            continue
        folder = f.path.rpartition("/")[0]
        above = folder_and_ancestors(folder)
        for written in _py_mentions(f.source.text):
            near.setdefault(written.rpartition("/")[2], set()).update(above)
            # a leading '/' is most often what follows a variable: ``${cur_path}/examples/main.py``
            relative = written.lstrip("/")
            if "/" in relative:
                exact.update(posixpath.normpath(posixpath.join(a, relative)) for a in above)
    return [
        c
        for c in lazy
        if c.kind == "python"
        and (c.display in exact or c.display.rpartition("/")[0] in near.get(c.display.rpartition("/")[2], ()))
    ]


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


def _job_specs(config: Config, cwd: Path) -> list[JobSpec]:
    root = config.root or cwd
    out = []
    for spec in config.jobs:

        def rel(p: str) -> str:
            path = (root / p.split("#", 1)[0]).resolve()
            try:
                shown = path.relative_to(cwd.resolve()).as_posix()
            except ValueError:
                shown = path.as_posix()
            return shown + ("#" + p.split("#", 1)[1] if "#" in p else "")

        out.append(JobSpec(rel(spec.manifest), [rel(s) for s in spec.scripts], rel(spec.entry) if spec.entry else None))
    return out


# -- parsing -----------------------------------------------------------------------------------
def _init_worker() -> None:
    gc.disable()  # as in lint(): a worker only builds models
    _leave_signals_to_parent()


# -- interruption: Ctrl-C (SIGINT to the whole process group) or SIGINT/SIGTERM to this process ---
# Workers and forked children ignore both signals; the main process, interrupted, ends them itself
# (so none is left running, blocked on a pipe nobody reads, or printing a traceback of its own).
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def signals_held():
    """Hold SIGINT/SIGTERM while starting children (a child must not act on them before it has set
    them to be ignored) or while writing a file (the write completes, or never starts). A signal
    that arrives meanwhile is delivered right after."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not on Linux
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _leave_signals_to_parent() -> None:
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _end_pool(pool) -> None:
    """End a process pool at once: its workers are killed rather than waited for (shutdown(wait=True)
    would wait for every pending file, and a worker blocked on a full result pipe never ends)."""
    import multiprocessing

    # no public API before 3.14; a pool shutting down may have let go of its list already
    workers = {*(getattr(pool, "_processes", None) or {}).values(), *multiprocessing.active_children()}
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        with contextlib.suppress(Exception):
            worker.kill()
    for worker in workers:
        with contextlib.suppress(Exception):
            worker.join(timeout=1)
    if manager is not None:
        # the pool's own thread reaps the killed workers too: one it reaps while the join above waits
        # counts as running until the thread records its exit, microseconds later. Not waited for
        # long: a thread that takes longer is not in the middle of that, and an interrupted run ends
        manager.join(timeout=0.05)


def _end_children(children: list[tuple[int, int]]) -> None:
    """Kill and reap forked children not reaped yet, and close the read ends still open."""
    for pid, read in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        if read >= 0:
            with contextlib.suppress(OSError):
                os.close(read)
    for pid, _ in children:
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
    children.clear()


def _parse_one(args: tuple[str, str, str, str | None]) -> ParsedFile:
    display, abs_path, kind, text = args
    return read_and_parse(display, abs_path, kind, text)


def _parse_chunk(chunk: list[tuple[str, str, str, str | None]]) -> list[bytes]:
    """Parse files in a worker; each pickled model goes back as it is, and into the cache."""
    import pickle

    return [pickle.dumps(_parse_one(args), protocol=pickle.HIGHEST_PROTOCOL) for args in chunk]


def _cached(cache, display: str, kind: str, digest: str | None) -> tuple[str | None, ParsedFile | None]:
    """A file's cache key (None without a cache or a digest) and the model stored under it, if any."""
    if cache is None or digest is None:
        return None, None
    key = cache.key("file", display, kind, digest)
    hit = cache.get_file(key)
    return key, hit if isinstance(hit, ParsedFile) else None


def _cache_parsed(cache, key: str | None, parsed: ParsedFile, digest: str | None, blob: bytes | None = None) -> None:
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


def pool_size(workers: int) -> int:
    """The processes a run on ``workers`` cores starts beside its own, which parses and links too:
    one fewer than the cores. As many as the cores put three processes on two cores: in six
    alternating rounds at 10,000 files, as fast (each way faster three times) for a tenth more CPU
    (median 19.4 s against 17.5 s, the whole process tree)."""
    return max(1, workers - 1)


def parse_all(
    candidates: list[Candidate],
    request: LintRequest,
    digests: dict[str, str | None] | None,
    open_pool: Callable[[int], Executor],
) -> list[ParsedFile]:
    """Parse ``candidates`` (through the cache when there is one). A large run parses in the run's
    process pool (``open_pool(workers)``), which stays open for the Python files the linker will
    reach; the caller closes it."""
    jobs = [(c.display, c.location, c.kind, request.overrides.get(c.display)) for c in candidates]
    cache = request.cache if digests is not None else None
    keys: list[str | None] = [None] * len(jobs)
    results: dict[int, ParsedFile] = {}
    todo: list[int] = []
    for i, (display, _, kind, _) in enumerate(jobs):
        digest = digests.get(display) if digests is not None else None
        keys[i], hit = _cached(cache, display, kind, digest)
        if hit is not None:
            results[i] = hit
        else:
            todo.append(i)
    workers = min(request.workers, os.cpu_count() or 1)
    progress = request.progress or (lambda done, total: None)
    progress(len(results), len(jobs))

    def store(i: int, parsed: ParsedFile, blob: bytes | None) -> None:
        _cache_parsed(cache, keys[i], parsed, digests.get(jobs[i][0]) if digests is not None else None, blob)

    if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
        import pickle
        from collections import deque

        helpers = pool_size(workers)
        pool = open_pool(helpers)
        # the pool parses from the front of the queue, this process from its end (manifests, whose
        # models cost the most to send), so both end together whatever each file costs (a YAML file
        # that is no manifest is cheap, a fixed share by kind left this process idle on
        # ModelZoo-PyTorch). The pool is handed two chunks at a time, each smaller as the queue
        # shortens: a chunk the pool has started cannot be taken back (its call queue starts the
        # next one as soon as it is handed), and with every chunk of 64 queued at once this process
        # could wait for the last ones at the end.
        ordered = sorted(todo, key=lambda i: jobs[i][2] == "manifest")  # stable
        lo, hi = 0, len(ordered)  # ordered[lo:hi] is nobody's yet
        handed: deque = deque()  # (chunk, future) in the order handed out, not unpickled yet

        def hand_out() -> None:
            nonlocal lo
            while len(handed) < 2 * helpers and lo < hi:
                size = max(1, min(64, (hi - lo) // (workers * 8)))
                chunk = ordered[lo : lo + size]
                lo += size
                handed.append((chunk, pool.submit(_parse_chunk, [jobs[i] for i in chunk])))

        def receive(wait: bool) -> None:
            # models are unpickled as their chunks arrive: a finished chunk left waiting holds its
            # pickles, and all of them together would add a third to the run's peak memory; a
            # chunk waited for that the pool has not started is parsed here instead
            while handed and (wait or handed[0][1].done()):
                chunk, future = handed.popleft()  # dropped with the future: it keeps the pickles
                if future.cancel():
                    for i in chunk:
                        results[i] = parsed = _parse_one(jobs[i])
                        store(i, parsed, None)
                else:
                    for i, blob in zip(chunk, future.result(), strict=True):
                        results[i] = parsed = pickle.loads(blob)
                        store(i, parsed, blob)
                progress(len(results), len(jobs))
                hand_out()

        hand_out()
        while hi > lo:
            hi -= 1
            i = ordered[hi]
            results[i] = parsed = _parse_one(jobs[i])
            store(i, parsed, None)
            progress(len(results), len(jobs))
            receive(wait=False)
            hand_out()
        receive(wait=True)
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


# -- rules -------------------------------------------------------------------------------------
def run_rules(rules: list[Rule], project: Project, workers: int = 1) -> tuple[list[Diagnostic], list[str]]:
    tasks = _Hooks(rules, project)
    if (
        workers > 1
        and len(project.jobs) >= PARALLEL_RULES_THRESHOLD
        and hasattr(os, "fork")
        and sys.platform == "linux"
    ):
        outcome = _run_forked(tasks, project, workers)
        if outcome is not None:
            return outcome
    return _run_tasks(tasks, range(len(tasks)))


def _run_tasks(tasks: _Hooks, indices) -> tuple[list[Diagnostic], list[str]]:
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


def _outcomes(tasks: _Hooks, blocks: int, size: int) -> dict[int, tuple[list[Diagnostic], list[str]]]:
    """The findings and errors of the hooks in the blocks this process takes from the ``blocks`` pipe
    (``size`` hooks each), by index, for the hooks that have any (most have none: an entry per hook
    was 20 MiB of empty lists on ten thousand files)."""
    found = {}
    while True:
        taken = os.read(blocks, 4)  # one block number; a read this small takes it whole
        if not taken:
            return found
        start = int.from_bytes(taken, "little") * size
        for i in range(start, min(start + size, len(tasks))):
            outcome = _run_tasks(tasks, [i])
            if outcome[0] or outcome[1]:
                found[i] = outcome


RULE_BLOCK = 64  # hooks a process takes at a time: a job's hooks cost from microseconds to milliseconds
MAX_RULE_BLOCKS = 1024  # their numbers fill 4 KiB, which any pipe holds: written before any process reads


def _run_forked(tasks: _Hooks, project: Project, workers: int) -> tuple[list[Diagnostic], list[str]] | None:
    """Run the rule hooks in forked children that share the linked project (copy on write); each
    sends back its findings, with the files' texts as references, and they are put together in the
    order of a single-process run. None when a child fails: the caller then runs them itself.

    The hooks are dealt in blocks from a pipe, each process taking the next block when it is done
    with one: a fixed half each left this process, which also collects the children's findings,
    finishing 0.1-0.2 s after its child at 10,000 files."""
    sources = [f.source for f in project.files if f.source is not None]
    table = {id(src): i for i, src in enumerate(sources)}
    size = max(RULE_BLOCK, -(-len(tasks) // MAX_RULE_BLOCKS))
    children: list[tuple[int, int]] = []  # (pid, read end) of each child not yet reaped; -1: read end closed
    blocks, deal = os.pipe()
    try:
        try:
            dealt = _deal(deal, -(-len(tasks) // size))
        finally:
            os.close(deal)  # the children inherit the read end only: the last block taken, each read finds the end
        if not dealt:
            return None
        return _collect_forked(tasks, blocks, size, workers, sources, table, children)
    except BaseException:  # interrupted: no child may outlive the run
        _end_children(children)
        raise
    finally:
        os.close(blocks)


def _deal(fd: int, count: int) -> bool:
    """Write the block numbers 0 to ``count`` - 1 into a pipe nobody reads yet; False when it cannot
    hold them all (the write must not block the run)."""
    numbers = b"".join(n.to_bytes(4, "little") for n in range(count))
    os.set_blocking(fd, False)
    try:
        return os.write(fd, numbers) == len(numbers)
    except BlockingIOError:
        return False


def _collect_forked(
    tasks: _Hooks,
    blocks: int,
    size: int,
    workers: int,
    sources: list,
    table: dict,
    children: list[tuple[int, int]],
):
    import pickle

    for _ in range(workers - 1):
        read, write = os.pipe()
        with signals_held():  # until the child ignores them, and the parent knows the child
            pid = os.fork()
            if pid == 0:
                _leave_signals_to_parent()
            else:
                children.append((pid, read))
        if pid == 0:  # the child: run the blocks it takes, write the pickled outcome, leave without cleanup
            status = 1
            try:
                os.close(read)
                with os.fdopen(write, "wb") as out:
                    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
                    pickler.persistent_id = lambda obj: table.get(id(obj)) if isinstance(obj, SourceText) else None
                    pickler.dump(_outcomes(tasks, blocks, size))
                status = 0
            finally:
                os._exit(status)
        os.close(write)
    results: dict[int, tuple[list[Diagnostic], list[str]]] = _outcomes(tasks, blocks, size)
    failed = False
    for _ in range(workers - 1):  # one child per worker after this process, reaped in order
        pid, read = children[0]
        try:
            with os.fdopen(read, "rb") as handle:
                children[0] = (pid, -1)  # the handle closes the read end
                unpickler = pickle.Unpickler(handle)
                unpickler.persistent_load = sources.__getitem__
                results.update(unpickler.load())
        except Exception:
            failed = True
        _, status = os.waitpid(pid, 0)
        children.pop(0)  # reaped: its pid may be reused, never signal it again
        failed = failed or status != 0
    if failed:
        return None
    diagnostics: list[Diagnostic] = []
    errors: list[str] = []
    for i in sorted(results):
        found, problems = results[i]
        diagnostics.extend(found)
        errors.extend(problems)
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
            cls = type(rule)
            files = project.files
            if "training-file" in rule.premises:
                if training_files is None:
                    training_files = [f for f in project.files if training_file(f, project, self.paths.every)]
                files = training_files
            for overridden, targets in (
                (cls.check_project is not Rule.check_project, (project,)),
                (cls.check_file is not Rule.check_file, files),
                (cls.check_job is not Rule.check_job, project.jobs),
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
            if gate is not None:
                return list(gate)
            ident = target.id if target.manifest else None
            return _job_findings(rule, target, ident, paths.linked, paths.of_job[id(target)])
        if isinstance(target, Project):
            view, out = _premised(rule, target)
            out += [d if isinstance(d, Withheld) else enforce(d, paths.every) for d in rule.check_project(view)]
            return out
        return [enforce(d, None) for d in rule.check_file(target)]  # type: ignore[arg-type]


def _premised(rule: Rule, project: Project) -> tuple[Project, list[Diagnostic | Withheld]]:
    """The project as a rule that checks it whole sees it: only the jobs where the rule's premises
    hold; and the withheld advice of the jobs where one is unknown."""
    if not rule.premises:
        return project, []
    jobs: list[Job] = []
    others: list[Job] = []
    withheld: list[Diagnostic | Withheld] = []
    for job in project.jobs:
        gate = withheld_for(rule, job)
        if gate is None:
            jobs.append(job)
            continue
        others.append(job)
        withheld.extend(gate)
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
    from .registry import all_rules, matches

    rules = all_rules()
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
    out: list[Diagnostic] = []
    for rule in rules:
        hook = getattr(rule, "check_directives", None)
        if hook is not None:
            out.extend(hook(state))
    return out
