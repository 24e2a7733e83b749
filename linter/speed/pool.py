"""The processes a large run works with beside its own: a process pool that parses files, and forked
children that run the rule hooks over the linked project; and how each is ended at once.

The flow uses them above its thresholds (files to parse, jobs to check): below them a pool or a fork
costs more than it saves. The pool is opened and closed by the parse-ahead (``ahead.py``), which
keeps it for the Python files the linker will reach. The workers and the children ignore the stop
signals; the main process ends them (``interrupts.py``)."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
from typing import TYPE_CHECKING

from ..interrupts import leave_signals_to_parent, signals_held
from ..kinds import MANIFEST
from ..parse import read_and_parse
from ..span import SourceText

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Executor

    from ..diagnostics import Diagnostic
    from ..parse import ParsedFile

    Outcome = tuple[list[Diagnostic], list[str]]  # the findings and the errors of one hook


# -- the parse pool ----------------------------------------------------------------------------
def pool_size(workers: int) -> int:
    """The processes a run on ``workers`` cores starts beside its own, which parses and links too:
    one fewer than the cores. As many as the cores would put three processes on two cores: no
    faster, for more CPU (bench/README.md)."""
    return max(1, workers - 1)


def init_worker() -> None:
    gc.disable()  # a worker only builds models: the cyclic collector would only rescan them
    leave_signals_to_parent()


def parse_chunk(chunk: list[tuple[str, str, str, str | None]]) -> list[bytes]:
    """Parse files in a worker; each pickled model goes back as it is, and into the cache."""
    import pickle

    return [pickle.dumps(read_and_parse(*args), protocol=pickle.HIGHEST_PROTOCOL) for args in chunk]


def parse_in_pool(
    jobs: list[tuple[str, str, str, str | None]],
    todo: list[int],
    workers: int,
    open_pool: Callable[[int], Executor],
    results: dict[int, ParsedFile],
    store: Callable[[int, ParsedFile, bytes | None], None],
    progress: Callable[[int, int], None],
) -> None:
    """Parse ``jobs[i]`` for each ``i`` in ``todo`` into ``results``, in the run's pool
    (``open_pool``, of ``pool_size(workers)`` processes) and in this process at once; each model is
    handed to ``store`` (with its pickle when it came from the pool) and counted to ``progress``."""
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
    ordered = sorted(todo, key=lambda i: jobs[i][2] == MANIFEST)  # stable
    lo, hi = 0, len(ordered)  # ordered[lo:hi] is nobody's yet
    handed: deque = deque()  # (chunk, future) in the order handed out, not unpickled yet

    def hand_out() -> None:
        nonlocal lo
        while len(handed) < 2 * helpers and lo < hi:
            size = max(1, min(64, (hi - lo) // (workers * 8)))
            chunk = ordered[lo : lo + size]
            lo += size
            handed.append((chunk, pool.submit(parse_chunk, [jobs[i] for i in chunk])))

    def receive(wait: bool) -> None:
        # models are unpickled as their chunks arrive: a finished chunk left waiting holds its
        # pickles, and all of them together would add a third to the run's peak memory; a
        # chunk waited for that the pool has not started is parsed here instead
        while handed and (wait or handed[0][1].done()):
            chunk, future = handed.popleft()  # dropped with the future: it keeps the pickles
            if future.cancel():
                for i in chunk:
                    results[i] = parsed = read_and_parse(*jobs[i])
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
        results[i] = parsed = read_and_parse(*jobs[i])
        store(i, parsed, None)
        progress(len(results), len(jobs))
        receive(wait=False)
        hand_out()
    receive(wait=True)


def end_pool(pool) -> None:
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


# -- forked rule children ----------------------------------------------------------------------
RULE_BLOCK = 64  # hooks a process takes at a time: a job's hooks cost from microseconds to milliseconds
MAX_RULE_BLOCKS = 1024  # their numbers fill 4 KiB, which any pipe holds: written before any process reads


def run_forked(
    count: int, run: Callable[[int], Outcome], sources: list[SourceText], workers: int
) -> tuple[list[Diagnostic], list[str]] | None:
    """Run the hooks ``run(0)`` .. ``run(count - 1)`` in forked children that share the linked
    project (copy on write); each sends back its findings, with the files' texts (``sources``) as
    references, and they are put together in the order of a single-process run. None when a child
    fails: the caller then runs them itself.

    The hooks are dealt in blocks from a pipe, each process taking the next block when it is done
    with one: with a fixed half each, this process, which also collects the children's findings,
    would finish after its child."""
    table = {id(src): i for i, src in enumerate(sources)}
    size = max(RULE_BLOCK, -(-count // MAX_RULE_BLOCKS))
    children: list[tuple[int, int]] = []  # (pid, read end) of each child not yet reaped; -1: read end closed
    blocks, deal = os.pipe()
    try:
        try:
            dealt = _deal(deal, -(-count // size))
        finally:
            os.close(deal)  # the children inherit the read end only: the last block taken, each read finds the end
        if not dealt:
            return None
        return _collect_forked(count, run, blocks, size, workers, sources, table, children)
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
    count: int,
    run: Callable[[int], Outcome],
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
                leave_signals_to_parent()
            else:
                children.append((pid, read))
        if pid == 0:  # the child: run the blocks it takes, write the pickled outcome, leave without cleanup
            status = 1
            try:
                os.close(read)
                with os.fdopen(write, "wb") as out:
                    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
                    pickler.persistent_id = lambda obj: table.get(id(obj)) if isinstance(obj, SourceText) else None
                    pickler.dump(_outcomes(count, run, blocks, size))
                status = 0
            finally:
                os._exit(status)
        os.close(write)
    results: dict[int, tuple[list[Diagnostic], list[str]]] = _outcomes(count, run, blocks, size)
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


def _outcomes(count: int, run: Callable[[int], Outcome], blocks: int, size: int) -> dict[int, Outcome]:
    """The findings and errors of the hooks in the blocks this process takes from the ``blocks`` pipe
    (``size`` hooks each), by index, for the hooks that have any (most have none, and an empty entry
    per hook would cost memory in proportion to the repository)."""
    found = {}
    while True:
        taken = os.read(blocks, 4)  # one block number; a read this small takes it whole
        if not taken:
            return found
        start = int.from_bytes(taken, "little") * size
        for i in range(start, min(start + size, count)):
            outcome = run(i)
            if outcome[0] or outcome[1]:
                found[i] = outcome


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
