"""What the checkpoint rules (RL401-RL403) share: does a job use MindIO ACP, and how to switch to it.

The job's Python files are its entries (for a standalone Python file, the file itself). A job uses
MindIO ACP when one of them imports ``mindio_acp``; a MindSpeed-LLM job (one imports
``mindspeed_llm``) also needs ``MINDIO_AUTO_PATCH_MEGATRON=true`` in its launch environment, which
makes the ``mindio_acp`` import patch Megatron's checkpoint functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from recovery_lint.diagnostics import Edit, Fix, unsafe_fix
from recovery_lint.edits import edit, insert_line_after
from recovery_lint.jobs import EnvValue, Job, Launch, LaunchCommand
from recovery_lint.knowledge import mindio_support
from recovery_lint.sources.python import PyCall, PyImport, PythonFile

from ._common import insert_env_before, pytorch_launches, set_env_value

ACP = "mindio_acp"
TTP = "mindio_ttp"
MINDSPEED = "mindspeed_llm"
AUTO_PATCH = "MINDIO_AUTO_PATCH_MEGATRON"
AUTO_PATCH_ON = ("1", "true")  # what mindio_acp accepts, after strip() and lower()
IMPORT_LINE = f"import {ACP}"


@dataclass
class AcpState:
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


def imports_of(file: PythonFile, module: str) -> list[PyImport]:
    return [i for i in file.imports if i.module == module or i.module.startswith(module + ".")]


def acp_state(job: Job) -> AcpState:
    state = AcpState()
    for entry in job.entries:
        state.acp_imports += [(entry, imp) for imp in imports_of(entry, ACP)]
        if state.mindspeed is None:
            found = imports_of(entry, MINDSPEED)
            if found:
                state.mindspeed = (entry, found[0])
    for launch, cmd in pytorch_launches(job):
        state.launches += 1
        value = cmd.env.get(AUTO_PATCH)
        if value is None or (value.value is not None and value.value.strip().lower() not in AUTO_PATCH_ON):
            state.unpatched.append((launch, cmd, value))
    return state


def skip_reason(job: Job) -> bool:
    """True when the advice does not apply: not PyTorch, MindIO TFT in use, or versions too old."""
    if not job.context.pytorch or job.context.recovery == "process":
        return True
    if any(imports_of(entry, TTP) for entry in job.entries):
        return True
    verdict, _ = mindio_support(job.context.versions.get("mindio"), job.context.versions.get("mindcluster"))
    return verdict is False


def version_note(job: Job) -> str:
    """A sentence saying what was assumed about the versions, or '' when they are known to be fine."""
    verdict, reason = mindio_support(job.context.versions.get("mindio"), job.context.versions.get("mindcluster"))
    return "" if verdict else f" Assumed available: {reason}"


def training_files(job: Job) -> list[PythonFile]:
    """The job's Python files that are PyTorch code."""
    return [e for e in job.entries if e.imports_module("torch", "torch_npu")]


def checkpoint_calls(job: Job, function: str) -> list[tuple[PythonFile, PyCall]]:
    """Calls of ``torch.<function>`` (through any alias) in the job's PyTorch files."""
    return [(f, c) for f in training_files(job) for c in f.calls if c.qualname == f"torch.{function}"]


def import_edit(file: PythonFile, after: PyImport | None = None) -> Edit | bool | None:
    """The edit adding ``import mindio_acp``; True when nothing is needed, None when no place is found."""
    if file.top_import(ACP) is not None:
        return True
    anchor = after or file.top_import("torch") or file.first_top_import("torch") or file.first_top_import("torch_npu")
    if anchor is None or not anchor.top_level:
        return None
    return insert_line_after(file.source, anchor.span, IMPORT_LINE)


def call_fix(file: PythonFile, call: PyCall, function: str, fits: bool) -> Fix | None:
    """``torch.save(`` -> ``mindio_acp.save(`` (arguments kept) plus the import, as one unsafe fix."""
    text = file.source.text
    if (
        not fits
        or "**" in text[call.func_span.end : call.span.end]
        or any(a.source.startswith("*") for a in call.positional)
    ):
        return None
    added = import_edit(file)
    if added is None:
        return None
    edits = [edit(file.source, call.func_span.start, call.func_span.end, f"{ACP}.{function}")]
    if isinstance(added, Edit):
        edits.append(added)
    return unsafe_fix(f"Use {ACP}.{function} (MindIO ACP)", *edits)


def mindspeed_fix(job: Job, state: AcpState) -> Fix | None:
    """Import mindio_acp after the MindSpeed-LLM import and export MINDIO_AUTO_PATCH_MEGATRON=true."""
    if state.mindspeed is None or state.launches == 0:
        return None
    edits: list[Edit] = []
    if not state.acp_imports:
        file, imp = state.mindspeed
        added = import_edit(file, imp)
        if added is None:
            return None
        if isinstance(added, Edit):
            edits.append(added)
    for launch, cmd, value in state.unpatched:
        found = set_env_value(job, value, "true") if value is not None else None
        if value is None:
            found = insert_env_before(job, launch, cmd, AUTO_PATCH, "true")
        if not found:
            return None
        edits += [e for e in found if e not in edits]
    return unsafe_fix(f"Import {ACP} and export {AUTO_PATCH}=true", *edits) if edits else None


def mindspeed_finding(job: Job, state: AcpState) -> tuple[object, str]:
    """Where to report a MindSpeed-LLM job that does not use MindIO ACP, and what is missing."""
    if state.acp_imports:
        where = state.acp_imports[0][1].span
        if state.launches == 0:
            missing = f"no launch script reaching this file sets {AUTO_PATCH}=true"
        else:
            missing = f"the launch environment does not set {AUTO_PATCH}=true"
        return where, f"{ACP} is imported but {missing}, so Megatron's checkpoint functions are not patched"
    assert state.mindspeed is not None
    return state.mindspeed[1].span, (
        f"this MindSpeed-LLM training does not use MindIO ACP (no `import {ACP}` with {AUTO_PATCH}=true)"
    )
