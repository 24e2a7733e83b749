"""Hostile and broken input, through the command line: one row per case with its expected outcome.

Every row also holds ``good.sh``, whose RL101 finding must still be reported: a bad file costs a
one-line diagnostic (RL900/RL903, or an error naming the file), never the run. Each run is made
under a 2 GiB address-space limit and a time limit, so an exponential walk or an unbounded
allocation fails the row instead of the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from recovery_lint.config import Config
from recovery_lint.engine import LintRequest, lint
from recovery_lint.parse import parse_source
from recovery_lint.registry import all_rules
from recovery_lint.span import SourceText

# a multi-node launch on a release with the watchdog, which it turns off: one finding whatever else is read
GOOD = "#!/bin/bash\npip install torch-npu==2.1.0.post10\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 train.py\n"
GOOD_FINDING = "good.sh:3:8: RL101"
MEMORY_LIMIT = 2 * 1024**3

VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    fault-scheduling: grace
spec:
  tasks:
  - name: default
    replicas: 2
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
          command: ["/bin/bash", "-c", "bash /job/code/good.sh"]
"""


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    lines = ["apiVersion: batch.volcano.sh/v1alpha1", "kind: Job", "metadata:", "  name: lol", "  labels:"]
    lines.append('    l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]')
    for i in range(1, levels + 1):
        lines.append(f"    l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    lines += [
        "spec:",
        "  tasks:",
        "  - name: default",
        "    template:",
        "      spec:",
        "        containers:",
        "        - name: train",
        f"          command: *l{levels}",
        f"          env: *l{levels}",
        f"          args: *l{levels}",
    ]
    return "\n".join(lines) + "\n"


def launched(name: str, text: str) -> dict[str, str]:
    """A Python file and a launch script that runs it: Python files are parsed only when something
    reaches them (or when they are named on the command line)."""
    return {name: text, f"launch_{name[:-3]}.sh": f"#!/bin/bash\ntorchrun --nproc_per_node 8 {name}\n"}


def documents(n: int) -> str:
    return "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n" for i in range(n))


PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0


@dataclass
class Row:
    id: str
    files: dict[str, str | bytes]
    expect: tuple[str, ...] = ()  # substrings of stdout + stderr
    absent: tuple[str, ...] = ()
    code: int = 1  # good.sh's finding makes it 1
    isolated: bool = True
    seconds: float = 30.0


PWNED = "pwned-by-yaml"
NEWER_GRAMMAR = sys.version_info < (3, 12)  # PEP 695 `type` statements arrived in 3.12

ROWS = [
    Row(
        "yaml-syntax-error",
        {"job.yaml": "apiVersion: v1\nkind: Job\nmetadata: {name: [x\n"},
        ("job.yaml:4:1: RL900 error: YAML syntax error",),
    ),
    Row(
        "duplicate-keys-name-both-lines",
        {"job.yaml": "apiVersion: v1\nkind: Job\nmetadata:\n  name: a\n  name: b\n"},
        ("job.yaml:5:3: RL900 error: duplicate key 'name' (first at line 4)",),
    ),
    Row(
        "python-object-tag-never-constructed",
        {"job.yaml": f"apiVersion: v1\nkind: Job\nx: !!python/object/apply:os.system ['touch {PWNED}']\n"},
        ("job.yaml:3:4: RL900 error: unknown YAML tag '!!python/object/apply:os.system'", "never constructed"),
    ),
    Row(
        "python-name-tag",
        {"job.yaml": "apiVersion: v1\nkind: Job\nx: !!python/name:os.system\ny: !Ref other\n"},
        ("RL900 error: unknown YAML tag '!!python/name:os.system'", "RL900 error: unknown YAML tag '!Ref'"),
    ),
    Row(
        "billion-laughs",
        {"job.yaml": billion_laughs()},
        (
            "job.yaml:1:1: RL900 error: YAML document 1: its aliases expand to more than 1,000,000 nodes (an alias bomb)",
        ),
        ("Traceback", "internal error"),
        seconds=10,
    ),
    Row("recursive-alias", {"job.yaml": "apiVersion: v1\nkind: Job\na: &a [*a, *a]\nb: &b {x: *b}\n"}),
    Row(
        "deep-flow-nesting-10000",
        {"job.yaml": "apiVersion: v1\nkind: ConfigMap\ndata: " + "[" * 10_000 + "]" * 10_000 + "\n"},
        ("job.yaml:", "RL900 error: document nested too deeply"),
    ),
    Row(
        "deep-block-nesting-10000",
        {"job.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n" + "- " * 10_000 + "x\n"},
        ("job.yaml:", "RL900 error: document nested too deeply"),
    ),
    Row(
        "launch-script-with-a-NUL-byte",  # a folder run sees it is a launch script, as naming it does
        {"train.sh": b"#!/bin/bash\ntorchrun --nproc_per_node 8 \x00 train.py\n"},
        ("train.sh:2:29: RL900 error: binary file (contains NUL bytes); not linted",),
    ),
    Row(
        "launch-script-over-10-MB",
        {"train.sh": "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py\n" + "#" * (11 * 1024 * 1024) + "\n"},
        ("train.sh:1:1: RL900 error: larger than 10 MiB; not linted",),
    ),
    Row(
        "file-of-50-MB",
        {"big.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n" + "  k: " + "x" * (50 * 1024 * 1024) + "\n"},
        ("big.yaml:1:1: RL900 error: larger than 10 MiB; not linted",),
    ),
    Row(
        "stream-of-10000-documents",
        {"many.yaml": documents(10_000)},
        (
            "many.yaml:1:1: RL900 error: more than 5000 YAML documents; document 5001 (line 25002) and the rest are not linted",
        ),
    ),
    Row(
        "binary-file",
        {"job.yaml": b"\x7fELF\x02\x01\x01\x00\x00\x00apiVersion: v1\n"},
        ("job.yaml:1:8: RL900 error: binary file (contains NUL bytes); not linted",),  # at the first NUL
    ),
    Row(
        "invalid-utf8",
        # a manifest is reported where the bad byte is; bash reads bytes, and \x28 is the '(' it rejects
        {"job.yaml": b"apiVersion: v1\nkind: \xff\xfe\n", "train.sh": b"#!/bin/bash\necho \xc3\x28\n"},
        (
            "job.yaml:2:7: RL900 error: not valid UTF-8 (byte 21); not linted",
            "train.sh:2:7: RL900 error: syntax error near unexpected token '('",
        ),
    ),
    Row(
        "shell-gbk-comment-and-string",
        {
            "gbk.sh": '#!/bin/bash\n# 设置环境变量\necho "完成"\n'.encode("gbk")
            + b"export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 train.py\n",
            "requirements.txt": PINS,  # the release is known: torch_npu_run exists
        },
        ("gbk.sh:4:8: RL101", "gbk.sh:5:1: RL301"),
        ("RL900",),
    ),
    Row(
        "utf16-manifest",
        {"job.yaml": "apiVersion: v1\nkind: Job\n".encode("utf-16")},
        ("job.yaml:1:4: RL900 error: binary file",),  # the first NUL, after the BOM and 'a'
    ),
    Row(
        "control-character",
        {"job.yaml": "apiVersion: v1\nkind: Job\nx: \x07\n"},
        ("job.yaml:1:1: RL900 error: YAML error: unacceptable character #x0007",),
    ),
    Row(
        "helm-template",
        {
            "templates/job.yaml": "apiVersion: v1\nkind: Job\nmetadata:\n  name: {{ .Values.name }}\n{{- if .Values.x }}\n"
        },
        ("templates/job.yaml:4:9: RL903 info: templated manifest",),
        ("RL900",),
    ),
    Row(
        "jinja-template",
        {"job.yaml": "apiVersion: v1\nkind: Job\n{% if gpu %}\nspec: {}\n{% endif %}\n"},
        ("job.yaml:3:1: RL903 info: templated manifest",),
        ("RL900",),
    ),
    Row(
        "empty-and-comment-only-documents",
        {"empty.yaml": "", "comments.yaml": "# only a comment\n---\n# another\n---\n", "blank.yaml": "\n\n"},
        (),
        ("empty.yaml", "comments.yaml", "blank.yaml"),
    ),
    Row(
        "comment-only-document-before-a-job",
        {"job.yaml": "# Source: chart/templates/job.yaml\n---\n# nothing here\n---\n" + VCJOB},
        ("job.yaml:10:", "RL202"),
    ),
    Row(
        "shell-no-parser-accepts",
        {"bad.sh": "#!/bin/bash\nif then ((( \nfi fi esac }}\n"},
        ("bad.sh:2:4: RL900 error: syntax error near unexpected token 'then': no command after 'if'",),
    ),
    Row(
        "shell-template-placeholder",
        # a launch script shipped to be edited: the placeholder is named, not a '>' without a target
        {"run.sh": "#!/bin/bash\nMASTER_ADDR=<master_ip_address>\nOUT=out >\n"},
        (
            "run.sh:2:32: RL900 error: syntax error near unexpected token 'newline': '<master_ip_address>' is a"
            " placeholder to fill in",
        ),
    ),
    Row(
        "shell-crlf",
        {"crlf.sh": "#!/bin/bash\r\nexport A=1\r\n"},
        ("crlf.sh:1:12: RL900 error: CRLF line ending (line 1)",),
    ),
    Row(
        "shell-dangling-continuation",
        # bash accepts a '\' before the end of the file: no parse error, and the launch is still read
        {
            "cont.sh": "#!/bin/bash\ntorchrun --nnodes 2 a.py \\\n",
            "cont2.sh": "#!/bin/bash\ntorchrun --nnodes 2 b.py \\",
            "requirements.txt": PINS,
        },
        ("cont.sh:2:1: RL301", "cont2.sh:2:1: RL301"),
        ("RL900",),
    ),
    Row(
        "shell-deep-nesting",
        {
            "deep.sh": "#!/bin/bash\n" + "$(" * 5000 + "echo" + ")" * 5000 + "\n",
            "deep2.sh": "{ " * 3000 + "x; " + "}; " * 3000,
        },
        (),
        ("Traceback", "internal error", "deep.sh", "deep2.sh"),
    ),
    Row(
        "shell-arithmetic-and-held-command-nesting",  # worked out by recursion: bounded
        {
            "arith.sh": "#!/bin/bash\nN=$((" + "(" * 3000 + "1" + ")" * 3000 + "))\nM=$((" + "-" * 5000 + "1))\n"
            "echo $N $M\n",
            "held.sh": "#!/bin/bash\n" + "".join(f'V{i}="$V{i + 1} x"\n' for i in range(200)) + "srun $V0\n",
        },
        (),
        ("Traceback", "internal error", "arith.sh:", "held.sh:"),
    ),
    Row(
        "shell-astral-character-after-redirect-brace",  # crashed tree-sitter-bash (out-of-bounds read)
        {"emoji.sh": "".join(f"cat <{{{chr(cp)}\n" for cp in range(0x10000, 0x110000, 0x1111))},
        (),
        ("Traceback", "internal error"),
    ),
    Row(
        "python-syntax-error",
        launched("bad.py", "import torch\ndef f(:\n"),
        ("bad.py:2:7: RL900 error: Python syntax error: invalid syntax",),
    ),
    Row(
        "python-newer-grammar",
        launched("new.py", "type Vector = list[float]\n"),
        ("new.py:1:6: RL900 error: Python syntax error: invalid syntax (read with the Python 3.11 grammar)",)
        if NEWER_GRAMMAR
        else (),
        () if NEWER_GRAMMAR else ("new.py",),
    ),
    Row(
        "python-warnings-stay-quiet",  # ast.parse printed the linted file's SyntaxWarnings to stderr
        launched("warn.py", 'x = 1if True else 2\ny = "\\d"\nassert (x, 1)\n'),
        (),
        ("SyntaxWarning", "DeprecationWarning", "warn.py"),
    ),
    Row(
        "python-nesting-beyond-the-parser",
        launched("deep.py", "x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n"),
        ("deep.py:1:", "RL900 error: Python syntax error: too many nested parentheses"),
    ),
    Row(
        "python-null-byte-after-8k",
        launched("nul.py", "x = 1\n" + "#" * 9000 + "\n" + "y = '\x00'\n"),
        ("nul.py:1:1: RL900",),
    ),
    Row(
        "requirements-with-a-megabyte-line",
        {"requirements.txt": "torch==" + "1" * 100_000 + "\n" + "x" * 1_000_000 + "\n"},
        (),
        ("Traceback", "internal error"),
        seconds=15,
    ),
    Row(
        "config-with-wrong-types",
        {".recovery-lint.toml": 'select = "RL101"\nfail-on = 3\n'},
        ("recovery-lint: configuration error:", ".recovery-lint.toml:2: invalid value for 'fail-on'"),
        (GOOD_FINDING, "Traceback"),
        code=2,
        isolated=False,
    ),
    Row(
        "config-nested-thousands-deep",
        {".recovery-lint.toml": "exclude = " + "[" * 3000 + "]" * 3000 + "\n"},
        ("recovery-lint: configuration error:", ".recovery-lint.toml: nested too deeply to read"),
        (GOOD_FINDING, "Traceback", "internal error"),
        code=2,
        isolated=False,
    ),
    Row(
        "config-not-toml",
        {".recovery-lint.toml": "select = [RL101\n"},
        ("recovery-lint: configuration error:", ".recovery-lint.toml:1:11: invalid TOML: invalid value"),
        (GOOD_FINDING, "Traceback"),
        code=2,
        isolated=False,
    ),
]


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_limited(cwd: Path, *args: str, seconds: float) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "recovery_lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        env={**os.environ, "NO_COLOR": "1"},
        preexec_fn=limited,
    )
    return result, time.monotonic() - start


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_hostile_input(row: Row, tmp_path):
    files = {"good.sh": GOOD, **row.files}
    for rel, content in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    # each file named on the command line: checked whatever job it belongs to (most belong to none)
    args = ["--output-format", "concise", *sorted(files)]
    result, elapsed = run_limited(tmp_path, *(["--isolated"] if row.isolated else []), *args, seconds=row.seconds)
    output = result.stdout + result.stderr
    assert result.returncode == row.code, output[-3000:]
    assert elapsed < row.seconds, f"took {elapsed:.1f} s"
    if row.code != 2:
        assert GOOD_FINDING in result.stdout, "the run did not go on with the other files"
    for text in row.expect:
        assert text in output, f"missing {text!r} in:\n{output[-3000:]}"
    for text in row.absent:
        assert text not in output, f"unexpected {text!r} in:\n{output[-3000:]}"
    for line in result.stdout.splitlines():  # every diagnostic is one line, naming its file
        assert len(line) < 400, line[:200]
    assert not list(tmp_path.rglob(f"*{PWNED}*")) and not Path(PWNED).exists()


def test_alias_bomb_is_linear_in_time(tmp_path):
    # 9 levels of 9 aliases name 9**9 (387 million) scalars; only the 90 distinct nodes are walked
    (tmp_path / "job.yaml").write_text(billion_laughs(), "utf-8")
    start = time.monotonic()
    parsed = parse_source(SourceText("job.yaml", billion_laughs()), "manifest")
    result = lint(LintRequest([tmp_path], tmp_path, Config(), list(all_rules().values())))
    assert time.monotonic() - start < 2.0
    assert parsed.model.docs and result.files


def test_a_crash_in_a_parser_costs_one_file(tmp_path, monkeypatch):
    # whatever a parser raises on some input, that file gets an RL900 and the others are linted
    from recovery_lint.sources import python_parse as python_source

    def broken(src):
        raise RuntimeError("parser bug")

    monkeypatch.setattr(python_source, "parse_python", broken)
    (tmp_path / "train.py").write_text("import torch\n", "utf-8")
    (tmp_path / "good.sh").write_text(GOOD, "utf-8")
    result = lint(LintRequest([tmp_path], tmp_path, Config(), list(all_rules().values())))
    messages = [(d.path, d.code, d.message) for d in result.diagnostics]
    assert ("train.py", "RL900", "could not be parsed (RuntimeError: parser bug); not linted") in messages
    assert any(p == "good.sh" and c == "RL101" for p, c, _ in messages)


def test_a_crash_in_linking_one_file_costs_its_jobs_only(tmp_path, monkeypatch, capsys):
    """A defect met while linking one script leaves the other jobs linked and reported; the run ends
    with exit 2 and a line naming the file (as an internal error of a rule does)."""
    from recovery_lint import cli
    from recovery_lint.link import startup

    real = startup.launch_scale

    def broken(*args, **kwargs):
        if "boom" in args[5]:  # the script's name
            raise ZeroDivisionError("integer division or modulo by zero")
        return real(*args, **kwargs)

    monkeypatch.setattr(startup, "launch_scale", broken)
    (tmp_path / "good.sh").write_text(GOOD, "utf-8")
    (tmp_path / "boom.sh").write_text(GOOD, "utf-8")
    (tmp_path / "train.py").write_text("import torch\nimport torch_npu\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    code = cli.main(["check", "--isolated", "--no-cache", "--output-format", "concise", "."])
    out, err = capsys.readouterr()
    assert GOOD_FINDING in out
    assert "boom.sh:3:8: RL101" not in out
    assert "internal error: linking boom.sh failed (ZeroDivisionError: integer division or modulo by zero)" in err
    assert code == 2


def test_a_crash_in_linking_an_entrys_modules_costs_that_job_only(tmp_path, monkeypatch, capsys):
    from recovery_lint import cli
    from recovery_lint.link.linker import Linker

    real = Linker.setting_modules

    def broken(self, entry):
        if "boom" in entry.source.path:
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, entry)

    monkeypatch.setattr(Linker, "setting_modules", broken)
    (tmp_path / "good.sh").write_text(GOOD, "utf-8")
    (tmp_path / "boom.sh").write_text(GOOD.replace("train.py", "boom_train.py"), "utf-8")
    for entry in ("train.py", "boom_train.py"):
        (tmp_path / entry).write_text("import torch\nimport torch_npu\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    code = cli.main(["check", "--isolated", "--no-cache", "--output-format", "concise", "."])
    out, err = capsys.readouterr()
    assert GOOD_FINDING in out and "boom.sh" not in out
    assert "internal error: linking boom.sh (standalone) failed (RecursionError" in err
    assert code == 2
