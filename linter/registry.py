"""All rules, found in the ``recovery_lint.rules`` package, and rule selection.

A run selects and schedules rules from the rule index (``schemas/rule_index.json``: each rule's
code, name, module, premises and hooks), and imports a rule's module only when the engine first
runs one of its hooks: a rule whose premises fail for every job of the run is never imported, so a
one-file run pays only for the rules it runs. The index is written from the rules
themselves (``python -m recovery_lint.registry > schemas/rule_index.json``) and a test keeps it
equal to them.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache

from .rule import Rule

INDEX_FILE = "rule_index.json"
_PACKAGE = "recovery_lint.rules"

_loaded: dict[str, Rule] = {}  # code -> the rule object, once its module is imported


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    """Every rule, its module imported (documentation, the rule command, tests)."""
    from . import rules as package

    found: dict[str, Rule] = {}
    for name in _rule_modules(package.__path__):
        for rule in _rules_of(_imported(f"{package.__name__}.{name}")):
            if rule.code in found:
                raise RuntimeError(f"rule code {rule.code} defined twice")
            found[rule.code] = rule
    return dict(sorted(found.items()))


def _imported(name: str):
    """The module ``name``, imported (``importlib.import_module`` without importing importlib)."""
    __import__(name)
    return sys.modules[name]


def _rules_of(module) -> list[Rule]:
    """The rules a module defines, one object each (the same object however the module was reached)."""
    out = []
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and issubclass(value, Rule)
            and value is not Rule
            and getattr(value, "code", None)
            and value.__module__ == module.__name__
        ):
            out.append(_loaded.setdefault(value.code, value()))
    return out


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


class IndexedRule:
    """A rule as the index describes it: what selection and scheduling read (code, name, premises,
    hooks) without importing it. Anything else (a check, the documentation, the severity) is the
    rule's own: asking for it imports the rule's module, once."""

    __slots__ = (
        "also_asks",
        "code",
        "file_not_checked",
        "hooks",
        "issue_kind",
        "module",
        "name",
        "premises",
        "suppressible",
    )

    def __init__(self, entry: dict) -> None:
        self.code: str = entry["code"]
        self.name: str = entry["name"]
        self.module: str = entry["module"]
        self.premises: tuple[str, ...] = tuple(entry["premises"])
        self.also_asks: tuple[str, ...] = tuple(entry["also_asks"])
        self.hooks: frozenset[str] = frozenset(entry["hooks"])
        self.issue_kind: str | None = entry.get("issue_kind")  # a parse-issue rule's
        self.file_not_checked: bool = entry.get("file_not_checked", False)
        self.suppressible: bool = entry.get("suppressible", True)

    def load(self) -> Rule:
        rule = _loaded.get(self.code)
        if rule is None:
            for found in _rules_of(_imported(f"{_PACKAGE}.{self.module}")):
                if found.code == self.code:
                    rule = found
        if rule is None:
            raise RuntimeError(f"{self.code} is not in {_PACKAGE}.{self.module}: the rule index is out of date")
        return rule

    def __getattr__(self, attribute: str) -> object:  # only for what the slots do not hold
        if attribute.startswith("__"):
            raise AttributeError(attribute)  # copy and pickle probing for hooks: not the rule's
        return getattr(self.load(), attribute)

    def __repr__(self) -> str:
        return f"IndexedRule({self.code})"


@lru_cache(maxsize=1)
def indexed_rules() -> dict[str, IndexedRule]:
    """Every rule of the index, by code, in code order."""
    from .schemas import read_json

    return {entry["code"]: IndexedRule(entry) for entry in read_json(INDEX_FILE)["rules"]}


def rule_codes() -> frozenset[str]:
    return frozenset(indexed_rules())


def index_entries() -> list[dict[str, object]]:
    """The rule index, as the rules themselves give it."""
    return [
        {
            "code": rule.code,
            "name": rule.name,
            "module": type(rule).__module__.rpartition(".")[2],
            "premises": list(rule.premises),
            "also_asks": list(rule.also_asks),
            "hooks": sorted(rule.hooks),
            **({"issue_kind": rule.issue_kind} if "issues" in rule.hooks else {}),
            **({"file_not_checked": True} if rule.file_not_checked else {}),
            **({} if rule.suppressible else {"suppressible": False}),
        }
        for rule in all_rules().values()
    ]


def index_text() -> str:
    import json

    document = {
        "$comment": "Written from the rules: python -m recovery_lint.registry > schemas/rule_index.json",
        "rules": index_entries(),
    }
    return json.dumps(document, indent=1) + "\n"


def by_name() -> dict[str, Rule]:
    return {r.name: r for r in all_rules().values()}


def matches(selector: str, rule: Rule | IndexedRule) -> bool:
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    if selector == rule.name:
        return True
    return selector.upper().startswith("RL") and rule.code.startswith(selector.upper())


def is_known_selector(selector: str) -> bool:
    rules = indexed_rules().values()
    return selector.upper() == "ALL" or any(matches(selector, r) for r in rules)


def select(select_: list[str] | None, ignore: list[str], extend_select: list[str] | None = None) -> list[IndexedRule]:
    """Rules chosen by ``select`` (default all), plus ``extend-select``, minus ``ignore``.

    As in ruff, a more specific selector wins: ``ignore = ["RL3"]`` with ``select = ["RL301"]``
    keeps RL301.
    """
    chosen = []
    selectors = (select_ if select_ is not None else ["ALL"]) + (extend_select or [])
    for rule in indexed_rules().values():
        best_select = max((_specificity(s, rule) for s in selectors if matches(s, rule)), default=-1)
        best_ignore = max((_specificity(s, rule) for s in ignore if matches(s, rule)), default=-1)
        if best_select >= 0 and best_select > best_ignore:
            chosen.append(rule)
    return chosen


def _specificity(selector: str, rule: Rule | IndexedRule) -> int:
    if selector.upper() == "ALL":
        return 0
    if selector == rule.name:
        return 10
    return len(selector)


if __name__ == "__main__":
    import sys

    sys.stdout.write(index_text())
