"""The environment a batch scheduler starts a script with, read from the script's own directives
(``#SBATCH --nodes=4`` before its first command): what ``srun`` and a launcher's ``--nnodes
$SLURM_NNODES`` then read."""

from __future__ import annotations

import shlex

from ..jobs import EnvValue
from ..knowledge.data import batch_schedulers
from ..sources.shell import ShellScript


def batch_environment(script: ShellScript) -> dict[str, EnvValue]:
    """The variables the scheduler sets from the directives in the comment lines before the script's
    first command; empty for a script without any (or whose positions are not its own)."""
    if not script.exact or script.argv or not script.comments:
        return {}
    text = script.source.text
    first = min((event.span.start for event in script.events), default=len(text))
    env: dict[str, EnvValue] = {}
    for span in script.comments:
        if span.start > first:
            break  # the scheduler stops reading directives at the first command
        comment = text[span.start : span.end]
        for scheduler in batch_schedulers():
            prefix = scheduler["prefix"]
            if comment.startswith(prefix) and comment[len(prefix) : len(prefix) + 1].isspace():
                for what, value in _counts(comment[len(prefix) :], scheduler["options"]).items():
                    for name in scheduler["sets"].get(what, ()):
                        env[name] = EnvValue(name, value, "scheduler", span, True)
    return env


def _counts(directive: str, options: dict[str, str]) -> dict[str, str]:
    """What a directive's options give (``--nodes=4``, ``--nodes 4``, ``-N 4``, ``-N4``), each a single
    number; a range or a list (``2-4``, ``2,4``) gives nothing."""
    try:
        words = shlex.split(directive, comments=True)
    except ValueError:
        return {}
    found: dict[str, str] = {}
    for i, word in enumerate(words):
        for option, what in options.items():
            value = None
            if word == option and i + 1 < len(words):
                value = words[i + 1]
            elif option.startswith("--") and word.startswith(option + "="):
                value = word[len(option) + 1 :]
            elif not option.startswith("--") and word.startswith(option) and len(word) > len(option):
                value = word[len(option) :]
            if value is not None and value.isdigit() and len(value) < 7:
                found[what] = str(int(value))
    return found
