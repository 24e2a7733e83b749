"""Suppress: the findings an inline directive covers are dropped and counted; the rules that check
the directives themselves (unused, unknown codes) then run over what the directives matched."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..parse import ParsedFile
from ..rule import Rule
from ..span import SourceText
from ..suppress import Directive, DirectiveProblem, find_directives


@dataclass(eq=False, repr=False)
class SuppressionState:
    """The suppression directives of a run's files and what is wrong with them."""

    directives: dict[str, list[Directive]]
    problems: dict[str, list[DirectiveProblem]]
    sources: dict[str, SourceText]
    selected: set[str]
    files: dict[str, ParsedFile] = field(default_factory=dict)  # what decides where a file's comments are


def apply_suppressions(diagnostics: list[Diagnostic], state: SuppressionState) -> tuple[list[Diagnostic], int]:
    kept = []
    suppressed = 0
    for d in diagnostics:
        if d.path not in state.directives:
            src = state.sources.get(d.path)
            found, problems = _directives(state, d.path) if src else ([], [])
            state.directives[d.path] = found
            state.problems[d.path] = problems
        if _suppress(d, state.directives[d.path]):
            suppressed += 1
        else:
            kept.append(d)
    for path in state.sources:
        if path not in state.directives:
            found, problems = _directives(state, path)
            state.directives[path] = found
            state.problems[path] = problems
    return kept, suppressed


def _directives(state: SuppressionState, path: str) -> tuple[list[Directive], list[DirectiveProblem]]:
    parsed = state.files.get(path)
    return find_directives(state.sources[path], parsed.kind if parsed else None, parsed.model if parsed else None)


def _suppress(d: Diagnostic, directives: list[Directive]) -> bool:
    hit = False
    for directive in directives:
        codes = {c for c, _ in directive.codes}
        if d.code not in codes:
            continue
        if directive.covers(d.span):
            directive.used.add(d.code)
            hit = True
    return hit


def run_directive_rules(rules: list[Rule], state: SuppressionState) -> list[Diagnostic]:
    """The findings of the rules that check suppression directives: none where no file has one (the
    rules are then not even imported)."""
    out: list[Diagnostic] = []
    if not any(state.directives.values()) and not any(state.problems.values()):
        return out
    for rule in rules:
        if "directives" in rule.hooks:
            out.extend(rule.check_directives(state))
    return out
