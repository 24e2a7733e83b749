"""The recovery scorecard: per linked job, where each of the five recovery phases stands.

A phase's status comes from the rules: a finding makes it *missing* or *misconfigured*, as the
rule declares (``Rule.scorecard``); with no finding, the rule that owns the phase tells whether the
job visibly uses its optimization, whether the phase does not apply to the job, or that it is
unknown (``Rule.phase_status``), and the worst case of a phase where it has one
(``Rule.worst_case``). This module renders what they say."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, Severity
from ..jobs import Job, Project
from ..registry import all_rules
from ..rule import PHASE_TITLES, WorstCase

PHASES = ("detection", "rescheduling", "comm-init", "checkpoint", "compile")
STATUSES = ("optimized", "missing", "misconfigured", "not applicable", "unknown")

MISSING, MISCONFIGURED = "missing", "misconfigured"


def rule_phase(code: str) -> tuple[str, str] | None:
    """The scorecard phase of a rule and what its finding means there (``Rule.scorecard``); None for
    rules outside the five phases (versions, meta)."""
    rule = all_rules().get(code)
    if rule is not None and rule.phase in PHASES:
        return rule.phase, rule.scorecard
    return None


def phase_status(job: Job, phase: str) -> tuple[str, str]:
    """How a phase looks with no finding in it, as the rule that owns the phase tells it."""
    for rule in all_rules().values():
        if rule.phase == phase:
            found = rule.phase_status(job)
            if found is not None:
                return found
    return "unknown", "no rule tells this phase"


def worst_case(job: Job, phase: str, codes: list[str], status: str) -> WorstCase | None:
    """The worst case a phase's owner gives for the job, when one of its findings is there or the
    phase is unknown."""
    for rule in all_rules().values():
        if rule.phase == phase and (rule.code in codes or status == "unknown"):
            found = rule.worst_case(job)
            if found is not None:
                return found
    return None


# -- the model ------------------------------------------------------------------------------------
@dataclass(eq=False, repr=False)
class PhaseScore:
    """One recovery phase of one job on the scorecard: its status and the findings behind it."""

    phase: str
    status: str
    detail: str
    findings: list[Diagnostic] = field(default_factory=list)
    worst_case: WorstCase | None = None

    @property
    def title(self) -> str:
        return PHASE_TITLES[self.phase]

    @property
    def codes(self) -> list[str]:
        return sorted({d.code for d in self.findings})


@dataclass(eq=False, repr=False)
class JobCard:
    """The scorecard of one job: its phases and its other findings."""

    job: Job
    phases: list[PhaseScore]
    other: list[Diagnostic]  # findings of the job outside the five phases (versions, parse errors, ...)

    @property
    def standalone(self) -> bool:
        return self.job.manifest is None


# -- deciding --------------------------------------------------------------------------------------
def findings_of(job: Job, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The findings reported for ``job``: those the rules attached to it, and file-level findings
    in its files (in its own document, for a manifest)."""
    files = set(job.files) | {p.source.path for p in job.pin_files}
    out = []
    for d in diagnostics:
        if d.job is not None:
            if job.manifest is not None and d.job == job.id:
                out.append(d)
            continue
        if d.path not in files:
            continue
        if job.manifest is not None and d.path == job.manifest.path:
            doc = job.manifest.span
            if not (doc.start <= d.span.start <= doc.end):
                continue
        out.append(d)
    return out


def shown(job: Job, findings: list[Diagnostic]) -> bool:
    """Manifest jobs always; a standalone job when it launches PyTorch training, is a PyTorch main
    program, or has findings (a helper module is not a job of its own)."""
    if job.manifest is not None or findings or any(launch.torch_commands for launch in job.launches):
        return True
    return any(e.has_main_guard and e.imports_module("torch", "torch_npu") for e in job.entries)


def build(project: Project, diagnostics: list[Diagnostic], only_files: set[str] | None = None) -> list[JobCard]:
    """Cards for the jobs of the project; with ``only_files`` (the files passed in file mode), for the
    jobs those files belong to. ``diagnostics`` must be every finding of the jobs, not only those
    reported for the passed files, or a phase would look optimized because its finding was left out."""
    cards = []
    for job in project.jobs:
        if only_files is not None and not (set(job.files) | {p.source.path for p in job.pin_files}) & only_files:
            continue
        mine = findings_of(job, diagnostics)
        if not shown(job, mine):
            continue
        by_phase: dict[str, list[Diagnostic]] = {p: [] for p in PHASES}
        other = []
        for d in mine:
            where = rule_phase(d.code)
            if where is None:
                other.append(d)
            else:
                by_phase[where[0]].append(d)
        cards.append(JobCard(job, [score_phase(job, p, by_phase[p]) for p in PHASES], other))
    return cards


def usefulness(card: JobCard) -> tuple[object, ...]:
    """How a card sorts in a text scorecard, most useful first: a job a manifest runs before a
    standalone one, more phases misconfigured then missing, more findings, fewer phases unknown; then
    by the job's id, so that equal cards keep one order."""
    statuses = [p.status for p in card.phases]
    findings = sum(len(p.findings) for p in card.phases) + len(card.other)
    return (
        card.standalone,
        -statuses.count(MISCONFIGURED),
        -statuses.count(MISSING),
        -findings,
        statuses.count("unknown"),
        card.job.id,
    )


def score_phase(job: Job, phase: str, findings: list[Diagnostic]) -> PhaseScore:
    advice = _advice_only(job, phase, findings)
    if advice is not None:
        return advice
    if findings:
        kinds = {(rule_phase(d.code) or (phase, MISSING))[1] for d in findings}
        status = MISCONFIGURED if MISCONFIGURED in kinds else MISSING
        detail = ", ".join(dict.fromkeys(d.name for d in findings))
        score = PhaseScore(phase, status, detail, list(findings))
    else:
        status, detail = phase_status(job, phase)
        score = PhaseScore(phase, status, detail)
    score.worst_case = worst_case(job, phase, score.codes, score.status)
    return score


def _advice_only(job: Job, phase: str, findings: list[Diagnostic]) -> PhaseScore | None:
    """Info-level findings are advice (RL310: RankTable mode would be faster still): they do not
    make a phase missing when the job visibly uses its optimization (torch_npu_run's Parallel Store)."""
    if not findings or any(d.severity is not Severity.INFO for d in findings):
        return None
    status, detail = phase_status(job, phase)
    return PhaseScore(phase, status, detail, list(findings)) if status == "optimized" else None


# -- JSON --------------------------------------------------------------------------------------------
def _finding_json(d: Diagnostic) -> dict[str, object]:
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "path": d.path,
        "line": d.span.line,
        "column": d.span.column,
        "message": d.message,
    }


def context_json(job: Job) -> dict[str, object]:
    ctx = job.context
    versions = {c: ctx.versions.get(c) for c in ("torch", "torch-npu", "cann", "mindcluster", "mindio")}
    return {
        "platform": ctx.platform,
        "framework": ctx.framework,
        "recovery": ctx.recovery,
        "versions": {k: v for k, v in versions.items() if v},
    }


def as_json(cards: list[JobCard]) -> dict[str, object]:
    from .. import __version__

    jobs = []
    for card in cards:
        jobs.append(
            {
                "job": card.job.id,
                "manifest": card.job.manifest.path if card.job.manifest else None,
                "standalone": card.standalone,
                "files": card.job.files,
                "context": context_json(card.job),
                "phases": [
                    {
                        "phase": p.phase,
                        "title": p.title,
                        "status": p.status,
                        "detail": p.detail,
                        "codes": p.codes,
                        "findings": [_finding_json(d) for d in p.findings],
                        "worst_case": (
                            {
                                "text": p.worst_case.text,
                                "seconds": p.worst_case.seconds,
                                "setting": p.worst_case.setting,
                                "origin": p.worst_case.origin,
                            }
                            if p.worst_case
                            else None
                        ),
                    }
                    for p in card.phases
                ],
                "other_findings": [_finding_json(d) for d in card.other],
            }
        )
    return {"scorecard_version": 1, "tool": {"name": "recovery-lint", "version": __version__}, "jobs": jobs}


def render_json(cards: list[JobCard]) -> str:
    import json

    from ..span import printable

    return printable(json.dumps(as_json(cards), indent=2, ensure_ascii=False)) + "\n"


# -- text ----------------------------------------------------------------------------------------------
STATUS_STYLES = {
    "optimized": "bold green",
    "missing": "bold yellow",
    "misconfigured": "bold red",
    "not applicable": "dim",
    "unknown": "cyan",
}
COLUMNS = ("Phase", "Status", "Worst case", "Findings / evidence")


def _context_line(job: Job) -> str:
    ctx = context_json(job)
    versions = ", ".join(f"{k} {v}" for k, v in ctx["versions"].items()) or "unknown"  # type: ignore[union-attr]
    return (
        f"platform {ctx['platform'] or 'unknown'}; framework {ctx['framework'] or 'unknown'}; "
        f"recovery {ctx['recovery'] or 'unknown'}; versions: {versions}"
    )


def _details(p: PhaseScore) -> str:
    if p.findings and p.status == "optimized":  # advice only (see _advice_only)
        return f"{p.detail}; advice: " + ", ".join(f"{d.code} {d.name}" for d in _unique_codes(p.findings))
    if p.findings:
        names = {d.code: d.name for d in p.findings}
        return ", ".join(f"{code} {names[code]}" for code in p.codes)
    return p.detail


def _unique_codes(findings: list[Diagnostic]) -> list[Diagnostic]:
    return list({d.code: d for d in sorted(findings, key=lambda d: d.code)}.values())


def _rows(card: JobCard) -> list[tuple[str, str, str, str]]:
    return [(p.title, p.status, p.worst_case.text if p.worst_case else "-", _details(p)) for p in card.phases]


def _other_line(card: JobCard) -> str | None:
    if not card.other:
        return None
    codes = sorted({d.code for d in card.other})
    return f"Other findings of this job: {' '.join(codes)}"


def render_plain(cards: list[JobCard]) -> str:
    """For a CI log: no colour, no box drawing, one line per phase, columns aligned with spaces."""
    out: list[str] = []
    for card in cards:
        out.append(f"Recovery scorecard: {card.job.id}")
        out.append(f"  {_context_line(card.job)}")
        rows = [COLUMNS, *_rows(card)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS) - 1)]
        for row in rows:
            cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
            out.append(("  " + "  ".join(cells) + "  " + row[-1]).rstrip())
        other = _other_line(card)
        if other:
            out.append(f"  {other}")
        out.append("")
    if not cards:
        out += ["Recovery scorecard: no jobs found", ""]
    return "\n".join(out) + "\n"


def render_rich(console, cards: list[JobCard]) -> None:
    """For a terminal: one table per job, statuses in colour (when the console has colour)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if not cards:
        console.print("Recovery scorecard: no jobs found")
        return
    for card in cards:
        table = Table(
            title=Text(f"Recovery scorecard: {card.job.id}", style="bold"),
            caption=_context_line(card.job),
            box=box.SIMPLE_HEAD,
            title_justify="left",
            caption_justify="left",
            expand=False,
        )
        table.add_column("Phase", no_wrap=True)
        table.add_column("Status", no_wrap=True)
        table.add_column("Worst case")
        table.add_column("Findings / evidence", overflow="fold")
        for title, status, worst, details in _rows(card):
            table.add_row(title, Text(status, style=STATUS_STYLES[status]), worst, details)
        console.print(table)
        other = _other_line(card)
        if other:
            console.print(Text(f"  {other}", style="dim"))
        console.print()


def render_text(cards: list[JobCard], *, terminal: bool, color: bool, width: int = 100) -> str:
    if not terminal:
        return render_plain(cards)
    import io

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False)
    render_rich(console, cards)
    return buffer.getvalue()
