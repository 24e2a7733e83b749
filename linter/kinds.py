"""The kinds of file a run reads: how each is recognised by its name, and the groups of kinds the
flow asks about. Every module names a kind through this table."""

from __future__ import annotations

MANIFEST = "manifest"  # a YAML file (a Kubernetes object when it has apiVersion or kind)
SHELL = "shell"
MAYBE_SHELL = "maybe-shell"  # a file without a suffix: a shell script when its shebang names a shell
PYTHON = "python"
REQUIREMENTS = "requirements"
PYPROJECT = "pyproject"
DOCKERFILE = "dockerfile"
README = "readme"  # read for its version tables only
OTHER = "other"  # read, and nothing in it is linted
DATA = "data"  # read only when a launch names it: a launcher's JSON config file, a host list

KINDS = frozenset({MANIFEST, SHELL, MAYBE_SHELL, PYTHON, REQUIREMENTS, PYPROJECT, DOCKERFILE, README, DATA})


SHELL_KINDS = frozenset({SHELL, MAYBE_SHELL})
PIN_KINDS = frozenset({REQUIREMENTS, PYPROJECT, DOCKERFILE, README})  # files that declare versions
LAUNCHING_KINDS = frozenset({MANIFEST, SHELL, MAYBE_SHELL})  # files that can start a program
RUNNABLE_KINDS = frozenset({SHELL, MAYBE_SHELL, PYTHON})  # files a launcher can run
# parsed when a job reaches them (an entry, versions of its folder, a config file a launch names)
LAZY_KINDS = frozenset({PYTHON, README, DATA})


# a file's kind by its suffix alone, where the suffix decides it
BY_SUFFIX = {"yaml": MANIFEST, "yml": MANIFEST, "sh": SHELL, "bash": SHELL, "py": PYTHON, "json": DATA}
# suffixes whose files the name decides further (requirements*.txt, README*.md, pyproject.toml,
# Dockerfile.cuda): any other suffix is no file a run reads, unless the name starts like a Dockerfile
NAMED_SUFFIXES = frozenset({"txt", "md", "toml", "dockerfile"})


def classify(name: str, folder: str = "") -> str | None:
    """The kind of a file from its name (and the folder that holds it: any ``.txt`` of a
    ``requirements/`` folder declares versions, as ``requirements/npu.txt``); None for a file no run
    reads."""
    _, dot, suffix = name.rpartition(".")
    if not dot:
        lower = name.lower()
        return DOCKERFILE if lower.startswith(("dockerfile", "containerfile")) else MAYBE_SHELL
    suffix = suffix.lower()
    kind = BY_SUFFIX.get(suffix)
    if kind is not None:
        return kind
    lower = name.lower()
    if lower.startswith(("dockerfile", "containerfile")):
        return DOCKERFILE
    if suffix not in NAMED_SUFFIXES:
        return None
    if suffix == "txt":
        named = "requirements" in lower or lower.startswith("constraints")
        if named or folder.rpartition("/")[2].lower() == "requirements":
            return REQUIREMENTS
        return DATA if lower.startswith("host") else None  # a host list (host.txt, hostfile.txt) a launch may name
    if suffix == "md":
        return README if lower.startswith("readme") else None
    if suffix == "toml":
        return PYPROJECT if lower == "pyproject.toml" else None
    return DOCKERFILE  # name.dockerfile
