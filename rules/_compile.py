"""What the compile-mode rules (RL501, RL502) share: the set_compile_mode calls of a training file and
the operator compile cache (``ASCEND_CACHE_PATH``) of the launches that run it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from recovery_lint.jobs import Job
from recovery_lint.span import Span

if TYPE_CHECKING:
    from recovery_lint.sources.python import PyArg, PyCall, PythonFile

CACHE = "ASCEND_CACHE_PATH"


def compile_mode_calls(file: PythonFile) -> list[tuple[PyCall, PyArg | None]]:
    """``torch.npu.set_compile_mode`` / ``torch_npu.npu.set_compile_mode`` calls and their jit_compile argument."""
    out = []
    for call in file.calls:
        if call.qualname.split(".", 1)[0] in ("torch", "torch_npu") and call.qualname.endswith(".set_compile_mode"):
            arg = call.keywords.get("jit_compile") or (call.positional[0] if call.positional else None)
            out.append((call, arg))
    return out


@dataclass(eq=False, repr=False)
class CacheSetting:
    """Where a file's launches set ASCEND_CACHE_PATH."""

    spans: list[Span]  # where ASCEND_CACHE_PATH is set for this file
    everywhere: bool  # set for every launch that runs the file (False when no launch reaches it)
    launches: int  # how many launch environments were looked at


def cache_setting(job: Job, file: PythonFile) -> CacheSetting:
    """ASCEND_CACHE_PATH as the training process running ``file`` sees it.

    The environments are those of the launch commands that start ``file`` (all launches' when none
    names it); an ``os.environ["ASCEND_CACHE_PATH"] = ...`` in the file itself also counts.
    """
    envs = [c.env for launch in job.launches for c in launch.commands if c.entry_file is file]
    if not envs:
        envs = [launch.launch_env for launch in job.launches]
    spans: list[Span] = []
    in_file = [s.span for s in file.env_sets if s.name == CACHE and s.value != ""]
    every = bool(envs)
    for env in envs:
        value = env.get(CACHE)
        if value is None or value.value == "":
            every = False
            continue
        if value.span is not None and value.span not in spans:
            spans.append(value.span)
    return CacheSetting(spans + in_file, every or bool(in_file), len(envs))
