from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.parse import ParsedFile
from recovery_lint.rule import Case, Rule, examples


class TemplatedManifest(Rule):
    code = "RL903"
    name = "templated-manifest"
    phase = "meta"
    severity = Severity.INFO
    summary = "A Helm/Jinja/Go-templated manifest was skipped"
    what = """
A Kubernetes manifest that contains template markers (`{{ ... }}`, `{% ... %}`) and is therefore
not valid YAML as written. It is skipped so that the run neither reports template syntax as an
error nor guesses at the rendered values.
"""
    why = """
A manifest that is rendered at deploy time can miss every recovery-time optimization without the
linter seeing it. The finding keeps the gap visible; lint the rendered output (for example the
result of `helm template`) to check it.
"""
    example = """
```yaml
spec:
  maxRetry: {{ max_retry }}    # RL903: the file is not checked
```
"""
    fix = "No fix."
    sources = ("Helm and Jinja template syntax",)
    cases = examples(
        lambda: (
            Case(
                title="a Jinja template",
                files={"job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec:\n  maxRetry: {{ n }}\n"},
                expect=("job.yaml:4",),
            ),
            Case(
                title="braces inside a plain manifest string",
                files={"job.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: '{\"status\": 1}'\n"},
            ),
        )
    )

    def check_file(self, parsed: ParsedFile):
        for issue in parsed.issues:
            if issue.code == self.code:
                yield self.report(issue.span, issue.message)
