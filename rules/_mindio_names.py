"""MindIO's module and variable names, and how an entry imports a module: what the rules that only
look for MindIO (RL212, RL403) need, without the checkpoint machinery of ``_mindio``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recovery_lint.sources.python import PyImport, PythonFile

ACP = "mindio_acp"
TTP = "mindio_ttp"
AUTO_PATCH = "MINDIO_AUTO_PATCH_MEGATRON"
AUTO_PATCH_ON = ("1", "true")  # what mindio_acp accepts, after strip() and lower()


def imports_of(file: PythonFile, module: str) -> list[PyImport]:
    """The imports of ``module`` or a submodule of it in ``file``."""
    return [i for i in file.imports if i.module == module or i.module.startswith(module + ".")]
