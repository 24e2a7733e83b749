"""Shell words read statically: arithmetic worked out as bash works it out, and a command line held
in a variable split as the shell splits it when only part of its value is known."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from recovery_lint.shellwords import _split_like_the_shell, arithmetic, expand

VALUES = {"NNODES": "2", "GPUS": "8", "EMPTY": "", "NAME": "gpt"}


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("NNODES * GPUS", 16),
        ("$NNODES*${GPUS}", 16),
        ("GPUS / 3", 2),
        ("-7 / 2", -3),  # toward zero, not floor
        ("-7 % 2", -1),
        ("7 % -2", 1),
        ("NNODES * (GPUS - 2) + 1", 13),
        ("- -3", 3),
        ("UNSET * 2", None),  # bash reads 0: not known statically
        ("EMPTY + 1", None),
        ("NAME + 1", None),
        ("GPUS / 0", None),
        ("GPUS ** 2", None),
        ("GPUS > 1 ? 1 : 2", None),
        ("(GPUS", None),
        ("GPUS)", None),
        ("", None),
    ],
)
def test_arithmetic(expression, value):
    assert arithmetic(expression, VALUES) == value


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("expression", ["-7 / 2", "-7 % 2", "7 % -2", "NNODES * (GPUS - 2) + 1", "17 / 4 * 4"])
def test_arithmetic_agrees_with_bash(expression):
    script = f"NNODES=2 GPUS=8; echo $(({expression}))"
    said = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert arithmetic(expression, VALUES) == int(said)


def test_a_deeply_nested_expression_is_not_worked_out():
    deep = "(" * 5000 + "1" + ")" * 5000
    assert arithmetic(deep, VALUES) is None
    assert expand(f"$(({deep}))", VALUES) is None
    assert arithmetic("-" * 5000 + "1", VALUES) is None
    assert arithmetic("(" * 3 + "GPUS" + ")" * 3, VALUES) == 8


def test_an_arithmetic_expansion_in_a_value():
    assert expand('"--nproc $((NNODES * GPUS)) --nnodes $NNODES"', VALUES) == "--nproc 16 --nnodes 2"
    assert expand("$((UNSET + 1))", VALUES) is None
    assert expand("'$((NNODES))'", VALUES) is None  # single quotes: no expansion happens


def test_a_held_command_line_splits_at_blanks_outside_expansions():
    line = 'accelerate launch --num_processes $((A * B)) --ip $(scontrol show x | head -n 1) ${X:-a b} "q r"'
    assert _split_like_the_shell(line) == [
        "accelerate",
        "launch",
        "--num_processes",
        "$((A * B))",
        "--ip",
        "$(scontrol show x | head -n 1)",
        "${X:-a b}",
        '"q r"',
    ]
