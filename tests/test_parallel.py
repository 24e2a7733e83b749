"""Large runs spread the work over processes; the findings are those of a single-process run, in
the same order."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from recovery_lint import engine
from recovery_lint.config import Config
from recovery_lint.flow import read as read_module
from recovery_lint.flow import schedule
from recovery_lint.parse import read_and_parse
from recovery_lint.registry import all_rules
from recovery_lint.rule import Rule
from recovery_lint.speed import ahead
from recovery_lint.speed import pool as pool_module

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from generate import generate


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    generate(root, 240, seed=3)
    return root


def read_files(result: engine.LintResult, root: Path) -> list[str]:
    """The generated files a run parses: all of them but the Python files no launch or manifest
    reaches (those are never read)."""
    generated = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert len(generated) == 240
    unread = {
        path
        for path, verdict in result.project.judgements.items()
        if verdict.reason == "not read: no launch or manifest reaches it"
    }
    assert all(path.endswith(".py") for path in unread), unread
    return [path for path in generated if path not in unread]


def lint(root: Path, workers: int, rules: list[Rule] | None = None, progress=None) -> engine.LintResult:
    request = engine.LintRequest(
        paths=[root],
        cwd=root,
        config=Config(),
        rules=rules or list(all_rules().values()),
        workers=workers,
        progress=progress,
    )
    return engine.lint(request)


def keys(result: engine.LintResult) -> list[tuple[object, ...]]:
    return [(d.code, d.path, d.span.start, d.span.end, d.message, d.job, d.fix) for d in result.all_diagnostics]


class Broken(Rule):
    code = "RL999"
    name = "broken"

    def check_job(self, job):
        raise RuntimeError(f"cannot judge {job.id}")


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_parallel_parse_and_rules_match_a_single_process_run(repo, monkeypatch):
    rules = [*all_rules().values(), Broken()]
    single = lint(repo, 1, rules)
    monkeypatch.setattr(read_module, "PARALLEL_THRESHOLD", 10)
    monkeypatch.setattr(schedule, "PARALLEL_RULES_THRESHOLD", 10)
    parallel = lint(repo, 2, rules)
    expected = read_files(single, repo)
    assert len(expected) > 200  # enough files for the parallel parse to run
    assert sorted(f.path for f in single.files) == expected
    assert [f.path for f in parallel.files] == [f.path for f in single.files]
    assert keys(parallel) == keys(single)
    assert parallel.internal_errors == single.internal_errors
    assert len(single.internal_errors) == len(single.project.jobs)


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_a_failing_child_falls_back_to_one_process(repo, monkeypatch):
    """A child whose outcome cannot be sent back (here: something of a local class, which pickle cannot
    name) fails; the rules then run in this process, with the findings of a single-process run. The
    child's outcome is made unsendable whatever blocks it took, so that no scheduling (a child that
    starts after this process took every block) lets it succeed."""
    import os

    class Local(str):  # a local class: a child cannot pickle what carries it
        pass

    rules = list(all_rules().values())
    single = lint(repo, 1, rules)
    monkeypatch.setattr(schedule, "PARALLEL_RULES_THRESHOLD", 10)
    parent = os.getpid()
    real_outcomes = pool_module._outcomes

    def outcomes(count, run, blocks, size):
        found = real_outcomes(count, run, blocks, size)
        if os.getpid() != parent:
            found[-1] = ([Local("unsendable")], [])
        return found

    monkeypatch.setattr(pool_module, "_outcomes", outcomes)
    calls = []
    real = pool_module.run_forked
    monkeypatch.setattr(pool_module, "run_forked", lambda *args: calls.append(real(*args)) or calls[-1])
    assert keys(lint(repo, 2, rules)) == keys(single)
    assert calls == [None]  # the child failed, the rules ran here


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_the_rule_hooks_are_dealt_in_blocks_to_whichever_process_is_free(repo, monkeypatch):
    """Each process takes the next block of hooks when done with one: both take some, every block
    is run once, and the findings are those of a single-process run, in its order."""
    import os

    single = lint(repo, 1)
    monkeypatch.setattr(schedule, "PARALLEL_RULES_THRESHOLD", 10)
    monkeypatch.setattr(pool_module, "RULE_BLOCK", 4)
    taken: list[tuple[int, int]] = []
    real_read = os.read
    read, write = os.pipe()  # the blocks each process takes, told to this process

    def read_block(fd, n):
        data = real_read(fd, n)
        if n == 4 and data:
            os.write(write, os.getpid().to_bytes(4, "little") + data)
        return data

    monkeypatch.setattr(pool_module.os, "read", read_block)
    try:
        parallel = lint(repo, 2)
        os.close(write)
        told = b""
        while chunk := real_read(read, 1 << 16):
            told += chunk
    finally:
        os.close(read)
    taken = [
        (int.from_bytes(told[k : k + 4], "little"), int.from_bytes(told[k + 4 : k + 8], "little"))
        for k in range(0, len(told), 8)
    ]
    assert keys(parallel) == keys(single)
    blocks = sorted(block for _, block in taken)
    assert blocks == list(range(len(blocks))) and len(blocks) > 10  # each block once
    assert len({pid for pid, _ in taken}) == 2


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_the_rules_run_here_when_the_blocks_do_not_fit_their_pipe(repo, monkeypatch):
    import os

    single = lint(repo, 1)
    monkeypatch.setattr(schedule, "PARALLEL_RULES_THRESHOLD", 10)
    forks = []
    monkeypatch.setattr(pool_module.os, "write", lambda fd, data: len(data) // 2)  # a pipe that took half
    monkeypatch.setattr(pool_module.os, "fork", lambda: forks.append(1) or os.fork())
    calls = []
    real = pool_module.run_forked
    monkeypatch.setattr(pool_module, "run_forked", lambda *args: calls.append(real(*args)) or calls[-1])
    assert keys(lint(repo, 2)) == keys(single)
    assert calls == [None] and forks == []


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_an_interrupt_while_this_process_parses_its_share_ends_the_workers(repo, monkeypatch):
    import multiprocessing

    def interrupted(done, total):  # told here of each model parsed or received
        if done:
            assert multiprocessing.active_children()  # the pool works meanwhile
            raise KeyboardInterrupt

    monkeypatch.setattr(read_module, "PARALLEL_THRESHOLD", 10)
    with pytest.raises(KeyboardInterrupt):
        lint(repo, 2, progress=interrupted)
    assert multiprocessing.active_children() == []


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_a_large_run_parses_its_files_and_the_likely_python_files_in_one_pool(repo, monkeypatch):
    import concurrent.futures

    opened: list[object] = []
    real_open = ahead.ParsedAhead.open

    def open_(self, workers):
        pool = real_open(self, workers)
        opened.append(pool)
        return pool

    taken: list[str] = []
    real_take = ahead.ParsedAhead.take

    def take(self, display):
        concurrent.futures.wait([f for f in self.futures if f is not None])  # as if the machine were idle
        found = real_take(self, display)
        if found[0] is not None:
            taken.append(display)
        return found

    single = lint(repo, 1)
    monkeypatch.setattr(read_module, "PARALLEL_THRESHOLD", 10)
    monkeypatch.setattr(ahead, "PARSE_AHEAD_THRESHOLD", 5)
    monkeypatch.setattr(ahead.ParsedAhead, "open", open_)
    monkeypatch.setattr(ahead.ParsedAhead, "take", take)
    parallel = lint(repo, 2)
    assert keys(parallel) == keys(single)
    assert [f.path for f in parallel.files] == [f.path for f in single.files]
    assert len(set(map(id, opened))) == 1 and len(opened) == 2  # the parse and the Python files ahead
    assert opened[0]._max_workers == 1  # this process is the second of the two
    assert len(taken) >= 5 and all(p.endswith(".py") for p in taken)


class Idle:
    """A pool that never starts a task: each stays queued until it is cancelled."""

    def __init__(self) -> None:
        self.queued: list[tuple[list[tuple[str, str, str, str | None]], object]] = []

    def submit(self, fn, *args):
        import concurrent.futures

        future = concurrent.futures.Future()
        self.queued.append((args[0] if args else [], future))
        return future

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def test_the_linker_takes_back_from_the_pool_the_chunks_it_has_not_started(repo, monkeypatch):
    """The guess is queued in the order the linker reaches the files, and a file whose chunk is
    still queued is parsed by the linker, which takes the chunk back from the queue: the pool never
    parses what the linker has parsed."""
    pool = Idle()
    monkeypatch.setattr(ahead, "PARSE_AHEAD_THRESHOLD", 5)
    monkeypatch.setattr(read_module, "PARALLEL_THRESHOLD", 10**6)  # only the Python files go to the pool
    monkeypatch.setattr(ahead.ParsedAhead, "open", lambda self, workers: pool)
    monkeypatch.setattr(read_module.os, "cpu_count", lambda: 2)
    asked: list[str] = []
    real_take = ahead.ParsedAhead.take

    def take(self, display):
        asked.append(display)
        return real_take(self, display)

    monkeypatch.setattr(ahead.ParsedAhead, "take", take)
    single = lint(repo, 1)
    parallel = lint(repo, 2)
    assert keys(parallel) == keys(single)
    chunks = [(chunk, future) for chunk, future in pool.queued if chunk]
    assert len(chunks) >= 3
    reached = [(chunk, future) for chunk, future in chunks if any(job[0] in asked for job in chunk)]
    assert len(reached) >= 3 and all(future.cancelled() for _, future in reached)
    # queued in the linker's order: of the chunks' first files, the one queued first is asked for first
    firsts = [chunk[0][0] for chunk, _ in chunks if chunk[0][0] in asked]
    assert min(asked.index(f) for f in firsts) == asked.index(firsts[0])


class Started:
    """A chunk the pool has started: it cannot be taken back, and it is done after ``polls`` looks."""

    def __init__(self, fn, chunk, polls: int) -> None:
        import concurrent.futures

        self.future = concurrent.futures.Future()
        self.future.set_running_or_notify_cancel()
        self.fn, self.chunk, self.polls = fn, chunk, polls

    def cancel(self) -> bool:
        return self.future.cancel()

    def cancelled(self) -> bool:
        return self.future.cancelled()

    def running(self) -> bool:
        return self.future.running()

    def done(self) -> bool:
        self.polls -= 1
        if self.polls < 0 and not self.future.done():
            self.future.set_result(self.fn(self.chunk))
        return self.future.done()

    def result(self):
        self.done()
        return self.future.result()


def test_the_linker_parses_a_later_chunk_rather_than_wait_for_the_pool(repo, monkeypatch):
    """When the linker reaches a file of the chunk the pool is parsing, it takes back the next
    chunks the pool has not started and parses them until that chunk is back: neither process waits,
    and no file is parsed twice."""

    class Busy(Idle):
        """A pool that has started its first chunk, and ends it after a few looks."""

        def submit(self, fn, *args):
            if self.queued or not args or not args[0]:
                return super().submit(fn, *args)
            started = Started(fn, args[0], polls=3)
            self.queued.append((args[0], started))
            return started

    pool = Busy()
    monkeypatch.setattr(ahead, "PARSE_AHEAD_THRESHOLD", 5)
    monkeypatch.setattr(read_module, "PARALLEL_THRESHOLD", 10**6)
    monkeypatch.setattr(ahead.ParsedAhead, "open", lambda self, workers: pool)
    monkeypatch.setattr(read_module.os, "cpu_count", lambda: 2)
    parsed_ahead: list[str] = []
    real_take = ahead.ParsedAhead.take

    def take(self, display):
        found = real_take(self, display)
        if found[0] is not None:
            parsed_ahead.append(display)
        return found

    monkeypatch.setattr(ahead.ParsedAhead, "take", take)
    single = lint(repo, 1)
    parallel = lint(repo, 2)
    assert keys(parallel) == keys(single)
    chunks = [(chunk, future) for chunk, future in pool.queued if chunk]
    first, started = chunks[0]
    assert started.future.done() and not started.future.cancelled()  # the pool's, sent back
    stolen = [chunk for chunk, future in chunks[1:4] if future.cancelled()]
    assert stolen == [chunk for chunk, _ in chunks[1:4]]  # parsed here while the pool was busy
    handed = {job[0] for chunk in [first, *stolen] for job in chunk} & set(parsed_ahead)
    assert {job[0] for job in first} & handed and {job[0] for chunk in stolen for job in chunk} & handed


def test_this_process_parses_from_the_end_of_the_queue_what_the_pool_has_not_started(repo, monkeypatch):
    """The pool takes chunks from the front, this process from the end, manifests first: whatever
    each file costs, the two end together, and no file is parsed twice."""

    class Slow(Idle):
        """A pool that has started on its first two chunks only, and finishes them when asked."""

        def submit(self, fn, *args):
            future = super().submit(fn, *args)
            if len(self.queued) <= 2:
                future.set_running_or_notify_cancel()
                future.set_result(fn(*args))
            return future

    from recovery_lint.discover import discover

    candidates, _ = discover([repo], repo)
    eager = [c for c in candidates if c.kind != "python"]
    request = engine.LintRequest(paths=[repo], cwd=repo, config=Config(), rules=[], workers=2)
    pool = Slow()
    monkeypatch.setattr(read_module, "PARALLEL_THRESHOLD", 10)
    monkeypatch.setattr(read_module.os, "cpu_count", lambda: 2)
    parsed = read_module.read_up_front(eager, request, None, lambda workers: pool)
    alone = [read_and_parse(c.display, c.location, c.kind, None) for c in eager]
    assert [(p.path, p.kind, p.text, len(p.issues)) for p in parsed] == [
        (p.path, p.kind, p.text, len(p.issues)) for p in alone
    ]
    futures = [future for _, future in pool.queued]
    assert len(futures) >= 4  # handed out two at a time, as the pool sends chunks back
    assert all(f.done() and not f.cancelled() for f in futures[:2])  # the pool's: sent back
    assert all(f.cancelled() for f in futures[2:])  # not started when this process ran out: parsed here
    sent = [job[2] for chunk, _ in pool.queued for job in chunk]
    assert sent and "manifest" not in sent  # manifests, whose models cost the most to send, at this end
    sizes = [len(chunk) for chunk, _ in pool.queued]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0]  # smaller as the queue shortens


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_python_parsed_ahead_in_the_pool_changes_nothing_but_who_parses(repo, monkeypatch, tmp_path, capsys):
    import concurrent.futures
    import json

    from recovery_lint import cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.delenv("RECOVERY_LINT_NO_CACHE", raising=False)
    monkeypatch.chdir(repo)

    def run(*args: str) -> list[dict]:
        capsys.readouterr()
        assert cli.main(["check", ".", "--output-format", "json", "--isolated", *args]) in (0, 1)
        return json.loads(capsys.readouterr().out)

    single = run("--jobs", "1", "--no-cache")
    taken: list[str] = []
    real_take = ahead.ParsedAhead.take

    def take(self, display):
        # the pool is given time to finish, so that what is taken does not depend on the machine's load
        # (a chunk still queued when the linker asks is parsed by the linker instead: the same result)
        concurrent.futures.wait([f for f in self.futures if f is not None])
        found = real_take(self, display)
        if found[0] is not None:
            taken.append(display)
        return found

    monkeypatch.setattr(ahead.ParsedAhead, "take", take)
    monkeypatch.setattr(ahead, "PARSE_AHEAD_THRESHOLD", 5)
    assert run("--jobs", "2", "--no-cache") == single
    assert len(taken) >= 5 and all(p.endswith(".py") for p in taken)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    taken.clear()
    assert run("--jobs", "2", *cache) == single  # cold: the models parsed ahead go to the cache
    assert taken
    assert run("--jobs", "2", *cache) == single  # warm


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_an_interrupt_while_linking_ends_the_workers_parsing_ahead(repo, monkeypatch):
    import multiprocessing

    started: list[ahead.ParsedAhead] = []
    real_start = ahead.ParsedAhead.start

    def start(self, *args):
        started.append(self)
        return real_start(self, *args)

    def interrupted(*args, **kwargs):
        assert started and started[-1].pool is not None and multiprocessing.active_children()
        raise KeyboardInterrupt  # Ctrl-C while the linker works and the pool parses ahead

    monkeypatch.setattr(ahead, "PARSE_AHEAD_THRESHOLD", 5)
    monkeypatch.setattr(ahead.ParsedAhead, "start", start)
    monkeypatch.setattr(engine, "build_project", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lint(repo, 2)
    assert multiprocessing.active_children() == []
    assert started[-1].pool is None


@pytest.mark.skipif(sys.platform != "linux", reason="the forked paths run on Linux")
def test_a_stop_signal_while_the_pool_parsing_ahead_is_ended_still_ends_every_worker(repo, monkeypatch):
    import multiprocessing
    import os
    import signal

    real_end = ahead.end_pool

    def signalled(pool):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C lands while the linker closes the pool, its work done
        real_end(pool)

    monkeypatch.setattr(ahead, "PARSE_AHEAD_THRESHOLD", 5)
    monkeypatch.setattr(ahead, "end_pool", signalled)
    with pytest.raises(KeyboardInterrupt):
        lint(repo, 2)
    assert multiprocessing.active_children() == []


def test_the_python_files_a_launcher_names_are_found_as_by_the_whole_text_pattern():
    import random

    texts = [
        "python train.py --x",
        "python3 ${cur_path}/../src/train.py\ncp a.py.bak b.py/c.py",
        "x.py中 y.py.z w/.py v+-_.py a.pyc a.py-b.py",
        "",
        "no mention here",
    ]
    rnd = random.Random(11)
    pieces = [*"ab./_+-中 \n$\"'1", ".py", ".pyc", "/.py", "py"]
    texts += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 16))) for _ in range(20000)]
    for text in texts:
        assert ahead._py_mentions(text) == set(ahead._PY_MENTION.findall(text)), text
    assert ahead._py_mentions("run ./x/train.py中 and eval.py") == {"eval.py"}


def test_a_python_path_written_after_a_variable_is_guessed_from_the_launchers_folders(tmp_path):
    from recovery_lint.discover import Candidate

    script = tmp_path / "model" / "test" / "train_full_8p.sh"
    script.parent.mkdir(parents=True)
    script.write_text("cur_path=$(cd ..; pwd)\npython3 ${cur_path}/examples/imagenet/main.py --epochs 90\n")
    launcher = read_and_parse("model/test/train_full_8p.sh", str(script), "shell", None)
    pending = ["model/examples/imagenet/main.py", "model/examples/other/main.py", "elsewhere/imagenet/main.py"]
    lazy = [Candidate(tmp_path / p, p, "python") for p in pending]
    assert [c.display for c in ahead._likely_entries([launcher], lazy)] == ["model/examples/imagenet/main.py"]
