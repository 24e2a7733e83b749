"""Link parsed artifacts into jobs, the way the cluster runs them, and decide which are training.

A job is one manifest document with the launch scripts its containers run, the scripts those
source or call, the Python entries the launcher starts, and the versions that apply. A launch
script that no manifest runs is a job of its own when it starts a training; a Python file that no
launch reaches is one only when it is plainly a runnable training entry. For every container the
launch environment is computed in execution order: operator-injected variables, container ``env``,
inline ``bash -c`` exports, then script exports (``source`` shares the shell, ``bash x.sh``
inherits a copy).

Python files are parsed when a launch or a manifest reaches them (``FileIndex`` asks its loader);
every other file costs nothing here. Each job carries a :class:`~recovery_lint.roles.Verdict`
saying whether recovery advice applies and why; rules only see the jobs that are training.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .knowledge import WATCHDOG_VAR
from .launch import (
    DISTRIBUTED_LAUNCHERS,
    PYTHON,
    TORCH_LAUNCHERS,
    Scale,
    classify_launcher,
    entry_word,
    expand,
    expand_command,
    launch_scale,
    module_path,
    split_arguments,
    unwrap,
    word_value,
)
from .lazyre import LazyPattern
from .parse import PIN_KINDS, SHELL_KINDS, ParsedFile
from .paths import depth, folder_and_ancestors, join, under
from .roles import (
    TRAINING,
    LaunchFacts,
    Verdict,
    ci_path,
    launch_verdict,
    manifest_verdict,
    standalone_entry_verdict,
    standalone_name,
    starting_script_verdict,
    tokens,
    vendored,
)
from .sources.manifest import Container, ManifestDoc, ManifestFile, PodSpec, scalar_script
from .sources.shell import INLINE_SHELLS, SHELLS, Assignment, Command, ShellScript, Word, shell_invocation
from .sources.versions import COMPONENTS, PinFile, VersionPin, pins_in_words
from .sources.yamlnodes import YScalar
from .span import Span

# a path's characters: word characters of any script (a Chinese file name), the bytes of a name that
# is not UTF-8 (kept as U+DC80..U+DCFF), and . + @ % ~ = -; shell syntax ($, quotes, ;) ends it
_NAME = r"[\w.+@%~=\udc80-\udcff-]+"
SCRIPT_PATH = LazyPattern(rf"({_NAME}(?:/{_NAME})*\.(?:sh|bash|py))$")  # what script_path_at_end finds
_NAME_PUNCTUATION = frozenset(".+@%~=-")
PROCESS_RECOVERY_STRATEGIES = {"retry", "recover", "recover-in-place", "elastic-training", "dump", "exit"}
# folders beside a job's folders (or the repository root) that declare the versions of the whole tree
DECLARATION_FOLDERS = ("docker", "dockerfiles", "ci", "build", "env", "install", "requirements", "image", "images")
MAX_DEPTH = 8

if TYPE_CHECKING:
    from .diagnostics import Diagnostic
    from .sources.python import PythonFile


def _python_model(model: object) -> bool:
    """Whether a parsed file's model is a Python file's (the Python model's module is loaded by a
    run that reaches one: a run over manifests and scripts alone never needs it)."""
    from .sources.python import PythonFile

    return isinstance(model, PythonFile)


def script_path_at_end(text: str) -> str | None:
    """The script or Python file path ``text`` ends with (``SCRIPT_PATH.search``'s group, found by a
    scan from the end: compiling the pattern's Unicode classes was a hundredth of a one-manifest run)."""
    end = len(text) - 1 if text.endswith("\n") else len(text)  # where '$' matches
    body = text[:end]
    suffix = next((s for s in (".sh", ".bash", ".py") if body.endswith(s)), None)
    if suffix is None or len(body) == len(suffix) or not _name_char(body[-len(suffix) - 1]):
        return None
    start = len(body) - len(suffix) - 1  # a name character: the leftmost so far
    at = start - 1
    while at >= 0:
        char = body[at]
        if _name_char(char):
            start = at
        elif char != "/" or body[at + 1] == "/":
            break  # a '/' joins two names; anything else ends the path
        at -= 1
    return body[start:]


def _name_char(char: str) -> bool:
    return char.isalnum() or char == "_" or char in _NAME_PUNCTUATION or "\udc80" <= char <= "\udcff"


# -- the model ---------------------------------------------------------------------------------
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


@dataclass
class LaunchCommand:
    command: Command
    script: ShellScript  # where the command is written (a file, or a manifest's inline text)
    launcher: str  # torchrun | torch.distributed.run | torch.distributed.launch | torch_npu_run | python | …
    launcher_words: tuple[int, int]  # word index range of cmd.words forming the launcher ("python -m torch...")
    entry: Word | None
    entry_file: PythonFile | None
    env: dict[str, EnvValue]  # exported environment at this command, prefix assignments included
    in_manifest: bool = False
    exact: bool = True  # False when the command came out of a variable: its words do not map onto the text
    words: list[Word] = field(default_factory=list)  # the command as run: wrappers stripped, variables split
    scale: Scale | None = None
    verdict: Verdict | None = None
    entry_note: str = ""  # why the entry file is not known
    entry_path: str | None = None  # the entry's display path, also when it could not be read

    @property
    def is_torch_launcher(self) -> bool:
        return self.launcher in TORCH_LAUNCHERS

    @property
    def is_distributed(self) -> bool:
        return self.launcher in DISTRIBUTED_LAUNCHERS

    @property
    def judged(self) -> bool:
        return self.verdict is None or self.verdict.judged


@dataclass
class Launch:
    """What one container (or one standalone script) runs at start-up."""

    pod: PodSpec | None
    container: Container | None
    scripts: list[ShellScript] = field(default_factory=list)  # in execution order
    commands: list[LaunchCommand] = field(default_factory=list)
    env: dict[str, EnvValue] = field(default_factory=dict)  # at the end of the start-up
    inline: ShellScript | None = None
    note: str = ""  # why the start-up links nothing, where the manifest shows it

    @property
    def launch_env(self) -> dict[str, EnvValue]:
        """The environment of the (first) training launcher, else of the end of start-up."""
        for cmd in self.commands:
            if cmd.judged and (cmd.is_torch_launcher or cmd.launcher == "python"):
                return cmd.env
        return self.env

    @property
    def torch_commands(self) -> list[LaunchCommand]:
        return [c for c in self.commands if c.is_torch_launcher and c.judged]


@dataclass
class Versions:
    pins: dict[str, VersionPin] = field(default_factory=dict)
    configured: dict[str, str] = field(default_factory=dict)
    conflicts: dict[str, str] = field(default_factory=dict)  # component -> why no single version is known
    # component -> the versions the repository supports, one of which the job runs (a README's table)
    choices: dict[str, tuple[VersionPin, ...]] = field(default_factory=dict)

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


@dataclass
class JobContext:
    platform: str | None  # ascend-910 | ascend-910b | ascend-npu | None (unknown)
    framework: str | None  # pytorch | mindspore | tensorflow | None
    recovery: str | None  # none | job | pod | process | None (unknown: no manifest)
    versions: Versions
    notes: list[tuple[Span, str]] = field(default_factory=list)  # context a rule may cite (ignored labels…)
    settings: dict[str, str] = field(default_factory=dict)  # cluster settings from the configuration

    @property
    def pytorch(self) -> bool:
        """True unless the job is known to run another framework."""
        return self.framework in (None, "pytorch")


@dataclass
class Job:
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


@dataclass
class Project:
    files: list[ParsedFile]  # every parsed file (Python files only when something reached them)
    jobs: list[Job]  # the jobs recovery advice applies to (training)
    by_path: dict[str, ParsedFile]
    skipped: list[Job] = field(default_factory=list)  # jobs that are not training, with their verdict
    judgements: Mapping[str, Verdict] = field(default_factory=dict)  # every candidate file: judged or not, and why
    named: frozenset[str] = frozenset()  # display paths named on the command line: checked whatever their role
    # in the view a rule with premises sees (engine): the training jobs where one of them does not hold
    premise_skipped: list[Job] = field(default_factory=list)
    sharing: object = None  # Sharing: the other scripts that name a file (asked before a fix imports into it)


def linked_files(project: Project) -> set[str]:
    """Paths of the files some manifest's job runs (its manifest, scripts and entries)."""
    return {path for job in project.jobs if job.manifest is not None for path in job.files}


def judged_in(job: Job, diagnostic: Diagnostic, linked: set[str]) -> bool:
    """A file linked into a manifest's job is judged in that job's context only: a standalone job
    that shares it (a local script sourcing the same env file) does not report on it."""
    return job.manifest is not None or diagnostic.span.path not in linked


@dataclass
class JobSpec:
    """An explicit link from config: ``[[tool.recovery-lint.jobs]]``."""

    manifest: str
    scripts: list[str] = field(default_factory=list)
    entry: str | None = None


# -- file index --------------------------------------------------------------------------------
Loader = Callable[[str], "ParsedFile | None"]


class FileIndex:
    """The repository's files by path. Parsed files are there from the start; the others (Python)
    are parsed by ``loader`` the first time a link asks for them.

    References are resolved on absolute locations, so a file is found the same way whatever folder
    the run started in (its display path may be ``../job.yaml`` or ``scripts/train.sh``).
    """

    def __init__(
        self,
        files: list[ParsedFile],
        pending: dict[str, str] | None = None,
        loader: Loader | None = None,
        locations: dict[str, str] | None = None,
    ):
        self.by_path = {f.path: f for f in files}
        self.pending = dict(pending or {})  # path -> kind, not parsed yet
        self.loader = loader
        self.loaded: list[ParsedFile] = []
        where = locations or {}
        location = {p: where.get(p, p) for p in self.by_path}  # display path -> absolute
        location.update({p: where.get(p, p) for p in self.pending})
        # discovery's locations are normal already: the few others are made so (one pass, no call each)
        odd = [p for p, at in location.items() if "/." in at or "//" in at or not at.startswith("/")]
        for p in odd:
            location[p] = posixpath.normpath(location[p])
        self.location = location
        self.display = {loc: p for p, loc in self.location.items()}
        self._resolved: dict[tuple[str, str, str, str | None], ParsedFile | None] = {}

    @functools.cached_property
    def folders(self) -> set[str]:
        """Every folder holding a file, and their ancestors (only a container path asks)."""
        folders: set[str] = set()
        for location in self.display:
            folder = posixpath.dirname(location)
            while folder not in folders:
                folders.add(folder)
                if folder in ("", "/", "."):
                    break
                folder = posixpath.dirname(folder)
        return folders

    def exists(self, path: str) -> bool:
        return path in self.by_path or path in self.pending

    def may_contain(self, path: str, needles: tuple[bytes, ...]) -> bool:
        """Whether a file not parsed yet can hold one of ``needles`` (a byte scan, cheaper than a
        parse); True for a parsed file, or when there is no way to scan."""
        return self._scan("contains", path, needles)

    def holds(self, path: str, needles: tuple[bytes, ...]) -> bool:
        """Like ``may_contain``, in a run over named files too: for what a linked file's own meaning
        depends on (a setting its imports make), which must not change with the files named."""
        return self._scan("holds", path, needles)

    def _scan(self, how: str, path: str, needles: tuple[bytes, ...]) -> bool:
        scan = getattr(self.loader, how, None)
        if path not in self.pending or scan is None:
            return True
        return scan(path, needles)

    def kinds(self) -> dict[str, str]:
        """Every file's kind, parsed or not."""
        out = {p: f.kind for p, f in self.by_path.items()}
        out.update(self.pending)
        return out

    def open_kinds(self) -> dict[str, str]:
        """The kinds of the files this run may look into: a run over named files looks only where
        links reach, so the files it has not parsed stay closed."""
        if getattr(self.loader, "named", False):
            return {p: f.kind for p, f in self.by_path.items()}
        return self.kinds()

    def get(self, path: str, kind: str | None = None) -> ParsedFile | None:
        found = self.by_path.get(path)
        if found is None and path in self.pending and self.loader is not None:
            pending = self.pending[path]
            if kind is not None and pending != kind and not (pending == "maybe-shell" and kind == "shell"):
                return None
            del self.pending[path]
            found = self.loader(path)  # None: not readable after all (a FIFO, a link out of the tree)
            if found is not None:
                self.by_path[path] = found
                self.loaded.append(found)
        if found is None or (kind is not None and found.kind != kind):
            return None
        return found

    def _at(self, location: str, kind: str) -> ParsedFile | None:
        path = self.display.get(location)
        return self.get(path, kind) if path is not None else None

    def folder_of(self, path: str) -> str:
        """The absolute folder of a display path."""
        return posixpath.dirname(self.location.get(path, path))

    def map_folder(self, written: str, near: str) -> str | None:
        """A folder as a container names it (``/job/code/scripts``) as a repository folder: the
        longest tail of it below the referring file's folder or one of its ancestors."""
        parts = [p for p in posixpath.normpath(written).split("/") if p not in ("", ".", "..")]
        for k in range(len(parts)):
            tail = "/".join(parts[k:])
            for folder in folder_and_ancestors(self.folder_of(near)):
                candidate = under(folder, tail)
                if candidate in self.folders:
                    return candidate
        return None

    def resolve(self, reference: str, near: str, kind: str, cwd: str | None = None) -> ParsedFile | None:
        """Match a path as written in a script or manifest to a repository file.

        Tried in order: relative to the launch's working directory when known (``cwd``, an absolute
        repository folder), then to the referring file's folder; then the longest tail of the path
        under that folder or one of its ancestors (an absolute container path such as
        ``/job/code/train.py`` maps onto the repository this way). A name is never looked up
        elsewhere in the repository: a file of the same name in another project is not this one.
        """
        key = (reference, self.folder_of(near), kind, cwd)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(reference, near, kind, cwd)
        return self._resolved[key]

    def _resolve(self, reference: str, near: str, kind: str, cwd: str | None) -> ParsedFile | None:
        found = script_path_at_end(reference.strip("\"'"))
        if found is None:
            return None
        ref = posixpath.normpath(found)
        near_dir = self.folder_of(near)
        if not ref.startswith("/"):
            for base in ([cwd] if cwd is not None else []) + [near_dir]:
                direct = self._at(join(base, ref), kind)
                if direct is not None:
                    return direct
        parts = [p for p in ref.split("/") if p not in ("", ".", "..")]
        ancestors = folder_and_ancestors(near_dir)
        for k in range(len(parts)):
            tail = "/".join(parts[k:])
            for folder in ancestors:
                hit = self._at(under(folder, tail), kind)
                if hit is not None:
                    return hit
        return None


# -- linking -----------------------------------------------------------------------------------
def build_project(
    files: list[ParsedFile],
    configured_versions: dict[str, str] | None = None,
    job_specs: list[JobSpec] | None = None,
    pending: dict[str, str] | None = None,
    loader: Loader | None = None,
    locations: dict[str, str] | None = None,
    settings: dict[str, str] | None = None,
    inside: list[str] | None = None,
) -> Project:
    """Link ``files`` into jobs. ``pending`` lists files (path -> kind) not parsed yet; ``loader``
    parses one of them when a link reaches it; ``locations`` gives each display path's absolute
    location (display paths are taken as locations when it is missing). ``inside``: the absolute
    folders of a run over folders of a larger repository, whose files alone are reported."""
    index = FileIndex(files, pending, loader, locations)
    linker = _Linker(index, configured_versions or {}, job_specs or [], settings or {}, inside)
    jobs: list[Job] = []
    for f in files:
        if f.kind == "manifest" and isinstance(f.model, ManifestFile):
            for doc in f.model.docs:
                if doc.pods and any(p.containers for p in doc.pods):
                    jobs.append(linker.manifest_job(f, doc))
    jobs.extend(linker.standalone_jobs(files))
    jobs.extend(linker.standalone_entries())
    for job in jobs:
        if job.judged:
            job.entry_modules = {e.source.path: linker.setting_modules(e) for e in job.entries}
    parsed = files + index.loaded
    return Project(
        parsed,
        [j for j in jobs if j.judged],
        index.by_path,
        [j for j in jobs if not j.judged],
        _Judgements(lambda: linker.judgements(files + index.loaded, jobs)),
        sharing=Sharing(index),
    )


class Sharing:
    """Which shell scripts, other than a job's own, name a file: those in the file's folder and below it
    and in the folder above (where a test or CI script that runs an entry lives), found by a byte scan
    of the scripts not read (CI and test folders are not read for recovery advice). Asked only by a fix
    that would add an unconditional import to the file; pickled with the answers given so far, and a
    question it cannot answer any more counts as shared."""

    def __init__(self, index: FileIndex | None = None) -> None:
        self.index = index
        self.answers: dict[tuple[str, frozenset[str]], list[str]] = {}
        self._folders: dict[str, list[str]] | None = None

    def others(self, path: str, own: frozenset[str]) -> list[str] | None:
        """Scripts naming ``path`` that are not in ``own``; None when this cannot be told."""
        key = (path, own)
        if key in self.answers:
            return self.answers[key]
        if self.index is None:
            return None
        index = self.index
        name = posixpath.basename(path)
        needle = (name.encode("utf-8", "surrogateescape"),)
        folder = index.folder_of(path)
        found = []
        for script in self._near(folder):
            if script in own or script == path:
                continue
            parsed = index.by_path.get(script)
            text_has = name in parsed.text if parsed is not None else index.holds(script, needle)
            if text_has:
                found.append(script)
        self.answers[key] = found
        return found

    def _near(self, folder: str) -> list[str]:
        if self._folders is None:
            assert self.index is not None
            self._folders = {}
            for display, kind in self.index.kinds().items():
                if kind in SHELL_KINDS:
                    self._folders.setdefault(self.index.folder_of(display), []).append(display)
        out: list[str] = list(self._folders.get(posixpath.dirname(folder), ()))
        for where, scripts in self._folders.items():
            if where == folder or where.startswith(folder + "/"):
                out.extend(scripts)
        return out

    def __reduce__(self):
        return (_restore_sharing, (self.answers,))


def _restore_sharing(answers: dict) -> Sharing:
    found = Sharing()
    found.answers = answers
    return found


class _Judgements(Mapping):
    """Every file's judgement, worked out when a report first asks (only --show-jobs does: a
    check over a large repository would otherwise judge tens of thousands of files for nothing)."""

    def __init__(self, make: Callable[[], dict[str, Verdict]]) -> None:
        self._make: Callable[[], dict[str, Verdict]] | None = make
        self._made: dict[str, Verdict] = {}

    def _all(self) -> dict[str, Verdict]:
        if self._make is not None:
            self._made, self._make = self._make(), None
        return self._made

    def __getitem__(self, path: str) -> Verdict:
        return self._all()[path]

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __reduce__(self):  # pickled (a process pool, the cache) as the plain mapping it stands for
        return (dict, (self._all(),))


class _Linker:
    def __init__(
        self,
        index: FileIndex,
        configured: dict[str, str],
        specs: list[JobSpec],
        settings: dict[str, str],
        inside: list[str] | None = None,
    ) -> None:
        self.index = index
        self.inside = inside
        self.settings = settings
        self.configured = configured
        self.specs = specs
        self.reached: set[str] = set()
        self.entry_folders: set[str] = set()  # folders of the Python entries launches run
        # version declaration files by absolute folder (display paths, parsed when a job asks)
        self.pins_by_dir: dict[str, list[str]] = {}
        for path, kind in index.kinds().items():
            if kind in PIN_KINDS:
                self.pins_by_dir.setdefault(index.folder_of(path), []).append(path)
        # the declaration folders holding pins (``docker/``), by the folder they are beside, in the
        # order of DECLARATION_FOLDERS: looked up for every ancestor of every file of every job
        self.pins_beside: dict[str, list[str]] = {}
        for name in DECLARATION_FOLDERS:
            for folder in self.pins_by_dir:
                parent, base = posixpath.split(folder)
                if base == name and under(parent, name) == folder:
                    self.pins_beside.setdefault(parent, []).append(folder)
        self._embedded: dict[tuple[str, int], ShellScript] = {}

    # jobs from manifests
    def manifest_job(self, mf: ParsedFile, doc: ManifestDoc) -> Job:
        spec = self._spec_for(doc)
        launches = [self._container_launch(mf, doc, pod, c, spec) for pod, c in doc.containers()]
        verdict = manifest_verdict(doc.kind, _manifest_words(doc, launches), mf.path)
        if verdict.judged:
            verdict = _utility_verdict(launches) or verdict
        for launch in launches:
            for cmd in launch.commands:
                cmd.verdict = self._manifest_command_verdict(cmd, verdict)
        entries = _unique([c.entry_file for launch in launches for c in launch.commands if c.entry_file and c.judged])
        if spec and spec.entry:
            extra = self.index.resolve(spec.entry, mf.path, "python")
            if extra and _python_model(extra.model) and extra.model not in entries:
                entries.append(extra.model)
        for e in entries:
            self.reached.add(e.source.path)
        paths = [mf.path] + [s.source.path for launch in launches for s in launch.scripts]
        paths += [e.source.path for e in entries]
        versions, pin_files = self._versions(paths, launches, entries)
        context = JobContext(
            _platform(doc), _framework(doc, launches, entries), _recovery(doc), versions, settings=dict(self.settings)
        )
        context.notes.extend(_ignored_recovery_labels(doc))
        if doc.recover_strategy is not None and context.pytorch:
            _inject_operator_env(launches)
        return Job(doc.identity, doc, mf, launches, entries, context, pin_files, verdict)

    @staticmethod
    def _manifest_command_verdict(cmd: LaunchCommand, job: Verdict) -> Verdict:
        if not job.judged:
            return job
        if cmd.launcher == "msrun":
            return Verdict("mindspore", "a MindSpore launch (msrun)")
        return Verdict(TRAINING, f"run by the manifest's training job ({job.reason})")

    def _spec_for(self, doc: ManifestDoc) -> JobSpec | None:
        for spec in self.specs:
            target = spec.manifest.split("#", 1)
            if posixpath.normpath(target[0]) == doc.path and (
                len(target) == 1 or target[1] in (str(doc.index + 1), doc.job_name)
            ):
                return spec
        return None

    def _container_launch(
        self, mf: ParsedFile, doc: ManifestDoc, pod: PodSpec, container: Container, spec: JobSpec | None
    ) -> Launch:
        launch = Launch(pod, container)
        env: dict[str, EnvValue] = {}
        for var in container.env:
            value = var.value.value if var.value is not None and not var.value_from else None
            if var.value is not None and var.value.is_null:
                value = ""
            found = EnvValue(var.name.value, value, "container", var.entry.span, container=container)
            env[found.name] = found
        run = _Run(self, launch, mf.path, cwd=container.working_dir)
        run.configmaps = _configmap_scripts(mf, pod, container)
        if spec and spec.scripts:
            for ref in spec.scripts:
                target = self.index.resolve(ref, mf.path, "shell")
                if target and isinstance(target.model, ShellScript):
                    run.script(target.model, env, shared=True, depth=0)
        else:
            self._argv(run, mf, container, env)
        launch.env = env
        if not launch.commands:
            launch.note = _script_left_as_arguments(container)
        if spec and spec.entry:
            entry = self.index.resolve(spec.entry, mf.path, "python")
            for cmd in launch.commands:
                if cmd.entry_file is None and entry and _python_model(entry.model):
                    cmd.entry_file = entry.model
                    cmd.entry_note = ""
        return launch

    def _argv(self, run: _Run, mf: ParsedFile, container: Container, env: dict[str, EnvValue]) -> None:
        argv = container.argv
        if not argv:
            return
        if container.script is not None:  # ``bash -c TEXT``, parsed with the manifest
            run.launch.inline = container.script
            run.script(container.script, env, shared=True, depth=0, in_manifest=True)
            return
        first = posixpath.basename(argv[0].value)
        if first in SHELLS or first == "zsh":
            kind, index = shell_invocation([a.value for a in argv[1:]])
            if kind == "script":
                words = [_scalar_word(mf, s) for s in argv[2 + index :]]
                run.call_path(argv[1 + index].value, words, env, mf.path, depth=0)
            return
        words = [_scalar_word(mf, s) for s in argv]
        command = Command(words, argv[0].span, argv[0].span)
        holder = ShellScript(mf.source, exact=False, argv=True)  # the manifest's own command list
        run.command(command, holder, env, depth=0, in_manifest=True)

    def embedded_script(self, mf: ParsedFile, scalar: YScalar) -> ShellScript:
        """A shell script written in a manifest (a ConfigMap's data), parsed once for every container."""
        key = (mf.path, scalar.span.start)
        found = self._embedded.get(key)
        if found is None:
            found = self._embedded[key] = scalar_script(scalar)
        return found

    # standalone launch scripts
    def standalone_jobs(self, files: list[ParsedFile]) -> list[Job]:
        jobs: list[Job] = []
        scripts = [f for f in files if f.kind == "shell" and isinstance(f.model, ShellScript)]
        called: set[str] = set()
        for f in scripts:
            for cmd in f.model.commands:
                target = self._callee(cmd, f.path)
                if target is not None and target.path != f.path:
                    called.add(target.path)
        for f in scripts:
            if f.path in self.reached or f.path in called:
                continue
            launch = Launch(None, None)
            env: dict[str, EnvValue] = {}
            _Run(self, launch, f.path).script(f.model, env, shared=True, depth=0)
            launch.env = env
            if not launch.commands:
                continue  # judged with the files no job covers
            for cmd in launch.commands:
                cmd.verdict = self._command_verdict(cmd)
            _judge_by_starting_script(launch, f.path)
            training = [c for c in launch.commands if c.judged]
            verdict = training[0].verdict if training else launch.commands[0].verdict
            assert verdict is not None
            entries = _unique([c.entry_file for c in training if c.entry_file])
            for e in entries:
                self.reached.add(e.source.path)
            paths = [s.source.path for s in launch.scripts] + [e.source.path for e in entries]
            versions, pin_files = self._versions(paths, [launch], entries)
            context = JobContext(
                None, _framework(None, [launch], entries), None, versions, settings=dict(self.settings)
            )
            job = Job(f"{f.path} (standalone)", None, None, [launch], entries, context, pin_files, verdict)
            jobs.append(job)
        return jobs

    def _command_verdict(self, cmd: LaunchCommand) -> Verdict:
        entry = cmd.entry_file
        entry_path = entry.source.path if entry is not None else (cmd.entry.text if cmd.entry is not None else None)
        imports = frozenset(i.module.split(".")[0] for i in entry.imports) if entry is not None else frozenset()
        scale = cmd.scale or Scale(None, None, "unknown")
        facts = LaunchFacts(
            script=cmd.script.source.path,
            launcher=cmd.launcher,
            arguments=tuple(word_value(w, {}) or w.text for w in cmd.words),
            entry=entry_path,
            entry_imports=imports,
            entry_test=entry is not None and _is_unit_test(entry),
            entry_on_cuda=entry is not None and not imports & NPU_STACKS - {"torch_npu"} and _cuda_only(entry),
            multi=scale.multi or (scale.per_node is None and cmd.is_distributed),
            single=scale.single,
            scale=scale.evidence if scale.multi or scale.single else "assumed: the process count is not given",
            in_manifest=cmd.in_manifest,
        )
        return launch_verdict(facts)

    def _callee(self, cmd: Command, near: str) -> ParsedFile | None:
        words = unwrap(cmd.words).words
        if not words:
            return None
        name = words[0].value or ""
        if name in ("source", "."):
            return self.index.resolve(words[1].value or words[1].text, near, "shell") if len(words) > 1 else None
        if posixpath.basename(name) in SHELLS:
            kind, index = shell_invocation([w.value or w.text for w in words[1:]])
            if kind == "script":
                return self.index.resolve(words[1 + index].value or words[1 + index].text, near, "shell")
            return None
        if name.endswith((".sh", ".bash")):
            return self.index.resolve(name, near, "shell")
        return None

    # standalone Python entries
    def standalone_entries(self) -> list[Job]:
        """Python files no launch reaches that are plainly training entries (a training name, a
        ``__main__`` block, a training loop): started by something the repository does not show."""
        jobs: list[Job] = []
        for path, kind in sorted(self.index.open_kinds().items()):
            if kind != "python" or path in self.reached:
                continue
            if not standalone_name(path) or not self._may_hold_inside_files(path):
                continue
            if self._secondary(path) or not self.index.may_contain(path, NPU_STACK_BYTES):
                continue
            parsed = self.index.get(path, "python")
            if parsed is None or not _python_model(parsed.model):
                continue
            model = parsed.model
            imports = frozenset(i.module.split(".")[0] for i in model.imports)
            if not imports & NPU_STACKS:
                continue
            runnable = model.has_main_guard or model.top_level_call
            on_npu = bool(imports & NPU_STACKS - {"torch_npu"}) or places_work_on_npu(model)
            verdict = standalone_entry_verdict(path, runnable, imports, training_loop(model), on_npu)
            self.reached.add(path)
            versions, pin_files = self._versions([path], [], [model])
            context = JobContext(None, _framework(None, [], [model]), None, versions, settings=dict(self.settings))
            jobs.append(Job(f"{path} (standalone)", None, None, [], [model], context, pin_files, verdict))
        return jobs

    def _may_hold_inside_files(self, path: str) -> bool:
        """Whether a standalone job of the entry ``path`` can hold a file of the run's folders (all
        of them when the run is over the whole repository): the entry itself, a setting module it
        imports (found below its folder or the two above) or pins in a declaration folder beside
        one of its folders. A job with none of them reports nothing here: parsing its entry cost a
        run over ModelZoo-PyTorch's ``PyTorch/built-in`` 299 entries of the folders beside it."""
        if self.inside is None:
            return True
        location = self.index.location.get(path, path)
        folders = folder_and_ancestors(posixpath.dirname(location))
        for inside in self.inside:
            if location.startswith(inside + "/") or any(inside.startswith(under(b, "")) for b in folders[:3]):
                return True
            parent, name = posixpath.split(inside)
            if name in DECLARATION_FOLDERS and parent in folders:
                return True
        return False

    def setting_modules(self, entry: PythonFile) -> list[PythonFile]:
        """The repository modules ``entry`` imports (``from pkg.setup import configure``, looked up from its
        folder and the two above it, where a launch's ``sys.path`` usually starts) that hold a process
        setting; only those are parsed."""
        found: dict[str, PythonFile] = {}
        folder = self.index.folder_of(entry.source.path)
        bases = folder_and_ancestors(folder)[:3]
        display = self.index.display
        for imp in entry.imports:
            parts = imp.module.split(".")
            for base in bases:
                for size in (len(parts), len(parts) - 1):  # the module itself, or the one a name comes from
                    if not size:
                        continue
                    stem = under(base, "/".join(parts[:size]))
                    for location in (stem + ".py", stem + "/__init__.py"):
                        path = display.get(location)
                        if path is None or path in found or path == entry.source.path:
                            continue
                        if self.index.holds(path, PROCESS_SETTINGS):
                            parsed = self.index.get(path, "python")
                            if parsed is not None and _python_model(parsed.model):
                                found[path] = parsed.model
        return list(found.values())

    def _secondary(self, path: str) -> bool:
        """A folder whose launch scripts run another entry: this one is not what the cluster trains."""
        folder = posixpath.dirname(path)
        return folder in self.entry_folders or posixpath.dirname(folder) in self.entry_folders

    # what each file is
    def judgements(self, parsed: list[ParsedFile], jobs: list[Job]) -> dict[str, Verdict]:
        out: dict[str, Verdict] = {}
        for job in jobs:
            for path in job.files:
                if path not in out or (job.judged and not out[path].judged):
                    out[path] = Verdict(job.verdict.role, f"{job.id}: {job.verdict.reason}")
        for f in parsed:
            if f.path in out:
                continue
            if f.kind == "manifest":
                out[f.path] = Verdict(
                    "no-job", "no training workload in it" if f.relevant else "not a Kubernetes object"
                )
            elif f.kind == "shell":
                out[f.path] = Verdict("no-launch", "starts no training launcher")
            elif f.kind in PIN_KINDS:
                out[f.path] = Verdict("versions", "version declarations, read for the jobs below it")
            elif f.kind == "python":
                out[f.path] = Verdict("unknown", "read, but no training launch runs it")
        for path, kind in self.index.pending.items():
            if kind == "python":
                out.setdefault(path, Verdict("unknown", "not read: no launch or manifest reaches it"))
            elif kind in SHELL_KINDS:
                why = vendored(path)
                aside = Verdict("vendored", f"not read: {why}") if why else None
                why = ci_path(path)
                aside = aside or (Verdict("ci", f"not read: {why}") if why else None)
                out.setdefault(path, aside or Verdict("unknown", "not read: nothing reaches it"))
        return out

    # versions
    def _pins_over(self, paths: list[str]) -> list[tuple[int, PinFile]]:
        """Pin files in the folders of ``paths`` or their ancestors (and the declaration folders
        beside those, such as ``docker/``), with the depth of the ancestor they belong to."""
        seen: set[str] = set()
        out: list[tuple[int, PinFile]] = []
        for path in paths:
            for folder in folder_and_ancestors(self.index.folder_of(path)):
                if folder in seen:
                    continue
                seen.add(folder)
                level = depth(folder)
                for pin in self._pins_in(folder):
                    out.append((level * 2 + 1, pin))
                for beside in self.pins_beside.get(folder, ()):
                    for pin in self._pins_in(beside):
                        out.append((level * 2, pin))
        return out

    def _pins_in(self, folder: str) -> list[PinFile]:
        out = []
        for path in self.pins_by_dir.get(folder, ()):
            parsed = self.index.get(path)
            if parsed is not None and isinstance(parsed.model, PinFile):
                out.append(parsed.model)
        return out

    def _versions(
        self,
        paths: list[str],
        launches: list[Launch],
        entries: list[PythonFile] = (),  # type: ignore[assignment]
    ) -> tuple[Versions, list[PinFile]]:
        """The closest exact declaration of each component wins (a ``pip install`` in the job's
        own scripts, then pin files in the nearest folder); declarations that disagree at the same
        distance leave it unknown; configuration values fill what no file declares. Also the pin
        files read for it, by path."""
        versions = Versions(configured=dict(self.configured))
        pin_files = self._pins_over(paths)
        candidates: list[tuple[int, VersionPin]] = []
        for rank, model in pin_files:
            candidates += [(rank, pin) for pin in model.pins]
        for entry in entries:
            candidates += _guarded_torch(entry, depth(self.index.folder_of(entry.source.path)) * 2 + 1)
        top = 10_000
        for launch in launches:
            for script in launch.scripts:
                for cmd in script.commands:
                    if len(cmd.words) > 2 and (cmd.words[0].value or "").startswith(("pip", "python")):
                        candidates += [(top, pin) for pin in pins_in_words(cmd.words)]
        best: dict[str, tuple[tuple[int, int], list[tuple[int, VersionPin]]]] = {}  # component -> (key, pins)
        for rank, pin in candidates:
            if pin.component not in COMPONENTS:
                continue
            # at one distance an exact pin wins over the versions a README lists, which win over bounds
            key = (rank, 2 if pin.exact else 1 if pin.alternative else 0)
            held = best.get(pin.component)
            if held is None or key > held[0]:
                best[pin.component] = (key, [(rank, pin)])
            elif key == held[0]:
                held[1].append((rank, pin))
        for component, (key, found) in best.items():
            if key[1] == 1:
                versions.choices[component] = tuple(pin for _, pin in found)
                continue
            distinct = {pin.version for _, pin in found if pin.exact}
            if len(distinct) > 1:
                where = ", ".join(sorted({f"{p.span.path}:{p.span.line}" for _, p in found}))
                versions.conflicts[component] = f"declared as {', '.join(sorted(distinct))} in {where}"
                continue
            versions.pins[component] = found[0][1]
        return versions, [model for _, model in sorted(pin_files, key=lambda item: item[1].source.path)]


# calls in an imported module that configure the whole training process (the operator compile mode):
# an entry's repository modules are byte-scanned for them, and parsed only when one is there
PROCESS_SETTINGS = (b"set_compile_mode",)
NPU_STACKS = frozenset({"torch_npu", "mindspeed", "mindspeed_llm"})  # imports that say the code runs on NPUs
NPU_STACK_BYTES = (b"torch_npu", b"mindspeed")


class _Run:
    """Simulates one container's start-up over the parsed scripts (nothing is executed)."""

    def __init__(self, linker: _Linker, launch: Launch, origin: str, cwd: str | None = None) -> None:
        self.linker = linker
        self.launch = launch
        self.origin = origin
        self.active: set[str] = set()
        self.cwd = cwd  # the working directory as written (a container path), when known
        self.configmaps: dict[str, tuple[ParsedFile, YScalar]] = {}  # container path -> a ConfigMap's script

    def script(
        self,
        script: ShellScript,
        env: dict[str, EnvValue],
        shared: bool,
        depth: int,
        in_manifest: bool = False,
    ) -> None:
        path = script.source.path
        if depth > MAX_DEPTH or (path in self.active and not in_manifest):
            return
        if not in_manifest:
            self.linker.reached.add(path)
            if script not in self.launch.scripts:
                self.launch.scripts.append(script)
        self.active.add(path)
        origin = "inline" if in_manifest else "script"
        for event in script.events:
            if isinstance(event, Assignment):
                _apply(env, event, origin, script)
            else:
                self.command(event, script, env, depth, in_manifest)
        self.active.discard(path)

    def call_path(
        self,
        reference: str,
        args: list[Word],
        env: dict[str, EnvValue],
        near: str,
        depth: int,
        shared: bool = False,
    ) -> bool:
        target = self.linker.index.resolve(reference, near, "shell", self._cwd_folder(near))
        model = target.model if target is not None else self._configmap_script(reference)
        if not isinstance(model, ShellScript):
            return False
        child = env if shared else _exported_copy(env)
        values = _values(env)
        for k, word in enumerate(args[:9], start=1):  # the script's positional parameters
            found = EnvValue(str(k), word_value(word, values), "argument", word.span, exported=False)
            child[found.name] = found
        saved = self.cwd
        self.cwd = None  # a script runs where it was started from, which is not known statically
        self.script(model, child, shared, depth + 1)
        self.cwd = saved
        return True

    def _configmap_script(self, reference: str) -> ShellScript | None:
        """A script held in a ConfigMap of the manifest and mounted into the container (``bash
        /scripts/train.sh`` with a ConfigMap mounted at ``/scripts``): parsed where it is written."""
        path = posixpath.normpath(reference.strip("\"'"))
        if not path.startswith("/"):
            path = posixpath.normpath(posixpath.join(self.cwd or "/", path))
        found = self.configmaps.get(path)
        if found is None:
            return None
        mf, scalar = found
        return self.linker.embedded_script(mf, scalar)

    def _cwd_folder(self, near: str) -> str | None:
        """The working directory as a repository folder, when a ``cd`` or workingDir names one."""
        if self.cwd is None:
            return None
        return self.linker.index.map_folder(self.cwd, near)

    def command(
        self,
        cmd: Command,
        script: ShellScript,
        env: dict[str, EnvValue],
        depth: int,
        in_manifest: bool = False,
    ) -> None:
        values = _values(env)
        expanded, changed = expand_command(cmd.words, values)
        unwrapped = unwrap(expanded)
        words = unwrapped.words
        if not words:
            return
        name = words[0].value or words[0].text
        near = script.source.path
        args = words[1:]
        if name == "cd" and not cmd.conditional:
            target = word_value(args[0], values) if args else None
            self.cwd = _change_dir(self.cwd, target)
            return
        if name in ("source", "."):
            if args:
                self.call_path(args[0].value or args[0].text, args[1:], env, near, depth, shared=True)
            return
        if posixpath.basename(name) in SHELLS:
            kind, index = shell_invocation([w.value or w.text for w in args])
            if kind == "script":
                target = args[index]
                self.call_path(word_value(target, values) or target.text, args[index + 1 :], env, near, depth)
            return
        if name.endswith((".sh", ".bash")):
            self.call_path(name, args, env, near, depth)
            return
        if name == "eval" and args:
            line = " ".join(word_value(w, values) or w.text for w in args)
            inner = expand(line, values) or line
            split = [Word(p, p, cmd.span) for p in inner.split()]
            if split and split[0].text != "eval":
                inner_cmd = Command(split, cmd.span, cmd.statement, [], cmd.function, cmd.conditional, cmd.loops)
                self.command(inner_cmd, script, env, depth, in_manifest)
            return
        launcher = classify_launcher(words, values) or self._module_launch(words, values, near)
        if launcher is None:
            return
        kind, span = launcher
        cmd_env = _exported_copy(env)
        for prefix in cmd.prefixes:
            _apply(cmd_env, prefix, "inline" if in_manifest else "script", script)
        for var, value, word in unwrapped.assignments:
            cmd_env[var] = EnvValue(var, value, "inline" if in_manifest else "script", word.span)
        offset = len(cmd.words) - len(words) if not changed else 0
        run_words = words[: span[1]] + split_arguments(words[span[1] :], values)
        entry = entry_word(run_words, span[1], values)
        entry_file, note, entry_path = self._entry(entry, run_words, values, near)
        loops = cmd.loops
        scale = launch_scale(kind, run_words, span[1], values, loops, posixpath.basename(near))
        self.launch.commands.append(
            LaunchCommand(
                cmd,
                script,
                kind,
                (span[0] + offset, span[1] + offset),
                entry,
                entry_file,
                cmd_env,
                in_manifest,
                exact=not changed,
                words=run_words,
                scale=scale,
                entry_note=note,
                entry_path=entry_path,
            )
        )
        if entry_file is not None:
            self.linker.entry_folders.add(posixpath.dirname(entry_file.source.path))

    def _module_launch(
        self, words: list[Word], values: Mapping[str, str | None], near: str
    ) -> tuple[str, tuple[int, int]] | None:
        """``python3 -m pkg.train`` where ``pkg/train.py`` is a file of the repository: a launch of it
        (``python -m pip`` or another installed module is not)."""
        first = word_value(words[0], values) or ""
        if not PYTHON.match(posixpath.basename(first)):
            return None
        for i, word in enumerate(words[1:], start=1):
            value = word_value(word, values) or ""
            if value != "-m":
                if value.startswith("-"):
                    continue
                return None
            if i + 1 >= len(words):
                return None
            path = module_path(words[i + 1], words, values)
            found = self.linker.index.resolve(path, near, "python", self._cwd_folder(near)) if path else None
            return ("python", (0, 1)) if found is not None else None
        return None

    def _entry(
        self, entry: Word | None, words: list[Word], values: Mapping[str, str | None], near: str
    ) -> tuple[PythonFile | None, str, str | None]:
        if entry is None:
            return None, "no Python entry in the command", None
        text = module_path(entry, words, values) or word_value(entry, values) or _static_tail(entry.text)
        if not text or not text.endswith(".py"):
            return None, f"the entry {entry.text} is built at run time", None
        target = self.linker.index.resolve(text, near, "python", self._cwd_folder(near))
        if target is None:
            return None, f"{text} is not in the linted files", None
        if not _python_model(target.model):
            return None, f"{target.path} could not be read", target.path
        return target.model, "", target.path


# torch before the first torch_npu package (1.8.1) ran on NPUs through a torch build of its own
TORCH_WITH_BUILTIN_NPU = "1.5.0"


def _guarded_torch(entry: PythonFile, rank: int) -> list[tuple[int, VersionPin]]:
    """An entry that imports torch_npu only from some torch version on also runs on the torch before
    it: both are versions the job may run."""
    if entry.npu_since is None:
        return []
    since, span = entry.npu_since
    return [
        (rank, VersionPin("torch", version, "==", span, span, alternative=True))
        for version in (TORCH_WITH_BUILTIN_NPU, since)
    ]


def _static_tail(text: str) -> str | None:
    """The literal part after the last expansion: ``${dir}/../main.py`` -> ``../main.py`` (read from
    the script's folder, which is what such a variable usually names)."""
    match = re.search(r"[^$}`\"']*$", text.rstrip("\"'"))
    tail = match.group(0).lstrip("/") if match else ""
    return tail or None


def _change_dir(current: str | None, target: str | None) -> str | None:
    """The working directory after ``cd target``. A relative ``cd src`` from an unknown directory is kept
    relative: the folder is then looked up below the script's folder and its ancestors (a launch script
    is usually started from its own folder or from the repository root)."""
    if target is None:
        return None
    if target.startswith("/"):
        return posixpath.normpath(target)
    if current is None:
        relative = posixpath.normpath(target)
        return None if relative.startswith("..") or relative == "." else relative
    return posixpath.normpath(posixpath.join(current, target))


class _Values(Mapping):
    """The static values of a shell environment, read through without copying it (a script with
    many commands asks for them at every command)."""

    __slots__ = ("env",)

    def __init__(self, env: dict[str, EnvValue]) -> None:
        self.env = env

    def __getitem__(self, name: str) -> str | None:
        return self.env[name].known

    def get(self, name: str, default: str | None = None) -> str | None:
        value = self.env.get(name)
        return value.known if value is not None else default

    def template(self, name: str) -> str | None:
        value = self.env.get(name)
        return value.template if value is not None else None

    def __iter__(self):
        return iter(self.env)

    def __len__(self) -> int:
        return len(self.env)


def _values(env: dict[str, EnvValue]) -> _Values:
    return _Values(env)


def places_work_on_npu(py: PythonFile) -> bool:
    """Whether a file puts something on an NPU: a call into ``torch.npu`` or ``torch_npu``, a
    ``.npu()``, an ``npu`` device among its literal arguments, or ``transfer_to_npu`` (which sends
    every CUDA call there). A torchvision reference script copied into a model folder imports
    torch_npu and still trains on ``cuda`` or the CPU."""
    if py.imports_module("torch_npu.contrib.transfer_to_npu") or py.chained_npu:
        return True
    for call in py.calls:
        name = call.qualname
        if name.startswith(("torch.npu.", "torch_npu.")) or name == "npu" or name.endswith(".npu"):
            return True
        for arg in (*call.positional, *call.keywords.values()):
            if isinstance(arg.value, str) and "npu" in arg.value.lower():
                return True
    return False


# torch.cuda calls an NPU entry also makes (transfer_to_npu sends them to the NPU): no sign of CUDA work
_CUDA_NEUTRAL = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})


def _cuda_only(py: PythonFile) -> bool:
    """Whether a file puts its work on CUDA devices (a ``.cuda()``, a ``torch.cuda`` call, a ``cuda``
    device among its literal arguments) and nothing on an NPU: an upstream script copied into an
    Ascend repository (torchvision's references keep ``--device cuda``)."""
    if places_work_on_npu(py):
        return False
    for call in py.calls:
        name = call.qualname
        if name.endswith(".cuda") or (name.startswith("torch.cuda.") and name not in _CUDA_NEUTRAL):
            return True
        for arg in (*call.positional, *call.keywords.values()):
            if isinstance(arg.value, str) and arg.value.lower().startswith("cuda"):
                return True
    return False


def training_loop(py: PythonFile) -> str | None:
    """What in a Python file trains a model, or None: a backward pass with an optimizer step, or a
    call of a trainer's ``train``/``fit`` or of a ``pretrain``/``train`` function it imports."""
    names = [c.qualname for c in py.calls]
    backward = any(n.endswith(".backward") for n in names)
    step = any(n.endswith(".step") for n in names)
    if backward and step:
        return "loss.backward() and optimizer.step()"
    for n in names:
        last = n.rsplit(".", 1)[-1]
        if last in ("fit", "train") and "trainer" in n.lower():
            return f"{n}()"
        if last in ("pretrain", "train", "finetune") and "." in n and not n.startswith(("self.", "model.")):
            return f"{n}()"
    return None


def _is_unit_test(py: PythonFile) -> bool:
    if py.imports_module("unittest", "pytest", "torch_npu.testing", "torch.testing._internal"):
        return True
    return any(c.qualname.endswith("run_tests") for c in py.calls)


def _apply(env: dict[str, EnvValue], a: Assignment, origin: str, script: ShellScript | None = None) -> None:
    if a.kind == "unset":
        env.pop(a.name, None)
        return
    previous = env.get(a.name)
    if not a.has_value:  # "export NAME" marks an existing variable for export
        if previous is not None:
            previous.exported = True
        else:
            env[a.name] = EnvValue(a.name, None, origin, a.span, True, a)
        return
    exported = a.kind == "export" or a.kind == "prefix" or (previous is not None and previous.exported)
    expanded = template = None
    if a.value is None and a.value_span is not None and script is not None and script.exact:
        raw = script.source.text[a.value_span.start : a.value_span.end]
        expanded = expand(raw, _values(env))
        if raw[:1] in "\"'" and raw[-1:] == raw[:1] and len(raw) > 1:
            template = raw[1:-1]
    env[a.name] = EnvValue(a.name, a.value, origin, a.span, exported, a, expanded=expanded, template=template)


def _exported_copy(env: dict[str, EnvValue]) -> dict[str, EnvValue]:
    return {k: v for k, v in env.items() if v.exported}


def _scalar_word(mf: ParsedFile, scalar: YScalar) -> Word:
    span = scalar.span
    if scalar.quoted and mf.text[span.start + 1 : span.end - 1] == scalar.value:
        span = mf.source.span(span.start + 1, span.end - 1)
    return Word(scalar.value, scalar.value, span)


def _inject_operator_env(launches: list[Launch]) -> None:
    """Ascend Operator adds HCCL_ASYNC_ERROR_HANDLING=0 for PyTorch process-level recovery.

    The operator appends the variable to the container's ``env`` list, and the last of duplicate
    entries wins, so it replaces a container ``env`` value; shell exports still override it.
    """
    name = WATCHDOG_VAR
    for launch in launches:
        for env in [launch.env] + [c.env for c in launch.commands]:
            current = env.get(name)
            if current is None or current.origin == "container":
                env[name] = EnvValue(name, "0", "operator", None)


# programs that only inspect a node: a job that runs nothing else trains nothing (environment
# checks such as mindcluster-deploy's env_validation jobs, which run `npu-smi info`)
UTILITIES = frozenset(
    {"npu-smi", "hccn_tool", "nvidia-smi", "sleep", "echo", "cat", "ls", "env", "printenv", "true", "hostname", "date"}
)


def _utility_verdict(launches: list[Launch]) -> Verdict | None:
    """A job whose every container runs, in a command known statically, only node-inspection
    programs (no script, no launcher)."""
    programs: set[str] = set()
    for launch in launches:
        if launch.scripts or launch.commands or launch.inline is None:
            return None
        for event in launch.inline.events:
            if isinstance(event, Command):
                first = event.words[0].value if event.words else None
                if first is None:
                    return None
                programs.add(posixpath.basename(first))
    if not programs or not programs <= UTILITIES:
        return None
    return Verdict("utility", f"its containers run only {', '.join(sorted(programs))}: no training program")


def _manifest_words(doc: ManifestDoc, launches: list[Launch]) -> set[str]:
    """Words of a manifest's names, labels, images and commands: what it says it runs."""
    words: set[str] = set()
    words |= tokens(doc.job_name)
    for node in (doc.labels, doc.annotations):
        if node is not None:
            for key, value in node.items:
                if key.value in ("app", "job", "jobName", "task", "type") and isinstance(value, YScalar):
                    words |= tokens(value.value)
    for pod, container in doc.containers():
        words |= tokens(pod.role)
        words |= tokens(container.name or "")
        words |= tokens((container.image or "").split(":")[0])
        for scalar in container.argv:
            for part in re.split(r"[\s;&|]+", scalar.value):
                words |= tokens(posixpath.basename(part))
        if pod.labels is not None:
            app = pod.labels.scalar("app")
            if app is not None:
                words |= tokens(app.value)
    for launch in launches:
        for script in launch.scripts:
            words |= tokens(posixpath.splitext(posixpath.basename(script.source.path))[0])
    return words


def _configmap_scripts(mf: ParsedFile, pod: PodSpec, container: Container) -> dict[str, tuple[ParsedFile, YScalar]]:
    """Scripts of the manifest's ConfigMaps as the container sees them: mount path/key -> the text."""
    model = mf.model
    if not isinstance(model, ManifestFile):
        return {}
    maps = {d.job_name: d for d in model.docs if d.kind == "ConfigMap"}
    out: dict[str, tuple[ParsedFile, YScalar]] = {}
    for volume in pod.volumes:
        doc = maps.get(volume.config_map.value) if volume.kind == "configMap" and volume.config_map else None
        data = doc.root.map("data") if doc is not None else None
        if data is None:
            continue
        for mount in container.mounts:
            if mount.name.value != volume.name.value or mount.mount_path is None:
                continue
            for key, value in data.items:
                if isinstance(value, YScalar) and (
                    key.value.endswith((".sh", ".bash")) or value.value.startswith("#!")
                ):
                    out[posixpath.join(posixpath.normpath(mount.mount_path.value), key.value)] = (mf, value)
    return out


def _script_left_as_arguments(container: Container) -> str:
    """Why a container links nothing when its ``-c`` text is a bare shell with words after it
    (``command: [/bin/bash, -c]`` with ``args: [/bin/bash, -c, "cd …; bash train_start.sh"]``): bash
    runs that shell and hands it the rest as ``$0``, ``$1``…, so the command they hold never runs."""
    argv, at = container.argv, container.script_at
    if at is None or at + 1 >= len(argv):
        return ""
    text = argv[at].value.split()
    if len(text) != 1 or posixpath.basename(text[0]) not in INLINE_SHELLS:
        return ""
    rest = " ".join(a.value for a in argv[at + 1 :])
    return (
        f"the -c text at line {argv[at].span.line} is {argv[at].value!r} alone: bash runs that shell with "
        f"{rest!r} as its $0, $1…, so the command they hold never runs (the shell reads its commands from the "
        "container's standard input, empty unless stdin is set)"
    )


def _ignored_recovery_labels(doc: ManifestDoc) -> list[tuple[Span, str]]:
    """Process-level recovery settings that do nothing: on a workload that is not an AscendJob, and the
    ``process-recover-enable`` label on an AscendJob without a ``recover-strategy`` annotation."""
    if doc.is_ascendjob:
        label = doc.label("process-recover-enable")
        if label is None or label.value != "on" or doc.annotation("recover-strategy") is not None:
            return []
        return [
            (
                label.span,
                'process-recover-enable: "on" arms nothing by itself: Ascend Operator and ClusterD act on the '
                "recover-strategy annotation (and set this label on the PodGroup themselves), which is missing",
            )
        ]
    found = [
        ("recover-strategy", doc.annotation("recover-strategy")),
        ("process-recover-enable", doc.label("process-recover-enable")),
    ]
    return [
        (node.span, f"{key} has no effect on a {doc.kind}: process-level recovery exists only for an AscendJob")
        for key, node in found
        if node is not None
    ]


def _platform(doc: ManifestDoc) -> str | None:
    label = doc.label("ring-controller.atlas")
    if label:
        return label.value
    for pod in doc.pods:
        if pod.labels is not None:
            node = pod.labels.scalar("ring-controller.atlas")
            if node:
                return node.value
    return None


def _framework(doc: ManifestDoc | None, launches: list[Launch], entries: list[PythonFile]) -> str | None:
    if doc is not None and doc.is_ascendjob:
        label = doc.label("framework")
        if label and label.value.lower() in ("pytorch", "mindspore", "tensorflow"):
            return label.value.lower()
    for launch in launches:
        if launch.container:
            for var in launch.container.env:
                if var.name.value == "framework" and var.value is not None:
                    return var.value.value.lower()
        for cmd in launch.commands:
            if cmd.launcher == "msrun":
                return "mindspore"
            if cmd.is_distributed:
                return "pytorch"
    for entry in entries:
        if entry.imports_module("torch", "torch_npu"):
            return "pytorch"
        if entry.imports_module("mindspore"):
            return "mindspore"
        if entry.imports_module("tensorflow"):
            return "tensorflow"
    return None


def asks_process_recovery(doc: ManifestDoc) -> bool:
    """An AscendJob whose ``recover-strategy`` annotation asks for process-level recovery (it starts
    only once fault-scheduling is on). On any other workload it does nothing (MindCluster constraint),
    and the ``process-recover-enable`` label alone arms nothing: Ascend Operator sets it on the
    PodGroup from the annotation, and only the annotation brings the strategies and the environment."""
    if not doc.is_ascendjob:
        return False
    strategy = doc.annotation("recover-strategy")
    strategies = set(strategy.value.replace(" ", "").split(",")) if strategy is not None else set()
    return bool(strategies & PROCESS_RECOVERY_STRATEGIES)


def _recovery(doc: ManifestDoc) -> str:
    """The recovery level the cluster gives the job. Process-level rescheduling and recovery exist
    only for an AscendJob (MindCluster constraint): on any other workload their labels do nothing."""
    fault = doc.label("fault-scheduling")
    value = fault.value if fault else ""
    if value not in ("grace", "force") and not value.startswith(("external-grace", "external-force")):
        return "none"
    if asks_process_recovery(doc):
        return "process"
    pod = doc.label("pod-rescheduling")
    if pod and pod.value == "on":
        return "pod"
    return "job"


def _unique(items: list) -> list:
    seen: set[int] = set()
    out = []
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            out.append(item)
    return out


def _judge_by_starting_script(launch: Launch, start: str) -> None:
    """A training launch written in a script the job's own script calls takes the verdict the
    starting script's name gives, if it names another task (a performance run, an evaluation)."""
    called = [c for c in launch.commands if c.judged and c.script.source.path != start]
    if not called:
        return
    verdict = starting_script_verdict(start)
    if verdict is not None:
        for cmd in called:
            cmd.verdict = verdict
