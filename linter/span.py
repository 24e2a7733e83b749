"""Source text with a position index, and the spans every located fact carries.

Offsets inside the tool are character offsets into the decoded text (what Python slices);
byte offsets and 1-based line/column are derived from them on demand, so a parser that
reports bytes (tree-sitter, ast) and one that reports characters (PyYAML) meet here.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """A located range of one file: 1-based line/column (characters), 0-based offsets."""

    path: str
    start: int  # character offset, inclusive
    end: int  # character offset, exclusive
    line: int
    column: int
    end_line: int
    end_column: int
    start_byte: int
    end_byte: int

    def contains(self, other: Span) -> bool:
        return self.path == other.path and self.start <= other.start and other.end <= self.end

    def to_dict(self) -> dict[str, int | str]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "start_byte": self.start_byte,
            "end_byte": self.end_byte,
        }


@dataclass
class SourceText:
    """One file's decoded text plus the tables needed to translate positions."""

    path: str  # display path, relative to the working directory, '/' separated
    text: str
    line_starts: list[int] = field(init=False)  # character offset of each line start
    _byte_line_starts: list[int] | None = field(init=False, default=None)
    ascii: bool = field(init=False)

    def __post_init__(self) -> None:
        starts = [0]
        find = self.text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.line_starts = starts
        self.ascii = self.text.isascii()

    # -- lines -------------------------------------------------------------------------------
    @property
    def newline(self) -> str:
        """The file's dominant line ending, used for inserted lines."""
        lf = self.text.count("\n")
        crlf = self.text.count("\r\n")
        return "\r\n" if crlf and crlf * 2 >= lf else "\n"

    def line_of(self, offset: int) -> int:
        """0-based line index of a character offset."""
        return bisect.bisect_right(self.line_starts, offset) - 1

    def line_start(self, line0: int) -> int:
        return self.line_starts[line0]

    def line_end(self, line0: int) -> int:
        """Offset just before the line's terminator (``\\r\\n`` or ``\\n``)."""
        if line0 + 1 < len(self.line_starts):
            end = self.line_starts[line0 + 1] - 1
            if end > self.line_starts[line0] and self.text[end - 1] == "\r":
                end -= 1
            return end
        end = len(self.text)
        if end > self.line_starts[line0] and self.text[end - 1] == "\r":
            end -= 1
        return end

    def line_text(self, line0: int) -> str:
        return self.text[self.line_starts[line0] : self.line_end(line0)]

    def indent_of_line(self, line0: int) -> str:
        line = self.line_text(line0)
        return line[: len(line) - len(line.lstrip(" \t"))]

    # -- bytes <-> characters -----------------------------------------------------------------
    def _byte_starts(self) -> list[int]:
        if self._byte_line_starts is None:
            starts = [0]
            total = 0
            for i in range(1, len(self.line_starts)):
                seg = self.text[self.line_starts[i - 1] : self.line_starts[i]]
                total += len(seg.encode("utf-8", "surrogatepass"))
                starts.append(total)
            self._byte_line_starts = starts
        return self._byte_line_starts

    def byte_offset(self, offset: int) -> int:
        if self.ascii:
            return offset
        line0 = self.line_of(offset)
        prefix = self.text[self.line_starts[line0] : offset]
        return self._byte_starts()[line0] + len(prefix.encode("utf-8", "surrogatepass"))

    def char_offset(self, byte: int) -> int:
        """Character offset of a byte offset (as tree-sitter reports)."""
        if self.ascii:
            return byte
        starts = self._byte_starts()
        line0 = bisect.bisect_right(starts, byte) - 1
        line = (
            self.text[self.line_starts[line0] : self.line_starts[line0 + 1]]
            if line0 + 1 < len(self.line_starts)
            else self.text[self.line_starts[line0] :]
        )
        raw = line.encode("utf-8", "surrogatepass")[: byte - starts[line0]]
        return self.line_starts[line0] + len(raw.decode("utf-8", "ignore"))

    def offset_of_line_byte_col(self, line1: int, byte_col: int) -> int:
        """Character offset of a 1-based line and a 0-based UTF-8 column (as ``ast`` reports)."""
        line0 = min(max(line1 - 1, 0), len(self.line_starts) - 1)
        start = self.line_starts[line0]
        if self.ascii:
            return start + byte_col
        line = self.text[start : self.line_end(line0)]
        raw = line.encode("utf-8", "surrogatepass")[:byte_col]
        return start + len(raw.decode("utf-8", "ignore"))

    # -- spans ------------------------------------------------------------------------------
    def span(self, start: int, end: int | None = None) -> Span:
        end = start if end is None else end
        start = max(0, min(start, len(self.text)))
        end = max(start, min(end, len(self.text)))
        l0 = self.line_of(start)
        l1 = self.line_of(end)
        return Span(
            path=self.path,
            start=start,
            end=end,
            line=l0 + 1,
            column=start - self.line_starts[l0] + 1,
            end_line=l1 + 1,
            end_column=end - self.line_starts[l1] + 1,
            start_byte=self.byte_offset(start),
            end_byte=self.byte_offset(end),
        )

    def line_span(self, line0: int) -> Span:
        return self.span(self.line_starts[line0], self.line_end(line0))
