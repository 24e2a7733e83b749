"""A located YAML node tree built from PyYAML's composer (safe: nothing is constructed).

Only node positions are taken from PyYAML; lines and columns come from ``SourceText`` so
every parser reports positions the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import yaml
from yaml.resolver import Resolver

from ..lazyre import LazyPattern
from ..span import Located, SourceText, Span

STR_TAG = "tag:yaml.org,2002:str"
NULL_TAG = "tag:yaml.org,2002:null"
MAX_NODES = 200_000  # distinct nodes per file; past this a document is refused (alias bombs)
STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + t
    for t in ("str", "int", "float", "bool", "null", "timestamp", "binary", "merge", "value", "map", "seq")
).union(("tag:yaml.org,2002:omap", "tag:yaml.org,2002:pairs", "tag:yaml.org,2002:set"))
MAX_TAG_ISSUES = 5


class YamlTooLarge(Exception):
    pass


class _Plain(str):
    """The tag the fast loader gives a plain untagged scalar, recognised by identity (``tag is PLAIN``):
    the real one is resolved later, and only when asked for. Its text is the str tag, so a check of
    node tags against the standard ones sees a standard tag, which implicit resolution always yields."""


PLAIN = _Plain(STR_TAG)


_RESOLVER = Resolver()  # SafeLoader's: YAML 1.1's implicit types


@lru_cache(maxsize=4096)
def resolve_plain(value: str) -> str:
    """The implicit tag of a plain scalar, as PyYAML's SafeLoader gives it."""
    return _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))


class YScalar(Located):
    """A scalar with its text span. The tag of a plain untagged scalar is resolved when first asked for."""

    # the span is kept as its offsets (one object per scalar, not two: parsing and pickling cost less);
    # a plain scalar whose value is its text keeps no copy of it, and the end of a block scalar's
    # content is found again when asked: a run holds hundreds of thousands of scalars
    __slots__ = ("_tag", "_value", "style")

    def __init__(self, value: str, tag: str | None, style: str | None, span: Span) -> None:
        self._value: str | None = value
        self._tag = tag  # None: plain and untagged, resolved by PyYAML's rules on first use
        self.style = style  # None plain, "'" single, '"' double, '|' literal, '>' folded
        self._locate(span)

    @property
    def value(self) -> str:
        value = self._value
        return self._text() if value is None else value

    def is_text(self, text: str) -> bool:
        """Whether the value is ``text``, read without copying it out of the file (a mapping lookup
        compares every key it passes)."""
        value = self._value
        if value is not None:
            return value == text
        return self._size == len(text) and self._source.text.startswith(text, self.start)

    @property
    def content_end(self) -> int:
        """End of the scalar's own text: a block scalar's span runs on over its trailing line breaks."""
        start = self.start
        end = start + self._size
        if self.style in ("|", ">"):
            return start + len(self._source.text[start:end].rstrip(" \t\r\n"))
        return end

    @property
    def tag(self) -> str:
        tag = self._tag
        if tag is None:
            tag = self._tag = resolve_plain(self.value)
        return tag

    @property
    def is_null(self) -> bool:
        return self.tag == NULL_TAG

    @property
    def quoted(self) -> bool:
        return self.style in ("'", '"')

    def __repr__(self) -> str:
        return f"YScalar({self.value!r}, {self.tag!r}, {self.style!r}, {self.span!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_restore_scalar, (self._value, self._tag, self.style, self._source, self._high, self._low, self._size))


_PROPERTY = LazyPattern(r"[!&][^ \t\r\n]*[ \t\r\n]+")


def _after_properties(text: str, start: int, stop: int) -> int:
    """Where a scalar's value starts after its tag and anchor (a node's start mark is at the first)."""
    at = start
    while at < stop:
        found = _PROPERTY.match(text, at, stop)
        if found is None:
            break
        at = found.end()
    return at if at < stop else start


def _scalar(
    value: str | None,
    tag: str | None,
    style: str | None,
    source: SourceText,
    start: int,
    end: int,
) -> YScalar:
    """A scalar from the parser: ``value`` None when it is the text under the span."""
    node = object.__new__(YScalar)
    node._value, node._tag, node.style = value, tag, style
    node._place(source, start, end)
    return node


def _restore_scalar(
    value: str | None, tag: str | None, style: str | None, source: SourceText, high: int, low: int, size: int
) -> YScalar:
    """A scalar from a pickle (a worker's model, the cache), its fields set as they were kept."""
    node = object.__new__(YScalar)
    node._value = value
    node._tag = tag
    node.style = style
    node._source, node._high, node._low, node._size = source, high, low, size
    return node


class _Collection(Located):
    """What a mapping and a sequence share: their children and their span (a manifest has about a
    hundred of them)."""

    # the content's end is kept as its distance from the start: most mappings (an env entry, a
    # volume) are shorter than 257 characters, and CPython shares those ints
    __slots__ = ("_content_size", "_items", "flow")

    def __init__(self, items: list, span: Span, flow: bool, content_end: int = 0) -> None:
        self.items = items
        self._locate(span)
        self.flow = flow
        self.content_end = content_end  # end of the node's own text, without trailing comments

    @property
    def content_end(self) -> int:
        return self.start + self._content_size

    @content_end.setter
    def content_end(self, end: int) -> None:
        self._content_size = end - self.start

    def __reduce__(self) -> tuple[object, ...]:
        # children go in the state, so a recursive alias (a node inside itself) pickles too; the
        # fields go as they are kept (a span made to pickle and __init__ run to load cost twice as much)
        fields = (self._source, self._high, self._low, self._size, self.flow)
        return (_restore_collection, (self.__class__, *fields), (self._items, self._content_size))

    def __setstate__(self, state: tuple[object, ...]) -> None:
        self._items, self._content_size = state  # type: ignore[assignment]


def _restore_collection(
    cls: type[_Collection], source: SourceText, high: int, low: int, size: int, flow: bool
) -> _Collection:
    node = object.__new__(cls)
    node._source, node._high, node._low, node._size, node.flow = source, high, low, size, flow
    return node


class YMap(_Collection):
    """A mapping. Its keys and values are kept in one flat tuple (key, value, key, value, ...): a
    pair tuple per entry would add an object per entry to a run's YAML memory; ``items`` makes the
    pairs when asked."""

    __slots__ = ()

    @property
    def items(self) -> list[tuple[YScalar, YNode]]:
        flat = self._items
        return list(zip(flat[0::2], flat[1::2], strict=True))

    @items.setter
    def items(self, pairs: list[tuple[YScalar, YNode]]) -> None:
        self._items = tuple(part for pair in pairs for part in pair)

    def __len__(self) -> int:
        return len(self._items) // 2

    def __bool__(self) -> bool:
        return True  # a node, empty or not: ``if mapping`` asks whether there is one

    def key_nodes(self) -> tuple[YScalar, ...]:
        return self._items[0::2]

    def value_nodes(self) -> tuple[YNode, ...]:
        return self._items[1::2]

    def key_at(self, index: int) -> YScalar:
        return self._items[2 * index]

    def value_at(self, index: int) -> YNode:
        return self._items[2 * index + 1]

    def index_of(self, key: str) -> int:
        """Position of the entry whose key is ``key``; -1 when there is none."""
        flat = self._items
        for i in range(0, len(flat), 2):
            if flat[i].is_text(key):
                return i // 2
        return -1

    @property
    def key_column(self) -> int:
        """0-based column of the keys (block style)."""
        return self._items[0].span.column - 1 if self._items else 0

    def colon_end(self, index: int) -> int:
        """Offset after the ':' of the item at ``index``."""
        key_end = self._items[2 * index].span.end
        colon = self._source.text.find(":", key_end)
        return colon + 1 if colon != -1 else key_end

    def entry(self, key: str) -> tuple[YScalar, YNode] | None:
        flat = self._items
        for i in range(0, len(flat), 2):
            k = flat[i]
            if k.is_text(key):
                return k, flat[i + 1]
        return None

    def get(self, key: str) -> YNode | None:
        flat = self._items
        for i in range(0, len(flat), 2):
            if flat[i].is_text(key):
                return flat[i + 1]
        return None

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

    def __repr__(self) -> str:
        return f"YMap({len(self)} items, {self.span!r})"


class YSeq(_Collection):
    __slots__ = ()

    @property
    def items(self) -> tuple[YNode, ...]:
        return self._items

    @items.setter
    def items(self, items: Iterable[YNode]) -> None:
        self._items = tuple(items)  # exactly as long as it needs to be, unlike a list built by appending

    def maps(self) -> list[YMap]:
        return [i for i in self._items if isinstance(i, YMap)]

    def __repr__(self) -> str:
        return f"YSeq({len(self._items)} items, {self.span!r})"


YNode = YScalar | YMap | YSeq


@dataclass
class YamlIssue:
    """A YAML file that could not be read, and where."""

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
        self.tags_seen = 0  # nodes with a non-standard tag (the first few are reported)
        self.aliased = False  # a node was reached twice (an alias): check the expanded size

    def span(self, node: object) -> Span:
        start = node.start_mark.index + self.base  # type: ignore[attr-defined]
        end = node.end_mark.index + self.base  # type: ignore[attr-defined]
        return self.src.span(start, end)

    def convert(self, node: object) -> YNode:
        if node.id == "scalar":  # type: ignore[attr-defined]
            # an aliased scalar is converted again: it is one node either way, and most nodes are
            # scalars, so only collections go through the memo (aliases that expand are collections)
            return self._scalar_node(node)
        key = id(node)
        done = self.memo.get(key)
        if done is not None:
            self.aliased = True
            return done
        self._count_node(node)
        result: YNode
        if node.id == "sequence":  # type: ignore[attr-defined]
            result = YSeq([], self.span(node), bool(node.flow_style))  # type: ignore[attr-defined]
            self.memo[key] = result
            convert = self.convert
            result.items = [convert(child) for child in node.value]  # type: ignore[attr-defined]
            result.content_end = self._seq_end(result)
        else:
            result = YMap([], self.span(node), bool(node.flow_style))  # type: ignore[attr-defined]
            self.memo[key] = result
            self._fill_map(result, node)
        return result

    def _count_node(self, node: object) -> None:
        self.count += 1
        if self.count > MAX_NODES:
            raise YamlTooLarge(f"more than {MAX_NODES} YAML nodes")
        tag = node.tag  # type: ignore[attr-defined]
        if tag is not PLAIN and tag not in STANDARD_TAGS:
            self._unknown_tag(node)

    def _scalar_node(self, node: object) -> YScalar:
        self._count_node(node)
        base = self.base
        start = node.start_mark.index + base  # type: ignore[attr-defined]
        stop = node.end_mark.index + base  # type: ignore[attr-defined]
        text = self.src.text
        if text.startswith(("!", "&"), start):
            start = _after_properties(text, start, stop)  # "!!str 0", "&a x": the span is the value's
        style = node.style or None  # type: ignore[attr-defined]  # libyaml gives '' for plain
        value = node.value  # type: ignore[attr-defined]
        tag = node.tag  # type: ignore[attr-defined]
        if style is None and len(value) == stop - start and text.startswith(value, start):
            value = None  # the text under the span: read from it when asked
        return _scalar(value, None if tag is PLAIN else tag, style, self.src, start, stop)

    def _unknown_tag(self, node: object) -> None:
        """Report a tag PyYAML would construct as an object (``!!python/object/apply:...``); the
        composer never constructs, so the node is only read as data."""
        self.tags_seen += 1
        if self.tags_seen > MAX_TAG_ISSUES:
            return
        tag = str(node.tag)  # type: ignore[attr-defined]
        shown = "!!" + tag[len("tag:yaml.org,2002:") :] if tag.startswith("tag:yaml.org,2002:") else tag
        start = node.start_mark.index + self.base  # type: ignore[attr-defined]
        self.issues.append(
            YamlIssue(
                self.src.span(start, start + len(shown) if self.src.text.startswith(shown, start) else start),
                f"unknown YAML tag '{shown[:80]}': not a Kubernetes value; read as plain data, never constructed",
                "unknown-tag",
            )
        )

    def _fill_map(self, result: YMap, node: object) -> None:
        seen: dict[str, YScalar] = {}
        flat: list[YNode] = []
        convert = self.convert
        for knode, vnode in node.value:  # type: ignore[attr-defined]
            k = convert(knode)
            v = convert(vnode)
            if not isinstance(k, YScalar):
                continue
            name = knode.value  # type: ignore[attr-defined]  # the key's value, as the parser read it
            first = seen.get(name)
            if first is not None and name != "<<":
                self.issues.append(
                    YamlIssue(
                        k.span,
                        f"duplicate key '{name}' (first at line {first.span.line})",
                        "duplicate-key",
                    )
                )
            seen[name] = k
            flat += (k, v)
        result._items = tuple(flat)  # set once the children are made: an alias inside may reach this map
        result.content_end = self._map_end(result)

    def _map_end(self, m: YMap) -> int:
        if m.flow or not len(m):
            return m.span.end
        last_value = m.value_at(len(m) - 1)
        if isinstance(last_value, YScalar) and last_value.is_null and last_value.value == "":
            return m.colon_end(len(m) - 1)
        return content_end(last_value)

    def _seq_end(self, s: YSeq) -> int:
        if s.flow or not s.items:
            return s.span.end
        return content_end(s.items[-1])


MAX_EXPANDED = 1_000_000  # nodes a document may stand for once its aliases are expanded


def expanded_size(root: YNode, limit: int = MAX_EXPANDED) -> int:
    """How many nodes the document is with every alias expanded (what a YAML-to-JSON converter
    such as the Kubernetes API client builds), counted without expanding; capped past ``limit``."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[YNode, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        if isinstance(node, YScalar):
            sizes[key] = 1
            continue
        children = node._items  # a mapping's are its keys and values
        if children_done:
            open_.discard(key)
            sizes[key] = min(limit + 1, 1 + sum(sizes.get(id(c), 1) for c in children))
        elif key not in open_:  # a recursive alias counts once
            open_.add(key)
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes.get(id(root), 1)


def content_end(node: YNode) -> int:
    """End of a node's own text, without the trailing comments a block end mark includes."""
    return node.content_end
