"""All rules, found in the ``recovery_lint.rules`` package, and rule selection."""

from __future__ import annotations

import importlib
import os
import re
from functools import lru_cache

from .rule import Rule

CODE = re.compile(r"^RL\d{3}$")


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    from . import rules as package

    found: dict[str, Rule] = {}
    for name in _rule_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and getattr(value, "code", None)
                and value.__module__ == module.__name__
            ):
                if value.code in found:
                    raise RuntimeError(f"rule code {value.code} defined twice")
                found[value.code] = value()
    return dict(sorted(found.items()))


def _rule_modules(folders: list[str]) -> list[str]:
    """The package's public modules, by name (pkgutil would do it, but imports inspect to)."""
    names = set()
    for folder in folders:
        with os.scandir(folder) as entries:
            for entry in entries:
                stem, dot, suffix = entry.name.partition(".")
                if dot and suffix == "py" and stem.isidentifier() and not stem.startswith("_"):
                    names.add(stem)
    return sorted(names)


def by_name() -> dict[str, Rule]:
    return {r.name: r for r in all_rules().values()}


def matches(selector: str, rule: Rule) -> bool:
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    if selector == rule.name:
        return True
    return selector.upper().startswith("RL") and rule.code.startswith(selector.upper())


def is_known_selector(selector: str) -> bool:
    rules = all_rules().values()
    return selector.upper() == "ALL" or any(matches(selector, r) for r in rules)


def select(select_: list[str] | None, ignore: list[str], extend_select: list[str] | None = None) -> list[Rule]:
    """Rules chosen by ``select`` (default all), plus ``extend-select``, minus ``ignore``.

    As in ruff, a more specific selector wins: ``ignore = ["RL3"]`` with ``select = ["RL301"]``
    keeps RL301.
    """
    chosen = []
    selectors = (select_ if select_ is not None else ["ALL"]) + (extend_select or [])
    for rule in all_rules().values():
        best_select = max((_specificity(s, rule) for s in selectors if matches(s, rule)), default=-1)
        best_ignore = max((_specificity(s, rule) for s in ignore if matches(s, rule)), default=-1)
        if best_select >= 0 and best_select > best_ignore:
            chosen.append(rule)
    return chosen


def _specificity(selector: str, rule: Rule) -> int:
    if selector.upper() == "ALL":
        return 0
    if selector == rule.name:
        return 10
    return len(selector)
