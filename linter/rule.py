"""The rule contract: a rule declares itself (code, name, phase, severity, documentation,
examples) and yields diagnostics from the job and file models. It never opens a file."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .diagnostics import Diagnostic, Fix, Related, Severity
from .premises import PREMISES, Withheld
from .span import Span

if TYPE_CHECKING:
    from typing import ClassVar

    from .jobs import Job, Project
    from .parse import ParsedFile

PHASES = ("detection", "rescheduling", "comm-init", "checkpoint", "compile", "versions", "meta")
PHASE_TITLES = {
    "detection": "Fault detection",
    "rescheduling": "Rescheduling",
    "comm-init": "Communication setup",
    "checkpoint": "Rollback and checkpoint load",
    "compile": "Operator compilation",
    "versions": "Versions",
    "meta": "Meta",
}


@dataclass(eq=False)
class Case:
    """An example a rule must get right: a small repository, where it must fire, and the fixed text.

    ``expect`` lists ``path:line`` (or ``path:line:column``) positions; empty means the rule must
    stay silent. ``fixed`` maps paths to their full expected text after ``--fix`` (with
    ``--unsafe-fixes`` when ``unsafe``). Only this rule runs, plus ``with_rules``.
    """

    files: dict[str, str]
    expect: tuple[str, ...] = ()
    fixed: dict[str, str] | None = None
    unsafe: bool = False
    title: str = ""
    config: dict[str, object] = field(default_factory=dict)
    with_rules: tuple[str, ...] = ()  # other rule codes to run alongside (e.g. for suppression rules)
    # premises the run must name as unknown for this rule (its advice withheld, not guessed)
    withheld: tuple[str, ...] = ()


class examples:
    """A rule's ``cases``, built the first time they are read: a lint run never reads them (the
    rule's tests do, through ``recovery_lint.testing``), so a run never pays for building them.

    Used as ``cases = examples(lambda: (Case(...), ...))``; the built tuple then replaces the
    descriptor on the class, so ``rule.cases`` is a plain tuple from there on."""

    def __init__(self, build: Callable[[], Iterable[Case]]) -> None:
        self.build = build
        self.name = "cases"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type) -> tuple[Case, ...]:
        built = tuple(self.build())
        setattr(owner, self.name, built)
        return built


HOOKS = ("project", "file", "job", "directives")  # a rule's check_<hook> methods
MISSING, MISCONFIGURED = "missing", "misconfigured"  # what a finding means on the scorecard


@dataclass(eq=False)
class WorstCase:
    """How long a fault can go unnoticed, as the scorecard shows it for a phase."""

    text: str
    seconds: int | None  # None when the bound is not a number (never, or not known statically)
    setting: str
    origin: str  # "job" (the job sets it) | "default" (documented default)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    phase: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # one line, used as the SARIF short description
    what: ClassVar[str]
    why: ClassVar[str]
    example: ClassVar[str]
    fix: ClassVar[str]  # what --fix does and how safe it is ("No fix." when none)
    sources: ClassVar[tuple[str, ...]]
    fix_availability: ClassVar[str] = "none"  # always | sometimes | none
    # per premise, what would have to hold for advice withheld on it ("the torch_npu release ships
    # torch_npu_run ..."); the premise's own question where a rule says nothing more precise
    holds_if: ClassVar[tuple[tuple[str, str], ...]] = ()
    cases: ClassVar[tuple[Case, ...]] = ()  # a rule gives them as ``examples(lambda: (Case(...), ...))``
    # what the advice takes for granted (names in premises.PREMISES): the engine runs the rule for a
    # job only where every one is held, and counts the jobs where one is unknown; a project check sees
    # the jobs where they hold, and is not run when there is none (nor one where one is unknown)
    premises: ClassVar[tuple[str, ...]] = ()
    # premises only some of its findings need (the rule asks them itself): named with the declared ones
    # when those are unknown, so that one run lists every key that would turn the advice on
    also_asks: ClassVar[tuple[str, ...]] = ()
    # what a finding of the rule means for its phase on the scorecard: the optimization is not in
    # use (MISSING), or it is configured wrongly or where it cannot work (MISCONFIGURED)
    scorecard: ClassVar[str] = MISSING
    # a finding that says the file was not checked at all (it could not be parsed): reported whatever
    # the selection, unless the rule itself is ignored (as ruff reports syntax errors), and a tool
    # notification in SARIF
    file_not_checked: ClassVar[bool] = False
    # False for a rule that judges the suppression directives themselves: no directive silences it
    suppressible: ClassVar[bool] = True

    # the hooks the rule overrides (project, file, job, directives), set for each rule class: the
    # engine runs these only, and the rule index records them so that a run knows them unimported;
    # check_directives(state) sees the run's suppression directives, and runs only where there is one;
    # "issues" is the file hook of a ParseIssueRule, run on the files holding one of its issues
    hooks: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.hooks = frozenset(
            hook for hook in HOOKS if getattr(cls, f"check_{hook}", None) is not getattr(Rule, f"check_{hook}", None)
        )

    # -- hooks: override one or more -----------------------------------------------------------
    def check_job(self, job: Job) -> Iterable[Diagnostic]:
        return ()

    def check_file(self, parsed: ParsedFile) -> Iterable[Diagnostic]:
        return ()

    def check_project(self, project: Project) -> Iterable[Diagnostic]:
        return ()

    # -- what the scorecard shows --------------------------------------------------------------
    @classmethod
    def phase_status(cls, job: Job) -> tuple[str, str] | None:
        """For the rule that owns its phase: the phase's status when no rule has a finding in it
        (optimized, not applicable or unknown) and what shows it; None for any other rule."""
        return None

    @classmethod
    def worst_case(cls, job: Job) -> WorstCase | None:
        """How long a fault can go unnoticed when the rule's finding is there (or the phase is unknown)."""
        return None

    # -- helpers ------------------------------------------------------------------------------
    def report(
        self,
        span: Span,
        message: str,
        fix: Fix | None = None,
        related: Iterable[tuple[Span, str]] = (),
        severity: Severity | None = None,
    ) -> Diagnostic:
        return Diagnostic(
            code=self.code,
            name=self.name,
            message=message,
            severity=severity or self.severity,
            span=span,
            fix=fix,
            related=tuple(Related(s, m) for s, m in related if s is not None),
        )

    def withhold(self, job: Job, premise: str, evidence: str, at: Span | None = None) -> Withheld:
        """Advice not given because ``premise`` is unknown for ``job`` (yielded like a finding), placed
        at ``at``, else at the job's training launch or its manifest."""
        from .premises import PREMISES, answer, holds_if, job_anchor

        # the premise's own answer may say no key settles it (a declared version outside the tables)
        key = answer(job, premise).key if premise in PREMISES else ""
        withheld = Withheld(self.code, job.id, premise, evidence, key, condition=holds_if(self, premise))
        return withheld.at(at or job_anchor(job))

    @classmethod
    def documentation(cls, level: int = 1) -> str:
        """The rule's page, in Markdown, under fixed headings (``level`` of the title heading)."""
        sources = "\n".join(f"- {s}" for s in cls.sources)
        h = "#" * level
        return (
            f"{h} {cls.code} `{cls.name}`\n\n"
            f"Phase: {PHASE_TITLES[cls.phase]}. Default severity: {cls.severity.value}. "
            f"Fix: {cls.fix_availability}.\n\n"
            f"{h}# What it checks\n{cls.what.strip()}\n\n"
            f"{cls.premise_text()}"
            f"{h}# Why it costs recovery time\n{cls.why.strip()}\n\n"
            f"{h}# Example\n{cls.example.strip()}\n\n"
            f"{h}# Fix and its safety\n{cls.fix.strip()}\n\n"
            f"{h}# Sources\n{sources}\n"
        )

    @classmethod
    def premise_text(cls) -> str:
        """The premises, as the documentation lists them ('' for a rule that declares none)."""
        if not cls.premises:
            return ""
        lines = [
            f"- {PREMISES[name].question} (`{name}`; where unknown, declare `{PREMISES[name].key}`)"
            for name in cls.premises
        ]
        text = "Reported only where the evidence establishes that:\n" + "\n".join(lines) + "\n\n"
        if cls.also_asks:
            more = [f"- {PREMISES[name].question} (`{name}`; `{PREMISES[name].key}`)" for name in cls.also_asks]
            text += "Some of its findings also need that:\n" + "\n".join(more) + "\n\n"
        return text


class ParseIssueRule(Rule):
    """A rule that reports what a parser found in a file: the file's issues of the rule's
    ``issue_kind`` (``parse.UNREADABLE``, ``TEMPLATE`` or ``OTHER_SHELL``). The run gives it only the
    files that hold such an issue, so a run whose files parse cleanly never loads it."""

    issue_kind: ClassVar[str]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.hooks = (cls.hooks - {"file"}) | {"issues"}  # its check_file sees the files holding its issues

    def check_file(self, parsed: ParsedFile) -> Iterable[Diagnostic]:
        for issue in parsed.issues:
            if issue.kind == self.issue_kind:
                yield self.report(issue.span, issue.message)
