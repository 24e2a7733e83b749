"""The ``recovery-lint`` console script: the command as a process of its own."""


def main() -> int:
    from .cli import main as run

    return run()
