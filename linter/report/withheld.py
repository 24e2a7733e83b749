"""``--show-withheld``: the advice a rule had for a job but did not give because a premise of it is
unknown, each at the place it would apply, with what would settle it (text, or JSON)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from ..premises import Withheld, subject
from .settle import remedy


def _key(w: Withheld) -> str:
    return w.settling_key or w.premise


def _ordered(withheld: Iterable[Withheld]) -> list[Withheld]:
    def order(w: Withheld) -> tuple:
        return (not w.path, w.path, w.line, w.column, w.code, w.premise, w.job)

    return sorted(withheld, key=order)  # the run's withheld advice holds each piece once


def _place(w: Withheld) -> str:
    return f"{w.path}:{w.line}:{w.column}" if w.path else "(no place in the repository)"


def render_withheld(withheld: Iterable[Withheld]) -> str:
    """One entry per withheld piece of advice: where, which rule, what it would say, what is unknown and
    how to settle it; then a count."""
    items = _ordered(withheld)
    if not items:
        return "No advice withheld: every premise the rules asked about is known.\n"
    lines: list[str] = []
    for w in items:
        lines.append(f"{_place(w)}: {w.headline}")
        if w.condition:
            lines.append(f"  holds if: {w.condition}")
        if w.advice:
            lines.append(f"  would say: {w.advice}")
        lines.append(f"  settle it: {remedy(_key(w), w.premise)}")
        lines.append(f"  job: {w.job}")
    jobs = len({w.job for w in items})
    lines.append("")
    pieces, in_jobs = f"{len(items)} piece{'s' if len(items) != 1 else ''}", f"{jobs} job{'s' if jobs != 1 else ''}"
    lines.append(f"{pieces} of advice withheld in {in_jobs}.")
    return "\n".join(lines) + "\n"


def withheld_records(withheld: Iterable[Withheld]) -> list[dict[str, object]]:
    """The withheld advice as records (the JSON of --show-withheld, and SARIF's run properties)."""
    return [
        {
            "rule": w.code,
            "path": w.path or None,
            "line": w.line or None,
            "column": w.column or None,
            "job": w.job,
            "premise": w.premise,
            "unknown": subject(w.premise),
            "evidence": w.evidence,
            "key": _key(w),
            "settle": remedy(_key(w), w.premise),
            "advice": w.advice or None,
            "condition": w.condition or None,
        }
        for w in _ordered(withheld)
    ]


def render_withheld_json(withheld: Iterable[Withheld]) -> str:
    return json.dumps(withheld_records(withheld), indent=2, ensure_ascii=False) + "\n"
