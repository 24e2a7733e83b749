"""The ``recovery-lint`` command line: picks the command, and ends the process with its exit code
(one line on standard error for a usage, configuration or internal error; 130 or 143 when
interrupted)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
from pathlib import Path
from typing import NoReturn

from .argv import OPTIONS, UsageError, check_parser
from .command.check import Check
from .command.outcome import EXIT_CLEAN, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_TERMINATED
from .command.rulepage import rule_command
from .config import ConfigError
from .speed.memory import collector_paused

COMMANDS = ("check", "rule", "init", "server")


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM: unwinds the run like Ctrl-C, so that every ``finally`` and ``except
    BaseException`` on the way ends worker processes, the progress bar and unfinished writes."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_stop_signal(signum: int, frame: object) -> None:
    _ignore_stop_signals()  # one interruption: a second Ctrl-C must not break the unwinding
    raise Interrupted(signum)


def _ignore_stop_signals() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` (the process's own arguments when None, and then the process ends
    here: see ``_exit_now``)."""
    process = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv
    if process:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _on_stop_signal)
        _write_undecodable_bytes_as_read()
    held: list[object] = []  # the command, and with it the run's models, until the process leaves
    try:
        with collector_paused():
            code = _main(argv, verbose, held)
    except KeyboardInterrupt as exc:
        code = EXIT_TERMINATED if getattr(exc, "signum", None) == signal.SIGTERM else EXIT_INTERRUPTED
        if not process:
            return code
    finally:
        if process:
            _ignore_stop_signals()  # the run is over: a late signal changes nothing
    if process:
        _exit_now(code)
    return code


def _main(argv: list[str], verbose: bool, held: list[object]) -> int:
    try:
        code = _dispatch(argv, held)
        sys.stdout.flush()  # a closed pipe shows here rather than as a message at interpreter exit
        return code
    except UsageError as exc:
        print(f"recovery-lint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ConfigError as exc:
        print(f"recovery-lint: configuration error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # the reader went away (`recovery-lint . | head -1`): end quietly with 0, as ruff does
        _discard_stdout()
        return EXIT_CLEAN
    except Exception as exc:
        if verbose:
            raise
        print(f"recovery-lint: internal error: {type(exc).__name__}: {exc} (rerun with --verbose)", file=sys.stderr)
        return EXIT_ERROR


def _dispatch(argv: list[str], held: list[object]) -> int:
    if argv and argv[0] == "rule":
        return rule_command(argv[1:])
    if argv and argv[0] == "server":
        from .server import serve

        if argv[1:] not in ([], ["--stdio"]):
            raise UsageError("server takes no arguments but --stdio: it speaks the Language Server Protocol on stdio")
        return serve()
    if argv and argv[0] == "init":
        from .command.init import init_command

        return init_command(argv[1:])
    if argv and argv[0] == "check":
        argv = argv[1:]
    elif argv:
        _refuse_mistyped_command(argv[0], Path.cwd())
    check = Check(check_parser().parse_args(argv))
    held.append(check)
    return check.run()


def _refuse_mistyped_command(word: str, cwd: Path) -> None:
    """A first word that names no path but is close to a command (or is an option without its
    dashes: `recovery-lint fix .`) is a mistyped command."""
    if word.startswith("-") or not re.fullmatch(r"[a-z][a-z-]*", word) or os.path.lexists(cwd / word):
        return
    import difflib  # for a mistyped command alone

    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    if close:
        raise UsageError(f"{word}: no such command, file or directory (did you mean 'recovery-lint {close[0]}'?)")
    if any(f"--{word}" in option.flags for option in OPTIONS):
        raise UsageError(f"{word}: no such command, file or directory (did you mean '--{word}'?)")


def _write_undecodable_bytes_as_read() -> None:
    """A shell script may hold bytes that are not UTF-8 (kept as U+DC80..U+DCFF): source lines, diffs
    and job listings print them as the bytes they are, whatever the locale's error handler."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and (getattr(stream, "encoding", "") or "").lower().replace("-", "") == "utf8":
            reconfigure(errors="surrogateescape")


def _discard_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's final flush has nowhere to fail."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _exit_now(code: int) -> NoReturn:
    """Leave at once, once the output is written: the workers are ended and the writes finished or
    undone; freeing every model of a large run one by one (when the command object goes, and at
    interpreter shutdown) would only cost time (see bench/README.md)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
