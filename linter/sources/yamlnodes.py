"""A located YAML node tree built from PyYAML's composer (safe: nothing is constructed).

Only node positions are taken from PyYAML; lines and columns come from ``SourceText`` so
every parser reports positions the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..span import SourceText, Span

STR_TAG = "tag:yaml.org,2002:str"
NULL_TAG = "tag:yaml.org,2002:null"
MAX_NODES = 200_000  # distinct nodes per file; past this a document is refused (alias bombs)


class YamlTooLarge(Exception):
    pass


@dataclass(eq=False)
class YScalar:
    value: str
    tag: str
    style: str | None  # None plain, "'" single, '"' double, '|' literal, '>' folded
    span: Span
    content_end: int = 0

    @property
    def is_str(self) -> bool:
        return self.tag == STR_TAG

    @property
    def is_null(self) -> bool:
        return self.tag == NULL_TAG

    @property
    def quoted(self) -> bool:
        return self.style in ("'", '"')


@dataclass(eq=False)
class YMap:
    items: list[tuple[YScalar, YNode]]
    span: Span
    flow: bool
    content_end: int = 0
    key_column: int = 0  # 0-based column of the keys (block style)
    colon_ends: list[int] = field(default_factory=list)  # offset after each item's ':'

    def entry(self, key: str) -> tuple[YScalar, YNode] | None:
        for k, v in self.items:
            if k.value == key:
                return k, v
        return None

    def get(self, key: str) -> YNode | None:
        found = self.entry(key)
        return found[1] if found else None

    def map(self, key: str) -> YMap | None:
        node = self.get(key)
        return node if isinstance(node, YMap) else None

    def seq(self, key: str) -> YSeq | None:
        node = self.get(key)
        return node if isinstance(node, YSeq) else None

    def scalar(self, key: str) -> YScalar | None:
        node = self.get(key)
        return node if isinstance(node, YScalar) and not node.is_null else None

    def text(self, key: str) -> str | None:
        node = self.scalar(key)
        return node.value if node else None


@dataclass(eq=False)
class YSeq:
    items: list[YNode]
    span: Span
    flow: bool
    content_end: int = 0

    def maps(self) -> list[YMap]:
        return [i for i in self.items if isinstance(i, YMap)]


YNode = YScalar | YMap | YSeq


@dataclass
class YamlIssue:
    span: Span
    message: str
    kind: str = "syntax"  # syntax | duplicate-key | too-large


class NodeConverter:
    """Converts PyYAML nodes; shared (aliased) nodes are converted once and counted once."""

    def __init__(self, src: SourceText, base: int) -> None:
        self.src = src
        self.base = base  # offset of the text given to PyYAML inside src.text (a BOM)
        self.memo: dict[int, YNode] = {}
        self.count = 0
        self.issues: list[YamlIssue] = []

    def span(self, node: object) -> Span:
        start = node.start_mark.index + self.base  # type: ignore[attr-defined]
        end = node.end_mark.index + self.base  # type: ignore[attr-defined]
        return self.src.span(start, end)

    def convert(self, node: object) -> YNode:
        import yaml

        key = id(node)
        done = self.memo.get(key)
        if done is not None:
            return done
        self.count += 1
        if self.count > MAX_NODES:
            raise YamlTooLarge(f"more than {MAX_NODES} YAML nodes")
        if isinstance(node, yaml.ScalarNode):
            span = self.span(node)
            end = span.end
            if node.style in ("|", ">"):
                # a block scalar's end mark lies after its trailing line breaks
                end = span.start + len(self.src.text[span.start : span.end].rstrip(" \t\r\n"))
            result: YNode = YScalar(node.value, node.tag, node.style, span, end)
        elif isinstance(node, yaml.SequenceNode):
            result = YSeq([], self.span(node), bool(node.flow_style))
            self.memo[key] = result
            result.items = [self.convert(child) for child in node.value]
            result.content_end = self._seq_end(result)
        else:
            result = YMap([], self.span(node), bool(node.flow_style))
            self.memo[key] = result
            self._fill_map(result, node)
        self.memo[key] = result
        return result

    def _fill_map(self, result: YMap, node: object) -> None:
        seen: dict[str, YScalar] = {}
        for knode, vnode in node.value:  # type: ignore[attr-defined]
            k = self.convert(knode)
            v = self.convert(vnode)
            if not isinstance(k, YScalar):
                continue
            if k.value in seen and k.value != "<<":
                self.issues.append(
                    YamlIssue(
                        k.span,
                        f"duplicate key '{k.value}' (first at line {seen[k.value].span.line})",
                        "duplicate-key",
                    )
                )
            seen[k.value] = k
            result.items.append((k, v))
            result.colon_ends.append(self._colon_end(k))
        if result.items:
            result.key_column = result.items[0][0].span.column - 1
        result.content_end = self._map_end(result)

    def _colon_end(self, key: YScalar) -> int:
        colon = self.src.text.find(":", key.span.end)
        return colon + 1 if colon != -1 else key.span.end

    def _map_end(self, m: YMap) -> int:
        if m.flow or not m.items:
            return m.span.end
        _last_key, last_value = m.items[-1]
        if isinstance(last_value, YScalar) and last_value.is_null and last_value.value == "":
            return m.colon_ends[-1]
        return content_end(last_value)

    def _seq_end(self, s: YSeq) -> int:
        if s.flow or not s.items:
            return s.span.end
        return content_end(s.items[-1])


def content_end(node: YNode) -> int:
    """End of a node's own text, without the trailing comments a block end mark includes."""
    return node.content_end
