"""The plain command lines are read without argparse, into exactly what argparse makes of them;
everything else goes to argparse, which gives the usage, the errors and the help."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recovery_lint import argv as options
from recovery_lint.cli import UsageError

WORDS = [
    *(flag for option in options.OPTIONS for flag in option.flags),
    "--select=RL1",
    "--select=",
    "--ignore=RL3,rl101",
    "--output-format=json",
    "--output-format=xml",
    "--fail-on=info",
    "--jobs=2",
    "--jobs=0",
    "--jobs=x",
    "--fix=1",
    "--fi",
    "--sel",
    "-q",
    "-qq",
    "-h",
    "--help",
    "--",
    "-",
    "",
    "-1",
    "job.yaml",
    "scripts/train.sh",
    "a b.yaml",
    "RL301",
    "json",
    "concise",
    "warning",
    "3",
    "=x",
]


def argparse_result(argv: list[str]) -> dict[str, object] | None:
    try:
        return vars(options.check_parser().parse_args(argv))
    except (UsageError, SystemExit):
        return None


@settings(max_examples=400)
@given(st.lists(st.sampled_from(WORDS), max_size=7))
def test_a_command_line_read_without_argparse_reads_as_argparse_reads_it(argv):
    quick = options.quick_parse(argv)
    if quick is None:
        return  # argparse reads it (and may refuse it)
    assert vars(quick) == argparse_result(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["--force-exclude", "a.yaml", "b/train.sh"],  # the shipped pre-commit hook
        ["--output-format", "sarif", "--output-file", "out.sarif", "."],
        ["--select", "RL1", "--select=RL3", "--ignore", "RL301", "--fix", "--unsafe-fixes", "."],
        ["-q", "--jobs", "2", "--fail-on", "error", "--no-cache", "repo"],
        [],
        ["job.yaml", "--exit-zero", "--statistics"],
    ],
)
def test_the_command_lines_hooks_and_ci_write_are_read_without_argparse(argv):
    quick = options.quick_parse(argv)
    assert quick is not None
    assert vars(quick) == argparse_result(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["--fi", "x"],  # argparse's abbreviation
        ["a", "--fix", "b"],  # argparse refuses the second run of paths
        ["--output-format", "xml"],
        ["--jobs", "0"],
        ["--select"],
        ["--", "-weird-name.yaml"],
        ["-"],
    ],
)
def test_what_only_argparse_can_read_or_refuse_is_left_to_it(argv):
    assert options.quick_parse(argv) is None


def test_the_options_and_their_defaults_are_argparses():
    assert vars(options.quick_parse([])) == vars(options.check_parser().parse_args([]))
