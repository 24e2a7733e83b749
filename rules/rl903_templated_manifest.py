"""RL903: A Helm/Jinja/Go-templated manifest was skipped."""

from __future__ import annotations

from recovery_lint.diagnostics import Severity
from recovery_lint.rule import Case, ParseIssueRule, examples


class TemplatedManifest(ParseIssueRule):
    code = "RL903"
    issue_kind = "template"
    name = "templated-manifest"
    phase = "meta"
    severity = Severity.INFO
    premises = ("training-file",)
    summary = "A Helm/Jinja/Go-templated manifest was skipped"
    what = """
A training manifest that contains template markers (`{{ ... }}`, `{% ... %}`) and is therefore
not valid YAML as written: its text declares a Volcano Job, an AscendJob or a PyTorchJob, and
neither its folder nor its name says inference, serving, CI or vendored code (or it is named on
the command line). It is skipped so that the run neither reports template syntax as an error nor
guesses at the rendered values. A Helm chart of infrastructure (an admission webhook, a
Deployment, the scheduler's own installer) is not a training manifest and gets no notice.
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
                title="a Jinja template of a training job",
                files={"job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec:\n  maxRetry: {{ n }}\n"},
                expect=("job.yaml:4",),
            ),
            Case(
                title="a Helm chart of infrastructure (an admission webhook's Deployment) is no training manifest",
                files={
                    "charts/webhook/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\n"
                    "metadata:\n  name: {{ .Release.Name }}-webhook\n",
                },
            ),
            Case(
                title="braces inside a plain manifest string",
                files={"job.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: '{\"status\": 1}'\n"},
            ),
        )
    )
