"""What the checkpoint rules (RL401-RL403) share: does a job use MindIO ACP, and how to switch to it.

The job's Python files are its training entries. A job uses MindIO ACP when one of them imports
``mindio_acp``; a MindSpeed-LLM job on Megatron (an entry imports ``mindspeed_llm`` and the Megatron
adaptor or Megatron) also needs ``MINDIO_AUTO_PATCH_MEGATRON=true`` in its launch environment, which
makes the ``mindio_acp`` import patch Megatron's checkpoint functions. Advice about MindSpeed-LLM
belongs to the entry file: one finding there, whatever number of launch scripts run it, with one fix
for all of them.

The fixes only write calls the MindIO ACP API accepts: ``mindio_acp.save(obj, path)`` takes a
path string (not a file object or buffer), ``mindio_acp.load(path, open_way, map_location)`` a
path string and ``map_location`` of ``None`` or ``'cpu'`` only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from recovery_lint.diagnostics import Edit, Fix, unsafe_fix
from recovery_lint.edits import edit, insert_line_after
from recovery_lint.jobs import EnvValue, Job, Launch, LaunchCommand, Project
from recovery_lint.sources.python import DYNAMIC, PyArg, PyCall, PyImport, PythonFile
from recovery_lint.span import Span

from ._common import insert_env_before, pytorch_launches, set_env_value
from ._mindio_names import ACP, AUTO_PATCH, AUTO_PATCH_ON, imports_of

MINDSPEED = "mindspeed_llm"
ADAPTOR = "mindspeed_llm.megatron_adaptor"
IMPORT_LINE = f"import {ACP}"
LOAD_MAP_LOCATIONS = (None, "cpu")  # mindio_acp.load accepts nothing else
# what a saved object that is not training state looks like (arguments, features, caches, results)
NOT_STATE_WORDS = ("args", "feature", "cache", "result", "metric", "vocab", "token", "embedding", "config", "log")
CHECKPOINT_WORDS = ("resume", "ckpt", "checkpoint", "latest", "last", "load_dir", "load_model", "snapshot", "state")
NOT_CHECKPOINT_WORDS = (
    "pretrain",
    "init",
    "backbone",
    "imagenet",
    "cache",
    "vocab",
    "embedding",
    "dataset",
    "feature",
    "finetune",
    "fine_tune",
    "teacher",
    "stage",
    "previous",
    "best",
)
# a save that keeps a best model or an export, not the state a fault rolls back to
NOT_ROLLBACK_WORDS = ("best", "final", "export", "onnx", "deploy", "release", "publish")
PATH_NAME_ENDINGS = ("path", "filename", "fname", "_name", "_dir")
STATE_WORDS = ("state", "ckpt", "checkpoint", "model", "optim", "epoch", "step", "iteration", "weights", "net")


@dataclass(eq=False, repr=False)
class AcpState:
    """What a job does toward MindIO ACP: its imports and the launches left unpatched."""

    acp_imports: list[tuple[PythonFile, PyImport]] = field(default_factory=list)
    mindspeed: tuple[PythonFile, PyImport] | None = None
    # PyTorch launches whose environment lacks MINDIO_AUTO_PATCH_MEGATRON=true (with the value seen)
    unpatched: list[tuple[Launch, LaunchCommand, EnvValue | None]] = field(default_factory=list)
    launches: int = 0

    @property
    def in_use(self) -> bool:
        """True when the job's checkpoints already go through MindIO ACP."""
        if not self.acp_imports:
            return False
        return self.mindspeed is None or (self.launches > 0 and not self.unpatched)


def on_megatron(entry: PythonFile, mindspeed: list[PyImport]) -> bool:
    """Whether a MindSpeed-LLM entry trains through Megatron (the code MINDIO_AUTO_PATCH_MEGATRON
    patches): it imports the Megatron adaptor or Megatron itself. Its FSDP2 path
    (``mindspeed_llm.fsdp2``) saves through its own checkpoint manager, which the patch never touches."""
    return any(i.module == ADAPTOR for i in mindspeed) or bool(imports_of(entry, "megatron"))


def acp_state(job: Job) -> AcpState:
    state = AcpState()
    for entry in job.entries:
        state.acp_imports += [(entry, imp) for imp in imports_of(entry, ACP)]
        if state.mindspeed is None:
            found = imports_of(entry, MINDSPEED)
            if found and on_megatron(entry, found):  # the module-level import (the adaptor) is where the fix belongs
                state.mindspeed = (entry, entry.first_top_import(MINDSPEED) or found[0])
    for launch, cmd in pytorch_launches(job):
        state.launches += 1
        value = cmd.env.get(AUTO_PATCH)
        if value is None and cmd.may_set(AUTO_PATCH):
            continue  # a script sourced before the launch, not read, may set it
        if value is None or (value.value is not None and value.value.strip().lower() not in AUTO_PATCH_ON):
            state.unpatched.append((launch, cmd, value))
    return state


def training_files(job: Job) -> list[PythonFile]:
    """The job's Python files that are PyTorch code."""
    return [e for e in job.entries if e.imports_module("torch", "torch_npu")]


def checkpoint_calls(job: Job, function: str) -> list[tuple[PythonFile, PyCall]]:
    """Calls of ``torch.<function>`` (through any alias) in the job's PyTorch files that read or write
    a checkpoint: not a buffer in memory, and for a save, an object that looks like training state."""
    out = []
    for f in training_files(job):
        for c in f.calls:
            if c.qualname != f"torch.{function}" or not c.positional:
                continue
            target = c.positional[-1] if function == "save" and len(c.positional) > 1 else c.positional[0]
            if "BytesIO" in target.source or "buffer" in target.source.lower() or target.source in f.buffer_names:
                continue
            if function == "save" and not saves_training_state(c.positional[0]):
                continue
            if function == "load" and not loads_checkpoint(target, c.function, c.guard):
                continue
            out.append((f, c))
    return out


def saves_training_state(obj: PyArg) -> bool:
    """Whether a saved object looks like training state (a model or optimizer state dict, a dict of
    them, a checkpoint variable) rather than arguments, features or results."""
    text = obj.source.lower()
    if "state_dict" in text:
        return True
    if any(word in text for word in NOT_STATE_WORDS) and not text.startswith("{"):
        return False
    return any(word in text for word in STATE_WORDS)


def loads_checkpoint(path: PyArg, function: str | None, guard: str = "") -> bool:
    """Whether a load reads back a checkpoint the job saved (what MindIO ACP restores from memory):
    its path, or the function it is in, says resume/checkpoint/latest…; not pretrained weights, a
    dataset cache or a vocabulary (in the path, or in the condition it is loaded under)."""
    text = f"{path.source} {function or ''}".lower()
    if any(word in f"{text} {guard.lower()}" for word in NOT_CHECKPOINT_WORDS):
        return False
    return any(word in text for word in CHECKPOINT_WORDS)


def path_string(file: PythonFile, arg: PyArg) -> bool:
    """Whether an argument is known to be a path string (what mindio_acp takes), not a file object."""
    if isinstance(arg.value, str):
        return True
    source = arg.source.strip()
    if source.startswith(("f'", 'f"', "os.path.join(", "osp.join(", "str(")) or ".format(" in source:
        return True
    if not source.isidentifier():
        return False
    # a variable assigned only strings, or named as paths are (a file object is `f`, `fp`, `buffer`)
    return source in file.str_names or source.lower().endswith(PATH_NAME_ENDINGS)


def import_edit(file: PythonFile, after: PyImport | None = None) -> Edit | bool | None:
    """The edit adding ``import mindio_acp``; True when nothing is needed, None when no place is found.

    ``after`` places it (MindSpeed-LLM wants it after its adaptor import); otherwise it goes where an
    import sorter keeps it: in the block of module-level imports holding torch, in name order."""
    if file.top_import(ACP) is not None:
        return True
    if after is not None:
        return insert_line_after(file.source, after.span, IMPORT_LINE) if after.top_level else None
    anchor = file.top_import("torch") or file.first_top_import("torch") or file.first_top_import("torch_npu")
    if anchor is None or not anchor.top_level:
        return None
    block = _import_block(file, anchor)
    # sorters put `import x` lines before `from x import y` lines, each group in name order
    plain = [imp for imp in block if file.source.text.startswith("import", imp.span.start)]
    later = [imp for imp in plain if imp.module.split(".")[0].lower() > ACP] or ([] if plain else block[:1])
    if later:
        start = later[0].span.start
        line_start = file.source.line_start(file.source.line_of(start))
        if file.source.text[line_start:start].strip():
            return None  # not at the start of its line (a `;` statement): no clean place
        newline = "\r\n" if file.source.text[start:].split("\n", 1)[0].endswith("\r") else "\n"
        return edit(file.source, line_start, line_start, f"{IMPORT_LINE}{newline}")
    return insert_line_after(file.source, plain[-1].span, IMPORT_LINE)


def _import_block(file: PythonFile, anchor: PyImport) -> list[PyImport]:
    """The run of module-level import statements, on consecutive lines, that holds ``anchor``."""
    tops = sorted({id(i): i for i in file.imports if i.top_level}.values(), key=lambda i: i.span.start)
    index = next(k for k, i in enumerate(tops) if i is anchor)
    first = last = index
    while first > 0 and tops[first - 1].span.end_line >= tops[first].span.line - 1:
        first -= 1
    while last + 1 < len(tops) and tops[last + 1].span.line <= tops[last].span.end_line + 1:
        last += 1
    return tops[first : last + 1]


def _api_mismatch(file: PythonFile, call: PyCall, function: str) -> str:
    if function == "save":
        if len(call.positional) != 2 or call.keywords:
            return "mindio_acp.save(obj, path) takes the object and the path only"
        if not path_string(file, call.positional[1]):
            return f"mindio_acp.save takes a path string, and {call.positional[1].source} is not known to be one"
        return ""
    if len(call.positional) != 1 or set(call.keywords) - {"map_location"}:
        return "mindio_acp.load(path, map_location) takes no other argument"
    if not path_string(file, call.positional[0]):
        return f"mindio_acp.load takes a path string, and {call.positional[0].source} is not known to be one"
    location = call.keywords.get("map_location")
    if location is not None and (location.value is DYNAMIC or location.value not in LOAD_MAP_LOCATIONS):
        return f"mindio_acp.load accepts map_location None or 'cpu' only, not {location.source}"
    return ""


# -- MindSpeed-LLM: one finding per entry file ---------------------------------------------------
@dataclass(eq=False, repr=False)
class MindSpeedGroup:
    """The jobs that run one MindSpeed-LLM entry without MindIO ACP."""

    file: PythonFile
    mindspeed_import: PyImport  # where an ACP import goes (the adaptor's module-level import)
    jobs: list[tuple[Job, AcpState]] = field(default_factory=list)

    @property
    def acp_import(self) -> PyImport | None:
        found = imports_of(self.file, ACP)
        return found[0] if found else None

    @property
    def anchor(self) -> Span:
        return (self.acp_import or self.mindspeed_import).span


def mindspeed_groups(judged: list[tuple[Job, AcpState]]) -> list[MindSpeedGroup]:
    groups: dict[int, MindSpeedGroup] = {}
    for job, state in judged:
        if state.mindspeed is None or state.in_use:
            continue
        file, imp = state.mindspeed
        groups.setdefault(id(file), MindSpeedGroup(file, imp)).jobs.append((job, state))
    return list(groups.values())


def mindspeed_message(group: MindSpeedGroup, function: str) -> str:
    """The headline of RL401 (``save``) or RL402 (``load``) on a MindSpeed-LLM entry: each says what
    of the checkpoint goes without MindIO ACP, so the two findings on one line read apart."""
    launches = sum(state.launches for _, state in group.jobs)
    patched = "checkpoint saves" if function == "save" else "checkpoint loads"
    if group.acp_import is not None:
        missing = (
            f"no launch script reaching this file sets {AUTO_PATCH}=true"
            if launches == 0
            else f"{_launches(launches)} of it do not set {AUTO_PATCH}=true"
        )
        return f"{ACP} is imported but {missing}, so Megatron's {patched} are not patched"
    runs = f" ({_launches(launches)})" if launches > 1 else ""
    doing = "saves its checkpoints" if function == "save" else "loads its checkpoint after a fault"
    return f"this MindSpeed-LLM training{runs} {doing} without MindIO ACP (no `import {ACP}` with {AUTO_PATCH}=true)"


def _launches(n: int) -> str:
    return f"{n} launch{'es' if n != 1 else ''}"


def mindspeed_related(group: MindSpeedGroup) -> list[tuple[Span, str]]:
    out = []
    for _, state in group.jobs:
        for _, cmd, _ in state.unpatched:
            out.append((cmd.command.span, f"launched here without {AUTO_PATCH}=true"))
    return out


def mindspeed_fix(group: MindSpeedGroup) -> Fix | None:
    """``import mindio_acp`` after the MindSpeed-LLM import, and ``MINDIO_AUTO_PATCH_MEGATRON=true``
    before every launch of the entry: one fix, so the fix loop applies it whole."""
    if not any(state.launches for _, state in group.jobs):
        return None
    edits: list[Edit] = []
    if group.acp_import is None:
        added = import_edit(group.file, group.mindspeed_import)
        if added is None:
            return None
        if isinstance(added, Edit):
            edits.append(added)
    for job, state in group.jobs:
        for launch, cmd, value in state.unpatched:
            found = set_env_value(job, value, "true") if value is not None else None
            if value is None:
                found = insert_env_before(job, launch, cmd, AUTO_PATCH, "true")
            if not found:
                return None
            edits += [e for e in found if e not in edits]
    return unsafe_fix(f"Import {ACP} and export {AUTO_PATCH}=true", *edits) if edits else None


# -- what the two rules report -----------------------------------------------------------------
def findings(rule, project: Project, function: str, cost: str, mindspeed_cost: str):
    """RL401 (``save``) and RL402 (``load``): one finding per MindSpeed-LLM entry, one per call in
    the other training entries; ``cost`` and ``mindspeed_cost`` say what the call costs a recovery."""
    judged = [(job, acp_state(job)) for job in project.jobs]  # the premises hold for each
    for group in mindspeed_groups(judged):
        found = rule.report(
            group.anchor,
            f"{mindspeed_message(group, function)}: {mindspeed_cost}.",
            mindspeed_fix(group),
            related=mindspeed_related(group),
        )
        yield replace(found, origins=tuple(job.id for job, _ in group.jobs))
    for job, state in judged:
        if state.mindspeed is not None:
            continue
        pair = rollback(job)
        if pair.saves and pair.loads:  # a checkpoint the loop repeats and the resume path reads back
            fix, why = joint_fix(pair, lambda f, job=job: shared_with(f, job, project))
            tail = f" No fix: {why}." if why else ""
            calls = pair.saves if function == "save" else pair.loads
            first = calls[0][1].span
            for k, (_, call) in enumerate(calls):
                # one fix converts them all: it rides on the first finding, the others point at it
                if k and fix is not None:
                    tail = f" Fixed together with the call at {first.path}:{first.line}."
                found = rule.report(call.span, f"{call.written}(...) {cost}.{tail}", fix if not k else None)
                yield found.with_job(None, job.id)
        if function == "load":
            for file, call, save in pair.stale:
                where = f"{save.span.path}:{save.span.line}"
                found = rule.report(
                    call.span,
                    f"{call.written}(...) reads a checkpoint that mindio_acp.save writes at {where}, in MindIO ACP's "
                    f"own format, which torch.load cannot read: the job cannot resume. Use mindio_acp.load.",
                    _load_fix(file, call, shared_with(file, job, project)),
                )
                yield found.with_job(None, job.id)


# -- the rollback checkpoint: saved in the loop, read back on resume -------------------------------------
@dataclass(eq=False, repr=False)
class Rollback:
    """The rollback checkpoint of a job: where it is saved and where it is read back."""

    saves: list[tuple[PythonFile, PyCall]] = field(default_factory=list)  # torch.save of the rollback state
    loads: list[tuple[PythonFile, PyCall]] = field(default_factory=list)  # torch.load on the resume path
    # torch.load calls reading a path that mindio_acp.save writes (a save converted without its load)
    stale: list[tuple[PythonFile, PyCall, PyCall]] = field(default_factory=list)


def rollback(job: Job) -> Rollback:
    """The job's rollback checkpoint: the saves of training state its training loop repeats (in a
    loop, or in a function a loop calls), and the loads on its resume path; a best model, a final
    export, a weights file written after training, a pretrained or previous-stage load are not it."""
    found = Rollback()
    acp_saves: list[PyCall] = []
    for file, call in checkpoint_calls(job, "save"):
        if repeated(file, call) and not _names_any(call, NOT_ROLLBACK_WORDS):
            found.saves.append((file, call))
    for file in training_files(job):
        acp_saves += [c for c in file.calls if c.qualname == f"{ACP}.save" and len(c.positional) > 1]
    for file, call in checkpoint_calls(job, "load"):
        converted = next((s for s in acp_saves if same_path(s.positional[1], call.positional[0])), None)
        if converted is not None:
            found.stale.append((file, call, converted))
        else:
            found.loads.append((file, call))
    if acp_saves and not found.saves:  # the rollback save is MindIO's already: its loads are advice no more
        found.loads = []
    return found


def repeated(file: PythonFile, call: PyCall) -> bool:
    """Whether a call runs again and again in training: in a loop, or in a function the file calls in one."""
    return call.in_loop or (call.function is not None and call.function in file.looped_calls)


def _names_any(call: PyCall, words: tuple[str, ...]) -> bool:
    text = " ".join(a.source for a in call.positional).lower() + f" {call.guard} {call.function or ''}".lower()
    return any(word in text for word in words)


def same_path(a: PyArg, b: PyArg) -> bool:
    """Whether two path arguments are written the same way (the only sameness a reader of the code can prove)."""
    return "".join(a.source.split()) == "".join(b.source.split())


def shared_with(file: PythonFile, job: Job, project: Project) -> str:
    """Why an unconditional import in ``file`` would reach a launch the advice is not for ('' when
    nothing else is known to run it): a job that is not training (a test, CI) or whose premises do
    not hold runs it, or another script names it."""
    path = file.source.path
    if project.run_by_others(path):
        return f"{path} is also run by a launch this advice does not apply to"
    sharing = project.sharing
    others = sharing.others(path, frozenset(job.files)) if sharing is not None else None
    if others is None:
        return f"whether other launches run {path} is not known"
    if others:
        return f"{others[0]} names {path} too, and the mindio_acp import would reach that launch"
    return ""


def joint_fix(pair: Rollback, shared: Callable[[PythonFile], str]) -> tuple[Fix | None, str]:
    """One fix converting the rollback saves and every resume load together (MindIO ACP writes its own
    format, which torch.load cannot read); (None, why) when that cannot be done without assuming."""
    path = pair.saves[0][1].positional[1] if len(pair.saves[0][1].positional) > 1 else None
    for _, call in pair.saves + pair.loads:
        arg = call.positional[1] if call.qualname.endswith(".save") else call.positional[0]
        if path is None or not same_path(arg, path):
            where = f"{call.span.path}:{call.span.line}"
            return None, (
                f"the checkpoint paths of its saves and resume loads are not written alike ({arg.source} at {where}), "
                "so no load can be shown to read what a converted save writes"
            )
    edits: list[Edit] = []
    files: dict[int, PythonFile] = {}
    for file, call in pair.saves + pair.loads:
        why = shared(file)
        if why:
            return None, why
        function = "save" if call.qualname.endswith(".save") else "load"
        why = _api_mismatch(file, call, function)
        if why:
            return None, why
        edits.append(edit(file.source, call.func_span.start, call.func_span.end, f"{ACP}.{function}"))
        files[id(file)] = file
    for file in files.values():
        added = import_edit(file)
        if added is None:
            return None, f"no place for the import was found in {file.source.path}"
        if isinstance(added, Edit):
            edits.append(added)
    return unsafe_fix(f"Save and load the checkpoint with {ACP} (MindIO ACP)", *edits), ""


def _load_fix(file: PythonFile, call: PyCall, shared: str) -> Fix | None:
    """``torch.load`` -> ``mindio_acp.load`` for a load left reading a converted save."""
    if shared or _api_mismatch(file, call, "load"):
        return None
    edits = [edit(file.source, call.func_span.start, call.func_span.end, f"{ACP}.load")]
    added = import_edit(file)
    if added is None:
        return None
    if isinstance(added, Edit):
        edits.append(added)
    return unsafe_fix(f"Load the checkpoint with {ACP}.load", *edits)
