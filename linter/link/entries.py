"""What a Python entry shows of itself: whether it runs on NPUs, trains, is a unit test, and which torch
it may run on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sources.versions import VersionPin

if TYPE_CHECKING:
    from ..sources.python import PythonFile


def is_python_model(model: object) -> bool:
    """Whether a parsed file's model is a Python file's (the Python model's module is loaded by a
    run that reaches one: a run over manifests and scripts alone never needs it)."""
    from ..sources.python import PythonFile

    return isinstance(model, PythonFile)


# calls in an imported module that configure the whole training process (the operator compile mode):
# an entry's repository modules are byte-scanned for them, and parsed only when one is there
PROCESS_SETTINGS = (b"set_compile_mode",)

NPU_STACKS = frozenset({"torch_npu", "mindspeed", "mindspeed_llm"})  # imports that say the code runs on NPUs

NPU_STACK_BYTES = (b"torch_npu", b"mindspeed")

# torch before the first torch_npu package (1.8.1) ran on NPUs through a torch build of its own
TORCH_WITH_BUILTIN_NPU = "1.5.0"


def guarded_torch(entry: PythonFile, rank: int) -> list[tuple[int, VersionPin]]:
    """An entry that imports torch_npu only from some torch version on also runs on the torch before
    it: both are versions the job may run."""
    if entry.npu_since is None:
        return []
    since, span = entry.npu_since
    return [
        (rank, VersionPin("torch", version, "==", span, span, alternative=True))
        for version in (TORCH_WITH_BUILTIN_NPU, since)
    ]


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


def cuda_only(py: PythonFile) -> bool:
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


def is_unit_test(py: PythonFile) -> bool:
    if py.imports_module("unittest", "pytest", "torch_npu.testing", "torch.testing._internal"):
        return True
    return any(c.qualname.endswith("run_tests") for c in py.calls)
