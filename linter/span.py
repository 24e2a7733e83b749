"""Source text with a position index, and the spans every located fact carries.

Offsets inside the tool are character offsets into the decoded text (what Python slices);
byte offsets and 1-based line/column are derived from them on demand, so a parser that
reports bytes (tree-sitter, ast) and one that reports characters (PyYAML) meet here.

A shell script may hold bytes that are not UTF-8 (a GBK comment): bash does not care, so such a
script is decoded with ``surrogateescape``, each such byte one character U+DC80..U+DCFF. ``to_bytes``
turns a text back into exactly the bytes it was read from; every byte offset, digest and write
goes through it.
"""

from __future__ import annotations

import bisect
from array import array

from .lazyre import LazyPattern

_NON_ASCII = LazyPattern(r"[^\x00-\x7f]")


def to_bytes(text: str) -> bytes:
    """The bytes a text was decoded from (undecodable bytes come back as themselves)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # another lone surrogate, never read from a file: kept as surrogatepass writes it
        return text.encode("utf-8", "surrogatepass")


def printable(text: str) -> str:
    """The text for a message or a JSON document: an undecodable byte shows as U+FFFD."""
    if text.isascii():
        return text
    return to_bytes(text).decode("utf-8", "replace")


def _chars_in_prefix(line: str, size: int) -> int:
    """How many whole characters of ``line`` fit in its first ``size`` bytes."""
    decoded = to_bytes(line)[:size].decode("utf-8", "surrogateescape")
    count = len(decoded)
    if count and "\udc80" <= decoded[-1] <= "\udcff":
        # either an undecodable byte of the line or a character cut in two: count back to the cut
        while count and len(to_bytes(line[:count])) > size:
            count -= 1
    return count


class Span:
    """A located range of one file: 0-based character offsets into its ``SourceText``.

    Only the offsets are stored; 1-based line/column (characters) and byte offsets are derived
    from the source's line index when asked for, so the many spans a parse creates stay small and
    cheap to build and to pickle. Two spans are equal when they cover the same range of the same path.
    """

    # the end is kept as a length and the start in two parts (start >> 8, start & 255): in a file below
    # 64 KiB all three are small ints CPython shares, where the offsets would be one or two more int
    # objects per span (a run holds hundreds of thousands)
    __slots__ = ("_high", "_low", "_size", "source")

    def __init__(self, source: SourceText, start: int, end: int) -> None:
        self.source = source
        self._high, self._low = start >> 8, start & 255
        self._size = end - start

    @property
    def start(self) -> int:
        """Character offset, inclusive."""
        return self._high << 8 | self._low

    @property
    def end(self) -> int:
        """Character offset, exclusive."""
        return (self._high << 8 | self._low) + self._size

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def line(self) -> int:
        return self.source.line_of(self.start) + 1

    @property
    def column(self) -> int:
        src = self.source
        return self.start - src.line_starts[src.line_of(self.start)] + 1

    @property
    def end_line(self) -> int:
        return self.source.line_of(self.end) + 1

    @property
    def end_column(self) -> int:
        src = self.source
        return self.end - src.line_starts[src.line_of(self.end)] + 1

    @property
    def start_byte(self) -> int:
        return self.source.byte_offset(self.start)

    @property
    def end_byte(self) -> int:
        return self.source.byte_offset(self.end)

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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Span):
            return NotImplemented
        return self.start == other.start and self.end == other.end and self.source.path == other.source.path

    def __hash__(self) -> int:
        return hash((self.source.path, self.start, self.end))

    def __repr__(self) -> str:
        return f"Span({self.path!r}, {self.start}, {self.end}, line={self.line}, column={self.column})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_restore_span, (self.source, self._high, self._low, self._size))


def _restore_span(source: SourceText, high: int, low: int, size: int) -> Span:
    """A span from a pickle, its fields set as they were kept (no offsets to recompute)."""
    span = object.__new__(Span)
    span.source, span._high, span._low, span._size = source, high, low, size
    return span


class Located:
    """A parsed node that keeps its span as offsets (the file, its start and its length) and makes the
    ``Span`` when asked: a run holds hundreds of thousands of nodes, each one object fewer this way.

    The start is kept in two parts, ``start >> 8`` and ``start & 255``: in a file below 64 KiB both are
    ints CPython shares, where the whole offset would be one more 32-byte int object per node."""

    __slots__ = ("_high", "_low", "_size", "_source")

    def _place(self, source: SourceText, start: int, end: int) -> None:
        self._source, self._high, self._low, self._size = source, start >> 8, start & 255, end - start

    def _locate(self, span: Span) -> None:
        self._place(span.source, span.start, span.end)

    @property
    def start(self) -> int:
        """Character offset of the node's start."""
        return self._high << 8 | self._low

    @property
    def span(self) -> Span:
        start = self.start
        return Span(self._source, start, start + self._size)

    def _text(self) -> str:
        """The text under the span."""
        start = self.start
        return self._source.text[start : start + self._size]


class SourceText:
    """One file's decoded text plus the tables needed to translate positions (built on first use)."""

    __slots__ = (
        "_ascii",
        "_byte_line_starts",
        "_byte_map",
        "_line_starts",
        "_newline",
        "encoding",
        "path",
        "text",
    )

    def __init__(self, path: str, text: str, encoding: str = "utf-8") -> None:
        self.path = path  # display path, relative to the working directory, '/' separated
        self.text = text
        # the codec the file was read with: UTF-8, or what a Python file declares (PEP 263, ``# coding: gbk``)
        self.encoding = encoding
        self._line_starts: array | None = None
        self._byte_line_starts: list[int] | None = None
        self._byte_map: _ByteMap | None = None
        self._ascii: bool | None = None
        self._newline: str | None = None

    def __reduce__(self) -> tuple[object, ...]:
        # the position tables are rebuilt where needed
        if self.encoding == "utf-8":
            return (SourceText, (self.path, self.text))
        return (SourceText, (self.path, self.text, self.encoding))

    def __repr__(self) -> str:
        return f"SourceText({self.path!r}, <{len(self.text)} characters>)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceText):
            return NotImplemented
        return self.path == other.path and self.text == other.text

    __hash__ = None  # type: ignore[assignment]  # mutable tables; compared by content like the dataclass it was

    @property
    def indexed(self) -> bool:
        """Whether the line index is built."""
        return self._line_starts is not None

    def drop_line_index(self) -> None:
        """Forget the line index; it is built again when next asked for (a run keeps thousands of files)."""
        self._line_starts = None

    @property
    def line_starts(self) -> array:
        """Character offset of each line start (an array of machine ints: as a list, each offset past
        256 is one more 32-byte object, and a run keeps the index of every file it reports on)."""
        starts = self._line_starts
        if starts is None:
            found = [0]
            find = self.text.find
            append = found.append
            pos = find("\n")
            while pos != -1:
                append(pos + 1)
                pos = find("\n", pos + 1)
            starts = self._line_starts = array("q", found)
        return starts

    @property
    def ascii(self) -> bool:
        if self._ascii is None:
            self._ascii = self.text.isascii()
        return self._ascii

    # -- lines -------------------------------------------------------------------------------
    @property
    def newline(self) -> str:
        """The file's dominant line ending, used for inserted lines. Counted once: a fix builds an
        edit per finding, and counting for each made a file of many findings quadratic."""
        if self._newline is None:
            lf = self.text.count("\n")
            crlf = self.text.count("\r\n")
            self._newline = "\r\n" if crlf and crlf * 2 >= lf else "\n"
        return self._newline

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
                total += len(to_bytes(seg))
                starts.append(total)
            self._byte_line_starts = starts
        return self._byte_line_starts

    def byte_offset(self, offset: int) -> int:
        if self.ascii:
            return offset
        line0 = self.line_of(offset)
        prefix = self.text[self.line_starts[line0] : offset]
        return self._byte_starts()[line0] + len(to_bytes(prefix))

    def drop_byte_map(self) -> None:
        """Forget the byte -> character map: a parser needs it while it reads tree-sitter's byte
        offsets, nothing after (a model sent from a worker or kept in the cache goes without it); it
        is built again if asked."""
        self._byte_map = None

    def char_offset(self, byte: int) -> int:
        """Character offset of a byte offset (as tree-sitter reports)."""
        if self.ascii:
            return byte
        found = self._byte_map
        if found is None:
            found = self._byte_map = _ByteMap(self.text)
        return found.char(byte)

    def offset_of_line_byte_col(self, line1: int, byte_col: int) -> int:
        """Character offset of a 1-based line and a 0-based UTF-8 column (as ``ast`` reports)."""
        line0 = min(max(line1 - 1, 0), len(self.line_starts) - 1)
        start = self.line_starts[line0]
        if self.ascii:
            return start + byte_col
        return start + _chars_in_prefix(self.text[start : self.line_end(line0)], byte_col)

    # -- spans ------------------------------------------------------------------------------
    def span(self, start: int, end: int | None = None) -> Span:
        size = len(self.text)
        end = start if end is None else end
        if not 0 <= start <= end <= size:
            start = max(0, min(start, size))
            end = max(start, min(end, size))
        return Span(self, start, end)

    def line_span(self, line0: int) -> Span:
        return self.span(self.line_starts[line0], self.line_end(line0))


class _ByteMap:
    """Byte offset -> character offset of a text that is not all ASCII, from its non-ASCII
    characters alone (a bisect among them): a table of every byte cost a Python step per character
    of each script, where most characters are ASCII and map by a constant shift."""

    __slots__ = ("bytes_at", "chars_at", "end", "shift_after", "size", "widths")

    def __init__(self, text: str) -> None:
        self.bytes_at: list[int] = []  # byte offset of each non-ASCII character
        self.chars_at: list[int] = []  # its character offset
        self.shift_after: list[int] = []  # bytes beyond one per character, up to and including it
        self.widths: list[int] = []
        shift = 0
        for match in _NON_ASCII.finditer(text):
            at = match.start()
            o = ord(match.group())
            # an undecodable byte a shell script kept (surrogateescape, U+DC80..U+DCFF) stands for one byte
            width = 1 if 0xDC80 <= o <= 0xDCFF else 2 if o < 0x800 else 3 if o < 0x10000 else 4
            self.bytes_at.append(at + shift)
            self.chars_at.append(at)
            self.widths.append(width)
            shift += width - 1
            self.shift_after.append(shift)
        self.size = len(text) + shift  # bytes in all
        self.end = len(text)

    def char(self, byte: int) -> int:
        byte = min(max(byte, 0), self.size)
        k = bisect.bisect_right(self.bytes_at, byte) - 1
        if k < 0:
            return byte
        if byte < self.bytes_at[k] + self.widths[k]:
            return self.chars_at[k]  # inside a character of several bytes: that character
        return min(byte - self.shift_after[k], self.end)
