"""Regular expressions compiled on first use.

A module-level ``re.compile`` runs on every import, and a one-file run imports every module while
using few of their patterns: compiled up front, each would cost every run its compilation. A
:class:`LazyPattern` is written where the pattern was and answers the same methods; it compiles on
the first call and then hands the calls straight to the compiled pattern.
"""

from __future__ import annotations

import re


class LazyPattern:
    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    @property
    def pattern(self) -> str:
        return self._source

    def match(self, string: str, *args: int) -> re.Match[str] | None:
        return self.compiled.match(string, *args)

    def fullmatch(self, string: str, *args: int) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, *args)

    def search(self, string: str, *args: int) -> re.Match[str] | None:
        return self.compiled.search(string, *args)

    def finditer(self, string: str, *args: int):
        return self.compiled.finditer(string, *args)

    def findall(self, string: str, *args: int) -> list:
        return self.compiled.findall(string, *args)

    def sub(self, repl, string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list:
        return self.compiled.split(string, maxsplit)
