"""The check command's options, declared once as data, and the two readers of a command line.

``quick_parse`` reads the command lines a hook or a CI job writes (exact option names, a value
after its option or after ``=``, the paths in one run) into the namespace argparse would give; it
returns None for anything else: help, ``--version``, an abbreviated or unknown option, ``--``, a
value that is not allowed, paths on both sides of an option. ``argparse_parser`` builds the
argparse parser from the same table; the command falls back to it, so its usage, errors and help
are argparse's. Importing argparse (and gettext with it) and building the parser was a twentieth
of a one-manifest run, spent before anything was read.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from types import SimpleNamespace

from . import __version__
from .config import FAIL_ON

TYPE_CHECKING = False  # typing is not imported at run time (see record.py)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

CHECK_FORMATS = ("full", "concise", "json", "sarif", "github", "junit")

USAGE = "recovery-lint [check] [options] [PATH ...]\n       recovery-lint rule CODE|NAME|--all"
DESCRIPTION = (
    "Find missing or misconfigured recovery-time optimizations in Ascend NPU PyTorch\n"
    "training jobs: manifests, launch scripts, training code and version pins."
)
EPILOG = """\
commands:
  check [PATH ...]      lint files and folders (the default command; PATH defaults to .)
  rule CODE|NAME        print a rule's documentation; 'rule --all' lists every rule

exit codes:
  0    nothing at or above --fail-on is left (or there was nothing to lint)
  1    findings remain; also --diff with a patch, --exit-non-zero-on-fix after a fix
  2    usage, configuration or internal error (one line; --verbose shows a traceback)
  130  interrupted (Ctrl-C or SIGINT); 143: terminated (SIGTERM)

examples:
  recovery-lint .                                  lint the repository
  recovery-lint --fix .                            apply the safe fixes
  recovery-lint --diff --unsafe-fixes .            show every fix as a patch
  recovery-lint --select RL1,RL3 --statistics .    count the findings of two phases
  recovery-lint --output-format sarif --output-file recovery-lint.sarif .
  recovery-lint rule RL101                         why RL101 matters and how its fix works
"""
PATHS_HELP = "files or folders to lint (default: .); '-' reads standard input"


class UsageError(Exception):
    """A command line the command cannot take: one line on standard error, exit 2."""


class Option:
    """One option of the check command: its spellings, what it does (``flag``: store_true; ``value``:
    the last one given; ``append``: each one given; ``version``), and its help."""

    __slots__ = ("action", "choices", "convert", "dest", "flags", "help", "metavar")

    def __init__(
        self,
        *flags: str,
        help: str,
        action: str = "flag",
        metavar: str | None = None,
        choices: tuple[str, ...] | None = None,
        convert: Callable[[str], object] | None = None,
    ) -> None:
        self.flags = flags
        self.help = help
        self.action = action
        self.metavar = metavar
        self.choices = choices
        self.convert = convert
        self.dest = next(f for f in flags if f.startswith("--"))[2:].replace("-", "_")


def worker_count(text: str) -> int:
    """``--jobs``: a number of processes, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        import argparse

        raise argparse.ArgumentTypeError(f"'{text}' is not a number of processes (1 or more; default: all cores)")
    return value


OPTIONS = (
    Option("--fix", help="apply safe fixes"),
    Option("--unsafe-fixes", help="also apply unsafe fixes (with --fix or --diff)"),
    Option("--diff", help="print the fixes as a unified diff instead of writing"),
    Option(
        "--select",
        action="append",
        metavar="RULES",
        help="comma-separated codes, prefixes (RL3) or names; repeatable",
    ),
    Option(
        "--ignore",
        action="append",
        metavar="RULES",
        help="comma-separated codes, prefixes or names to skip; repeatable",
    ),
    Option("--extend-select", action="append", metavar="RULES", help="add rules to the selection; repeatable"),
    Option("--output-format", action="value", choices=CHECK_FORMATS, help="default: full on a terminal, else concise"),
    Option("--output-file", action="value", metavar="FILE", help="write the report alone to FILE (atomically)"),
    Option("--scorecard", help="print the recovery scorecard of every job"),
    Option(
        "--fail-on",
        action="value",
        choices=FAIL_ON,
        help="lowest severity that makes the exit code 1 (default warning)",
    ),
    Option("--exit-zero", help="exit 0 even when findings remain"),
    Option("--exit-non-zero-on-fix", help="exit 1 when a fix was applied"),
    Option("--statistics", help="print the number of findings per rule instead of the findings"),
    Option("--add-suppressions", help="add an ignore directive for every finding"),
    Option("--baseline", action="value", metavar="FILE", help="report only findings not recorded in this baseline"),
    Option("--write-baseline", action="value", metavar="FILE", help="record the current findings in FILE and exit"),
    Option("--stdin-filename", action="value", metavar="NAME", help="name of the file read from standard input ('-')"),
    Option(
        "--config",
        action="value",
        metavar="FILE",
        help="use this config file (pyproject.toml or .recovery-lint.toml)",
    ),
    Option("--isolated", help="ignore every config file"),
    Option(
        "--force-exclude",
        help="apply the config's exclude also to paths passed on the command line (as pre-commit passes them)",
    ),
    Option("--show-jobs", help="print how the files were linked into jobs"),
    Option(
        "--jobs",
        action="value",
        metavar="N",
        convert=worker_count,
        help="worker processes, at least 1 (default: all cores)",
    ),
    Option("--no-cache", help="neither read nor write the cache (also RECOVERY_LINT_NO_CACHE=1)"),
    Option(
        "--cache-dir",
        action="value",
        metavar="DIR",
        help="where the cache lives (default: .recovery-lint_cache in the project root)",
    ),
    Option("--no-color", help="no colour, even on a terminal"),
    Option("--verbose", help="show the config file and the files linted, and tracebacks of internal errors"),
    Option("-q", "--quiet", help="print the findings and errors only: no summary, no warnings"),
    Option("--show-files", help="list the files that would be linted, then exit"),
    Option("--version", action="version", help="show program's version number and exit"),
)

_BY_FLAG = {flag: option for option in OPTIONS for flag in option.flags}


def defaults() -> dict[str, object]:
    """Every option's value when it is not given, as argparse sets it."""
    values: dict[str, object] = {"paths": []}
    for option in OPTIONS:
        if option.action != "version":
            values[option.dest] = False if option.action == "flag" else None
    return values


def quick_parse(argv: list[str]) -> SimpleNamespace | None:
    """The namespace argparse would make of ``argv``, for a command line written plainly; None
    where argparse has to read it (see the module's docstring)."""
    values = defaults()
    paths: list[str] = []
    paths_ended = False  # an option came after the paths: argparse refuses paths after it
    at = 0
    while at < len(argv):
        word = argv[at]
        at += 1
        if word and not word.startswith("-"):
            if paths_ended:
                return None
            paths.append(word)
            continue
        paths_ended = bool(paths)
        name, equals, value = word.partition("=")
        option = _BY_FLAG.get(name)
        if option is None or option.action == "version":
            return None
        if option.action == "flag":
            if equals:
                return None
            values[option.dest] = True
            continue
        if not equals:
            if at == len(argv) or not argv[at] or argv[at].startswith("-"):
                return None  # a missing value, or one argparse could read as an option
            value = argv[at]
            at += 1
        if not value:
            return None
        converted = _value_of(option, value)
        if converted is None:
            return None
        if option.action == "append":
            values[option.dest] = [*(values[option.dest] or []), converted]  # type: ignore[misc]
        else:
            values[option.dest] = converted
    values["paths"] = paths
    return SimpleNamespace(**values)


def _value_of(option: Option, value: str) -> object | None:
    if option.choices is not None and value not in option.choices:
        return None
    if option.convert is None:
        return value
    try:
        return option.convert(value)
    except Exception:  # argparse reports it
        return None


def check_parser() -> argparse.ArgumentParser:
    """The check command's argparse parser, from the table above."""
    parser_class, _, raw_help = _argparse_classes()
    p = parser_class(
        prog="recovery-lint", usage=USAGE, description=DESCRIPTION, epilog=EPILOG, formatter_class=raw_help
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help=PATHS_HELP)
    for option in OPTIONS:
        if option.action == "version":
            p.add_argument(*option.flags, action="version", version=f"recovery-lint {__version__}", help=option.help)
            continue
        kwargs: dict[str, object] = {"help": option.help}
        if option.action == "flag":
            kwargs["action"] = "store_true"
        else:
            kwargs["action"] = "append" if option.action == "append" else "store"
            if option.metavar is not None:
                kwargs["metavar"] = option.metavar
            if option.choices is not None:
                kwargs["choices"] = option.choices
            if option.convert is not None:
                kwargs["type"] = option.convert
        p.add_argument(*option.flags, **kwargs)  # type: ignore[arg-type]
    return p


def rule_parser() -> argparse.ArgumentParser:
    """The rule command's parser."""
    parser_class = _argparse_classes()[0]
    p = parser_class(prog="recovery-lint rule", description="Print a rule's documentation, or list every rule.")
    p.add_argument("code", nargs="?", help="rule code (RL301) or name")
    p.add_argument("--all", action="store_true", help="list every rule")
    p.add_argument("--output-format", choices=("text", "json", "markdown"), default="text")
    return p


@cache
def _argparse_classes() -> tuple[type[argparse.ArgumentParser], type, type]:
    """argparse, loaded when a command line needs it, and the parser and help classes built on it."""
    import argparse

    # argparse asks gettext for each message's translation, and gettext searches the disk for a
    # catalog on every call (argparse has none; a miss is not remembered). The messages stay the
    # English ones, as the rest of the output.
    argparse._ = lambda message: message  # type: ignore[attr-defined]

    class Parser(argparse.ArgumentParser):
        def __init__(self, **kwargs) -> None:
            kwargs.setdefault("formatter_class", Help)
            super().__init__(**kwargs)

        def error(self, message: str):  # argparse exits 2 as well; keep the one-line style
            raise UsageError(message)

    class Width:
        """argparse's help formatter, told the terminal's width. Left to find it, it imports shutil,
        and shutil the compression modules: argparse makes a formatter for each argument added."""

        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width=None) -> None:
            width = _columns() - 2 if width is None else width
            super().__init__(prog, indent_increment, max_help_position, width)  # type: ignore[call-arg]

    class Help(Width, argparse.HelpFormatter):
        pass

    class RawHelp(Width, argparse.RawDescriptionHelpFormatter):
        pass

    return Parser, Help, RawHelp


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it: $COLUMNS, the terminal, or 80."""
    import contextlib

    columns = 0
    with contextlib.suppress(KeyError, ValueError):
        columns = int(os.environ["COLUMNS"])
    if columns <= 0:
        with contextlib.suppress(AttributeError, ValueError, OSError):
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    return columns if columns > 0 else 80
