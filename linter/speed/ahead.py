"""Parse-ahead: in a large run on more than one core, the Python files the linker will probably
reach, parsed in the run's process pool while the linker works (``ParsedAhead``), and the guess of
which files those are (``_likely_entries``, from the texts of the scripts and manifests parsed).

The linker is a single process and parses a Python file when a link first reaches it (the read
stage's ``Reader``, which takes the file from here when it was parsed ahead). The same object owns
the pool in which a large run parses its files up front (``pool.py``), so that one pool serves both."""

from __future__ import annotations

import posixpath
import sys
from typing import TYPE_CHECKING

from ..discover import readable
from ..interrupts import signals_held
from ..kinds import LAUNCHING_KINDS, PYTHON
from ..lazyre import LazyPattern
from ..parse import read_and_parse
from ..paths import folder_and_ancestors
from .pool import end_pool, init_worker, parse_chunk, pool_size

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from ..discover import Candidate
    from ..parse import ParsedFile

POOL_SWITCH_INTERVAL = 0.0001  # seconds; see ParsedAhead.open
PARSE_AHEAD_THRESHOLD = 200  # Python files; fewer are parsed as the linker reaches them (bench/)
# a file name ending in .py as a script or a manifest writes it, with the folders before it
_PY_MENTION = LazyPattern(r"[A-Za-z0-9_./+-]*[A-Za-z0-9_+-]\.py\b")  # compiled when a run guesses ahead
_PY_END = LazyPattern(r"\.py\b")
_PATH_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-")


class ParsedAhead:
    """Python files the linker will probably reach, parsed by a process pool while the linker works
    (it is a single process, and would otherwise parse them one by one as it reaches them). Only a
    guess at what to parse early: the linker still decides what it reaches; a file it asks for before
    its chunk is back is parsed on the spot, and one it never asks for is dropped unseen. A large run
    opens the pool earlier, for the files parsed up front (``engine.parse_all``)."""

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
                self.pool = pool = ProcessPoolExecutor(max_workers=workers, initializer=init_worker)
                pool.submit(int)  # a pool forks its workers at the first task
            # The pool's threads in this process hand each chunk to a worker and take back its
            # models; while this thread parses or links, each waits up to the switch interval for the
            # interpreter lock, and the worker waits with it (a chunk's models fill the pipe several
            # times over): a short switch interval keeps the worker fed (the interval is chosen in
            # bench/README.md).
            self.switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self.switch_interval, POOL_SWITCH_INTERVAL))
        return self.pool

    def start(
        self,
        parsed: list[ParsedFile],
        lazy: list[Candidate],
        workers: int,
        overrides: dict[str, str],
        keep_pickles: bool,
    ) -> None:
        """Queue the likely entries, given the parsed launchers (nothing for a small run); the
        pickles are kept for the cache with ``keep_pickles``."""
        likely = [c for c in _likely_entries(parsed, lazy) if readable(c)]
        if len(likely) < PARSE_AHEAD_THRESHOLD:
            return
        jobs = [(c.display, c.location, c.kind, overrides.get(c.display)) for c in likely]
        helpers = pool_size(workers)
        size = max(1, min(8, len(jobs) // (helpers * 8)))
        self.chunks = [jobs[k : k + size] for k in range(0, len(jobs), size)]
        self.chunk_of = {job[0]: n for n, chunk in enumerate(self.chunks) for job in chunk}
        pool = self.open(helpers)
        self.keep_pickles = keep_pickles
        # queued in about the order the linker reaches them: the pool keeps ahead of the linker, and
        # the linker, when it catches up, parses a chunk further on rather than wait (queued last
        # first to meet halfway, the pool sat idle while the linker went through the pool's half)
        self.futures = [pool.submit(parse_chunk, chunk) for chunk in self.chunks]
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
                        self.ready[job[0]] = (read_and_parse(*job), None)
                return True
        return False

    def _collect(self) -> None:
        """Unpickle the chunks the pool has sent back, in the order it parses them: kept as pickles
        until the linker asks for them, they would add to the run's peak memory."""
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
                end_pool(self.pool)
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
        if c.kind == PYTHON
        and (c.display in exact or c.display.rpartition("/")[0] in near.get(c.display.rpartition("/")[2], ()))
    ]


def _py_mentions(text: str) -> set[str]:
    """What ``_PY_MENTION.findall`` finds in ``text``, searched only in the runs of path characters
    around each ``.py``: over a whole file the pattern would retry at every character of every run."""
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
