"""The command line: the check command's options declared once as data, and the argparse parsers
built from them."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import cache

from . import __version__
from .config import FAIL_ON
from .report import FORMATS as CHECK_FORMATS

USAGE = "recovery-lint [check] [options] [PATH ...]\n       recovery-lint rule CODE|NAME|--all"
DESCRIPTION = (
    "Find missing or misconfigured recovery-time optimizations in Ascend NPU PyTorch\n"
    "training jobs: manifests, launch scripts, training code and version pins."
)
EPILOG = """\
commands:
  check [PATH ...]      lint files and folders (the default command; PATH defaults to .)
  rule CODE|NAME        print a rule's documentation; 'rule --all' lists every rule
  server                a Language Server on standard input and output (needs recovery-lint[server])
  init [PATH]           write .recovery-lint.toml: each key the advice waits for, set where the
                        repository agrees on a value, commented out where it does not say

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

    __slots__ = ("action", "choices", "convert", "flags", "help", "metavar")

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

    @property
    def dest(self) -> str:
        """The attribute argparse stores the option under (its long spelling)."""
        return next(f for f in self.flags if f.startswith("--"))[2:].replace("-", "_")


def worker_count(text: str) -> int:
    """``--jobs``: a number of processes, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
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
    Option(
        "--new-since",
        action="value",
        metavar="REV",
        help="report only findings absent at git revision REV (HEAD in a hook, origin/main in CI)",
    ),
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
        "--target",
        action="append",
        metavar="KEY=VALUE",
        help="what the jobs run on, as the config's [target] says it (platform=ascend-910b,nodes=4); "
        "overrides the config file; repeatable",
    ),
    Option(
        "--versions",
        action="append",
        metavar="NAME=VERSION",
        help="versions where the repository pins none, as the config's [versions] (torch-npu=2.7.1.post8); "
        "overrides the config file; repeatable",
    ),
    Option("--show-withheld", help="list the advice withheld for an unknown premise, where it would apply"),
    Option(
        "--force-exclude",
        help="apply the config's exclude also to paths passed on the command line (as pre-commit passes them)",
    ),
    Option(
        "--tracked-only",
        help="in a git repository, read only the files git tracks, and those named: what a commit holds "
        "(the pre-commit hooks pass it)",
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


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its errors raised as one-line usage errors (exit 2, as argparse's own)."""

    def error(self, message: str):
        raise UsageError(message)


@cache
def check_parser() -> argparse.ArgumentParser:
    """The check command's parser, from the table above."""
    p = _Parser(
        prog="recovery-lint",
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    p = _Parser(prog="recovery-lint rule", description="Print a rule's documentation, or list every rule.")
    p.add_argument("code", nargs="?", help="rule code (RL301) or name")
    p.add_argument("--all", action="store_true", help="list every rule")
    p.add_argument("--output-format", choices=("text", "json", "markdown"), default="text")
    return p
