"""RL900 on a shell script if and only if bash rejects it.

Each row is a small script and what ``bash -n`` says of it. The scripts are linted through the
command line, once, as a folder; every row then checks that recovery-lint reports one RL900 exactly
when bash rejects the script, and runs ``bash -n`` on the same file so that the table cannot drift
from the truth. "Rejects" is bash's own verdict: a non-zero exit status, or an error message (bash
prints an error in ``[[ ]]`` with status 0, then stops the script there); a warning (a
here-document ended by the end of the file) is not a rejection.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass

import pytest

from tests.conftest import run_cli

BASH = shutil.which("bash")


@dataclass(frozen=True)
class Row:
    name: str
    script: str | bytes
    rejected: bool  # what bash -n says


ACCEPTED = [
    Row("trailing-backslash-at-end-of-file", "#!/bin/bash\ntorchrun --nnodes 2 train.py \\", False),
    Row("trailing-backslash-then-newline", "torchrun --nnodes 2 train.py \\\n", False),
    Row("base-number-arithmetic", "echo $((16#ff)) $(( 16#$h + 2#101 ))\n", False),
    Row("for-without-in", "for i do echo $i; done\n", False),
    Row("for-without-in-newline", "for i\ndo\n  echo $i\ndone\n", False),
    Row("escaped-less-than-in-test", '[ "$a" \\< "$b" ] && echo lt\n[ "$a" \\> "$b" ] || echo ge\n', False),
    Row("heredoc", "cat <<EOF\nhome $HOME\n  )( fi done ' unbalanced\nEOF\necho after\n", False),
    Row("heredoc-quoted-tab-stripped", "cat <<-'END'\n\tbody ${ `\n\tEND\necho after\n", False),
    Row("heredoc-ended-by-end-of-file", "cat <<EOF\nno terminator\n", False),  # a warning only
    Row("heredoc-in-command-substitution", "x=$(cat <<EOF\na ) b\nEOF\n)\necho $x\n", False),
    Row("case", 'case "$1" in\n  a|b) echo ab ;;\n  (c) echo c ;&\n  *) ;;&\nesac\n', False),
    Row("case-in-command-substitution", "x=$(case $1 in a) echo a;; esac)\n", False),
    Row("arrays", 'a=(1 2 "three")\ndeclare -A m=([k]=v [k2]=v2)\na+=(x)\necho ${a[@]} ${#a[@]} ${!m[@]}\n', False),
    Row("array-over-lines-with-comments", "a=(\n  one  # first\n  two\n)\n", False),
    Row("double-brackets", "[[ -f x && $a == @(x|y)* || $b =~ ^[0-9]+(a|b)$ ]] && echo ok\n", False),
    Row("double-brackets-over-lines", "[[ -n $a &&\n   -f $b ]]\n", False),
    Row("arithmetic-command", "(( i++ ))\n(( 1 + ))\nfor ((i=0; i<3; i++)); do echo $i; done\n", False),
    Row("process-substitution", "diff <(ls a) >(cat) && while read l; do echo $l; done < <(ls)\n", False),
    Row("coproc", "coproc NAME { cat; }\ncoproc cat file\n", False),
    Row("select", "select x in a b; do echo $x; break; done\n", False),
    Row("functions", "function f {\n  echo f\n}\nfunction g() ( echo g )\nh() { :; }\n", False),
    Row("for-with-brace-body", "for x in a b; { echo $x; }\n", False),
    Row(
        "parameter-expansions",
        "echo ${var//a/b} ${var#*/} ${!ref} ${!${i}@} ${a:-${b:-c}} $'tab\\there' $\"msg\"\n",
        False,
    ),
    Row("zsh-expansion-in-a-bash-script", "echo ${(%):-%N}\n", False),  # fails when run, not when parsed
    Row("here-string", 'cat <<< "hi $x"\n', False),
    Row("continuations-inside-command-substitution", 'x=$(echo a \\\n  b \\\n  c)\necho "$x"\n', False),
    Row("subshell-first-in-command-substitution", "n=$((grep -c x f) | wc -l)\n", False),
    Row("empty-backquotes", "train_steps=``\necho $train_steps\n", False),
    Row("quotes-inside-substitutions", 'echo "$(echo ")")" "${x:-"}"}"\n', False),
    Row("fd-redirections", "exec {fd}>log; cmd 2>&1>/dev/null; other &>> log\n", False),
    Row("gbk-comment", "#!/bin/bash\n# 设置环境变量\necho ok\n".encode("gbk"), False),
    Row("gbk-strings", "echo \"完成\" '字' 中文\n".encode("gbk"), False),
    Row("empty-file", "", False),
    Row("only-a-shebang", "#!/bin/bash\n", False),
    Row("only-comments", "# a\n   # b\n", False),
]

REJECTED = [
    Row("unclosed-double-quote", 'echo a\necho "unclosed\necho next\n', True),
    Row("unclosed-single-quote", "echo 'x\n", True),
    Row("unclosed-backquote", "echo `ls\n", True),
    Row("unclosed-command-substitution", "x=$(echo a\n", True),
    Row("unclosed-parameter-expansion", "echo ${a\n", True),
    Row("if-without-fi", "if true; then\n  echo x\n", True),
    Row("unmatched-open-paren", "( echo a\n", True),
    Row("unmatched-close-paren", "echo a )\n", True),
    Row("done-without-loop", "echo a\ndone\n", True),
    Row("fi-without-if", "echo a; fi\n", True),
    Row("stray-closing-brace", "}\n", True),
    Row("double-semicolon-outside-case", "echo a;;\n", True),
    Row("double-semicolon-inside-if", "if true; then echo;; fi\n", True),
    Row("redirection-without-target", "echo >\n", True),
    Row("then-with-nothing-before-fi", "if true; then\nfi\n", True),
    Row("if-without-condition", "if then fi\n", True),
    Row("while-without-condition", "while; do done\n", True),
    Row("pipe-at-end-of-file", "echo a |\n", True),
    Row("conditional-binary-operator-expected", "[[ a b ]]\necho after\n", True),
    Row("conditional-unary-operator-without-argument", "[[ -f ]]\n", True),
    Row("extglob-outside-double-brackets", "shopt -s extglob\nrm -f !(keep).log\n", True),
    Row("extglob-case-pattern", "case x in @(a|b)) echo;; esac\n", True),
    Row("operator-inside-array", "a=(1 ; 2)\n", True),
    Row("array-as-an-argument", "echo a=(1)\n", True),
    Row("function-body-not-a-compound-command", "f() echo\n", True),
    Row("word-after-a-group", "{ echo; } foo\n", True),
    Row("arithmetic-for-with-two-expressions", "for ((i=0; i<3)); do :; done\n", True),
    Row("reserved-word-after-an-assignment", "a=1 if true; then :; fi\n", True),
    Row("in-as-a-command", "in\n", True),
    Row("paren-byte-after-invalid-utf8", b"echo \xc3\x28\n", True),
    Row("crlf-then", b"if true; then\r\n  echo\r\nfi\r\n", True),
]

ROWS = ACCEPTED + REJECTED


def file_name(index: int, row: Row) -> str:
    return f"{index:02d}-{row.name}.sh"


@pytest.fixture(scope="module")
def lint(tmp_path_factory) -> tuple[object, dict[str, list[dict]]]:
    folder = tmp_path_factory.mktemp("scripts")
    for index, row in enumerate(ROWS):
        data = row.script if isinstance(row.script, bytes) else row.script.encode("utf-8")
        (folder / file_name(index, row)).write_bytes(data)
    # named on the command line: each is checked whatever job it belongs to (most of these belong to none)
    named = [str(folder / file_name(index, row)) for index, row in enumerate(ROWS)]
    result = run_cli("check", "--isolated", "--no-cache", "--output-format", "json", *named)
    assert result.returncode in (0, 1), result.stderr
    findings: dict[str, list[dict]] = defaultdict(list)
    for finding in json.loads(result.stdout):
        findings[finding["path"].rsplit("/", 1)[-1]].append(finding)
    return folder, findings


def bash_verdict(path) -> tuple[bool, int | None]:
    """Whether bash rejects the script, and the line it names."""
    run = subprocess.run([BASH, "-n", str(path)], capture_output=True, env={"LC_ALL": "C"}, timeout=30)
    errors = [line for line in run.stderr.decode("utf-8", "replace").splitlines() if "warning:" not in line]
    line = re.search(r": line (\d+): ", errors[0]) if errors else None
    return run.returncode != 0 or bool(errors), int(line.group(1)) if line else None


@pytest.mark.parametrize("index", range(len(ROWS)), ids=[r.name for r in ROWS])
def test_rl900_if_and_only_if_bash_rejects(index, lint):
    folder, findings = lint
    row = ROWS[index]
    name = file_name(index, row)
    parse_errors = [f for f in findings[name] if f["code"] == "RL900"]
    assert len(parse_errors) <= 1, parse_errors  # one finding per problem
    assert bool(parse_errors) == row.rejected, parse_errors
    assert not [f for f in findings[name] if f["code"] == "RL904"]
    if BASH is None:
        pytest.skip("no bash to compare with")
    rejected, line = bash_verdict(folder / name)
    assert rejected == row.rejected, f"the table says rejected={row.rejected}, bash -n says {rejected}"
    if rejected and line is not None and "crlf" not in row.name:
        ours = parse_errors[0]["line"]
        # bash names the line after the last one for an unexpected end of file; the finding is at the end
        assert ours == line or (ours == line - 1 and "end of file" in parse_errors[0]["message"]), (ours, line)


def test_the_table_covers_enough_scripts():
    assert len(ROWS) >= 40 and len(REJECTED) >= 15


def test_a_launch_after_a_construct_tree_sitter_misreads_is_still_seen(tmp_path):
    # the commands around 'for i do', '$((16#ff))', '[ \\< ]', '${!${i}@}' and a trailing '\\' are read
    scripts = {
        "a.sh": "for i do echo $i; done\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
        "b.sh": "echo $(( 16#$h ))\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
        "c.sh": '[ "$a" \\< "$b" ] && torchrun --nnodes 2 --nproc_per_node 8 train.py\n',
        "d.sh": "echo ${!${i}@}\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
        "e.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py \\",
        "f.sh": "case $x in a) echo ;& b) echo ;;& esac\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
    }
    for name, text in scripts.items():
        (tmp_path / name).write_text(text, "utf-8")
    # a release that ships torch_npu_run, so every torchrun launch the parser sees gets RL301
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\ntorch-npu==2.1.0.post10\n")
    result = run_cli("check", "--isolated", "--no-cache", "--output-format", "json", str(tmp_path))
    findings = json.loads(result.stdout)
    assert not [f for f in findings if f["code"] == "RL900"], findings
    launches = {f["path"].rsplit("/", 1)[-1] for f in findings if f["code"] == "RL301"}
    assert launches == set(scripts)


def test_crlf_is_one_finding_per_file_even_where_bash_n_passes(tmp_path):
    # bash -n passes 'echo a\r' (it only parses), but every command then ends in a carriage return
    (tmp_path / "crlf.sh").write_bytes(b"#!/bin/bash\r\ncd /job/code\r\necho a\r\necho b\r\n")
    result = run_cli("check", "--isolated", "--no-cache", "--output-format", "json", str(tmp_path / "crlf.sh"))
    errors = [f for f in json.loads(result.stdout) if f["code"] == "RL900"]
    assert [(e["line"], e["message"][:25]) for e in errors] == [(1, "CRLF line ending (line 1)")]


def test_scripts_for_other_shells_are_not_checked(tmp_path):
    scripts = {
        "zsh.sh": "#!/usr/bin/env zsh\nsetopt extendedglob\nfor f (*.log) print $f\n",
        "zsh2.sh": "#!/bin/zsh -f\necho ${(%):-%N}\n",
        "fish.sh": "#!/usr/bin/fish\nfor f in *.log; echo $f; end\n",
        "tcsh.sh": "#!/bin/tcsh\nforeach f (*.log)\n  echo $f\nend\n",
        "sh.sh": "#!/bin/sh\nif true; then\n",  # sh is read as bash: its error is reported
    }
    for name, text in scripts.items():
        (tmp_path / name).write_text(text, "utf-8")
    named = [str(tmp_path / name) for name in scripts]  # named: checked whatever job they belong to
    result = run_cli("check", "--isolated", "--no-cache", "--output-format", "json", *named)
    found = sorted((f["path"].rsplit("/", 1)[-1], f["code"], f["severity"]) for f in json.loads(result.stdout))
    assert found == [
        ("fish.sh", "RL904", "info"),
        ("sh.sh", "RL900", "error"),
        ("tcsh.sh", "RL904", "info"),
        ("zsh.sh", "RL904", "info"),
        ("zsh2.sh", "RL904", "info"),
    ]


@pytest.mark.parametrize(
    ("script", "line", "message"),
    [
        ("echo a\nfor ((i=0; i<3; i++); do echo $i; done\necho b\n", 2, "the '((' after 'for' is not closed by '))'"),
        ("echo a\n[[ ]]\necho b\n", 2, "syntax error in conditional expression"),
    ],
)
def test_errors_bash_n_passes_silently_are_reported(tmp_path, script, line, message):
    # bash stops reading at these without a word: 'bash -n' exits 0, and a run ends silently there
    # ('echo b' never runs). RL900 says so: the one place where it reports what 'bash -n' passes.
    (tmp_path / "stop.sh").write_text(script, "utf-8")
    result = run_cli("check", "--isolated", "--no-cache", "--output-format", "json", str(tmp_path / "stop.sh"))
    errors = [(f["line"], f["message"]) for f in json.loads(result.stdout) if f["code"] == "RL900"]
    assert len(errors) == 1 and errors[0][0] == line and message in errors[0][1], errors
    if BASH is not None:
        assert bash_verdict(tmp_path / "stop.sh") == (False, None)


# Valid bash tree-sitter misreads, each beside a same-length form it reads: the launch inside or after
# the construct must come out the same (place, enclosing statement, function), so that a fix that
# inserts before the statement lands where it would in the plain form.
L = "torchrun a.py"
SAME_LAUNCH = [
    (f"for i do {L}; done\nfor j do\n  {L}\ndone\n{L}\n", f"for i;do {L}; done\nfor j;do\n  {L}\ndone\n{L}\n"),
    (f"case $x in a) {L} ;& b) echo ;;& esac\n{L}\n", f"case $x in a) {L} ;; b) echo ;;  esac\n{L}\n"),
    (f"if true; then {{ {L}; }} fi\n{L}\n", f"if true; then {{ {L}; }};fi\n{L}\n"),
    (f"f() {{ for x in 1; do {L}; done }}\n{L}\n", f"f() {{ for x in 1; do {L}; done;}}\n{L}\n"),
    (f"g() {{ echo $(( 16#$h )); {L}; }}\n{L}\n", f"g() {{ echo $(( 16    )); {L}; }}\n{L}\n"),
    (f'h() {{ [ "$a" \\< "$b" ] && {L}; }}\n{L}\n', f'h() {{ [ "$a" == "$b" ] && {L}; }}\n{L}\n'),
    (f"g() {{\n  echo ${{!${{i}}@}}\n  {L}\n}}\n{L}\n", f"g() {{\n  echo ${{!_i__@}}\n  {L}\n}}\n{L}\n"),
    (f"n=``; {L} \\", f'n=""; {L}  '),
    (
        f'm() {{\n  if [[ "$a" = \\\n "$b" ]]; then {L}; fi\n}}\n{L}\n',
        f'm() {{\n  if [[ "$a" =  \n "$b" ]]; then {L}; fi\n}}\n{L}\n',
    ),
]


@pytest.mark.parametrize(("misread", "plain"), SAME_LAUNCH)
def test_a_launch_reads_the_same_as_in_the_plain_form(misread, plain):
    from recovery_lint.sources.shell import parse_shell
    from recovery_lint.span import SourceText

    def launches(text: str) -> list[tuple]:
        script = parse_shell(SourceText("run.sh", text))
        assert text != misread or not script.issues  # the plain form need not be valid bash
        return [
            (c.span.start, c.span.end, c.statement.start, c.statement.end, c.function, [w.text for w in c.words])
            for c in script.commands
            if c.name == "torchrun"
        ]

    assert len(misread) == len(plain)
    assert launches(misread) == launches(plain) != []


def test_a_script_with_gbk_bytes_is_linted_and_fixed_byte_for_byte(tmp_path):
    # bash does not care about the bytes of a comment or a string; the fix must not either
    original = '#!/bin/bash\n# 设置环境变量\necho "完成"\n'.encode("gbk")
    original += b"export HCCL_ASYNC_ERROR_HANDLING=0\ntorch_npu_run --nnodes 2 train.py\n"
    path = tmp_path / "run.sh"
    path.write_bytes(original)
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\ntorch-npu==2.1.0.post10\n")  # a release with a watchdog
    strict = {**os.environ, "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8:strict"}  # a UTF-8 locale

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "recovery_lint", "check", "--isolated", "--no-cache", *args, str(tmp_path)]
        return subprocess.run(command, capture_output=True, env=strict, timeout=120)

    report = run("--output-format", "json")
    findings = json.loads(report.stdout.decode("utf-8"))
    assert [(f["code"], f["line"], f["column"]) for f in findings if f["code"] in ("RL900", "RL101")] == [
        ("RL101", 4, 8)
    ]
    full = run("--output-format", "full")
    assert full.returncode == 1 and b"Traceback" not in full.stderr
    diff = run("--diff", "--unsafe-fixes")  # the explicit 0 is the user's value: an unsafe fix
    assert diff.returncode == 1 and b"Traceback" not in diff.stderr, diff.stderr
    assert "# 设置环境变量".encode("gbk") in diff.stdout  # context lines are the bytes of the file
    assert b"-export HCCL_ASYNC_ERROR_HANDLING=0\n+export HCCL_ASYNC_ERROR_HANDLING=1\n" in diff.stdout
    run("--fix", "--unsafe-fixes")
    assert path.read_bytes() == original.replace(b"HANDLING=0", b"HANDLING=1")


def test_a_loop_header_with_non_ascii_characters_is_cut_at_the_body():
    from recovery_lint.sources.shell import parse_shell
    from recovery_lint.span import SourceText

    script = parse_shell(SourceText("run.sh", "for f in ééééé ; do\n  torchrun train.py\ndone\n"))
    assert {cmd.loops for cmd in script.commands} == {("for f in ééééé ;",)}  # as for ASCII: up to the body
