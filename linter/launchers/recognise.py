"""Which launcher a command runs (a row of ``table``), the words that spell it, and the Python entry
its ranks run."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ..lazyre import LazyPattern
from ..shellwords import Lookup, known_tail, word_value
from ..sources.shell import Word
from .table import LAUNCHERS, PYTHON_ROW, RAY, Launcher

PYTHON_INTERPRETER = LazyPattern(r"^(?:python[0-9.]*|pypy[0-9.]*)$")


@dataclass(eq=False)
class Recognised:
    """A launcher found in a command: its table row and the words that spell it."""

    row: Launcher
    span: tuple[int, int]  # the words that spell the launcher (``python -m torch.distributed.run``, ``swift sft``)
    subcommand: str | None = None
    module_entry: int | None = None  # the word naming the module the ranks run, for a module launcher (verl)


def recognise(words: list[Word], values: Lookup | None = None, partial_paths: bool = True) -> Recognised | None:
    """The launcher a command runs, or None when it runs none (or runs a launcher's subcommand that
    does not train: ``swift infer``, ``llamafactory-cli chat``). With ``partial_paths``, a Python
    file is also known by the known end of a path (``${app_url}${boot_file}``)."""
    if not words:
        return None
    values = values or {}
    first = word_value(words[0], values) or ""
    name = posixpath.basename(first)
    for row in LAUNCHERS:
        if name in row.commands:
            return _with_subcommand(row, words, values)
    dynamic_interpreter = words[0].value is None and not first and "$" in words[0].text
    if not (PYTHON_INTERPRETER.match(name) or dynamic_interpreter):
        return None
    return _python(words, values, partial_paths)


def _with_subcommand(row: Launcher, words: list[Word], values: Lookup) -> Recognised | None:
    if not row.subcommands:
        return Recognised(row, (0, 1))
    for i, word in enumerate(words[1:], start=1):
        value = word_value(word, values) or word.text
        if value.startswith("-"):
            continue
        return Recognised(row, (0, i + 1), value) if value in row.subcommands else None
    return None


def _python(words: list[Word], values: Lookup, partial_paths: bool) -> Recognised | None:
    """``python [options] -m MODULE`` (a launcher's module, or a module launcher such as verl's) or
    ``python [options] entry.py``."""
    for i, word in enumerate(words[1:], start=1):
        value = word_value(word, values) or word.text.strip("\"'")
        if value == "-m" and i + 1 < len(words):
            return _module(word_value(words[i + 1], values) or "", words, i + 1, values)
        if value.startswith("-m") and len(value) > 2:
            return _module(value[2:], words, i, values)
        if value.endswith(".py") or (partial_paths and known_tail(word.text, values).endswith(".py")):
            return Recognised(PYTHON_ROW, (0, 1))  # an interpreter running a file
        if value == "-c" or not value.startswith("-"):
            return None
    return None


def _module(module: str, words: list[Word], at: int, values: Lookup) -> Recognised | None:
    for row in LAUNCHERS:
        if module in row.modules or _module_trainer(row, module, words[at + 1 :], values):
            # a Ray trainer's module is the launcher and what the ranks run at once
            return Recognised(row, (0, at + 1), module_entry=at if row.family == RAY else None)
    return None


def _module_trainer(row: Launcher, module: str, args: list[Word], values: Lookup) -> bool:
    """A Ray trainer's module of another package (``recipe.dapo.main_dapo``): its last part is one of
    the row's and the command sets the scale its Hydra config reads."""
    if not row.module_suffixes or module.rpartition(".")[2] not in row.module_suffixes:
        return False
    keys = (*row.nodes.hydra, *row.per_node.hydra)
    return any((word_value(w, values) or w.text).startswith(tuple(k + "=" for k in keys)) for w in args)


def entry_word(row: Launcher, words: list[Word], after: int, values: Lookup) -> Word | None:
    """The Python file a launcher runs: the first argument after the launcher's own options that
    ends in ``.py`` (a module run with ``-m`` is returned as its word, ending in ``.py`` once mapped)."""
    options = row.value_options
    i = after
    while i < len(words):
        word = words[i]
        text = word_value(word, values) or word.text.strip("\"'")
        if text == "-m" and i + 1 < len(words):
            return words[i + 1]
        if text.endswith(".py") and not text.startswith("-"):
            return word
        if text in options:
            i += 2
            continue
        if text.startswith("-") or text.startswith("$"):  # an option, or options held in a variable
            i += 1
            continue
        return None  # the first positional of a launcher is its program; one that is not a Python file is not ours
    return None


def module_path(word: Word, words: list[Word], values: Lookup) -> str | None:
    """``pkg.train`` after ``-m`` as the file ``pkg/train.py``."""
    text = word_value(word, values) or ""
    index = next((k for k, w in enumerate(words) if w is word), -1)
    if index > 0 and (word_value(words[index - 1], values) or "") == "-m" and re.fullmatch(r"[\w.]+", text):
        return text.replace(".", "/") + ".py"
    return None
