"""Link parsed artifacts into jobs, the way the cluster runs them.

A job is one manifest document with the launch scripts its containers run, the scripts those
source or call, the Python entries the launcher starts, and the versions that apply. Scripts and
Python files that no manifest reaches become standalone jobs. For every container the launch
environment is computed in execution order: operator-injected variables, container ``env``,
inline ``bash -c`` exports, then script exports (``source`` shares the shell, ``bash x.sh``
inherits a copy).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from .parse import ParsedFile
from .sources.manifest import Container, ManifestDoc, ManifestFile, PodSpec
from .sources.python import PythonFile
from .sources.shell import Assignment, Command, ShellScript, Word, parse_detached, parse_embedded
from .sources.versions import COMPONENTS, PinFile, VersionPin
from .sources.yamlnodes import YScalar
from .span import Span

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
WRAPPERS = frozenset({"nohup", "exec", "time", "stdbuf", "setsid", "nice", "ionice", "command", "builtin"})
PYTHON = re.compile(r"^(?:python[0-9.]*|pypy[0-9.]*)$")
SCRIPT_PATH = re.compile(r"([A-Za-z0-9_.+@%~=-]+(?:/[A-Za-z0-9_.+@%~=-]+)*\.(?:sh|bash|py))$")
DISTRIBUTED_MODULES = {
    "torch.distributed.run": "torch.distributed.run",
    "torch.distributed.launch": "torch.distributed.launch",
    "torch_npu.distributed.run": "torch_npu_run",
}
PROCESS_RECOVERY_STRATEGIES = {"retry", "recover", "recover-in-place", "elastic-training", "dump", "exit"}
MAX_DEPTH = 8


# -- the model ---------------------------------------------------------------------------------
@dataclass
class EnvValue:
    """One variable as the training process would see it, and where that came from."""

    name: str
    value: str | None  # None when dynamic (valueFrom, an expansion)
    origin: str  # operator | container | inline | script | python
    span: Span | None
    exported: bool = True
    assignment: Assignment | None = None  # the shell assignment, for edits
    container: Container | None = None


@dataclass
class LaunchCommand:
    command: Command
    script: ShellScript  # where the command is written (a file, or a manifest's inline text)
    launcher: str  # torchrun | torch.distributed.run | torch.distributed.launch | torch_npu_run | python | msrun
    launcher_words: tuple[int, int]  # word index range forming the launcher ("python -m torch...")
    entry: Word | None
    entry_file: PythonFile | None
    env: dict[str, EnvValue]  # exported environment at this command, prefix assignments included
    in_manifest: bool = False

    @property
    def is_torch_launcher(self) -> bool:
        return self.launcher in (
            "torchrun",
            "torch.distributed.run",
            "torch.distributed.launch",
            "torch_npu_run",
        )


@dataclass
class Launch:
    """What one container runs at start-up."""

    pod: PodSpec | None
    container: Container | None
    scripts: list[ShellScript] = field(default_factory=list)  # in execution order
    commands: list[LaunchCommand] = field(default_factory=list)
    env: dict[str, EnvValue] = field(default_factory=dict)  # at the end of the start-up
    inline: ShellScript | None = None

    @property
    def launch_env(self) -> dict[str, EnvValue]:
        """The environment of the (first) training launcher, else of the end of start-up."""
        for cmd in self.commands:
            if cmd.is_torch_launcher or cmd.launcher == "python":
                return cmd.env
        return self.env

    @property
    def torch_commands(self) -> list[LaunchCommand]:
        return [c for c in self.commands if c.is_torch_launcher]


@dataclass
class Versions:
    pins: dict[str, VersionPin] = field(default_factory=dict)
    configured: dict[str, str] = field(default_factory=dict)

    def get(self, component: str) -> str | None:
        pin = self.pins.get(component)
        if pin is not None and pin.exact:
            return pin.version
        return self.configured.get(component)

    def span(self, component: str) -> Span | None:
        pin = self.pins.get(component)
        return pin.span if pin is not None and pin.exact else None


@dataclass
class JobContext:
    platform: str | None  # ascend-910 | ascend-910b | ascend-npu | None (unknown)
    framework: str | None  # pytorch | mindspore | tensorflow | None
    recovery: str | None  # none | job | pod | process | None (unknown: no manifest)
    versions: Versions

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
    files: list[ParsedFile]
    jobs: list[Job]
    by_path: dict[str, ParsedFile]


@dataclass
class JobSpec:
    """An explicit link from config: ``[[tool.recovery-lint.jobs]]``."""

    manifest: str
    scripts: list[str] = field(default_factory=list)
    entry: str | None = None


# -- file index --------------------------------------------------------------------------------
class FileIndex:
    def __init__(self, files: list[ParsedFile]) -> None:
        self.by_path = {f.path: f for f in files}
        self.by_name: dict[str, list[ParsedFile]] = {}
        self._resolved: dict[tuple[str, str, str], ParsedFile | None] = {}
        for f in files:
            self.by_name.setdefault(posixpath.basename(f.path), []).append(f)

    def resolve(self, reference: str, near: str, kind: str) -> ParsedFile | None:
        """Match a path as written in a script or manifest to a repository file.

        Tried in order: relative to the referring file; the longest tail of the path under the
        referring file's folder or one of its ancestors; then the best-matching file of that name.
        """
        key = (reference, posixpath.dirname(near), kind)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(reference, near, kind)
        return self._resolved[key]

    def _get(self, path: str, kind: str) -> ParsedFile | None:
        found = self.by_path.get(path)
        return found if found is not None and found.kind == kind else None

    def _resolve(self, reference: str, near: str, kind: str) -> ParsedFile | None:
        match = SCRIPT_PATH.search(reference.strip("\"'"))
        if not match:
            return None
        ref = posixpath.normpath(match.group(1))
        near_dir = posixpath.dirname(near)
        if not ref.startswith("/"):
            direct = self._get(posixpath.normpath(posixpath.join(near_dir, ref)), kind)
            if direct is not None:
                return direct
        parts = [p for p in ref.split("/") if p not in ("", ".", "..")]
        ancestors = _ancestors(near_dir)
        for k in range(len(parts)):
            tail = "/".join(parts[k:])
            for folder in ancestors:
                hit = self._get(f"{folder}/{tail}" if folder else tail, kind)
                if hit is not None:
                    return hit
        candidates = [f for f in self.by_name.get(parts[-1] if parts else "", []) if f.kind == kind]
        if not candidates:
            return None

        def score(f: ParsedFile) -> tuple[int, int, int]:
            fparts = f.path.split("/")
            suffix = 0
            while suffix < min(len(parts), len(fparts)) and parts[-1 - suffix] == fparts[-1 - suffix]:
                suffix += 1
            common = 0
            for a, b in zip(near_dir.split("/"), fparts[:-1], strict=False):
                if a != b:
                    break
                common += 1
            return (suffix, common, -len(fparts))

        return max(candidates, key=score)


def _ancestors(folder: str) -> list[str]:
    """The folder and each of its parents, nearest first, ending with the root ("")."""
    out = []
    while folder not in ("", ".", "/"):
        out.append(folder)
        folder = posixpath.dirname(folder)
    out.append("/" if folder == "/" else "")
    return out


# -- linking -----------------------------------------------------------------------------------
def build_project(
    files: list[ParsedFile],
    configured_versions: dict[str, str] | None = None,
    job_specs: list[JobSpec] | None = None,
) -> Project:
    index = FileIndex(files)
    linker = _Linker(index, configured_versions or {}, job_specs or [])
    jobs: list[Job] = []
    for f in files:
        if f.kind == "manifest" and isinstance(f.model, ManifestFile):
            for doc in f.model.docs:
                if doc.pods and any(p.containers for p in doc.pods):
                    jobs.append(linker.manifest_job(f, doc))
    jobs.extend(linker.standalone_jobs(files))
    return Project(files, jobs, index.by_path)


class _Linker:
    def __init__(self, index: FileIndex, configured: dict[str, str], specs: list[JobSpec]) -> None:
        self.index = index
        self.configured = configured
        self.specs = specs
        self.reached: set[str] = set()
        self.pins_by_dir: dict[str, list[ParsedFile]] = {}
        for f in index.by_path.values():
            if isinstance(f.model, PinFile):
                self.pins_by_dir.setdefault(posixpath.dirname(f.path), []).append(f)

    # jobs from manifests
    def manifest_job(self, mf: ParsedFile, doc: ManifestDoc) -> Job:
        spec = self._spec_for(doc)
        launches = [self._container_launch(mf, doc, pod, c, spec) for pod, c in doc.containers()]
        entries = _unique([c.entry_file for launch in launches for c in launch.commands if c.entry_file])
        if spec and spec.entry:
            extra = self.index.resolve(spec.entry, mf.path, "python")
            if extra and isinstance(extra.model, PythonFile) and extra.model not in entries:
                entries.append(extra.model)
        for e in entries:
            self.reached.add(e.source.path)
        paths = [mf.path] + [s.source.path for launch in launches for s in launch.scripts]
        paths += [e.source.path for e in entries]
        versions = self._versions(paths)
        context = JobContext(_platform(doc), _framework(doc, launches, entries), _recovery(doc), versions)
        if doc.is_ascendjob and doc.annotation("recover-strategy") and context.pytorch:
            _inject_operator_env(launches)
        return Job(doc.identity, doc, mf, launches, entries, context, self._pin_files(paths))

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
            env[var.name.value] = EnvValue(var.name.value, value, "container", var.entry.span, container=container)
        run = _Run(self, launch, mf.path)
        if spec and spec.scripts:
            for ref in spec.scripts:
                target = self.index.resolve(ref, mf.path, "shell")
                if target and isinstance(target.model, ShellScript):
                    run.script(target.model, env, shared=True, depth=0)
        else:
            self._argv(run, mf, container, env)
        launch.env = env
        if spec and spec.entry:
            entry = self.index.resolve(spec.entry, mf.path, "python")
            for cmd in launch.commands:
                if cmd.entry_file is None and entry and isinstance(entry.model, PythonFile):
                    cmd.entry_file = entry.model
        return launch

    def _argv(self, run: _Run, mf: ParsedFile, container: Container, env: dict[str, EnvValue]) -> None:
        argv = container.argv
        if not argv:
            return
        first = posixpath.basename(argv[0].value)
        if first in SHELLS:
            kind, index = _shell_invocation([a.value for a in argv[1:]])
            if kind == "inline":
                inline = self._inline_script(mf, argv[1 + index])
                run.launch.inline = inline
                run.script(inline, env, shared=True, depth=0, in_manifest=True)
            elif kind == "script":
                run.call_path(argv[1 + index].value, [], env, mf.path, depth=0)
            return
        words = [_scalar_word(mf, s) for s in argv]
        command = Command(words, argv[0].span, argv[0].span)
        holder = ShellScript(mf.source, exact=False, argv=True)  # the manifest's own command list
        run.command(command, holder, env, depth=0, in_manifest=True)

    def _inline_script(self, mf: ParsedFile, scalar: YScalar) -> ShellScript:
        src = mf.source
        text = src.text
        span = scalar.span
        if scalar.style in ("|", ">"):
            header_end = text.find("\n", span.start)
            start = header_end + 1 if header_end != -1 else span.start
            return parse_embedded(src, start, scalar.content_end, fold=scalar.style == ">")
        if scalar.style in ('"', "'"):
            inner = text[span.start + 1 : span.end - 1]
            if inner == scalar.value:
                return parse_embedded(src, span.start + 1, span.end - 1)
        elif text[span.start : span.end] == scalar.value:
            return parse_embedded(src, span.start, span.end)
        return parse_detached(src, scalar.value, span)

    # standalone jobs
    def standalone_jobs(self, files: list[ParsedFile]) -> list[Job]:
        jobs: list[Job] = []
        scripts = [f for f in files if f.kind == "shell" and isinstance(f.model, ShellScript)]
        called: set[str] = set()
        for f in scripts:
            for cmd in f.model.commands:
                target = self._callee(cmd, f.path)
                if target is not None:
                    called.add(target.path)
        for f in scripts:
            if f.path in self.reached or f.path in called:
                continue
            launch = Launch(None, None)
            env: dict[str, EnvValue] = {}
            _Run(self, launch, f.path).script(f.model, env, shared=True, depth=0)
            launch.env = env
            entries = _unique([c.entry_file for c in launch.commands if c.entry_file])
            for e in entries:
                self.reached.add(e.source.path)
            paths = [s.source.path for s in launch.scripts] + [e.source.path for e in entries]
            context = JobContext(None, _framework(None, [launch], entries), None, self._versions(paths))
            jobs.append(Job(f"{f.path} (standalone)", None, None, [launch], entries, context, self._pin_files(paths)))
        for f in files:
            if f.kind == "python" and isinstance(f.model, PythonFile) and f.path not in self.reached:
                entries = [f.model]
                context = JobContext(None, _framework(None, [], entries), None, self._versions([f.path]))
                jobs.append(Job(f"{f.path} (standalone)", None, None, [], entries, context, self._pin_files([f.path])))
        return jobs

    def _callee(self, cmd: Command, near: str) -> ParsedFile | None:
        words = _strip_wrappers(cmd.words)
        if not words:
            return None
        name = words[0].value or ""
        if name in ("source", "."):
            return self.index.resolve(words[1].value or words[1].text, near, "shell") if len(words) > 1 else None
        if posixpath.basename(name) in SHELLS:
            kind, index = _shell_invocation([w.value or w.text for w in words[1:]])
            if kind == "script":
                return self.index.resolve(words[1 + index].value or words[1 + index].text, near, "shell")
            return None
        if name.endswith((".sh", ".bash")):
            return self.index.resolve(name, near, "shell")
        return None

    # versions
    def _pins_over(self, paths: list[str]) -> list[tuple[int, PinFile]]:
        """Pin files in the folders of ``paths`` or their ancestors, with the depth of their folder."""
        seen: set[str] = set()
        out: list[tuple[int, PinFile]] = []
        for path in paths:
            for folder in _ancestors(posixpath.dirname(path)):
                if folder in seen:
                    continue
                seen.add(folder)
                for f in self.pins_by_dir.get(folder, ()):
                    out.append((_depth(folder), f.model))
        return out

    def _pin_files(self, paths: list[str]) -> list[PinFile]:
        return [model for _, model in sorted(self._pins_over(paths), key=lambda item: item[1].source.path)]

    def _versions(self, paths: list[str]) -> Versions:
        """The nearest exact pin of each component wins; config values fill what no file pins."""
        versions = Versions(configured=dict(self.configured))
        best: dict[str, tuple[int, VersionPin]] = {}
        for depth, model in self._pins_over(paths):
            for pin in model.pins:
                rank = depth * 2 + (1 if pin.exact else 0)
                if pin.component not in best or rank > best[pin.component][0]:
                    best[pin.component] = (rank, pin)
        versions.pins = {c: p for c, (_, p) in best.items() if c in COMPONENTS}
        return versions


class _Run:
    """Simulates one container's start-up over the parsed scripts (nothing is executed)."""

    def __init__(self, linker: _Linker, launch: Launch, origin: str) -> None:
        self.linker = linker
        self.launch = launch
        self.origin = origin
        self.active: set[str] = set()

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
                _apply(env, event, origin)
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
        target = self.linker.index.resolve(reference, near, "shell")
        if target is None or not isinstance(target.model, ShellScript):
            return False
        child = env if shared else _exported_copy(env)
        self.script(target.model, child, shared, depth + 1)
        return True

    def command(
        self,
        cmd: Command,
        script: ShellScript,
        env: dict[str, EnvValue],
        depth: int,
        in_manifest: bool = False,
    ) -> None:
        words = _strip_wrappers(cmd.words)
        if not words:
            return
        name = words[0].value or words[0].text
        near = script.source.path
        args = words[1:]
        if name in ("source", "."):
            if args:
                self.call_path(args[0].value or args[0].text, args[1:], env, near, depth, shared=True)
            return
        if posixpath.basename(name) in SHELLS:
            kind, index = _shell_invocation([w.value or w.text for w in args])
            if kind == "script":
                target = args[index]
                self.call_path(target.value or target.text, args[index + 1 :], env, near, depth)
            return
        if name.endswith((".sh", ".bash")):
            self.call_path(name, args, env, near, depth)
            return
        launcher = classify_launcher(words)
        if launcher is None:
            return
        kind, span = launcher
        cmd_env = _exported_copy(env)
        for prefix in cmd.prefixes:
            _apply(cmd_env, prefix, "inline" if in_manifest else "script")
        offset = len(cmd.words) - len(words)  # wrappers stripped from the front
        entry = _entry_word(words, span[1])
        entry_file = None
        if entry is not None:
            target = self.linker.index.resolve(entry.value or entry.text, near, "python")
            if target is not None and isinstance(target.model, PythonFile):
                entry_file = target.model
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
            )
        )


def _shell_invocation(args: list[str]) -> tuple[str | None, int]:
    """How a shell is invoked: ("inline", i) for ``-c TEXT`` at i, ("script", i) for a script path."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if arg == "--":
            return ("script", i + 1) if i + 1 < len(args) else (None, -1)
        if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg):
            return ("inline", i + 1) if i + 1 < len(args) else (None, -1)
        if arg.startswith(("-", "+")):
            i += 1
            continue
        return "script", i
    return None, -1


def classify_launcher(words: list[Word]) -> tuple[str, tuple[int, int]] | None:
    """Recognize a training launcher; returns its kind and the word range that spells it."""
    if not words:
        return None
    first = words[0]
    name = posixpath.basename(first.value or "")
    if name in ("torchrun", "torch_npu_run", "msrun"):
        return name, (0, 1)
    is_interpreter = bool(PYTHON.match(name)) or (first.value is None and "$" in first.text)
    if not is_interpreter:
        return None
    for i, word in enumerate(words[1:], start=1):
        value = word.value or ""
        if value == "-m" and i + 1 < len(words):
            module = words[i + 1].value or ""
            if module in DISTRIBUTED_MODULES:
                return DISTRIBUTED_MODULES[module], (0, i + 2)
            return None
        if value.startswith("-m") and len(value) > 2:
            module = value[2:]
            return (DISTRIBUTED_MODULES[module], (0, i + 1)) if module in DISTRIBUTED_MODULES else None
        if value.endswith(".py"):
            return ("python", (0, 1)) if PYTHON.match(name) else None
        if not value.startswith("-"):
            return None
    return None


def _entry_word(words: list[Word], after: int) -> Word | None:
    for word in words[after:]:
        text = word.value if word.value is not None else word.text
        if text.endswith(".py") and not text.startswith("-"):
            return word
    return None


def _strip_wrappers(words: list[Word]) -> list[Word]:
    i = 0
    while i < len(words):
        value = words[i].value or ""
        base = posixpath.basename(value)
        if base in WRAPPERS:
            i += 1
            while i < len(words) and (words[i].value or "").startswith("-"):
                i += 1
            continue
        if base == "env":
            i += 1
            while i < len(words) and ("=" in (words[i].value or "") or (words[i].value or "").startswith("-")):
                i += 1
            continue
        break
    return words[i:]


def _apply(env: dict[str, EnvValue], a: Assignment, origin: str) -> None:
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
    env[a.name] = EnvValue(a.name, a.value, origin, a.span, exported, a)


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
    name = "HCCL_ASYNC_ERROR_HANDLING"
    for launch in launches:
        for env in [launch.env] + [c.env for c in launch.commands]:
            current = env.get(name)
            if current is None or current.origin == "container":
                env[name] = EnvValue(name, "0", "operator", None)


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
            if cmd.is_torch_launcher:
                return "pytorch"
    for entry in entries:
        if entry.imports_module("torch", "torch_npu"):
            return "pytorch"
        if entry.imports_module("mindspore"):
            return "mindspore"
        if entry.imports_module("tensorflow"):
            return "tensorflow"
    return None


def _recovery(doc: ManifestDoc) -> str:
    fault = doc.label("fault-scheduling")
    value = fault.value if fault else ""
    if value not in ("grace", "force") and not value.startswith(("external-grace", "external-force")):
        return "none"
    strategy = doc.annotation("recover-strategy")
    process = doc.label("process-recover-enable")
    if (strategy and set(strategy.value.replace(" ", "").split(",")) & PROCESS_RECOVERY_STRATEGIES) or (
        process and process.value == "on"
    ):
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


def _depth(path: str) -> int:
    return 0 if path in ("", ".") else path.count("/") + 1
