"""Helpers shared by rules: find where a launch-environment value came from and how to edit it."""

from __future__ import annotations

from recovery_lint.diagnostics import Edit
from recovery_lint.edits import (
    append_item,
    insert_before_statement,
    insert_sequence_entry,
    replace_scalar,
    set_assignment,
)
from recovery_lint.jobs import EnvValue, Job, Launch, LaunchCommand
from recovery_lint.sources.manifest import Container, ManifestDoc
from recovery_lint.sources.shell import ShellScript, Word
from recovery_lint.span import SourceText

# the YAML reference: "不配置maxRetry或配置maxRetry取值为0时，系统默认进行3次重调度" (RL209, RL214)
VOLCANO_DEFAULT_RETRIES = 3


def manifest_source(job: Job):
    return job.manifest_file.source if job.manifest_file is not None else None


def set_env_value(job: Job, value: EnvValue, new: str) -> list[Edit] | None:
    """Edits that change an existing setting in place, wherever it was written."""
    if value.origin in ("script", "inline") and value.assignment is not None:
        script = _script_holding(job, value.assignment)
        if script is not None:
            edit = set_assignment(script, value.assignment, new)
            return [edit] if edit else None
        return None
    if value.origin == "container" and value.container is not None:
        src = manifest_source(job)
        for var in value.container.env:
            if var.name.value == value.name and var.value is not None and src is not None:
                return [replace_scalar(src, var.value, new)]
    return None


def _script_holding(job: Job, assignment) -> ShellScript | None:
    """The script of the job the assignment is written in: a file, a container's inline command, or
    the text a ``bash -c`` in a script runs (which has the file's path too, and takes no edit)."""
    for script in job.scripts:
        if any(e is assignment for e in script.events):
            return script
    return None


def insert_env_before(job: Job, launch: Launch, cmd: LaunchCommand | None, name: str, value: str) -> list[Edit] | None:
    """Edits that set ``name=value`` for the launch: an export before the launch command, or a
    container env entry when the command is not a shell script."""
    if cmd is not None and cmd.script.exact and not cmd.script.argv:
        edit = insert_before_statement(cmd.script, cmd.command.statement, f"export {name}={value}")
        if edit:
            return [edit]
    if launch.container is not None:
        edit = container_env_entry(job, launch.container, name, value)
        return [edit] if edit else None
    return None


def container_env_entry(job: Job, container: Container, name: str, value: str) -> Edit | None:
    src = manifest_source(job)
    if src is None:
        return None
    return _env_entry(src, container, [("name", name), ("value", f'"{value}"')])


def env_entries(src: SourceText, containers: list[Container], fields: list) -> list[Edit] | None:
    """An env entry of ``fields`` for each container (its ``env`` list created where there is none);
    None when one of those lists is written in flow style, which is not extended."""
    if any(c.env_node is not None and c.env_node.flow for c in containers):
        return None
    return [_env_entry(src, c, fields) for c in containers]


def _env_entry(src: SourceText, container: Container, fields: list) -> Edit:
    if container.env_node is not None:
        return append_item(src, container.env_node, fields)
    return insert_sequence_entry(src, container.node, "env", fields)


def npu_evidence(doc: ManifestDoc) -> str | None:
    """Why the job is taken for an NPU job: a requested NPU resource or the product label."""
    for _pod, container in doc.containers():
        for resource in sorted(container.resources):
            if resource.startswith("huawei.com/Ascend910") or resource == "huawei.com/npu":
                return f"requests {resource}"
    if doc.label("ring-controller.atlas") is not None:
        return "carries ring-controller.atlas"
    for pod in doc.pods:
        if pod.labels is not None and pod.labels.scalar("ring-controller.atlas") is not None:
            return "carries ring-controller.atlas"
    return None


# what a PyTorch training entry imports (MindSpeed-LLM and Megatron bring torch with them)
PYTORCH_STACKS = ("torch", "torch_npu", "mindspeed", "mindspeed_llm", "megatron")


def pytorch_launches(job: Job) -> list[tuple[Launch, LaunchCommand]]:
    """Training launches that start PyTorch: a torch launcher, or python on a PyTorch entry (or on
    an entry outside the repository when the manifest says the job is PyTorch); not those whose
    ranks see an environment the repository does not show (Ray actors of a cluster started
    elsewhere): what their processes see is not known."""
    out = []
    for launch in job.launches:
        for cmd in launch.commands:
            if not cmd.judged or not cmd.env_complete:
                continue
            if cmd.is_distributed or (
                cmd.launcher == "python"
                and (
                    cmd.entry_file.imports_module(*PYTORCH_STACKS)
                    if cmd.entry_file is not None
                    else job.manifest is not None and job.context.framework == "pytorch"
                )
            ):
                out.append((launch, cmd))
    return out


def points_into_command(cmd: LaunchCommand, word: Word) -> bool:
    """Whether the word points into the launch command: itself, or the variable it was split out of."""
    span = cmd.command.span
    return word.span.path == span.path and span.start <= word.span.start < span.end


def written_in_command(cmd: LaunchCommand, word: Word) -> bool:
    """Whether the word is written in the launch command itself (not split out of a variable, whose
    words all point at the variable), so that an edit of its span edits that word alone; never in a
    script whose text takes no edit (``ShellScript.exact``)."""
    if not (cmd.exact and cmd.script.exact and points_into_command(cmd, word)):
        return False
    return sum(1 for w in cmd.words if (w.span.start, w.span.end) == (word.span.start, word.span.end)) == 1
