"""Ctrl-C, SIGINT or SIGTERM during a large run (process pool for parsing, forked children for the
rules) ends every process of the run within a second: exit 130 (SIGINT) or 143 (SIGTERM), no
traceback, the progress bar's line ended, and no half-written file, also during --fix."""

from __future__ import annotations

import os
import pty
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from generate import generate

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="signals to process groups, forked rule children"),
]

FILES = 3_000  # the parse pool starts at 2,000 files, the forked rule children at 1,000 jobs
HIDE_CURSOR, SHOW_CURSOR = b"\x1b[?25l", b"\x1b[?25h"


@dataclass
class Outcome:
    code: int | None  # None: the run had ended before the signal
    seconds: float  # from the signal to the end of the process
    stderr: bytes
    left: list[str]  # processes of the run still alive after it ended


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interrupt") / "repo"
    generate(root, FILES, seed=11)
    return root


@pytest.fixture(scope="module")
def cache(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """A cache holding the parsed files: the fix runs get to their writes sooner with it."""
    where = tmp_path_factory.mktemp("cache")
    timed_run(repo, ["--cache-dir", str(where)])
    return ["--cache-dir", str(where)]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def interrupt(cwd: Path, argv: list[str], delay: float, signum: int, group: bool, tty: bool) -> Outcome:
    """Start a run in its own process group, signal it after ``delay`` seconds (the main process,
    or the whole group as a terminal's Ctrl-C does), and see how it ends."""
    master = slave = None
    if tty:  # standard error on a terminal: the run draws its progress bar there
        master, slave = pty.openpty()
    env = {**os.environ, "NO_COLOR": "1", "RECOVERY_LINT_NO_CACHE": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "recovery_lint", *argv, "."],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=slave if tty else subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    if slave is not None:
        os.close(slave)
    captured = bytearray()
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline and proc.poll() is None:
        captured += _drain(master, 0.05) if master is not None else b""
        time.sleep(0 if master is not None else 0.05)
    if proc.poll() is not None:
        _finish(proc, master, captured)
        return Outcome(None, 0.0, bytes(captured), [])
    sent = time.monotonic()
    if group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    seconds = time.monotonic() - sent
    left = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    _finish(proc, master, captured)
    return Outcome(proc.returncode, seconds, bytes(captured), left)


def _drain(master: int, wait: float) -> bytes:
    out = b""
    while select.select([master], [], [], wait)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other end is closed
            break
        if not chunk:
            break
        out += chunk
        wait = 0
    return out


def _finish(proc: subprocess.Popen, master: int | None, captured: bytearray) -> None:
    if master is not None:
        captured += _drain(master, 0.2)
        os.close(master)
    elif proc.stderr is not None:
        captured += proc.stderr.read()
        proc.stderr.close()


def check_ended_cleanly(outcome: Outcome, signum: int, tty: bool) -> None:
    expected = 130 if signum == signal.SIGINT else 143
    assert outcome.code == expected, outcome
    # promptly, not after the work or a worker's timeout: a bound far from both, and far above what a
    # loaded machine adds (about a second seen with every core busy)
    assert outcome.seconds < 10.0, f"took {outcome.seconds:.2f} s to end"
    assert outcome.left == [], f"processes left running: {outcome.left}"
    assert b"Traceback" not in outcome.stderr and b"Error" not in outcome.stderr, outcome.stderr[-2000:]
    if tty and HIDE_CURSOR in outcome.stderr:  # the bar was drawn: it is removed, the cursor back
        assert outcome.stderr.rfind(SHOW_CURSOR) > outcome.stderr.rfind(HIDE_CURSOR), outcome.stderr[-300:]
    if not tty:
        assert outcome.stderr == b"", outcome.stderr


def timed_run(cwd: Path, argv: list[str]) -> float:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "recovery_lint", *argv, "."],
        cwd=cwd,
        capture_output=True,
        env={**os.environ, "RECOVERY_LINT_NO_CACHE": ""},
    )
    assert done.returncode in (0, 1), done.stderr
    return time.monotonic() - started


def test_interrupted_checks_end_every_process_at_once(repo):
    duration = timed_run(repo, ["--no-cache"])
    rng = random.Random(12)
    ended = run = 0
    # ten interrupted runs, however the machine's load changes: a run that was over before the signal
    # (the machine got faster than the first run) shortens the delays of the next ones
    while ended < 10 and run < 40:
        signum = (signal.SIGINT, signal.SIGTERM)[run % 2]
        group, tty = run % 4 in (1, 2), run % 3 == 0
        run += 1
        # anywhere in the run (discovery, the parse pool, linking, the forked rule children, the
        # report), once the interpreter has started: before that, Python itself decides
        delay = rng.uniform(0.5, max(0.6, 0.95 * duration))
        outcome = interrupt(repo, ["--no-cache", "--output-format", "concise"], delay, signum, group, tty)
        if outcome.code in (None, 1):
            duration = max(0.6, 0.8 * duration)
            continue
        check_ended_cleanly(outcome, signum, tty)
        ended += 1
    assert ended >= 10, f"{ended} of {run} runs were interrupted"


def test_interrupted_fixes_leave_every_file_whole(repo, cache, tmp_path):
    original = snapshot(repo)
    reference = tmp_path / "reference"
    shutil.copytree(repo, reference)
    duration = timed_run(reference, ["--fix", *cache])
    fixed = snapshot(reference)
    assert fixed != original
    rng = random.Random(13)
    for run in range(6):
        copy = tmp_path / f"run{run}"
        shutil.copytree(repo, copy)
        signum = (signal.SIGINT, signal.SIGTERM)[run % 2]
        delay = rng.uniform(0.3, 1.0) * duration  # the files are written at the end of the run
        outcome = interrupt(copy, ["--fix", *cache], delay, signum, group=run % 3 == 0, tty=False)
        if outcome.code not in (None, 0, 1):  # else the run was over before the signal
            check_ended_cleanly(outcome, signum, tty=False)
        after = snapshot(copy)
        assert set(after) == set(original), sorted(set(after) ^ set(original))[:5]  # no temporary file left
        torn = [p for p, data in after.items() if data not in (original[p], fixed[p])]
        assert torn == [], torn[:5]
        shutil.rmtree(copy)
