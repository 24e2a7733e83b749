"""A reader for the plain block YAML that job manifests are written in, without PyYAML.

Importing PyYAML costs a one-file run about as much as all the linting it does (its reader
compiles a large character-class pattern, its constructor imports datetime and base64), so the
common shape of a manifest is read here and libyaml reads everything else. This reader accepts:

- documents of block mappings and block sequences (indentless ones too), separated by ``---``
  lines;
- single-line keys and values: plain, single-quoted and double-quoted scalars, and flow
  sequences and mappings of them (``[a, "b"]``, ``{}``);
- literal block scalars (``|``, ``|-``, ``|+``, an indentation digit);
- comments and blank lines; any printable text.

It gives up (returns None) on anything else: folded (``>``) or multi-line plain and quoted
scalars, anchors, aliases, tags, directives, explicit keys, tabs outside comments and block
scalars, carriage returns, a byte order mark, odd indentation, every syntax error. A file it takes gets the nodes
libyaml would give, offsets included: the same values, styles and tags (plain scalars resolved
later), a collection ending where the next token starts, an empty value at the end of its colon.
``tests/test_yaml_block.py`` holds it to libyaml, file by file.
"""

from __future__ import annotations

from .yamlnodes import STR_TAG

MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
MAX_KEY = 1000  # longer keys are left to libyaml, whose limit is 1024 characters
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_STOP = frozenset(",[]{}#")
_ESCAPES = {
    "0": "\0",
    "a": "\x07",
    "b": "\x08",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}


class Mark:
    """A position, as PyYAML's marks give it (only the offset is read)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class Node:
    """A node shaped as PyYAML's: ``id``, ``tag``, ``value``, marks, ``style``, ``flow_style``."""

    __slots__ = ("end_mark", "flow_style", "id", "start_mark", "style", "tag", "value")

    def __init__(self, id: str, tag: object, value: object, start: int, end: int, style: str | None = None) -> None:
        self.id = id
        self.tag = tag
        self.value = value
        self.start_mark = Mark(start)
        self.end_mark = Mark(end)
        self.style = style
        self.flow_style = False


class Unsupported(Exception):
    """What this reader does not take; libyaml reads the file instead."""


def read_block_yaml(text: str, plain_tag: object) -> list[Node] | None:
    """The documents of ``text`` as libyaml would compose them, or None when the text is not in
    the shape this reader takes. ``plain_tag`` is the tag given to plain scalars."""
    if not _printable(text):
        return None
    try:
        return _Reader(text, plain_tag).documents()
    except (Unsupported, IndexError, RecursionError):  # an index past the text: a shape not foreseen
        return None


def _printable(text: str) -> bool:
    """libyaml's character set, less what this reader leaves to it (carriage returns, the byte
    order mark, the Unicode line breaks)."""
    for ch in set(text):
        code = ord(ch)
        if 0x20 <= code <= 0x7E or ch in "\n\t":
            continue
        wide = 0xA0 <= code <= 0xD7FF or (0xE000 <= code <= 0xFFFD and code != 0xFEFF) or 0x10000 <= code <= 0x10FFFF
        if not wide or code in (0x2028, 0x2029):
            return False
    return True


class _Reader:
    def __init__(self, text: str, plain_tag: object) -> None:
        self.text = text
        self.plain_tag = plain_tag
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts  # offset of each line
        self.ends = [start - 1 for start in starts[1:]] + [len(text)]  # offset of each line's break
        self.lead = [len(row) - len(row.lstrip(" ")) for row in text.split("\n")]  # each line's leading spaces
        self.keys: dict[int, int | None] = {}  # simple_key's answers by offset

    # -- lines ---------------------------------------------------------------------------------

    def line_end(self, line: int) -> int:
        """Offset of the line's break (or the end of the text)."""
        return self.ends[line]

    def next_token(self, line: int, pos: int) -> tuple[int, int]:
        """The line and offset of the next token from ``pos`` on: blanks, comments and line
        breaks skipped; (len(lines), len(text)) at the end. Tabs may stand only in comments."""
        text, starts, ends, lead = self.text, self.starts, self.ends, self.lead
        lines = len(starts)
        while line < lines:
            end = ends[line]
            if pos == starts[line]:
                pos += lead[line]
            else:
                while pos < end and text[pos] == " ":
                    pos += 1
            if pos < end:
                ch = text[pos]
                if ch == "\t":  # libyaml skips a tab only where no key can start: not worth telling apart
                    raise Unsupported("a tab between tokens")
                if ch != "#":
                    return line, pos
                if pos > starts[line] and text[pos - 1] not in " \t":
                    raise Unsupported("'#' glued to a token")
            line += 1
            if line < lines:
                pos = starts[line]
        return lines, len(text)

    def blank_after(self, pos: int) -> bool:
        """Whether a blank or the line's end follows ``pos``: what makes ``-`` an entry, ``:`` a value."""
        return self.text[pos + 1 : pos + 2] in ("", " ", "\n")

    def is_entry(self, pos: int) -> bool:
        """Whether a block sequence entry starts at ``pos``."""
        return self.text[pos] == "-" and self.blank_after(pos)

    def starts_plain(self, pos: int) -> bool:
        """Whether a plain scalar may start at ``pos``: not an indicator, unless ``-``, ``?`` or ``:``
        has a character of its own after it."""
        text = self.text
        ch = text[pos]
        return ch not in _INDICATORS or (ch in "-?:" and text[pos + 1 : pos + 2] not in ("", " ", "\n", "\t"))

    def column(self, line: int, pos: int) -> int:
        return pos - self.starts[line]

    def is_document_marker(self, line: int, pos: int) -> bool:
        text = self.text
        return (
            pos == self.starts[line]
            and text.startswith(("---", "..."), pos)
            and text[pos + 3 : pos + 4] in ("", " ", "\n", "\t")
        )

    # -- documents -----------------------------------------------------------------------------

    def documents(self) -> list[Node]:
        text = self.text
        lines = len(self.starts)
        docs: list[Node] = []
        line, pos = self.next_token(0, 0)
        if line < lines and text[pos] == "%":
            raise Unsupported("a directive")
        while line < lines:
            if self.is_document_marker(line, pos):
                if text.startswith("...", pos):
                    raise Unsupported("a document end marker")
                after_line, after = self.next_token(line, pos + 3)
                if after_line == line:
                    raise Unsupported("content on the '---' line")
                if after_line >= lines or self.is_document_marker(after_line, after):
                    raise Unsupported("an empty document")  # libyaml composes it as an empty scalar
                line, pos = after_line, after
                continue
            node, line, pos = self.block_node(line, pos, -1)
            if node.id == "scalar":
                raise Unsupported("a document that is a scalar")
            docs.append(node)
            if line < lines and not self.is_document_marker(line, pos):
                raise Unsupported("content after the document's root")
        return docs

    # -- block nodes ---------------------------------------------------------------------------

    def block_node(self, line: int, pos: int, parent: int) -> tuple[Node, int, int]:
        """The node starting at the token at (line, pos), inside a block indented at ``parent``.
        Returns the node and the next token after it."""
        if self.is_entry(pos):
            return self.block_sequence(line, pos)
        if self.simple_key(line, pos) is not None:
            return self.block_mapping(line, pos)
        return self.flow_or_scalar(line, pos, parent)

    def simple_key(self, line: int, pos: int) -> int | None:
        """Where the key starting at ``pos`` ends (its ':'), when the line holds ``key:`` there."""
        keys = self.keys
        if pos not in keys:
            keys[pos] = self._simple_key(line, pos)
        return keys[pos]

    def _simple_key(self, line: int, pos: int) -> int | None:
        text = self.text
        end = self.ends[line]
        ch = text[pos]
        if ch in "'\"":
            close = self.quoted_end(pos, end)
            if close is None:
                return None
            if text[close : close + 1] == ":" and self.blank_after(close):
                if close - pos > MAX_KEY:
                    raise Unsupported("a long key")
                return close
            return None
        if not self.starts_plain(pos):
            return None
        colon = text.find(":", pos, end)
        while colon != -1 and not self.blank_after(colon):
            colon = text.find(":", colon + 1, end)
        if colon == -1 or text.find(" #", pos, colon) != -1 or text.find("\t#", pos, colon) != -1:
            return None  # no key, or the ':' is in a comment
        if colon - pos > MAX_KEY:
            raise Unsupported("a long key")
        if text[colon - 1] in " \t":
            raise Unsupported("a blank before a key's colon")
        return colon

    def block_mapping(self, line: int, pos: int) -> tuple[Node, int, int]:
        indent = self.column(line, pos)
        start = pos
        pairs: list[tuple[Node, Node]] = []
        while True:
            key, colon = self.key(line, pos)
            value_line, value_pos = self.next_token(line, colon + 1)
            if value_line == line:  # the value is on the key's line
                if self.is_entry(value_pos):
                    raise Unsupported("a sequence entry on a key's line")
                if self.simple_key(value_line, value_pos) is not None:
                    raise Unsupported("a mapping on a key's line")
                value, line, pos = self.flow_or_scalar(value_line, value_pos, indent)
            elif (
                value_line < len(self.starts)
                and not self.is_document_marker(value_line, value_pos)
                and (
                    self.column(value_line, value_pos) > indent
                    or (self.column(value_line, value_pos) == indent and self.is_entry(value_pos))
                )
            ):
                value, line, pos = self.block_node(value_line, value_pos, indent)
            else:  # nothing: libyaml gives an empty plain scalar at the end of the colon
                value = Node("scalar", self.plain_tag, "", colon + 1, colon + 1, "")
                line, pos = value_line, value_pos
            pairs.append((key, value))
            if line >= len(self.starts) or self.is_document_marker(line, pos):
                break
            column = self.column(line, pos)
            if column < indent:
                break
            if column > indent or self.simple_key(line, pos) is None:
                raise Unsupported("not a key where the mapping goes on")
        return Node("mapping", MAP_TAG, pairs, start, pos), line, pos

    def key(self, line: int, pos: int) -> tuple[Node, int]:
        colon = self.simple_key(line, pos)
        if colon is None:
            raise Unsupported("no key")
        text = self.text
        if text[pos] in "'\"":
            node, end = self.quoted(pos, self.line_end(line))
        else:
            end = colon
            while text[end - 1] == " ":
                end -= 1
            raw = text[pos:end]
            if "\t" in raw or " #" in raw:
                raise Unsupported("an odd key")
            node = Node("scalar", self.plain_tag, raw, pos, end, "")
        return node, colon

    def block_sequence(self, line: int, pos: int) -> tuple[Node, int, int]:
        indent = self.column(line, pos)
        start = pos
        items: list[Node] = []
        while True:
            entry_line, entry_pos = self.next_token(line, pos + 1)
            if entry_line == line:
                if self.is_entry(entry_pos):
                    raise Unsupported("a compact nested sequence")
                if self.simple_key(entry_line, entry_pos) is not None:
                    item, line, pos = self.block_mapping(entry_line, entry_pos)
                else:
                    item, line, pos = self.flow_or_scalar(entry_line, entry_pos, indent)
            elif (
                entry_line < len(self.starts)
                and not self.is_document_marker(entry_line, entry_pos)
                and self.column(entry_line, entry_pos) > indent
            ):
                item, line, pos = self.block_node(entry_line, entry_pos, indent)
            else:
                raise Unsupported("an empty sequence entry")
            items.append(item)
            if line >= len(self.starts) or self.is_document_marker(line, pos):
                break
            column = self.column(line, pos)
            if column < indent:
                break
            if column > indent or not self.is_entry(pos):
                if column == indent and self.simple_key(line, pos) is not None:
                    break  # an indentless sequence ends at its mapping's next key
                raise Unsupported("not an entry where the sequence goes on")
        return Node("sequence", SEQ_TAG, items, start, pos), line, pos

    # -- scalars and flow collections ----------------------------------------------------------

    def flow_or_scalar(self, line: int, pos: int, parent: int) -> tuple[Node, int, int]:
        text = self.text
        ch = text[pos]
        end = self.line_end(line)
        if ch in "[{":
            node, after = self.flow(pos, end)
            self.rest_of_line_blank(after, end)
        elif ch in "'\"":
            node, after = self.quoted(pos, end)
            self.rest_of_line_blank(after, end)
        elif ch == "|":
            return self.literal(line, pos, parent)
        elif not self.starts_plain(pos):
            raise Unsupported(f"a scalar starting with {ch!r}")
        else:
            node = self.plain(pos, end)
            self.no_continuation(line, parent)
        next_line, next_pos = self.next_token(line, end)
        return node, next_line, next_pos

    def rest_of_line_blank(self, pos: int, end: int) -> None:
        text = self.text
        rest = text[pos:end]
        stripped = rest.lstrip(" ")
        if stripped and not (stripped[0] == "#" and len(stripped) < len(rest)):
            raise Unsupported("more after a value")

    def plain(self, pos: int, end: int) -> Node:
        """A single-line plain scalar in block context: up to a comment or the line's end."""
        text = self.text
        comment = text.find(" #", pos, end)
        body = text[pos : end if comment == -1 else comment]
        if "\t" in body:
            raise Unsupported("a tab in a plain scalar")
        value = body.rstrip(" ")
        if ": " in body or value.endswith(":"):
            raise Unsupported("': ' in a plain value")
        return Node("scalar", self.plain_tag, value, pos, pos + len(value), "")

    def no_continuation(self, line: int, parent: int) -> None:
        """A plain scalar that ends its line goes on over the next lines indented past its block
        (blank lines between, a comment line ends it): that is not read here."""
        text = self.text
        row = line + 1
        while row < len(self.starts) and self.starts[row] < len(text):
            raw = text[self.starts[row] : self.line_end(row)]
            content = raw.lstrip(" ")
            if not content:
                row += 1
                continue
            if content[0] == "\t":
                raise Unsupported("a tab after a plain scalar")
            if content[0] == "#" or self.is_document_marker(row, self.starts[row]):
                return
            if len(raw) - len(content) > parent:
                raise Unsupported("a plain scalar over several lines")
            return

    def quoted_end(self, pos: int, end: int) -> int | None:
        """The offset after the closing quote of the scalar quoted at ``pos``, on this line."""
        text = self.text
        quote = text[pos]
        i = pos + 1
        while i < end:
            c = text[i]
            if quote == "'" and c == "'":
                if text[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            if quote == '"':
                if c == "\\":
                    i += 2
                    continue
                if c == '"':
                    return i + 1
            i += 1
        return None

    def quoted(self, pos: int, end: int) -> tuple[Node, int]:
        text = self.text
        close = self.quoted_end(pos, end)
        if close is None:
            raise Unsupported("a quoted scalar over several lines")
        body = text[pos + 1 : close - 1]
        if "\t" in body:
            raise Unsupported("a tab in a quoted scalar")
        value = body.replace("''", "'") if text[pos] == "'" else _unescape(body)
        return Node("scalar", STR_TAG, value, pos, close, text[pos]), close

    def literal(self, line: int, pos: int, parent: int) -> tuple[Node, int, int]:
        """A literal block scalar, read as libyaml's scan_block_scalar reads it: content lines are
        those indented at least as far as the first one (or the indicator's digit says); the node
        ends at the start of the first line after the content and its trailing blank lines."""
        text = self.text
        starts = self.starts
        real_lines = len(starts) - (1 if starts[-1] == len(text) else 0)  # no line after a final break
        i = pos + 1
        chomp = 0  # -1 strip, 0 clip, 1 keep
        increment = 0
        for _ in range(2):
            c = text[i : i + 1]
            if c in ("-", "+") and chomp == 0:
                chomp = -1 if c == "-" else 1
                i += 1
            elif c and c in "123456789" and increment == 0:
                increment = int(c)
                i += 1
        self.rest_of_line_blank(i, self.line_end(line))
        first = line + 1
        while first < real_lines and not text[starts[first] : self.line_end(first)]:
            first += 1  # leading empty lines; one holding spaces would count towards the indentation
        if first >= real_lines or not text[starts[first] : self.line_end(first)].strip(" "):
            raise Unsupported("a block scalar without content, or leading blank lines with spaces")
        content = text[starts[first] : self.line_end(first)]
        found = len(content) - len(content.lstrip(" "))
        if increment:
            indent = parent + increment if parent >= 0 else increment
        else:
            if content[found] == "\t":
                raise Unsupported("a tab where the indentation is being found")
            indent = max(found, parent + 1, 1)
        if found < indent:
            raise Unsupported("a block scalar without content")
        lines = [""] * (first - line - 1)
        last = first  # the last content line
        row = first
        while row < real_lines:
            raw = text[starts[row] : self.line_end(row)]
            spaces = len(raw) - len(raw.lstrip(" "))
            if spaces >= indent and len(raw) > indent:  # spaces up to the indentation alone: a blank line
                lines.append(raw[indent:])
                last = row
            elif spaces == len(raw):
                if row + 1 == len(starts):
                    break  # a last line of spaces with no line break: no line to the scalar
                lines.append("")  # a blank line no longer than the indentation
            elif raw[spaces] == "\t":
                raise Unsupported("a tab in a block scalar's indentation")
            else:
                break
            row += 1
        kept = lines[: last - line]
        trailing = len(lines) - len(kept)
        broken = last + 1 < len(starts)  # the last content line ends with a line break
        value = "\n".join(kept)
        if chomp >= 0 and broken:
            value += "\n"
        if chomp == 1:
            value += "\n" * trailing
        stop = starts[row] if row < real_lines else len(text)
        node = Node("scalar", STR_TAG, value, pos, stop, "|")
        if row < real_lines:
            next_line, next_pos = self.next_token(row, stop)
        else:
            next_line, next_pos = len(starts), len(text)
        return node, next_line, next_pos

    def flow(self, pos: int, end: int, depth: int = 0) -> tuple[Node, int]:
        """A flow sequence or mapping closed on this line."""
        if depth > 32:
            raise Unsupported("deep flow nesting")
        text = self.text
        opening = text[pos]
        closing = "]" if opening == "[" else "}"
        items: list = []
        i = self.flow_skip(pos + 1, end)
        if text[i] == closing:
            return self.flow_node(opening, items, pos, i + 1), i + 1
        while True:
            if opening == "[":
                item, i = self.flow_item(i, end, depth)
                items.append(item)
            else:
                key, i = self.flow_item(i, end, depth, key=True)
                i = self.flow_skip(i, end)
                if text[i] != ":" or text[i + 1 : i + 2] not in (" ",):
                    raise Unsupported("a flow mapping entry without ': '")
                i = self.flow_skip(i + 1, end)
                value, i = self.flow_item(i, end, depth)
                items.append((key, value))
            i = self.flow_skip(i, end)
            c = text[i]
            if c == closing:
                return self.flow_node(opening, items, pos, i + 1), i + 1
            if c != ",":
                raise Unsupported("an odd flow collection")
            i = self.flow_skip(i + 1, end)
            if text[i] in "]},":
                raise Unsupported("an empty flow entry")

    def flow_node(self, opening: str, items: list, start: int, stop: int) -> Node:
        node = Node(
            "sequence" if opening == "[" else "mapping", SEQ_TAG if opening == "[" else MAP_TAG, items, start, stop
        )
        node.flow_style = True
        return node

    def flow_skip(self, i: int, end: int) -> int:
        text = self.text
        while i < end and text[i] == " ":
            i += 1
        if i >= end or text[i] == "#":
            raise Unsupported("a flow collection over several lines")
        return i

    def flow_item(self, i: int, end: int, depth: int, key: bool = False) -> tuple[Node, int]:
        text = self.text
        c = text[i]
        if c in "[{":
            if key:
                raise Unsupported("a collection as a flow key")
            return self.flow(i, end, depth + 1)
        if c in "'\"":
            return self.quoted(i, end)
        if c in _INDICATORS and not (c == "-" and text[i + 1 : i + 2] not in ("", " ", ",", "]", "}")):
            raise Unsupported(f"a flow scalar starting with {c!r}")
        start = last = i
        while i < end:
            c = text[i]
            if c in _FLOW_STOP or c == ":" or c == "\t":
                break
            if c != " ":
                last = i + 1
            i += 1
        stop = text[i : i + 1]
        if stop in ("#", "\t") or (stop == ":" and not (key and text[i + 1 : i + 2] == " " and last == i)):
            raise Unsupported("a flow scalar followed by ':', '#' or a tab")
        return Node("scalar", self.plain_tag, text[start:last], start, last, ""), last


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        code = body[i + 1 : i + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code in _HEX_DIGITS:
            width = _HEX_DIGITS[code]
            digits = body[i + 2 : i + 2 + width]
            if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise Unsupported("a bad escape")
            value = int(digits, 16)
            if 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
                raise Unsupported("an escape that is no character")
            out.append(chr(value))
            i += 2 + width
        else:
            raise Unsupported("an unknown escape")
    return "".join(out)
