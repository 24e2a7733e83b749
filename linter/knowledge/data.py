"""Reading the data files: the documented requirements and defaults, and what each torch_npu release does.

The facts live in ``recovery_lint.schemas``, each with its source: ``torch_npu_releases.json`` holds
every final torch_npu release tag of Ascend/pytorch with what its code does (package version,
watchdog default and accepted values, ``torch_npu_run``, ``RANK_TABLE_FILE`` …) and the mapping
table of the repository's COMPATIBILITY.en.md; ``knowledge.json`` holds the ranges the MindCluster
docs support and documented defaults. The other modules of ``recovery_lint.knowledge`` parse version
strings and answer questions against that data. The files are read once, on first use, so importing
this module stays cheap.

``documented_default`` and ``knowledge_source`` answer from ``knowledge.json`` directly.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from .ascend_versions import AscendVersion, parse_ascend_version

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "documented_default",
    "knowledge_source",
]

# ---------------------------------------------------------------------------------------------------
# Data files


@functools.cache
def data() -> dict[str, Any]:
    """knowledge.json: documented requirements and defaults."""
    from ..schemas import read_json

    return read_json("knowledge.json")


@functools.cache
def release_data() -> dict[str, Any]:
    """torch_npu_releases.json: what each release tag does, and the compatibility table."""
    from ..schemas import read_json

    return read_json("torch_npu_releases.json")


def ascend(text: str) -> AscendVersion:
    """Parse a release name from the data files, where a bad spelling is a packaging bug."""
    version = parse_ascend_version(text)
    if version is None:
        raise ValueError(f"the knowledge data holds an unreadable release name {text!r}")
    return version


def requirement(name: str) -> dict[str, Any]:
    return data()["requirements"][name]


def knowledge_source(name: str) -> str | None:
    """The source of a requirement (``parallel_store`` …), a documented default, or ``torch_npu_releases``."""
    if name == "torch_npu_releases":
        return release_data()["source"]
    entry = data()["requirements"].get(name) or data()["defaults"].get(name)
    return None if entry is None else entry["source"]


# the variable every final torch_npu release reads for the HCCL watchdog, and the upstream name that
# no final release up to 26.1.0 reads (torch_npu_releases.json: reads_torch_name)
WATCHDOG_VAR = "HCCL_ASYNC_ERROR_HANDLING"
WATCHDOG_NEW_VAR = "TORCH_HCCL_ASYNC_ERROR_HANDLING"


def documented_default(name: str) -> int | float | str | bool | None:
    """The documented scalar default of ``name`` (e.g. ``HCCL_EXEC_TIMEOUT`` → 1836).

    None when unknown or when the default depends on context (use :func:`watchdog_facts` and
    :func:`jit_compile_default` for those).
    """
    entry = data()["defaults"].get(name)
    return None if entry is None else entry.get("value")


@functools.cache
def environment_scripts() -> list[tuple[Any, Any]]:
    """knowledge.json ``environment_scripts``: for each documented script outside the repository, the
    pattern of its path and a test of the variable names it sets (``ATB_*`` a prefix)."""
    import re

    out = []
    for entry in data()["environment_scripts"]["scripts"]:
        names = tuple(n for n in entry["sets"] if not n.endswith("*"))
        prefixes = tuple(n[:-1] for n in entry["sets"] if n.endswith("*"))
        out.append((re.compile(entry["pattern"]), lambda n, a=names, b=prefixes: n in a or n.startswith(b)))
    return out


@functools.cache
def batch_schedulers() -> list[dict[str, Any]]:
    """knowledge.json ``batch_directives``: for each batch scheduler, the prefix of its directives,
    the options read and the variables each sets in the environment of the script it starts."""
    return list(data()["batch_directives"]["schedulers"])
