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
DATA = "data"  # a JSON file: read only when a launch names it (a launcher's config file)

YAML_SUFFIXES = (".yaml", ".yml")
SHELL_SUFFIXES = (".sh", ".bash")

SHELL_KINDS = frozenset({SHELL, MAYBE_SHELL})
PIN_KINDS = frozenset({REQUIREMENTS, PYPROJECT, DOCKERFILE, README})  # files that declare versions
LAUNCHING_KINDS = frozenset({MANIFEST, SHELL, MAYBE_SHELL})  # files that can start a program
RUNNABLE_KINDS = frozenset({SHELL, MAYBE_SHELL, PYTHON})  # files a launcher can run
# parsed when a job reaches them (an entry, versions of its folder, a config file a launch names)
LAZY_KINDS = frozenset({PYTHON, README, DATA})


def classify(name: str) -> str | None:
    """The kind of a file from its name; None for a file no run reads."""
    lower = name.lower()
    if lower.endswith(YAML_SUFFIXES):
        return MANIFEST
    if lower.endswith(SHELL_SUFFIXES):
        return SHELL
    if lower.endswith(".py"):
        return PYTHON
    if lower.endswith(".txt") and ("requirements" in lower or lower.startswith("constraints")):
        return REQUIREMENTS
    if lower.startswith("readme") and lower.endswith(".md"):
        return README
    if lower == "pyproject.toml":
        return PYPROJECT
    if lower.startswith("dockerfile") or lower.endswith(".dockerfile") or lower.startswith("containerfile"):
        return DOCKERFILE
    if lower.endswith(".json"):
        return DATA
    if "." not in name:
        return MAYBE_SHELL
    return None
