"""What a rule reports: diagnostics, and fixes as plain data (edits plus a safety label)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache

from .span import Span


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


class Applicability(str, Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace the characters ``span.start:span.end`` of ``span.path`` with ``content``."""

    span: Span
    content: str

    @property
    def path(self) -> str:
        return self.span.path

    def to_dict(self) -> dict[str, object]:
        s = self.span
        return {
            "path": s.path,
            "line": s.line,
            "column": s.column,
            "end_line": s.end_line,
            "end_column": s.end_column,
            "content": self.content,
        }


@dataclass(frozen=True)
class Fix:
    """Edits that must be applied together; one or several files."""

    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE
    overrides: str = ""  # the user's explicit setting the fix changes ("HCCL_ASYNC_ERROR_HANDLING=0")
    conditional: bool = False  # the setting it changes applies only when a condition holds

    @property
    def paths(self) -> set[str]:
        return {e.path for e in self.edits}

    def to_dict(self) -> dict[str, object]:
        return {
            "applicability": self.applicability.value,
            "message": self.message,
            "edits": [e.to_dict() for e in sorted(self.edits, key=lambda e: (e.path, e.span.start))],
        }


def safe_fix(message: str, *edits: Edit, overrides: str = "", conditional: bool = False) -> Fix:
    """A fix the rule considers safe; the safe-fix policy (``fixpolicy``) may still make it unsafe."""
    return Fix(message, tuple(edits), Applicability.SAFE, overrides, conditional)


def unsafe_fix(message: str, *edits: Edit) -> Fix:
    return Fix(message, tuple(edits), Applicability.UNSAFE)


@dataclass(frozen=True)
class Related:
    """Another place a finding points at, with what happens there."""

    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One finding of one rule: where, what, how severe, and the fix that resolves it, if any."""

    code: str
    name: str
    message: str
    severity: Severity
    span: Span
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    job: str | None = None  # identity of the linked manifest document, e.g. "jobs/a.yaml#1 Job/ns/name"
    snippet: str = field(default="", compare=False)  # normalized source text under the span
    # other files the finding depends on: a finding in a script that follows from its job's manifest
    context: tuple[str, ...] = field(default=(), compare=False)
    # the ids of the jobs it was found for (a run over named files reports the findings of their jobs)
    origins: tuple[str, ...] = field(default=(), compare=False)

    @property
    def path(self) -> str:
        return self.span.path

    @property
    def headline(self) -> str:
        """The message's first sentence (at most about HEADLINE_LIMIT characters): what the concise
        format shows. The whole message is ``headline`` followed by ``detail``."""
        return split_message(self.message)[0]

    @property
    def detail(self) -> str:
        """The rest of the message: the explanation, shown by the full, JSON and SARIF formats."""
        return split_message(self.message)[1]

    def sort_key(self) -> tuple[object, ...]:
        return (self.span.path, self.span.start, self.code, self.message)

    def with_job(self, job: str | None, origin: str | None = None) -> Diagnostic:
        """The finding attached to a manifest's job (``job``), found for the job whose id is ``origin``."""
        if origin is None:
            return replace(self, job=job)
        return replace(self, job=job, origins=(*self.origins, origin) if origin not in self.origins else self.origins)


HEADLINE_LIMIT = 160
# a sentence ends at . ! or ? followed by a space and a capital, a quote or a parenthesis (compiled
# on first use, by the re module's cache: most runs never render a long message)
_SENTENCE_END = r"[.!?](?=\s+[A-Z`'\"(])"
_CLAUSE_BREAKS = ("; ", ": ", ", ")  # where a long first sentence is cut, in this order of preference


@lru_cache(maxsize=4096)  # each format asks for both halves of the same messages
def split_message(text: str) -> tuple[str, str]:
    """A message as (headline, detail): the first sentence when it is short enough, else the
    longest leading clause that is (cut at '; ', then ': ', then ', '), never inside parentheses,
    brackets, double quotes or backticks."""
    text = text.strip()
    free = _free_positions(text)
    end = next((m.start() for m in re.finditer(_SENTENCE_END, text) if m.start() in free), None)
    if end is not None and end < HEADLINE_LIMIT:
        return text[: end + 1], text[end + 1 :].strip()
    if len(text) <= HEADLINE_LIMIT:
        return text, ""
    for sep in _CLAUSE_BREAKS:
        cut = max((i for i in free if i <= HEADLINE_LIMIT and text.startswith(sep, i)), default=-1)
        if cut > 0:
            return text[:cut], text[cut + len(sep) :].strip()
    cut = text.rfind(" ", 0, HEADLINE_LIMIT)
    return (text[:cut], text[cut + 1 :]) if cut > 0 else (text, "")


def _free_positions(text: str) -> set[int]:
    """Offsets outside parentheses, brackets, double quotes and backticks."""
    free = set()
    depth = 0
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in '"`':
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            free.add(i)
    return free
