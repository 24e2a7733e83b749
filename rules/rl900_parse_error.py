"""RL900: A manifest, launch script or Python file could not be parsed."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.rule import Case, ParseIssueRule, examples


class ParseError(ParseIssueRule):
    code = "RL900"
    issue_kind = "unreadable"
    file_not_checked = True
    name = "parse-error"
    phase = "meta"
    severity = Severity.ERROR
    premises = ("training-file",)
    summary = "A manifest, launch script or Python file could not be parsed"
    what = """
A file of a training job that could not be read or parsed: YAML syntax errors and duplicate keys,
shell syntax errors, CRLF line endings in a shell script, Python syntax errors, invalid UTF-8 in a
manifest or in a Python file without a coding line that declares another encoding (PEP 263:
`# coding: gbk` is read as GBK), binary content, and files over the size limit.

Only the files of a training job are judged (its manifest, the scripts its containers run, the
Python entries it launches) and the files named on the command line: a broken helper script, a
model config or an infrastructure chart is not this tool's to report. A file that could not be
read at all counts when its text says what a training job's file says (a Volcano Job, an AscendJob
or a PyTorchJob; a distributed launcher) and neither its folder nor its name says otherwise.

A shell script is a syntax error exactly when bash rejects it (`bash -n`): one finding, where bash
stops, naming the problem (an unclosed quote, an `if` without `fi`, a `done` without a loop, ...);
the rest of the script is still linted. What bash accepts is not reported, even where other
parsers stumble: a `\\` at the end of the file, `$((16#ff))`, `for i do`, `[ "$a" \\< "$b" ]`.
Bytes that are not UTF-8 (a GBK comment) are fine in a shell script, as they are to bash. CRLF
line endings are one finding per file: `bash -n` often passes them, but every command then ends in
a carriage return. A script for another shell is RL904, not a parse error. Python files are read
(and so judged) when a launch or a manifest reaches them, or when they are named on the command line.
"""
    why = """
What the linter cannot read it cannot check, and the same mistake usually stops the cluster from
running the file: a launch script with CRLF endings fails in bash, a broken manifest is rejected.
Reporting it keeps a silent gap out of the CI gate.
"""
    example = """
```yaml
metadata:
  labels: {fault-scheduling: grace    # RL900: the flow mapping is never closed
```
"""
    fix = "No fix. The message gives the parser's location and reason."
    sources = (
        "YAML 1.1 (PyYAML), the bash grammar (what `bash -n` accepts), the Python grammar of the running interpreter",
    )
    cases = examples(
        lambda: (
            Case(
                title="a YAML syntax error in a training manifest",
                files={"job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: [x\n"},
                expect=("job.yaml:4",),
            ),
            Case(
                title="a launch script with a syntax error still gives the rest",
                files={"train.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\nif then fi (\n"},
                expect=("train.sh:2",),
            ),
            Case(
                title="one finding, where bash stops: a 'done' without a loop",
                files={"train.sh": "for i in 1 2; do\n  torchrun --nnodes 2 train.py\ndone\ndone\n"},
                expect=("train.sh:4:1",),
            ),
            Case(
                title="CRLF line endings in a training launch script",
                files={
                    "test/train_full_8p.sh": "#!/bin/bash\r\npython3 -m torch.distributed.launch --nproc_per_node 8 "
                    "../train.py --epochs 90\r\n",
                    "train.py": "import torch\n",
                },
                expect=("test/train_full_8p.sh:1",),
            ),
            Case(
                title="a script no training job runs is not this tool's to judge: a CRLF docker helper, a broken "
                "YAML that is no training manifest",
                files={
                    "docker_start.sh": "#!/bin/bash\r\ndocker run -it image bash\r\n",
                    "config.yaml": "model: {layers: [1, 2\n",
                    "chart/webhook.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: [x\n",
                },
            ),
            Case(
                title="what bash accepts is no parse error",
                files={
                    "a.sh": 'for i do torchrun --nnodes 2 t.py; done\necho $((16#ff))\n[ "$a" \\< "$b" ] && echo lt\n',
                    "b.sh": "torchrun --nnodes 2 train.py \\",
                },
            ),
            Case(
                title="a Python syntax error in an entry a launch script runs",
                files={"train.sh": "torchrun --nproc_per_node 8 train.py\n", "train.py": "import torch\ndef f(:\n"},
                expect=("train.py:2",),
            ),
            Case(title="valid files", files={"train.sh": "echo ok\n", "train.py": "x = 1\n"}),
        )
    )
