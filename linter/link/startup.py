"""The start-up of one container (or one standalone script) simulated over the parsed scripts: the
environment at each command in execution order (operator-injected variables, container ``env``,
inline ``bash -c`` exports, then script exports; ``source`` shares the shell, ``bash x.sh`` inherits
a copy), and the launches it reaches. Nothing is executed."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..jobs import EnvValue, Launch, LaunchCommand
from ..kinds import PYTHON, SHELL
from ..knowledge.data import WATCHDOG_VAR
from ..launchers.recognise import PYTHON_INTERPRETER, Recognised, entry_word, module_path, recognise
from ..launchers.scale import ReadFile, launch_scale, mapping_of
from ..launchers.table import PYTHON as PYTHON_FAMILY
from ..launchers.table import PYTHON_ROW, RAY_WORKERS, WRAPPER_LAUNCHERS, Launcher
from ..lazyre import LazyPattern
from ..parse import ParsedFile
from ..shellwords import expand, expand_command, split_arguments, undecided, unreachable, unwrap, word_value
from ..sources.manifest import OPERATOR_CONTAINER, Container, ManifestFile, PodSpec, scalar_script
from ..sources.shell import (
    INLINE_SHELLS,
    SHELLS,
    Assignment,
    Command,
    ShellScript,
    Word,
    parse_embedded,
    shell_invocation,
)
from ..sources.yamlnodes import YScalar
from .entries import is_python_model
from .files import FileIndex

if TYPE_CHECKING:
    from ..sources.python import PythonFile


MAX_DEPTH = 8


class Reached:
    """What the start-ups of a repository's jobs have reached so far, shared by every ``Run``: the
    scripts and entries linked, the folders of the entries launches run, and the scripts written in
    a manifest (parsed once for every container)."""

    def __init__(self, index: FileIndex) -> None:
        self.index = index
        self.paths: set[str] = set()
        self.entry_folders: set[str] = set()
        self._embedded: dict[tuple[str, int], ShellScript] = {}
        self._inline: dict[tuple[str, int], ShellScript | None] = {}

    def inline_script(self, script: ShellScript, word: Word) -> ShellScript | None:
        """The script a shell runs from ``-c``, written in a script as one quoted word (``srun bash -c
        "torchrun ..."``), parsed where it is written; None for any other word (a concatenation, a
        value from a variable), or where the script's words only point at the text holding it (a
        YAML scalar with escapes) or are YAML list items. No edit is made in it: it is text inside
        another command's quotes."""
        key = (script.source.path, word.span.start)
        if key not in self._inline:
            found = None
            if script.exact and not script.argv and _one_quoted_string(word.text):
                found = parse_embedded(script.source, word.span.start + 1, word.span.end - 1)
                found.exact = False
            self._inline[key] = found
        return self._inline[key]

    def embedded_script(self, mf: ParsedFile, scalar: YScalar) -> ShellScript:
        """A shell script written in a manifest (a ConfigMap's data), parsed once for every container."""
        key = (mf.path, scalar.span.start)
        found = self._embedded.get(key)
        if found is None:
            found = self._embedded[key] = scalar_script(scalar)
        return found


class Run:
    """Simulates one container's start-up over the parsed scripts (nothing is executed)."""

    def __init__(self, reached: Reached, launch: Launch, origin: str, cwd: str | None = None) -> None:
        self.reached = reached
        self.index = reached.index
        self.launch = launch
        self.origin = origin
        self.active: set[str] = set()
        self.cwd = cwd  # the working directory as written (a container path), when known
        self.configmaps: dict[str, tuple[ParsedFile, YScalar]] = {}  # container path -> a ConfigMap's script
        self.ray_env: dict[str, EnvValue] | None = None  # the environment at `ray start`, when the script runs it

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
            self.reached.paths.add(path)
            if script not in self.launch.scripts:
                self.launch.scripts.append(script)
        self.active.add(path)
        self._events(script, env, depth, in_manifest)
        self.active.discard(path)

    def _events(self, script: ShellScript, env: dict[str, EnvValue], depth: int, in_manifest: bool) -> None:
        origin = "inline" if in_manifest else "script"
        for event in script.events:
            if isinstance(event, Assignment):
                apply_assignment(env, event, origin, script)
            else:
                self.command(event, script, env, depth, in_manifest)

    def shell_text(
        self, inner: ShellScript, quote: str, env: dict[str, EnvValue], depth: int, in_manifest: bool
    ) -> None:
        """A shell started on a script given as text, in a new process: in double quotes the caller's
        shell has put its own variables in (exported or not), in single quotes only the exported
        ones reach it. Its commands belong to the job like a script's."""
        if depth > MAX_DEPTH:
            return
        if inner not in self.launch.scripts:
            self.launch.scripts.append(inner)
        child = dict(env) if quote == '"' else exported_copy(env)
        self._events(inner, child, depth + 1, in_manifest)

    def call_path(
        self,
        reference: str,
        args: list[Word],
        env: dict[str, EnvValue],
        near: str,
        depth: int,
        shared: bool = False,
    ) -> bool:
        target = self.index.resolve(reference, near, SHELL, self._cwd_folder(near))
        model = target.model if target is not None else self._configmap_script(reference)
        if not isinstance(model, ShellScript):
            return False
        child = env if shared else exported_copy(env)
        values = values_of(env)
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
        return self.reached.embedded_script(mf, scalar)

    def _cwd_folder(self, near: str) -> str | None:
        """The working directory as a repository folder, when a ``cd`` or workingDir names one."""
        if self.cwd is None:
            return None
        return self.index.map_folder(self.cwd, near)

    def command(
        self,
        cmd: Command,
        script: ShellScript,
        env: dict[str, EnvValue],
        depth: int,
        in_manifest: bool = False,
    ) -> None:
        values = values_of(env)
        certain = _CertainValues(env, cmd.function is not None) if cmd.guards else None
        if certain is not None and unreachable(cmd.guards, certain):
            return  # a branch the known values rule out (the MindSpore branch of a PyTorch job)
        expanded, changed = expand_command(cmd.words, values)
        unwrapped = unwrap(expanded)
        if unwrapped.offset:  # a wrapper running a command line held in a variable: ``srun $CMD``
            inner, more = expand_command(unwrapped.words, values)
            if more:
                expanded, changed = expanded[: unwrapped.offset] + inner, True
                unwrapped = unwrap(expanded)
        words = unwrapped.words
        if not words:
            return
        name = words[0].value or words[0].text
        near = script.source.path
        args = words[1:]
        if name == "cd" and not cmd.conditional:
            target = word_value(args[0], values) if args else None
            below = _below_unknown_folder(args[0].text) if args and target is None else None
            self.cwd = _change_dir(None, below) if below is not None else _change_dir(self.cwd, target)
            return
        if name in ("source", "."):
            if args:
                written = args[0].value or args[0].text
                expanded = word_value(args[0], values)  # source ./${training_script}: the file it names
                if not self.call_path(expanded or written, args[1:], env, near, depth, shared=True):
                    mark_unread_source(env, written, expanded, args[0].span)
            return
        if posixpath.basename(name) in SHELLS:
            kind, index = shell_invocation([w.value or w.text for w in args])
            if kind == "script":
                target = args[index]
                self.call_path(word_value(target, values) or target.text, args[index + 1 :], env, near, depth)
            elif kind == "inline" and not changed:
                inner = self.reached.inline_script(script, args[index])
                if inner is not None:
                    self.shell_text(inner, args[index].text[0], env, depth, in_manifest)
            return
        if name.endswith((".sh", ".bash")):
            self.call_path(name, args, env, near, depth)
            return
        if name == "eval" and args:
            line = " ".join(word_value(w, values) or w.text for w in args)
            inner = expand(line, values) or line
            split = [Word(p, p, cmd.span) for p in inner.split()]
            if split and split[0].text != "eval":
                inner_cmd = Command(
                    split, cmd.span, cmd.statement, [], cmd.function, cmd.conditional, cmd.loops, cmd.guards
                )
                self.command(inner_cmd, script, env, depth, in_manifest)
            return
        if name == "ray" and args and (word_value(args[0], values) or "") == "start":
            self.ray_env = exported_copy(env)  # what the Ray workers this node starts will see
            return
        # a launch known only by the end of its path is taken only where every branch it sits in is
        # decided: shared start scripts pick the framework's branch by a variable (the samples' own)
        partial = certain is None or not undecided(cmd.guards, certain)
        found = recognise(words, values, partial) or self._module_launch(words, values, near)
        if found is None:
            return
        row, span = found.row, found.span
        origin = "inline" if in_manifest else "script"
        cmd_env = exported_copy(env)
        for prefix in cmd.prefixes:
            apply_assignment(cmd_env, prefix, origin, script, shell=env)
        for var, value, word in unwrapped.assignments:
            cmd_env[var] = EnvValue(var, value, origin, word.span)
        offset = len(cmd.words) - len(words) if not changed else 0
        run_words = words[: span[1]] + split_arguments(words[span[1] :], values)
        entry, entry_file, note, entry_path = self._entry_of(found, run_words, values, near)
        wrapper = _wrapper(expanded[: unwrapped.offset], values)
        scale = launch_scale(
            row,
            _own_words(row, run_words, span[1], entry),
            values,
            values_of(cmd_env),
            cmd.loops,
            posixpath.basename(near),
            self._reader(near),
            wrapper,
        )
        unread = take_unread_sources(cmd_env)
        ranks_env, env_note, env_complete = cmd_env, "", True
        if unread:
            first = unread[0]
            env_note = (
                f"not all known: {first.span.path}:{first.span.line} sources {first.template}, which could not be "
                "read, and it may set any variable"
            )
        if row.ranks_env == RAY_WORKERS:
            ranks_env, env_note, env_complete = self._actor_env(expanded[: unwrapped.offset], values, near)
        self.launch.commands.append(
            LaunchCommand(
                cmd,
                script,
                row.name,
                (span[0] + offset, span[1] + offset),
                entry,
                entry_file,
                ranks_env,
                in_manifest,
                exact=not changed,
                words=run_words,
                scale=scale,
                entry_note=note,
                entry_path=entry_path,
                row=row,
                subcommand=found.subcommand,
                env_note=env_note,
                env_complete=env_complete,
                unread_sources=unread,
            )
        )
        if entry_file is not None:
            self.reached.entry_folders.add(posixpath.dirname(entry_file.source.path))

    def _entry_of(
        self, found: Recognised, words: list[Word], values: Mapping[str, str | None], near: str
    ) -> tuple[Word | None, PythonFile | None, str, str | None]:
        """The word naming the entry the ranks run, its file, why it is not known, and its path."""
        row = found.row
        if found.module_entry is not None:
            entry = words[found.module_entry]
            return (entry, *self._entry(entry, words, values, near))
        if row.runs != "script":
            module = row.runs.format(sub=found.subcommand or "")
            target = self.index.resolve(module, near, PYTHON, self._cwd_folder(near))
            if target is None or not is_python_model(target.model):
                return None, None, f"{row.name} runs its own module ({module}), not in the linted files", None
            return None, target.model, "", target.path
        entry = entry_word(row, words, found.span[1], values)
        return (entry, *self._entry(entry, words, values, near))

    def _actor_env(
        self, submit: list[Word], values: Mapping[str, str | None], near: str
    ) -> tuple[dict[str, EnvValue], str, bool]:
        """What Ray actors see: the environment ``ray start`` had in this script, with the env_vars
        of a ``ray job submit --runtime-env`` file the repository holds; the note that says so, and
        whether that is all of it (not with a cluster started elsewhere, or a runtime environment
        this run cannot read)."""
        if self.ray_env is None:
            note = "the ranks are Ray actors: with no `ray start` in this script, they see the environment of whatever"
            note += " started the Ray cluster (this script's own only when its `ray.init()` starts one)"
            return {}, note, False
        env = dict(self.ray_env)
        texts = [word_value(w, values) or w.text for w in submit]
        named = next((t for t in texts if t.startswith("--runtime-env")), None)
        if named is None:
            return env, "the ranks are Ray actors: they see the environment `ray start` had in this script", True
        flag, _, value = named.partition("=")
        if not value and flag in texts and texts.index(flag) + 1 < len(texts):
            value = texts[texts.index(flag) + 1]
        extra = _runtime_env_vars(flag, value, self._reader(near))
        if extra is None:
            note = f"the ranks are Ray actors: `ray start` in this script, and {named} adds variables the repository"
            note += " does not show"
            return env, note, False
        env.update({name: EnvValue(name, text, "runtime-env", None) for name, text in extra.items()})
        return env, f"the ranks are Ray actors: `ray start` in this script, and the env_vars of {value}", True

    def _reader(self, near: str) -> ReadFile:
        """The text of a file a launch names (a hostfile, a config file), when the repository holds it."""

        def read(reference: str) -> str | None:
            found = self.index.resolve_any(reference, near, self._cwd_folder(near))
            return found.text if found is not None and found.source is not None else None

        return read

    def _module_launch(self, words: list[Word], values: Mapping[str, str | None], near: str) -> Recognised | None:
        """``python3 -m pkg.train`` where ``pkg/train.py`` is a file of the repository: a launch of it
        (``python -m pip`` or another installed module is not)."""
        first = word_value(words[0], values) or ""
        if not PYTHON_INTERPRETER.match(posixpath.basename(first)):
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
            found = self.index.resolve(path, near, PYTHON, self._cwd_folder(near)) if path else None
            return Recognised(PYTHON_ROW, (0, 1)) if found is not None else None
        return None

    def _entry(
        self, entry: Word | None, words: list[Word], values: Mapping[str, str | None], near: str
    ) -> tuple[PythonFile | None, str, str | None]:
        if entry is None:
            return None, "no Python entry in the command", None
        text = module_path(entry, words, values) or word_value(entry, values) or static_tail(entry.text)
        if not text or not text.endswith(".py"):
            return None, f"the entry {entry.text} is built at run time", None
        target = self.index.resolve(text, near, PYTHON, self._cwd_folder(near))
        if target is None:
            return None, f"{text} is not in the linted files", None
        if not is_python_model(target.model):
            return None, f"{target.path} could not be read", target.path
        return target.model, "", target.path


def _own_words(row: Launcher, words: list[Word], after: int, entry: Word | None) -> list[Word]:
    """The words a launcher reads its counts from: its own options, up to the program it runs (a
    plain Python program's arguments are its scale: ``--world-size``, ``--device_num``; so are those
    of a module that is the launcher itself, verl's ``main_ppo`` and its Hydra overrides)."""
    if row.family == PYTHON_FAMILY or entry is None:
        return words[after:]
    at = next((k for k, w in enumerate(words) if w is entry), len(words))
    return words[after:] if at < after else words[after:at]


def _wrapper(stripped: list[Word], values: Mapping[str, str | None]) -> tuple[Launcher, list[Word]] | None:
    """An srun or mpirun among the words stripped before the launch, with its options."""
    for i, word in enumerate(stripped):
        row = WRAPPER_LAUNCHERS.get(posixpath.basename(word_value(word, values) or word.text))
        if row is not None:
            return row, stripped[i + 1 :]
    return None


def static_tail(text: str) -> str | None:
    """The literal part after the last expansion: ``${dir}/../main.py`` -> ``../main.py`` (read from
    the script's folder, which is what such a variable usually names)."""
    match = re.search(r"[^$}`\"']*$", text.rstrip("\"'"))
    tail = match.group(0).lstrip("/") if match else ""
    return tail or None


# cd "${cur_path}/references/classification": a folder below one the script computes at run time
_BELOW_VARIABLE = LazyPattern(r"""^["']?\$\{?\w+\}?/((?:[\w.-]+/)*[\w.-]+)/?["']?$""")


def _below_unknown_folder(text: str) -> str | None:
    """The literal folder path below a single leading variable whose value is not known (ModelZoo's
    ``cur_path=`pwd```), kept relative like a ``cd`` from an unknown directory: it is then looked up
    below the script's folder and its ancestors. None for anything else, or a path climbing up."""
    match = _BELOW_VARIABLE.match(text)
    if match is None or any(part == ".." for part in match.group(1).split("/")):
        return None
    return match.group(1)


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

    def written(self, name: str) -> str | None:
        """A variable's value as its assignment writes it (``$(cat $HOSTFILE | wc -l)``)."""
        value = self.env.get(name)
        span = value.assignment.value_span if value is not None and value.assignment is not None else None
        return span.source.text[span.start : span.end] if span is not None else None

    def __iter__(self):
        return iter(self.env)

    def __len__(self) -> int:
        return len(self.env)


def values_of(env: dict[str, EnvValue]) -> _Values:
    return _Values(env)


class _CertainValues(_Values):
    """The values a branch may be decided by: set unconditionally (a value an ``if`` branch or an
    ``&&`` may have set is not certain), and no positional parameter inside a function (there they
    are the function's arguments, not the script's)."""

    __slots__ = ("in_function",)

    def __init__(self, env: dict[str, EnvValue], in_function: bool) -> None:
        super().__init__(env)
        self.in_function = in_function

    def get(self, name: str, default: str | None = None) -> str | None:
        if self.in_function and (name.isdigit() or name in ("@", "*", "#")):
            return None
        value = self.env.get(name)
        if value is None or value.conditional:
            return None
        return value.known

    def __getitem__(self, name: str) -> str | None:
        return self.get(name)


def apply_assignment(
    env: dict[str, EnvValue],
    a: Assignment,
    origin: str,
    script: ShellScript | None = None,
    shell: dict[str, EnvValue] | None = None,
) -> None:
    """``a`` applied to ``env``; its value expanded with ``shell``'s variables (all of them, exported
    or not: ``NPROC_PER_NODE=$nproc_per_node cmd`` reads a plain shell variable), ``env``'s by default."""
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
        expanded = expand(raw, values_of(shell if shell is not None else env))
        if raw[:1] in "\"'" and raw[-1:] == raw[:1] and len(raw) > 1:
            template = raw[1:-1]
    env[a.name] = EnvValue(a.name, a.value, origin, a.span, exported, a, expanded=expanded, template=template)


# where a script sourced something the linker could not read: kept in the environment under keys
# no shell variable can have, so that it follows the scope of what was sourced (a child shell's copy)
_UNREAD = "\x00source"


def mark_unread_source(env: dict[str, EnvValue], reference: str, expanded: str | None, span) -> None:
    """A ``source`` of a script that could not be read (``reference`` as written, ``expanded`` with the
    variables known): every variable it may set is now unknown. A script whose variables are
    documented (CANN's set_env.sh, an activate script) sets only those."""
    documented = documented_environment_script(expanded or reference)
    names = list(env) if documented is None else [n for n in env if documented(n)]
    for name in names:
        if name.startswith(_UNREAD):
            continue
        old = env[name]
        # the source may have replaced the value: known no longer (an `if` branch may not run it)
        env[name] = EnvValue(name, None, "script", old.span, old.exported, None, old.container)
    if documented is None:
        key = f"{_UNREAD}{sum(1 for n in env if n.startswith(_UNREAD))}"
        env[key] = EnvValue(key, None, "script", span, True, template=reference)


def take_unread_sources(env: dict[str, EnvValue]) -> tuple[EnvValue, ...]:
    """The unread sources recorded in ``env`` (removed from it): what a launch's ranks may also see."""
    keys = [k for k in env if k.startswith(_UNREAD)]
    return tuple(env.pop(k) for k in keys)


def documented_environment_script(reference: str):
    """For a script whose variables are documented (knowledge.json ``environment_scripts``), a test
    of a variable name it sets; None for any other script."""
    from ..knowledge.data import environment_scripts

    for pattern, test in environment_scripts():
        if pattern.search(reference.strip("\"'")):
            return test
    return None


def exported_copy(env: dict[str, EnvValue]) -> dict[str, EnvValue]:
    return {k: v for k, v in env.items() if v.exported}


def scalar_word(mf: ParsedFile, scalar: YScalar) -> Word:
    span = scalar.span
    if scalar.quoted and mf.text[span.start + 1 : span.end - 1] == scalar.value:
        span = mf.source.span(span.start + 1, span.end - 1)
    return Word(scalar.value, scalar.value, span)


def inject_operator_env(launches: list[Launch]) -> None:
    """Ascend Operator adds HCCL_ASYNC_ERROR_HANDLING=0 for PyTorch process-level recovery.

    The operator appends the variable to the container's ``env`` list, and the last of duplicate
    entries wins, so it replaces a container ``env`` value; shell exports still override it.
    """
    name = WATCHDOG_VAR
    for launch in launches:
        if launch.container is None or launch.container.name != OPERATOR_CONTAINER:
            continue  # the operator writes the environment of the container named ascend only
        for env in [launch.env] + [c.env for c in launch.commands]:
            current = env.get(name)
            if current is None or current.origin == "container":
                env[name] = EnvValue(name, "0", "operator", None)


def configmap_scripts(mf: ParsedFile, pod: PodSpec, container: Container) -> dict[str, tuple[ParsedFile, YScalar]]:
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


def script_left_as_arguments(container: Container) -> str:
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


def _runtime_env_vars(flag: str, value: str, read: ReadFile) -> dict[str, str] | None:
    """The env_vars of ``ray job submit --runtime-env FILE`` (a YAML file the repository holds) or
    ``--runtime-env-json TEXT``; None when they cannot be read."""
    if not value or "$" in value:
        return None
    text = value if flag == "--runtime-env-json" else read(value)
    loaded = mapping_of(text) if text is not None else None
    if loaded is None:  # not in the repository, or not a mapping Ray would take
        return None
    found = loaded.get("env_vars")
    if found is None:
        return {}
    if not isinstance(found, dict):
        return None
    return {str(k): str(v) for k, v in found.items()}


def _one_quoted_string(text: str) -> bool:
    """Whether a word as written is one single- or double-quoted string and nothing else."""
    if len(text) < 2 or text[0] not in "'\"" or text[-1] != text[0]:
        return False
    inner = text[1:-1]
    if text[0] == "'":
        return "'" not in inner
    escaped = False
    for char in inner:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return False
    return not escaped
