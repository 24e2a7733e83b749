"""RL904: A script written for another shell (zsh, fish, csh, tcsh) was skipped."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.rule import Case, ParseIssueRule, examples


class NonBashScript(ParseIssueRule):
    code = "RL904"
    issue_kind = "other-shell"
    name = "non-bash-script"
    phase = "meta"
    severity = Severity.INFO
    premises = ("training-file",)
    summary = "A script written for another shell (zsh, fish, csh, tcsh) was skipped"
    what = """
A launch script whose `#!` line names zsh, fish, csh or tcsh (`#!/usr/bin/env zsh`, `#!/bin/zsh`,
`#!/usr/bin/fish`, `#!/bin/csh`): one its text shows starting a distributed launcher (`torchrun`,
`python -m torch.distributed.launch`, `deepspeed`, …), or one named on the command line. Its syntax is not bash's, so it is neither parsed as bash nor
reported as a bash syntax error; nothing in it (launches, exported variables) is checked.
`#!/bin/sh`, `dash` and `ksh` scripts are read as bash.
"""
    why = """
A launch script that the linter cannot read can miss every recovery-time optimization without a
finding. The notice keeps that gap visible; where the script is plain POSIX shell, a `#!/bin/bash`
(or `#!/bin/sh`) line lets it be checked.
"""
    example = """
```bash
#!/usr/bin/env zsh          # RL904: not checked
setopt extendedglob
torchrun --nnodes 2 --nproc_per_node 8 pretrain.py
```
"""
    fix = "No fix."
    sources = ("The `#!` line (execve(2)); zsh, fish and csh syntax differ from bash's",)
    cases = examples(
        lambda: (
            Case(
                title="a zsh launch script",
                files={
                    "run.sh": "#!/usr/bin/env zsh\nsetopt extendedglob\ntorchrun --nnodes 2 --nproc_per_node 8 pretrain.py\n"
                },
                expect=("run.sh:1:1",),
            ),
            Case(
                title="zsh, fish and csh by path",
                files={
                    "a.sh": "#!/bin/zsh\ntorchrun --nnodes 2 a.py\n",
                    "b.sh": "#!/usr/bin/fish\nset -x A 1\ndeepspeed b.py\n",
                    "c.sh": "#!/bin/csh -f\nsetenv A 1\npython -m torch.distributed.launch c.py\n",
                },
                expect=("a.sh:1:1", "b.sh:1:1", "c.sh:1:1"),
            ),
            Case(
                title="a zsh helper that launches no training is none of this tool's business",
                files={"tools/prompt.sh": "#!/usr/bin/env zsh\necho ${(%):-%N}\n"},
            ),
            Case(
                title="sh, dash and bash scripts are checked",
                files={"a.sh": "#!/bin/sh\necho a\n", "b.sh": "#!/usr/bin/env bash\necho b\n", "c.sh": "#!/bin/dash\n"},
            ),
        )
    )
