"""Interruption: Ctrl-C (SIGINT to the whole process group) or SIGINT/SIGTERM to this process.

The processes a large run starts beside its own (the parse pool's workers, the forked rule children:
``pool.py``) ignore both signals; the main process, interrupted, ends them itself, so that none is
left running, blocked on a pipe nobody reads, or printing a traceback of its own. The signals are
held while such a process starts, and while a file is written (a fix, a report), which then
completes or never starts. A module of its own: a run that writes a file needs this, not the pool."""

from __future__ import annotations

import contextlib
import signal

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


def leave_signals_to_parent() -> None:
    """In a worker or a forked child: ignore the stop signals (the main process ends it)."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
