"""The job model: each training job with its manifest, the launches its containers run (the scripts
in execution order, the launch commands and the environment each sees), its Python entries, the
versions that apply and what the job is (platform, framework, recovery level). ``link/`` builds it;
the rules read it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .launchers.advice import parallel_store_advice
from .launchers.scale import Scale
from .launchers.table import BY_NAME, Launcher
from .roles import TRAINING, Verdict
from .sources.versions import PinFile, VersionPin
from .span import Span

if TYPE_CHECKING:
    from .diagnostics import Diagnostic
    from .parse import ParsedFile
    from .sources.manifest import Container, ManifestDoc, PodSpec
    from .sources.python import PyImport, PythonFile
    from .sources.shell import Assignment, Command, ShellScript, Word


@dataclass(slots=True)
class EnvValue:
    """One variable as the training process would see it, and where that came from."""

    name: str
    value: str | None  # None when dynamic (valueFrom, an expansion)
    origin: str  # operator | container | inline | script | argument
    span: Span | None
    exported: bool = True
    assignment: Assignment | None = None  # the shell assignment, for edits
    container: Container | None = None
    expanded: str | None = None  # the value with the variables known at that point substituted
    template: str | None = None  # the value as written, quotes removed, when it holds expansions

    @property
    def known(self) -> str | None:
        return self.value if self.value is not None else self.expanded

    @property
    def conditional(self) -> bool:
        """Set only when a condition holds (an ``if`` branch, after ``&&``)."""
        return self.assignment is not None and self.assignment.conditional


@dataclass(eq=False, repr=False)
class LaunchCommand:
    """One command that starts the training processes: the launcher, its words and its scale."""

    command: Command
    script: ShellScript  # where the command is written (a file, or a manifest's inline text)
    launcher: str  # torchrun | torch.distributed.run | torch.distributed.launch | torch_npu_run | python | …
    launcher_words: tuple[int, int]  # word index range of cmd.words forming the launcher ("python -m torch...")
    entry: Word | None
    entry_file: PythonFile | None
    # the environment the ranks see: exported at this command, prefix assignments included (Ray actors:
    # what `ray start` had in the script, else nothing of it)
    env: dict[str, EnvValue]
    in_manifest: bool = False
    exact: bool = True  # False when the command came out of a variable: its words do not map onto the text
    words: list[Word] = field(default_factory=list)  # the command as run: wrappers stripped, variables split
    scale: Scale | None = None
    verdict: Verdict | None = None
    entry_note: str = ""  # why the entry file is not known
    entry_path: str | None = None  # the entry's display path, also when it could not be read
    row: Launcher | None = None  # the launcher's row of launchers.table (by ``launcher`` when not given)
    subcommand: str | None = None  # the launcher's subcommand (swift sft)
    env_note: str = ""  # where the environment the ranks see comes from, when it is not this shell's
    # False when the ranks see variables the repository does not show (Ray actors of a cluster started
    # elsewhere, a runtime environment not in the repository): neither a variable's absence nor its
    # value is known then
    env_complete: bool = True
    # ``source`` commands before the launch whose scripts could not be read: any variable may be set
    unread_sources: tuple[EnvValue, ...] = ()

    def __post_init__(self) -> None:
        if self.row is None:
            self.row = BY_NAME[self.launcher]

    @property
    def entry_index(self) -> int | None:
        """Where the entry is among ``words`` (the launcher's own options come before it)."""
        if self.entry is None:
            return None
        return next((k for k, w in enumerate(self.words) if w.span == self.entry.span), None)

    @property
    def is_torch_launcher(self) -> bool:
        """A launch whose ranks a torchrun-style agent starts (torchrun, torch_npu_run, a framework's)."""
        return self.row.torch  # type: ignore[union-attr]

    @property
    def is_distributed(self) -> bool:
        return self.row.distributed  # type: ignore[union-attr]

    @property
    def parallel_store_form(self) -> tuple[str | None, str]:
        """What would put this launch on the Parallel Store, or None and why nothing can (see
        launchers.advice)."""
        after = self.launcher_words[1] - self.launcher_words[0]
        arguments = [w.value for w in self.words[after:]]
        return parallel_store_advice(self.row, self.subcommand, arguments, self.env)  # type: ignore[arg-type]

    @property
    def judged(self) -> bool:
        return self.verdict is None or self.verdict.judged

    def may_set(self, name: str) -> bool:
        """Whether the ranks may see ``name``: it is set, or a script sourced before the launch could
        not be read. False means certainly unset."""
        return name in self.env or bool(self.unread_sources)


@dataclass(eq=False, repr=False)
class Launch:
    """What one container (or one standalone script) runs at start-up."""

    pod: PodSpec | None
    container: Container | None
    scripts: list[ShellScript] = field(default_factory=list)  # in execution order
    commands: list[LaunchCommand] = field(default_factory=list)
    env: dict[str, EnvValue] = field(default_factory=dict)  # at the end of the start-up
    inline: ShellScript | None = None
    note: str = ""  # why the start-up links nothing, where the manifest shows it
    unread_sources: tuple[EnvValue, ...] = ()  # sources the start-up could not read (see LaunchCommand)

    def may_set(self, name: str) -> bool:
        """Whether the environment at the end of the start-up may hold ``name`` (see LaunchCommand)."""
        return name in self.env or bool(self.unread_sources)

    def launch_may_set(self, name: str) -> bool:
        """The same, for the environment ``launch_env`` gives."""
        cmd = self.training_command
        return cmd.may_set(name) if cmd is not None else self.may_set(name)

    @property
    def training_command(self) -> LaunchCommand | None:
        """The (first) training launcher of the start-up."""
        return next((c for c in self.commands if c.judged and (c.is_torch_launcher or c.launcher == "python")), None)

    @property
    def launch_env(self) -> dict[str, EnvValue]:
        """The environment of the (first) training launcher, else of the end of start-up."""
        cmd = self.training_command
        return cmd.env if cmd is not None else self.env

    @property
    def torch_commands(self) -> list[LaunchCommand]:
        return [c for c in self.commands if c.is_torch_launcher and c.judged]


@dataclass(eq=False, repr=False)
class Versions:
    """The component versions a job runs, each from a pin, the configuration or a documented table."""

    pins: dict[str, VersionPin] = field(default_factory=dict)
    configured: dict[str, str] = field(default_factory=dict)
    conflicts: dict[str, str] = field(default_factory=dict)  # component -> why no single version is known
    # component -> the versions the repository supports, one of which the job runs (a README's table)
    choices: dict[str, tuple[VersionPin, ...]] = field(default_factory=dict)
    # pin files near the job that declare a GPU stack, not read for it: path -> what says so
    set_aside: dict[str, str] = field(default_factory=dict)

    def alternatives(self, component: str) -> tuple[str, ...]:
        """The versions the job may run: the known one, else those the repository lists as supported."""
        known = self.get(component)
        if known is not None:
            return (known,)
        return tuple(dict.fromkeys(pin.version for pin in self.choices.get(component, ())))

    def alternatives_origin(self, component: str) -> str | None:
        found = self.choices.get(component)
        if not found:
            return None
        return ", ".join(dict.fromkeys(f"{p.span.path}:{p.span.line}" for p in found))

    def get(self, component: str) -> str | None:
        pin = self.pins.get(component)
        if pin is not None and pin.exact:
            return pin.version
        return self.configured.get(component)

    def span(self, component: str) -> Span | None:
        pin = self.pins.get(component)
        return pin.span if pin is not None and pin.exact else None

    def origin(self, component: str) -> str | None:
        """Where the version was read: ``docker/Dockerfile:3``, or the configuration."""
        pin = self.pins.get(component)
        if pin is not None and pin.exact:
            return f"{pin.span.path}:{pin.span.line}"
        if component in self.configured:
            return "the configuration"
        return None

    def describe(self, component: str) -> str:
        """``torch 2.1.0 (requirements.txt:1)``, or why it is unknown."""
        value = self.get(component)
        if value is not None:
            return f"{component} {value} ({self.origin(component)})"
        listed = self.alternatives(component)
        if listed:
            return f"{component} {' or '.join(listed)} ({self.alternatives_origin(component)})"
        if component in self.conflicts:
            return f"the {component} version is unknown ({self.conflicts[component]})"
        return f"the {component} version is not declared"


@dataclass(eq=False, repr=False)
class JobContext:
    """What is known about where a job runs: platform, framework, recovery level and versions."""

    platform: str | None  # ascend-910 | ascend-910b | ascend-npu | None (unknown)
    framework: str | None  # pytorch | mindspore | tensorflow | None
    recovery: str | None  # none | job | pod | process | None (unknown: no manifest, a Deployment)
    versions: Versions
    notes: list[tuple[Span, str]] = field(default_factory=list)  # context a rule may cite (ignored labels…)
    settings: dict[str, str] = field(default_factory=dict)  # cluster settings from the configuration

    @property
    def pytorch(self) -> bool:
        """True unless the job is known to run another framework."""
        return self.framework in (None, "pytorch")


@dataclass(eq=False, repr=False)
class Job:
    """One training job: its manifest (if any), its launches and the files they reach."""

    id: str
    manifest: ManifestDoc | None
    manifest_file: ParsedFile | None
    launches: list[Launch]
    entries: list[PythonFile]
    context: JobContext
    pin_files: list[PinFile] = field(default_factory=list)
    verdict: Verdict = field(default_factory=lambda: Verdict(TRAINING, ""))
    # entry path -> the repository modules it imports that configure the training process (see
    # PROCESS_SETTINGS); read for the settings only, they are not files of the job
    entry_modules: dict[str, list[PythonFile]] = field(default_factory=dict)
    # entry path -> how an entry that does not import torch_npu itself loads it: its import that leads
    # there and the repository modules on the way (the last one imports torch_npu or MindSpeed)
    npu_routes: dict[str, tuple[PyImport, tuple[str, ...]]] = field(default_factory=dict)
    # whether those routes were looked for: only for a job something else shows runs on NPUs
    npu_routes_followed: bool = False
    # premise name -> its answer for this job, decided when a rule first asks (see premises.py)
    premise_answers: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def judged(self) -> bool:
        return self.verdict.judged

    @property
    def scripts(self) -> list[ShellScript]:
        seen: dict[int, ShellScript] = {}
        for launch in self.launches:
            for s in ([launch.inline] if launch.inline else []) + launch.scripts:
                seen.setdefault(id(s), s)
        return list(seen.values())

    @property
    def files(self) -> list[str]:
        paths = [self.manifest.path] if self.manifest else []
        paths += [s.source.path for s in self.scripts if s.source.path not in paths]
        paths += [e.source.path for e in self.entries if e.source.path not in paths]
        return paths


@dataclass(eq=False, repr=False)
class Project:
    """The linked repository: every parsed file, the training jobs, and the jobs set aside."""

    files: list[ParsedFile]  # every parsed file (Python files only when something reached them)
    jobs: list[Job]  # the jobs recovery advice applies to (training)
    by_path: dict[str, ParsedFile]
    skipped: list[Job] = field(default_factory=list)  # jobs that are not training, with their verdict
    judgements: Mapping[str, Verdict] = field(default_factory=dict)  # every candidate file: judged or not, and why
    named: frozenset[str] = frozenset()  # display paths named on the command line: checked whatever their role
    # in the view a rule with premises sees (engine): the training jobs where one of them does not hold
    premise_skipped: list[Job] = field(default_factory=list)
    sharing: object = None  # Sharing: the other scripts that name a file (asked before a fix imports into it)
    # entry path -> the ids of every job (training or not) whose launch runs it: the same in every view
    entry_runs: Mapping[str, frozenset[str]] = field(default_factory=dict)
    link_errors: list[str] = field(default_factory=list)  # files whose linking failed: internal errors of the run

    def run_by_others(self, path: str) -> bool:
        """Whether a job this view's advice is not for (not training, or a premise not holding) runs
        the entry ``path``."""
        mine = self._job_ids()
        return any(job_id not in mine for job_id in self.entry_runs.get(path, ()))

    def _job_ids(self) -> frozenset[str]:
        ids = self.__dict__.get("_ids")
        if ids is None:
            ids = self.__dict__["_ids"] = frozenset(job.id for job in self.jobs)
        return ids


def linked_files(project: Project) -> set[str]:
    """Paths of the files some manifest's job runs (its manifest, scripts and entries)."""
    return {path for job in project.jobs if job.manifest is not None for path in job.files}


def judged_in(job: Job, diagnostic: Diagnostic, linked: set[str]) -> bool:
    """A file linked into a manifest's job is judged in that job's context only: a standalone job
    that shares it (a local script sourcing the same env file) does not report on it."""
    return job.manifest is not None or diagnostic.span.path not in linked
