"""What the Parallel Store advice can ask of one launch, read from its launcher's row: the torchrun
family swaps its launcher for torch_npu_run; a framework command that runs torchrun itself is asked
to run its rank module under torch_npu_run, where that module takes the same arguments and the
rendezvous is the static one torch_npu_run keeps; any other launcher is asked nothing, and the
reason says why."""

from __future__ import annotations

from collections.abc import Mapping

from .table import FRAMEWORK, TORCH_NPU_RUN, TORCHRUN, Launcher


def parallel_store_advice(
    row: Launcher, subcommand: str | None, arguments: list[str | None], environment: Mapping[str, object]
) -> tuple[str | None, str]:
    """The change that puts the launch on the Parallel Store and how to make it, or None and the
    reason there is none.

    ``arguments`` are the words after the launcher (and its subcommand) as their static values
    (None where a word is set at run time); ``environment`` is what the launching shell exports to
    the launcher."""
    if row.family == TORCH_NPU_RUN:
        return None, "torch_npu_run rendezvous through the Parallel Store already"
    if row.family == TORCHRUN:
        return row.parallel_store, row.parallel_store_how
    if row.family != FRAMEWORK:
        return None, row.no_parallel_store or f"{row.name} does not start its ranks through torchrun"
    module = row.runs.format(sub=subcommand or "")
    elastic = next((name for name in row.elastic_env if name in environment), None)
    if elastic is not None:
        return None, (
            f"{elastic} switches {row.name} to an elastic c10d rendezvous, which torch_npu_run's parallel "
            "rendezvous would replace"
        )
    first = next((a for a in arguments if a is None or not a.startswith("-")), "")
    if first and row.cli_configs and first.endswith(row.cli_configs):
        return None, (
            f"{row.name} reads {first} itself, and {module} takes the training arguments as --flags only: "
            "no torch_npu_run form of this command line"
        )
    return row.parallel_store.format(module=module), row.parallel_store_how.format(module=module)
