"""The ``recovery-lint`` console script: the command as a process of its own."""

import gc


def main() -> int:
    # The cyclic collector runs every few hundred allocations and rescans what the imports built:
    # about 3 % of a one-file run's instructions went to it before ``cli.main`` turns it off.
    # ``cli.main`` freezes what is left at the end; a process never turns it back on.
    gc.disable()
    from .cli import main as run

    return run()
