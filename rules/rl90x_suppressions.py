"""The suppression rules: RL901 (a directive that suppressed nothing) and RL902 (a malformed
directive, or one naming an unknown code)."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.edits import edit
from recovery_lint.registry import rule_codes
from recovery_lint.rule import Case, Rule, examples
from recovery_lint.suppress import removal_edit


class UnusedSuppression(Rule):
    code = "RL901"
    suppressible = False
    name = "unused-suppression"
    phase = "meta"
    severity = Severity.WARNING
    fix_availability = "always"
    summary = "A suppression comment suppressed nothing"
    what = """
A `# recovery-lint: ignore[...]` or `ignore-file[...]` directive naming a code that reported
nothing on the line (or file) it covers. Codes of rules that are not selected in the run are not
judged.
"""
    why = """
A stale suppression hides the next real mistake on that line: when the job is edited again and
the optimization is lost, nobody is told. Removing directives once their finding is fixed keeps
suppressions honest.
"""
    example = """
```bash
torch_npu_run train.py  # recovery-lint: ignore[RL301] -- RL901: nothing to suppress any more
```
"""
    fix = """
Safe: removes the unused codes from the directive, or the whole directive (with its reason) when
none is used; the rest of the comment and of the line is kept, and a line that held only the
directive is removed.
"""
    sources = ("recovery-lint suppression syntax",)
    cases = examples(
        lambda: (
            Case(
                title="a directive on a clean line",
                files={"train.sh": "torch_npu_run train.py  # recovery-lint: ignore[RL301] -- legacy\n"},
                expect=("train.sh:1",),
                fixed={"train.sh": "torch_npu_run train.py\n"},
                with_rules=("RL301",),
            ),
            Case(
                title="a used directive",
                files={
                    "train.sh": "torchrun --nnodes 2 train.py  # recovery-lint: ignore[RL301] -- legacy\n",
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
                },
                with_rules=("RL301", "RL101"),
            ),
        )
    )

    def check_directives(self, state):
        for path, directives in state.directives.items():
            src = state.sources.get(path)
            if src is None:
                continue
            for directive in directives:
                unused = {
                    c for c, _ in directive.codes if c not in directive.used and c in state.selected and c != self.code
                }
                if not unused:
                    continue
                start, end, text = removal_edit(src, directive, unused)
                codes = ", ".join(sorted(unused))
                yield self.report(
                    directive.span,
                    f"unused suppression of {codes}",
                    safe_fix(f"Remove the unused suppression of {codes}", edit(src, start, end, text)),
                )


class InvalidSuppression(Rule):
    code = "RL902"
    suppressible = False
    name = "invalid-suppression"
    phase = "meta"
    severity = Severity.ERROR
    summary = "A malformed suppression directive, or one naming an unknown code"
    what = """
A `# recovery-lint:` comment that is not a valid directive: an unknown directive word, no
bracketed code list, a code that is not `RL` and three digits, a code no rule has, or text after
the codes that is not a `-- reason`.
"""
    why = """
A directive that does not parse suppresses nothing, so the finding it was meant to silence still
fails the gate, or, worse, the author believes a deliberate exception is recorded when it is not.
"""
    example = """
```yaml
fault-scheduling: "off"   # recovery-lint: ignore RL201   <- RL902: no brackets
```
"""
    fix = "No fix: say which code is meant."
    sources = ("recovery-lint suppression syntax",)
    cases = examples(
        lambda: (
            Case(
                title="no brackets",
                files={"train.sh": "echo hi  # recovery-lint: ignore RL301\n"},
                expect=("train.sh:1",),
            ),
            Case(
                title="a well-formed directive with a reason",
                files={"train.sh": "echo hi  # recovery-lint: ignore[RL301] -- reviewed\n"},
            ),
            Case(
                title="an unknown code",
                files={"train.sh": "echo hi  # recovery-lint: ignore[RL999]\n"},
                expect=("train.sh:1",),
            ),
        )
    )

    def check_directives(self, state):
        known = rule_codes()
        for _path, problems in state.problems.items():
            for problem in problems:
                yield self.report(problem.span, problem.message)
        for _path, directives in state.directives.items():
            for directive in directives:
                for code, span in directive.codes:
                    if code not in known:
                        yield self.report(span, f"unknown rule code {code} in suppression")
