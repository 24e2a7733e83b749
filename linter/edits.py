"""Builders of text edits that follow a file's own style (indentation, quoting, line endings).

Rules call these to describe a fix; nothing here touches a file. Every function returns
``Edit``s against the original text, which the fix engine applies.
"""

from __future__ import annotations

from .diagnostics import Edit
from .lazyre import LazyPattern
from .sources.shell import Assignment, ShellScript, Word
from .sources.yamlnodes import YMap, YNode, YScalar, YSeq, content_end
from .span import SourceText, Span

YAML_NEEDS_QUOTES = LazyPattern(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|"
    r"[-+]?[0-9][0-9_.eE+-]*|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|)$"
)
# a mapping entry to insert: the value is YAML text, or the fields of a nested mapping
FieldValue = str | list[tuple[str, "FieldValue"]]
Field = tuple[str, FieldValue]
YAML_SPECIAL = LazyPattern(r"^[\s\-?:,\[\]{}#&*!|>'\"%@`]|:\s|\s#|[\r\n]|\s$")


def edit(src: SourceText, start: int, end: int, content: str) -> Edit:
    return Edit(src.span(start, end), content)


def yaml_scalar_text(value: str, prefer: str | None = None) -> str:
    """A YAML spelling of a string value: plain when it reads back as the same string."""
    if prefer == '"' or YAML_NEEDS_QUOTES.match(value) or YAML_SPECIAL.search(value):
        if prefer == "'" and "'" not in value:
            return f"'{value}'"
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if prefer == "'":
        return f"'{value}'"
    return value


# -- YAML --------------------------------------------------------------------------------------
def replace_scalar(src: SourceText, scalar: YScalar, value: str, force_string: bool = True) -> Edit:
    """Replace a scalar's value, keeping its quote style when it has one."""
    span = scalar.span
    if scalar.style == "'" and "'" not in value:
        return edit(src, span.start, span.end, f"'{value}'")
    if scalar.style == '"':
        return edit(src, span.start, span.end, yaml_scalar_text(value, '"'))
    return edit(src, span.start, span.end, yaml_scalar_text(value) if force_string else value)


def _opening(src: SourceText, start: int, bracket: str) -> int:
    """Offset of a flow collection's opening bracket: its node starts at an anchor or tag, if any."""
    found = src.text.find(bracket, start)
    return found if found != -1 else start


def _after_line(src: SourceText, pos: int) -> int:
    """End of the line holding ``pos``: new block lines go after any trailing comment."""
    return src.line_end(src.line_of(max(pos - 1, 0) if pos and src.text[pos - 1 : pos] == "\n" else pos))


def _indent_step(src: SourceText, mapping: YMap) -> int:
    for value in mapping.value_nodes():
        if isinstance(value, YMap) and not value.flow and len(value):
            step = value.key_column - mapping.key_column
            if step > 0:
                return step
    return 2


def insert_entry(src: SourceText, mapping: YMap, key: str, value_text: str) -> Edit:
    """Add ``key: value`` as the last entry of a mapping (block or flow)."""
    if mapping.flow:
        close = mapping.span.end - 1
        inner = src.text[_opening(src, mapping.span.start, "{") + 1 : close]
        sep = ", " if inner.strip() else ""
        return edit(src, close, close, f"{sep}{key}: {value_text}")
    pos = _after_line(src, content_end(mapping))
    indent = " " * mapping.key_column
    return edit(src, pos, pos, f"{src.newline}{indent}{key}: {value_text}")


def insert_nested_entry(src: SourceText, parent: YMap, key: str, child_key: str, child_value: str) -> Edit:
    """Add ``key:`` with one child entry to a mapping that lacks ``key``."""
    if parent.flow:
        return insert_entry(src, parent, key, f"{{{child_key}: {child_value}}}")
    nl = src.newline
    indent = " " * parent.key_column
    child = " " * (parent.key_column + _indent_step(src, parent))
    pos = _after_line(src, content_end(parent))
    return edit(src, pos, pos, f"{nl}{indent}{key}:{nl}{child}{child_key}: {child_value}")


def _dash_column(src: SourceText, seq: YSeq) -> int:
    first = seq.items[0]
    pos = first.span.start - 1
    while pos >= 0 and src.text[pos] in " \t":
        pos -= 1
    if pos >= 0 and src.text[pos] == "-":
        return pos - src.line_start(src.line_of(pos))
    return first.span.column - 1


def _flow(value: FieldValue) -> str:
    if isinstance(value, str):
        return value
    return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value) + "}"


def _block_lines(fields: list[Field], pad: str, step: int = 2) -> list[str]:
    """``k: v`` lines at ``pad``; a value that is a list of fields becomes a nested block mapping."""
    lines: list[str] = []
    for k, v in fields:
        if isinstance(v, str):
            lines.append(f"{pad}{k}: {v}")
        else:
            lines.append(f"{pad}{k}:")
            lines += _block_lines(v, pad + " " * step, step)
    return lines


def append_item(src: SourceText, seq: YSeq, fields: list[Field]) -> Edit:
    """Append a mapping item (``- k: v`` lines) to a sequence, in the sequence's style.

    A field value may itself be a list of fields: it is written as a nested mapping.
    """
    if seq.flow or not seq.items:
        close = seq.span.end - 1 if seq.flow else seq.span.end
        inner = src.text[_opening(src, seq.span.start, "[") + 1 : close] if seq.flow else ""
        sep = ", " if inner.strip() else ""
        return edit(src, close, close, f"{sep}{_flow(fields)}")
    dash = _dash_column(src, seq)
    first = seq.items[0]
    gap = max(first.span.column - 1 - dash, 2)
    nl = src.newline
    lead = " " * dash
    lines = _block_lines(fields, " " * (dash + gap))
    lines[0] = f"{lead}-{' ' * (gap - 1)}{lines[0][dash + gap :]}"
    pos = _after_line(src, content_end(seq))
    return edit(src, pos, pos, nl + nl.join(lines))


def insert_sequence_entry(src: SourceText, mapping: YMap, key: str, fields: list[Field]) -> Edit:
    """Add ``key:`` holding a one-item block sequence of a mapping (``- k: v`` lines)."""
    if mapping.flow:
        return insert_entry(src, mapping, key, f"[{_flow(fields)}]")
    nl = src.newline
    indent = " " * mapping.key_column
    child = " " * (mapping.key_column + _indent_step(src, mapping))
    item = _block_lines(fields, child + "  ")
    item[0] = f"{child}- {item[0][len(child) + 2 :]}"
    lines = [f"{indent}{key}:", *item]
    pos = _after_line(src, content_end(mapping))
    return edit(src, pos, pos, nl + nl.join(lines))


YAML_COMMENT = LazyPattern(r"(?:^|\s)(#.*)$")


def remove_block_keep_comments(src: SourceText, start: int, end: int) -> Edit:
    """Delete the lines holding ``start:end`` but keep every comment on them, each on its own line."""
    first = src.line_of(start)
    last = src.line_of(max(start, end - 1))
    line_start = src.line_start(first)
    stop = src.line_starts[last + 1] if last + 1 < len(src.line_starts) else len(src.text)
    nl = src.newline
    kept = []
    for line0 in range(first, last + 1):
        text = src.line_text(line0)
        m = YAML_COMMENT.search(text)
        if m:
            indent = src.indent_of_line(line0)
            kept.append(f"{indent}{m.group(1)}")
    replacement = "".join(k + nl for k in kept)
    if stop == len(src.text) and not src.text.endswith("\n") and kept:
        replacement = replacement[: -len(nl)]
    elif stop == len(src.text) and not src.text.endswith("\n") and line_start > 0:
        # the removed block is the last line: drop the break before it instead
        return edit(src, line_start - len(_break_before(src, line_start)), stop, "")
    return edit(src, line_start, stop, replacement)


def _break_before(src: SourceText, line_start: int) -> str:
    return "\r\n" if src.text[max(0, line_start - 2) : line_start] == "\r\n" else "\n"


def remove_items(src: SourceText, seq: YSeq, items: list[YNode]) -> list[Edit]:
    edits = []
    for item in items:
        dash = item.span.start
        while dash > 0 and src.text[dash - 1] in " \t-":
            dash -= 1
        edits.append(remove_block_keep_comments(src, dash, content_end(item)))
    return edits


# -- shell -------------------------------------------------------------------------------------
def insert_before_statement(script: ShellScript, statement: Span, text: str) -> Edit | None:
    """Insert a shell statement so that it runs just before ``statement``."""
    if not script.exact:
        return None
    src = script.source
    line0 = src.line_of(statement.start)
    line_start = src.line_start(line0)
    before = src.text[line_start : statement.start]
    if not before.strip() and not script.folded:
        return edit(src, line_start, line_start, f"{before}{text}{src.newline}")
    return edit(src, statement.start, statement.start, f"{text}; ")


def insert_lines_before(script: ShellScript, statement: Span, lines: list[str]) -> Edit | None:
    """Insert shell statements, one per line at the statement's indentation, just before ``statement``
    (which must start its line)."""
    if not script.exact or not lines:
        return None
    src = script.source
    if script.folded:  # a new line in a folded scalar joins the next one: separate the commands with ';'
        return edit(src, statement.start, statement.start, "".join(f"{line}; " for line in lines))
    line_start = src.line_start(src.line_of(statement.start))
    before = src.text[line_start : statement.start]
    if before.strip():
        return None
    text = "".join(f"{before}{line}{src.newline}" for line in lines)
    return edit(src, line_start, line_start, text)


def set_assignment(script: ShellScript, assignment: Assignment, value: str) -> Edit | None:
    if not script.exact:
        return None
    src = script.source
    if assignment.value_span is None:
        pos = assignment.name_span.end
        if assignment.has_value:  # "NAME=" with an empty value
            return edit(src, pos + 1, pos + 1, value)
        return edit(src, pos, pos, f"={value}")
    span = assignment.value_span
    original = src.text[span.start : span.end]
    if original[:1] in ("'", '"') and original[-1:] == original[:1]:
        value = f"{original[0]}{value}{original[0]}"
    return edit(src, span.start, span.end, value)


def replace_words(script: ShellScript, words: list[Word], text: str) -> Edit | None:
    if not script.exact or not words:
        return None
    return edit(script.source, words[0].span.start, words[-1].span.end, text)


# -- Python ------------------------------------------------------------------------------------
def insert_line_after(src: SourceText, statement: Span, text: str) -> Edit:
    """Insert a line after the line where ``statement`` ends, at that statement's indentation."""
    first = src.line_of(statement.start)
    last = src.line_of(statement.end)
    indent = src.indent_of_line(first)
    pos = src.line_end(last)
    return edit(src, pos, pos, f"{src.newline}{indent}{text}")
