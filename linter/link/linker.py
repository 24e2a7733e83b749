"""Link parsed artifacts into jobs, the way the cluster runs them, and decide which are training.

A job is one manifest document with the launch scripts its containers run, the scripts those
source or call, the Python entries the launcher starts, and the versions that apply. A launch
script that no manifest runs is a job of its own when it starts a training; a Python file that no
launch reaches is one only when it is plainly a runnable training entry. Python files are parsed
when a launch or a manifest reaches them (``FileIndex`` asks its loader). Each job carries a
``Verdict`` saying whether recovery advice applies and why; rules only see the jobs that are training."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from itertools import pairwise
from typing import TYPE_CHECKING

from ..jobs import EnvValue, Job, JobContext, Launch, LaunchCommand, Project
from ..kinds import MANIFEST, PIN_KINDS, PYTHON, SHELL, SHELL_KINDS
from ..launchers.scale import Scale
from ..parse import ParsedFile
from ..paths import folder_and_ancestors, under
from ..roles import (
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
from ..shellwords import unwrap, word_value
from ..sources.manifest import Container, ManifestDoc, ManifestFile, PodSpec
from ..sources.shell import SHELLS, Command, ShellScript, shell_invocation
from .batch import batch_environment
from .entries import (
    NPU_STACK_BYTES,
    NPU_STACKS,
    PROCESS_SETTINGS,
    cuda_only,
    is_python_model,
    is_unit_test,
    places_work_on_npu,
    training_loop,
)
from .files import FileIndex, Loader, Sharing
from .manifest_facts import (
    framework_of,
    ignored_recovery_labels,
    manifest_words,
    platform_of,
    recovery_level,
    utility_verdict,
)
from .startup import (
    Reached,
    Run,
    configmap_scripts,
    inject_operator_env,
    scalar_word,
    script_left_as_arguments,
    take_unread_sources,
)
from .versions import DECLARATION_FOLDERS, VersionReader

if TYPE_CHECKING:
    from ..config import JobSpec
    from ..discover import ListedFiles
    from ..sources.python import PyImport, PythonFile

# how far an entry's imports are followed to find where torch_npu is loaded (util/__init__.py ->
# util/misc.py -> import torch_npu is three), and how many repository modules are read on the way
NPU_ROUTE_DEPTH = 3
NPU_ROUTE_MODULES = 48


# what says a launch runs on NPUs: the devices it is given, HCCL's settings, a device option or
# Hydra override, a script named for NPUs (verl's run_*_npu.sh); what says it runs on GPUs
NPU_DEVICE_ENV = ("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES")
# variables only torch_npu (and Ascend's own libraries) read: its allocator (PYTORCH_NPU_ALLOC_CONF),
# its task queue (TASK_QUEUE_ENABLE), its HCCL process group's options (TORCH_HCCL_*, Ascend/pytorch
# torch_npu/csrc/core/npu/register/OptionsManager.cpp); HCCL's own (HCCL_*)
NPU_ONLY_ENV = ("PYTORCH_NPU_ALLOC_CONF", "TASK_QUEUE_ENABLE")
NPU_ONLY_PREFIXES = ("HCCL_", "TORCH_HCCL_")
NPU_DEVICE_WORDS = ("device=npu", "device='npu'", 'device="npu"')
GPU_DEVICE_ENV = ("CUDA_VISIBLE_DEVICES",)


def launch_devices(cmd: LaunchCommand) -> str | None:
    """What a launch says it runs on: "npu", "cuda" (CUDA_VISIBLE_DEVICES and nothing of an NPU;
    torch_npu does not read it), or None."""
    env = cmd.env
    if any(name in env for name in (*NPU_DEVICE_ENV, *NPU_ONLY_ENV)) or any(
        name.startswith(NPU_ONLY_PREFIXES) for name in env
    ):
        return "npu"
    values = [w.value or w.text for w in cmd.words]
    if any(v.endswith(NPU_DEVICE_WORDS) for v in values):
        return "npu"
    if any(a == "--device" and b == "npu" for a, b in pairwise(values)):
        return "npu"
    if "npu" in tokens(posixpath.basename(cmd.script.source.path).rsplit(".", 1)[0]):
        return "npu"
    return "cuda" if any(name in env for name in GPU_DEVICE_ENV) else None


def npu_evidence(job: Job) -> bool:
    """Whether anything beside the entry's own imports says the job runs on NPUs: a platform (a
    manifest label or ``target.platform``), a declared torch_npu or CANN, or a launch that says so
    (``launch_devices``)."""
    versions = job.context.versions
    if job.context.platform is not None or versions.get("torch-npu") or versions.get("cann"):
        return True
    return any(launch_devices(cmd) == "npu" for launch in job.launches for cmd in launch.commands)


def _with_entry_modules(linker: Linker, job: Job) -> Job:
    _link_entry_modules(linker, job)
    return job


def _link_entry_modules(linker: Linker, job: Job) -> None:
    """The repository modules each entry of a training job imports that matter to it: those holding
    a process setting, and, for a PyTorch entry of a job that runs on NPUs but does not import
    torch_npu itself, the way it loads it."""
    job.entry_modules = {e.source.path: linker.setting_modules(e) for e in job.entries}
    if not job.context.pytorch or not npu_evidence(job):
        return
    job.npu_routes_followed = True
    for entry in job.entries:
        if entry.imports_module(*NPU_STACKS):
            continue
        route = linker.npu_route(entry)
        if route is not None:
            first, modules, settings = route
            job.npu_routes[entry.source.path] = (first, modules)
            known = job.entry_modules[entry.source.path]
            known += [m for m in settings if m not in known]


def build_project(
    files: list[ParsedFile],
    configured_versions: dict[str, str] | None = None,
    job_specs: list[JobSpec] | None = None,
    pending: dict[str, str] | None = None,
    loader: Loader | None = None,
    locations: dict[str, str] | None = None,
    settings: dict[str, str] | None = None,
    inside: list[str] | None = None,
    aside: list[ParsedFile] | None = None,
    later: ListedFiles | None = None,
) -> Project:
    """Link ``files`` into jobs. ``pending`` lists files (path -> kind) not parsed yet; ``loader``
    parses one of them when a link reaches it; ``locations`` gives each display path's absolute
    location (display paths are taken as locations when it is missing). ``aside``: files read that
    are no file of a job (a YAML config, a hostfile), which a launch may name. ``inside``: the absolute
    folders of a run over folders of a larger repository, whose files alone are reported. ``later``:
    files of the repository made candidates only when a link reaches them (a run over named files)."""
    index = FileIndex(files, pending, loader, locations, aside, later)
    linker = Linker(index, configured_versions or {}, job_specs or [], settings or {}, inside)
    jobs: list[Job] = []
    for f in files:
        if f.kind == MANIFEST and isinstance(f.model, ManifestFile):
            for doc in f.model.docs:
                if doc.pods and any(p.containers for p in doc.pods):
                    job = linker.guarded(f.path, lambda f=f, doc=doc: linker.manifest_job(f, doc))
                    jobs.extend([job] if job is not None else [])
    jobs.extend(linker.standalone_jobs(files))
    jobs.extend(linker.standalone_entries())
    linked: list[Job] = []
    for job in jobs:
        if job.judged:
            # a job whose entries' modules cannot be linked (a defect) is left out like one not made
            job = linker.guarded(job.id, lambda job=job: _with_entry_modules(linker, job))
        if job is not None:
            linked.append(job)
    jobs = linked
    parsed = files + index.loaded
    return Project(
        parsed,
        [j for j in jobs if j.judged],
        index.by_path,
        [j for j in jobs if not j.judged],
        Judgements(lambda: linker.judgements(files + index.loaded, jobs)),
        sharing=Sharing(index),
        entry_runs=entry_runs(jobs),
        link_errors=linker.errors,
    )


def entry_runs(jobs: list[Job]) -> dict[str, frozenset[str]]:
    """Each Python entry, with the ids of the jobs whose launches run it."""
    runs: dict[str, set[str]] = {}
    for job in jobs:
        paths = {e.source.path for e in job.entries}
        paths.update(c.entry_file.source.path for launch in job.launches for c in launch.commands if c.entry_file)
        for path in paths:
            runs.setdefault(path, set()).add(job.id)
    return {path: frozenset(ids) for path, ids in runs.items()}


class Judgements(Mapping):
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


class Linker:
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
        self.start_ups = Reached(index)  # what the jobs' start-ups have linked so far
        self.versions = VersionReader(index, configured)
        self.errors: list[str] = []  # files whose linking failed (a defect), said at the end of the run

    def guarded(self, what: str, link: Callable[[], Job | None]) -> Job | None:
        """The job ``link`` makes of ``what`` (a file, or a job whose entries it links); None, with the
        error kept, when linking fails: a defect met there leaves the run's other jobs linked and
        reported."""
        try:
            return link()
        except Exception as exc:
            self.errors.append(f"linking {what} failed ({type(exc).__name__}: {exc}); its jobs are left out")
            return None

    # jobs from manifests
    def manifest_job(self, mf: ParsedFile, doc: ManifestDoc) -> Job:
        spec = self._spec_for(doc)
        launches = [self._container_launch(mf, doc, pod, c, spec) for pod, c in doc.containers()]
        verdict = manifest_verdict(doc.kind, manifest_words(doc, launches), mf.path, _distributed_launch(launches))
        if verdict.judged:
            verdict = utility_verdict(launches) or verdict
        for launch in launches:
            for cmd in launch.commands:
                cmd.verdict = self._manifest_command_verdict(cmd, verdict)
        entries = _unique([c.entry_file for launch in launches for c in launch.commands if c.entry_file and c.judged])
        if spec and spec.entry:
            extra = self.index.resolve(spec.entry, mf.path, PYTHON)
            if extra and is_python_model(extra.model) and extra.model not in entries:
                entries.append(extra.model)
        for e in entries:
            self.start_ups.paths.add(e.source.path)
        paths = [mf.path] + [s.source.path for launch in launches for s in launch.scripts]
        paths += [e.source.path for e in entries]
        versions, pin_files = self.versions.of(paths, launches, entries)
        context = JobContext(
            platform_of(doc),
            framework_of(doc, launches, entries),
            recovery_level(doc),
            versions,
            settings=dict(self.settings),
        )
        context.notes.extend(ignored_recovery_labels(doc))
        if doc.recover_strategy is not None and context.pytorch:
            inject_operator_env(launches)
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
        run = Run(self.start_ups, launch, mf.path, cwd=container.working_dir)
        run.configmaps = configmap_scripts(mf, pod, container)
        if spec and spec.scripts:
            for ref in spec.scripts:
                target = self.index.resolve(ref, mf.path, SHELL)
                if target and isinstance(target.model, ShellScript):
                    run.script(target.model, env, shared=True, depth=0)
        else:
            self._argv(run, mf, container, env)
        launch.env = env
        launch.unread_sources = take_unread_sources(env)
        if not launch.commands:
            launch.note = script_left_as_arguments(container)
        if spec and spec.entry:
            entry = self.index.resolve(spec.entry, mf.path, PYTHON)
            for cmd in launch.commands:
                if cmd.entry_file is None and entry and is_python_model(entry.model):
                    cmd.entry_file = entry.model
                    cmd.entry_note = ""
        return launch

    def _argv(self, run: Run, mf: ParsedFile, container: Container, env: dict[str, EnvValue]) -> None:
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
                words = [scalar_word(mf, s) for s in argv[2 + index :]]
                run.call_path(argv[1 + index].value, words, env, mf.path, depth=0)
            return
        words = [scalar_word(mf, s) for s in argv]
        command = Command(words, argv[0].span, argv[0].span)
        holder = ShellScript(mf.source, exact=False, argv=True)  # the manifest's own command list
        run.command(command, holder, env, depth=0, in_manifest=True)

    # standalone launch scripts
    def standalone_jobs(self, files: list[ParsedFile]) -> list[Job]:
        jobs: list[Job] = []
        scripts = [f for f in files if f.kind == SHELL and isinstance(f.model, ShellScript)]
        called: set[str] = set()
        for f in scripts:
            for cmd in f.model.commands:
                target = self._callee(cmd, f.path)
                if target is not None and target.path != f.path:
                    called.add(target.path)
        for f in scripts:
            if f.path in self.start_ups.paths or f.path in called:
                continue
            job = self.guarded(f.path, lambda f=f: self._standalone_job(f))
            if job is not None:
                jobs.append(job)
        return jobs

    def _standalone_job(self, f: ParsedFile) -> Job | None:
        """The job of a script no manifest or other script runs; None when it starts no launch."""
        launch = Launch(None, None)
        env = batch_environment(f.model)  # a batch script starts with what its directives ask for
        Run(self.start_ups, launch, f.path).script(f.model, env, shared=True, depth=0)
        launch.env = env
        launch.unread_sources = take_unread_sources(env)
        if not launch.commands:
            return None  # judged with the files no job covers
        for cmd in launch.commands:
            cmd.verdict = self._command_verdict(cmd)
        _judge_by_starting_script(launch, f.path)
        training = [c for c in launch.commands if c.judged]
        verdict = training[0].verdict if training else launch.commands[0].verdict
        assert verdict is not None
        entries = _unique([c.entry_file for c in training if c.entry_file])
        for e in entries:
            self.start_ups.paths.add(e.source.path)
        paths = [s.source.path for s in launch.scripts] + [e.source.path for e in entries]
        versions, pin_files = self.versions.of(paths, [launch], entries)
        context = JobContext(None, framework_of(None, [launch], entries), None, versions, settings=dict(self.settings))
        return Job(f"{f.path} (standalone)", None, None, [launch], entries, context, pin_files, verdict)

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
            entry_test=entry is not None and is_unit_test(entry),
            entry_on_cuda=entry is not None and not imports & NPU_STACKS - {"torch_npu"} and cuda_only(entry),
            devices=launch_devices(cmd),
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
            return self.index.resolve(words[1].value or words[1].text, near, SHELL) if len(words) > 1 else None
        if posixpath.basename(name) in SHELLS:
            kind, index = shell_invocation([w.value or w.text for w in words[1:]])
            if kind == "script":
                return self.index.resolve(words[1 + index].value or words[1 + index].text, near, SHELL)
            return None
        if name.endswith((".sh", ".bash")):
            return self.index.resolve(name, near, SHELL)
        return None

    # standalone Python entries
    def standalone_entries(self) -> list[Job]:
        """Python files no launch reaches that are plainly training entries (a training name, a
        ``__main__`` block, a training loop): started by something the repository does not show."""
        jobs: list[Job] = []
        for path, kind in sorted(self.index.open_kinds().items()):
            if kind != PYTHON or path in self.start_ups.paths:
                continue
            job = self.guarded(path, lambda path=path: self._standalone_entry(path))
            if job is not None:
                jobs.append(job)
        return jobs

    def _standalone_entry(self, path: str) -> Job | None:
        """The job of a Python file no launch reaches, when it is plainly a training entry."""
        if not standalone_name(path) or not self._may_hold_inside_files(path):
            return None
        if self._secondary(path) or not self.index.may_contain(path, NPU_STACK_BYTES):
            return None
        parsed = self.index.get(path, PYTHON)
        if parsed is None or not is_python_model(parsed.model):
            return None
        model = parsed.model
        imports = frozenset(i.module.split(".")[0] for i in model.imports)
        if not imports & NPU_STACKS:
            return None
        runnable = model.has_main_guard or model.top_level_call
        on_npu = bool(imports & NPU_STACKS - {"torch_npu"}) or places_work_on_npu(model)
        verdict = standalone_entry_verdict(path, runnable, imports, training_loop(model), on_npu)
        self.start_ups.paths.add(path)
        versions, pin_files = self.versions.of([path], [], [model])
        context = JobContext(None, framework_of(None, [], [model]), None, versions, settings=dict(self.settings))
        return Job(f"{path} (standalone)", None, None, [], [model], context, pin_files, verdict)

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
        bases = folder_and_ancestors(self.index.folder_of(entry.source.path))[:3]
        for imp in entry.imports:
            for path in self._module_paths(imp.module, entry.source.path, bases):
                if path in found or not self.index.holds(path, PROCESS_SETTINGS):
                    continue
                module = self._python(path)
                if module is not None:
                    found[path] = module
        return list(found.values())

    def npu_route(self, entry: PythonFile) -> tuple[PyImport, tuple[str, ...], list[PythonFile]] | None:
        """How an entry that does not import torch_npu itself loads it: the entry's import that leads
        there and the repository modules on the way, the last one importing torch_npu (or MindSpeed),
        every import on the way at module level (in a module-level ``if`` or ``try`` too, not in a
        function nor under ``if TYPE_CHECKING:``), followed through at most NPU_ROUTE_DEPTH
        imports and NPU_ROUTE_MODULES modules; with every module met that holds a process setting.
        None when no such route is found. The modules on the way are read for their import
        statements only."""
        bases = folder_and_ancestors(self.index.folder_of(entry.source.path))[:3]
        seen = {entry.source.path}
        settings: list[PythonFile] = []
        level: list[tuple[PyImport, tuple[str, ...]]] = []
        statements = {i.module: i for i in (*entry.relative_imports, *entry.imports)}  # where each is written
        for name in self.index.module_imports(entry.source.path):
            imp = statements.get(name)
            if imp is None:
                continue
            for path in self._module_paths(name, entry.source.path, bases):
                if path not in seen:
                    seen.add(path)
                    level.append((imp, (path,)))
        for _ in range(NPU_ROUTE_DEPTH):
            following = []
            for first, route in level:
                path = route[-1]
                if self.index.holds(path, PROCESS_SETTINGS):
                    module = self._python(path)
                    settings += [module] if module is not None else []
                names = self.index.module_imports(path)
                if any(name.split(".")[0] in NPU_STACKS for name in names):
                    return first, route, settings
                for name in names:
                    for found in self._module_paths(name, path, bases):
                        if found not in seen and len(seen) < NPU_ROUTE_MODULES:
                            seen.add(found)
                            following.append((first, (*route, found)))
            level = following
        return None

    def _python(self, path: str) -> PythonFile | None:
        parsed = self.index.get(path, PYTHON)
        return parsed.model if parsed is not None and is_python_model(parsed.model) else None

    def _module_paths(self, name: str, importer: str, bases: list[str]) -> list[str]:
        """The repository files an import names: an absolute module looked up from ``bases`` (the
        entry's folder and the two above it) and from the folder holding the importer's own package
        of that name (``verl.trainer`` imported from ``verl/experimental/x/main.py``), a relative one
        from the importer's package; a name imported from a module counts as that module."""
        dots = len(name) - len(name.lstrip("."))
        parts = name[dots:].split(".") if name[dots:] else []
        roots = bases
        own = _package_root(self.index.folder_of(importer), parts[0]) if parts and not dots else None
        if own is not None and own not in bases:
            roots = [*bases, own]
        if dots:
            package = self.index.folder_of(importer)
            for _ in range(dots - 1):
                package = posixpath.dirname(package)
            roots = [package]
        out = []
        for root in roots:
            for size in (len(parts), len(parts) - 1):  # the module itself, or the one a name comes from
                stem = under(root, "/".join(parts[:size])) if size else root if dots else None
                if stem is None:
                    continue
                for location in (stem + ".py", stem + "/__init__.py"):
                    path = self.index.display_at(location)
                    if path is not None and path != importer and path not in out:
                        out.append(path)
        return out

    def _secondary(self, path: str) -> bool:
        """A folder whose launch scripts run another entry: this one is not what the cluster trains."""
        folder = posixpath.dirname(path)
        return folder in self.start_ups.entry_folders or posixpath.dirname(folder) in self.start_ups.entry_folders

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
            if f.kind == MANIFEST:
                out[f.path] = Verdict(
                    "no-job", "no training workload in it" if f.relevant else "not a Kubernetes object"
                )
            elif f.kind == SHELL:
                out[f.path] = Verdict("no-launch", "starts no training launcher")
            elif f.kind in PIN_KINDS:
                gpu = getattr(f.model, "gpu_stack", "")
                why = f"{gpu}: a GPU stack, not read for NPU jobs" if gpu else "read for the jobs below it"
                out[f.path] = Verdict("versions", f"version declarations, {why}")
            elif f.kind == PYTHON:
                out[f.path] = Verdict("unknown", "read, but no training launch runs it")
        for path, kind in self.index.unread():
            if kind == PYTHON:
                out.setdefault(path, Verdict("unknown", "not read: no launch or manifest reaches it"))
            elif kind in SHELL_KINDS:
                why = vendored(path)
                aside = Verdict("vendored", f"not read: {why}") if why else None
                why = ci_path(path)
                aside = aside or (Verdict("ci", f"not read: {why}") if why else None)
                out.setdefault(path, aside or Verdict("unknown", "not read: nothing reaches it"))
        return out


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


def _package_root(folder: str, package: str) -> str | None:
    """The folder that holds the nearest folder named ``package`` on the way up from ``folder``
    (itself included): where ``import package.x`` resolves for a module inside that package."""
    while folder not in ("", ".", "/"):
        if posixpath.basename(folder) == package:
            return posixpath.dirname(folder)
        folder = posixpath.dirname(folder)
    return None


def _distributed_launch(launches: list[Launch]) -> str | None:
    """The first distributed launch a workload's containers run, as ``torchrun at train.sh:3``."""
    for launch in launches:
        for cmd in launch.commands:
            if cmd.is_distributed:
                where = cmd.command.span
                return f"{cmd.launcher} at {where.path}:{where.line}"
    return None
