"""The check command's options come from one table, read by argparse."""

from __future__ import annotations

import pytest

from recovery_lint import argv as options
from recovery_lint.argv import UsageError


def parse(argv: list[str]) -> dict[str, object]:
    return vars(options.check_parser().parse_args(argv))


def test_the_command_lines_hooks_and_ci_write_are_read_as_written():
    hook = parse(["--force-exclude", "a.yaml", "b/train.sh"])
    assert hook["force_exclude"] is True and hook["paths"] == ["a.yaml", "b/train.sh"]
    ci = parse(["--output-format", "sarif", "--output-file", "out.sarif", "."])
    assert (ci["output_format"], ci["output_file"], ci["paths"]) == ("sarif", "out.sarif", ["."])


def test_repeated_selections_accumulate_and_numbers_are_converted():
    got = parse(["--select", "RL1", "--select=RL3", "--ignore", "RL301", "-q", "--jobs", "2"])
    assert got["select"] == ["RL1", "RL3"] and got["ignore"] == ["RL301"]
    assert got["quiet"] is True and got["jobs"] == 2


def test_every_option_of_the_table_is_on_the_parser_with_its_default():
    got = parse([])
    for option in options.OPTIONS:
        if option.action == "version":
            continue
        assert option.dest in got
        assert got[option.dest] is (False if option.action == "flag" else None)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--jobs", "0"], "is not a number of processes"),
        (["--output-format", "xml"], "invalid choice"),
        (["--select"], "expected one argument"),
    ],
)
def test_a_command_line_the_table_refuses_is_a_usage_error(argv, said):
    with pytest.raises(UsageError, match=said):
        options.check_parser().parse_args(argv)
