"""The recovery scorecard: per linked job, where each of the five recovery phases stands.

A phase's status comes from the findings the rules reported for the job, read through the table
below (which phase a rule belongs to, and whether its finding means the optimization is *missing*
or *misconfigured*), and from the job's context (framework, recovery level, platform) and what the
job visibly configures. Nothing here decides that something is wrong: with no finding a phase is
``optimized`` only when the optimization can be seen, ``not applicable`` when the context rules
the phase out, and ``unknown`` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, Severity
from ..jobs import EnvValue, Job, Project
from ..rule import PHASE_TITLES

PHASES = ("detection", "rescheduling", "comm-init", "checkpoint", "compile")
STATUSES = ("optimized", "missing", "misconfigured", "not applicable", "unknown")

MISSING, MISCONFIGURED = "missing", "misconfigured"
# rule -> (phase, what its finding means). "missing": the optimization is not in use;
# "misconfigured": it is configured, but wrongly or where it cannot work.
RULE_PHASES: dict[str, tuple[str, str]] = {
    "RL101": ("detection", MISSING),  # watchdog off
    "RL102": ("detection", MISCONFIGURED),  # watchdog on under process-level recovery
    "RL103": ("detection", MISSING),  # RESUME_MODE_ENABLE not set
    "RL104": ("detection", MISCONFIGURED),  # a watchdog value the release refuses at start-up
    "RL105": ("detection", MISCONFIGURED),  # watchdog on beside hot switch or operator-level retry
    "RL201": ("rescheduling", MISSING),  # no resumable training
    "RL202": ("rescheduling", MISSING),  # Job-level instead of Pod-level rescheduling
    "RL203": ("rescheduling", MISCONFIGURED),  # policies still restart the whole job
    "RL204": ("rescheduling", MISCONFIGURED),  # ConfigMap rank table with Pod-level rescheduling
    "RL205": ("rescheduling", MISCONFIGURED),  # a label value the scheduler rejects or ignores
    "RL206": ("rescheduling", MISCONFIGURED),  # fault-retry-times with a restarting policy
    "RL207": ("rescheduling", MISCONFIGURED),  # high-availability arguments MindSpeed-LLM refuses at start
    "RL208": ("rescheduling", MISCONFIGURED),  # process-level recovery without POD_IP, taskd-port, retries, grace
    "RL209": ("rescheduling", MISCONFIGURED),  # a rescheduling budget the job does not set as such
    "RL210": ("rescheduling", MISCONFIGURED),  # dying-gasp checkpoint or grace period that cannot work
    "RL212": ("rescheduling", MISCONFIGURED),  # a setting that cancels a recovery feature
    "RL301": ("comm-init", MISSING),  # torchrun instead of torch_npu_run
    "RL302": ("comm-init", MISCONFIGURED),  # torch_npu_run with versions that cannot run it
    "RL303": ("comm-init", MISSING),  # CANN too old for HCCL link optimization
    "RL310": ("comm-init", MISSING),  # RankTable mode unused
    "RL311": ("comm-init", MISCONFIGURED),
    "RL312": ("comm-init", MISCONFIGURED),
    "RL313": ("comm-init", MISCONFIGURED),
    "RL314": ("comm-init", MISCONFIGURED),
    "RL315": ("comm-init", MISCONFIGURED),
    "RL316": ("comm-init", MISCONFIGURED),  # host network without HCCL_IF_IP
    "RL317": ("comm-init", MISCONFIGURED),  # RankTable mode with a connect timeout below 300 s
    "RL401": ("checkpoint", MISSING),  # blocking torch.save
    "RL402": ("checkpoint", MISSING),  # torch.load from storage
    "RL403": ("checkpoint", MISCONFIGURED),  # MindIO too old
    "RL501": ("compile", MISSING),  # online operator compilation
    "RL502": ("compile", MISCONFIGURED),  # binary operators and compile cache together
}
FRAMEWORK_NAMES = {"mindspore": "MindSpore", "tensorflow": "TensorFlow", "pytorch": "PyTorch"}
# findings that mean the watchdog is off, so a fault is only noticed when HCCL_EXEC_TIMEOUT runs out
WATCHDOG_OFF_RULES = frozenset({"RL101"})
PYTORCH_ONLY = frozenset({"detection", "comm-init", "checkpoint", "compile"})


def rule_phase(code: str) -> tuple[str, str] | None:
    """The scorecard phase of a rule and the meaning of its finding; None for rules outside the
    five phases (versions, meta)."""
    if code in RULE_PHASES:
        return RULE_PHASES[code]
    from ..registry import all_rules

    rule = all_rules().get(code)
    if rule is not None and rule.phase in PHASES:
        return rule.phase, MISSING
    return None


# -- the model ------------------------------------------------------------------------------------
@dataclass
class WorstCase:
    text: str
    seconds: int | None  # None when the bound is not a number (never, or not known statically)
    setting: str
    origin: str  # "job" (the job sets it) | "default" (documented default)


@dataclass
class PhaseScore:
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


@dataclass
class JobCard:
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
    if job.manifest is not None or findings or _torch_launches(job):
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
    elif phase in PYTORCH_ONLY and not job.context.pytorch:
        framework = FRAMEWORK_NAMES.get(job.context.framework or "", job.context.framework)
        score = PhaseScore(phase, "not applicable", f"{framework} job: the optimizations are PyTorch's")
    else:
        status, detail = EVIDENCE[phase](job)
        score = PhaseScore(phase, status, detail)
    if phase == "detection" and (set(score.codes) & WATCHDOG_OFF_RULES or score.status == "unknown"):
        score.worst_case = detection_worst_case(job)
    return score


def _advice_only(job: Job, phase: str, findings: list[Diagnostic]) -> PhaseScore | None:
    """Info-level findings are advice (RL310: RankTable mode would be faster still): they do not
    make a phase missing when the job visibly uses its optimization (torch_npu_run's Parallel Store)."""
    if not findings or any(d.severity is not Severity.INFO for d in findings):
        return None
    if phase in PYTORCH_ONLY and not job.context.pytorch:
        return None
    status, detail = EVIDENCE[phase](job)
    return PhaseScore(phase, status, detail, list(findings)) if status == "optimized" else None


def _torch_launches(job: Job):
    return [launch for launch in job.launches if launch.torch_commands]


def _env_values(job: Job, *names: str) -> list[EnvValue | None]:
    """Per PyTorch launch, the first of ``names`` set in its launch environment."""
    out = []
    for launch in _torch_launches(job):
        env = launch.launch_env
        out.append(next((env[n] for n in names if n in env), None))
    return out


def _detection(job: Job) -> tuple[str, str]:
    ctx = job.context
    if ctx.recovery == "process":
        return "optimized", "process-level recovery (the watchdog stays off, as it requires)"
    from ..knowledge import WATCHDOG_VAR, npu_facts, watchdog_facts, watchdog_value
    from ..premises import release_facts

    values = _env_values(job, WATCHDOG_VAR)
    if not values:
        return "unknown", "no PyTorch launch command linked"
    found, basis = release_facts(job)
    facts = watchdog_facts(found if found is not None else npu_facts(None, None))
    if facts.thread is not True:  # a release without a watchdog thread is on by no value
        return "unknown", "no watchdog thread is known to start with the declared versions"
    if all(
        v is not None and v.known is not None and watchdog_value(v.known) != 0 and facts.accepts(v.known) is not False
        for v in values
    ):
        return "optimized", f"watchdog on ({values[0].name}={values[0].known})"
    if all(v is None for v in values) and facts.default == 1:  # the default follows the torch_npu release
        return "optimized", f"watchdog on by default: {basis}"
    return "unknown", "watchdog setting not visible"


def _rescheduling(job: Job) -> tuple[str, str]:
    recovery = job.context.recovery
    if job.manifest is None:
        return "unknown", "no manifest links this job"
    if recovery == "pod":
        return "optimized", "Pod-level rescheduling"
    if recovery == "process":
        return "optimized", "process-level recovery"
    if recovery == "job":
        return "unknown", "Job-level rescheduling, no finding reported"
    return "unknown", "no resumable training label, no finding reported"


def _comm_init(job: Job) -> tuple[str, str]:
    launches = _torch_launches(job)
    if not launches:
        return "unknown", "no PyTorch launch command linked"
    ways = []
    for launch in launches:
        if all(c.launcher == "torch_npu_run" for c in launch.torch_commands):
            ways.append("Parallel Store (torch_npu_run)")
        elif "RANK_TABLE_FILE" in launch.launch_env:
            ways.append("RankTable mode")
        else:
            return "unknown", "rendezvous method not visible"
    return "optimized", ", ".join(dict.fromkeys(ways))


def _checkpoint(job: Job) -> tuple[str, str]:
    if not job.entries:
        return "unknown", "no Python entry linked"
    from ..premises import answer

    for name in ("without-mindio-tft", "mindio-acp-stack"):
        found = answer(job, name)
        if found.status == "failed":
            return "not applicable", f"MindIO ACP does not apply: {found.evidence}"
    if any(e.imports_module("mindio_acp") for e in job.entries):
        return "optimized", "MindIO ACP"
    patched = _env_values(job, "MINDIO_AUTO_PATCH_MEGATRON")
    if patched and all(v is not None and (v.value or "").lower() == "true" for v in patched):
        return "optimized", "MindIO ACP (MINDIO_AUTO_PATCH_MEGATRON)"
    return "unknown", "MindIO ACP not visible"


def _compile(job: Job) -> tuple[str, str]:
    from ..premises import answer

    cann = answer(job, "binary-operators")
    if cann.status == "failed":
        return "not applicable", f"no operator binaries: {cann.evidence}"
    calls = [c for e in job.entries for c in e.calls_to("set_compile_mode")]
    jit = [c.keywords["jit_compile"].value for c in calls if "jit_compile" in c.keywords]
    if jit and all(v is False for v in jit):
        return "optimized", "binary operators (set_compile_mode(jit_compile=False))"
    cache = _env_values(job, "ASCEND_CACHE_PATH")
    if jit and all(v is True for v in jit) and cache and all(v is not None for v in cache):
        return "optimized", "operator compile cache (ASCEND_CACHE_PATH)"
    if not jit:
        from ..knowledge import jit_compile_default

        platform = job.context.platform
        if platform and jit_compile_default(platform) is False:
            return "optimized", f"binary operators are the default on {platform}"
    return "unknown", "compile mode not visible"


EVIDENCE: dict[str, Callable[[Job], tuple[str, str]]] = {
    "detection": _detection,
    "rescheduling": _rescheduling,
    "comm-init": _comm_init,
    "checkpoint": _checkpoint,
    "compile": _compile,
}


def detection_worst_case(job: Job) -> WorstCase:
    """Without the watchdog a fault is noticed when HCCL_EXEC_TIMEOUT runs out: the job's own
    value where its launch environment sets one, else the documented default."""
    from ..knowledge import documented_default

    name = "HCCL_EXEC_TIMEOUT"
    for value in _env_values(job, name):
        if value is None:
            continue
        if value.value is None:
            return WorstCase(f"{name} (set dynamically)", None, name, "job")
        try:
            seconds = int(value.value.strip().strip("\"'"))
        except ValueError:
            return WorstCase(f"{name}={value.value}", None, name, "job")
        if seconds == 0:
            return WorstCase(f"never times out ({name}=0)", None, name, "job")
        return WorstCase(f"{seconds} s ({name} set by the job)", seconds, name, "job")
    default = documented_default(name)
    seconds = int(default) if isinstance(default, (int, float)) else None
    return WorstCase(f"{seconds} s ({name} default)", seconds, name, "default")


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
