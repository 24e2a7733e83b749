"""Shell launch scripts, parsed with tree-sitter-bash (error tolerant, exact byte positions).

The model is the script's events in text order: assignments, exports, unsets, and commands
(with their words and prefix assignments), wherever they appear: functions, conditionals,
``$(...)`` and continuation lines included.

Whether the script is a syntax error is not tree-sitter's verdict but bash's grammar
(``bash_syntax``): one issue, where bash reports it. Where tree-sitter misreads valid bash, the
script is parsed again with the constructs it cannot read rewritten, same length (see
``bash_syntax.check``), so the commands around them are still seen. A script whose shebang names
another shell (zsh, fish, csh) is not parsed as bash at all.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..lazyre import LazyPattern
from ..span import Located, SourceText, Span, to_bytes

STATEMENT_PARENTS = frozenset(
    {
        "program",
        "compound_statement",
        "subshell",
        "do_group",
        "if_statement",
        "elif_clause",
        "else_clause",
        "case_item",
        "redirected_statement",
    }
)
COMPLETE_STATEMENTS = frozenset(
    {
        "command",
        "declaration_command",
        "variable_assignment",
        "unset_command",
        "pipeline",
        "list",
        "function_definition",
        "if_statement",
        "for_statement",
        "while_statement",
        "case_statement",
        "redirected_statement",
        "compound_statement",
        "subshell",
        "comment",
        "test_command",
    }
)
# statements whose body runs only when a condition holds (their "condition" field runs always)
CONDITIONAL_BRANCHES = frozenset({"if_statement", "while_statement", "until_statement"})
# a branch's guard: the text of an if/elif condition, and whether the branch runs when it holds
Guard = tuple[str, bool]
NO_CONTEXT: tuple[bool, tuple[str, ...], tuple[Guard, ...]] = (False, (), ())
# nodes whose children run under another condition or loop than the node itself
CONTEXT_KINDS = (
    CONDITIONAL_BRANCHES
    | {"elif_clause", "else_clause", "case_item", "list", "for_statement"}
    | {"c_style_for_statement"}
)
DECLARATION_KINDS = {
    "export": "export",
    "local": "local",
    "declare": "declare",
    "typeset": "declare",
    "readonly": "readonly",
}


_AS_WRITTEN = object()  # a word's value that is its text


class Word(Located):
    """One word of a command: as written (read from its span unless given), its value after quote
    removal (None when it depends on an expansion), and where it is (kept as offsets: a run holds a
    hundred thousand words)."""

    __slots__ = ("_value", "_written")

    def __init__(self, text: str | None, value: str | None, span: Span) -> None:
        # None: the text the span covers (a parsed word keeps no copy)
        self._written = text
        self._locate(span)
        self.value = value

    @property
    def value(self) -> str | None:
        value = self._value
        return self.text if value is _AS_WRITTEN else value

    @value.setter
    def value(self, value: str | None) -> None:
        # most words are plain (``torchrun``, ``--nproc_per_node``): their value is their text, kept once
        self._value = _AS_WRITTEN if value is not None and value == self.text else value

    span = property(Located.span.fget, Located._locate)  # a word is moved onto its anchor (parse_detached)

    @property
    def text(self) -> str:
        text = self._written
        return self._text() if text is None else text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Word):
            return NotImplemented
        return (self.text, self.value, self.span) == (other.text, other.value, other.span)

    __hash__ = None  # type: ignore[assignment]  # as the dataclass it replaces

    def __repr__(self) -> str:
        return f"Word({self.text!r}, {self.value!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # the fields as kept: no span to pickle and no __init__ to load (which compares the value with
        # the text again), since sending a script's model from the pool pays for every word
        value = self._value
        plain = value is _AS_WRITTEN
        return (
            _restore_word,
            (self._written, None if plain else value, plain, self._source, self._high, self._low, self._size),
        )


def _restore_word(
    written: str | None, value: str | None, plain: bool, source: SourceText, high: int, low: int, size: int
) -> Word:
    """A word from a pickle (a worker's model, the cache), its fields set as they were kept."""
    word = object.__new__(Word)
    word._written = written
    word._value = _AS_WRITTEN if plain else value
    word._source, word._high, word._low, word._size = source, high, low, size
    return word


@dataclass(slots=True)
class Assignment:
    """One variable assignment or export in a shell script."""

    name: str
    value: str | None  # static value; None when dynamic or absent
    has_value: bool
    name_span: Span
    value_span: Span | None
    span: Span
    statement: Span  # the enclosing statement: inserted lines go before it
    kind: str  # export | assign | local | declare | readonly | prefix | unset
    function: str | None = None
    conditional: bool = False  # inside an if/case branch, a while body, or after && / ||
    loops: tuple[str, ...] = ()  # headers of the enclosing for loops, outermost first

    @property
    def exported(self) -> bool:
        return self.kind == "export"


@dataclass(slots=True)
class Command:
    """One simple command in a shell script, with its words and prefix assignments."""

    words: list[Word]
    span: Span
    statement: Span
    prefixes: list[Assignment] = field(default_factory=list)
    function: str | None = None
    conditional: bool = False  # inside an if/case branch, a while body, or after && / ||
    loops: tuple[str, ...] = ()  # headers of the enclosing for loops ("for((i=0;i<8;i++))"), outermost first
    guards: tuple[Guard, ...] = ()  # the if/elif conditions the command runs under, outermost first

    @property
    def name(self) -> str:
        return self.words[0].value or self.words[0].text if self.words else ""

    @property
    def args(self) -> list[Word]:
        return self.words[1:]


Event = Assignment | Command


@dataclass
class ShellIssue:
    """A shell script that could not be read (or is for another shell), and where."""

    span: Span
    message: str
    kind: str = "unreadable"  # or "other-shell": written for another shell, not checked (parse.FileIssue)


@dataclass(eq=False, repr=False)
class ShellScript:
    """A shell script read in order: its assignments, commands and sourced files."""

    source: SourceText
    events: list[Event] = field(default_factory=list)
    issues: list[ShellIssue] = field(default_factory=list)
    comments: list[Span] = field(default_factory=list)
    exact: bool = True  # False when positions only point at the enclosing scalar (no edits possible)
    argv: bool = False  # True for a manifest's command/args list: each word is a YAML list item
    other_shell: str | None = None  # zsh, fish, csh, tcsh (from the shebang): not parsed, no events
    folded: bool = False  # a YAML folded scalar (``>``): its lines join into one, so a new line would too

    @property
    def commands(self) -> list[Command]:
        return [e for e in self.events if isinstance(e, Command)]

    @property
    def assignments(self) -> list[Assignment]:
        out: list[Assignment] = []
        for e in self.events:
            if isinstance(e, Assignment):
                out.append(e)
        return out


@lru_cache(maxsize=1)
def _condition_nodes(node) -> list:
    """The statements of an if or elif condition: the if's ``condition`` field (its named nodes), or
    what stands between an elif and its ``then`` (tree-sitter names no field there)."""
    if node.type == "if_statement":
        return [c for c in node.children_by_field_name("condition") if c.is_named]
    found = []
    for child in node.children:
        if child.type == "then":
            break
        if child.is_named:
            found.append(child)
    return found


def _parser():
    """tree-sitter's bash parser, loaded when a run first reads a shell script (a run over
    manifests whose containers run a command list needs none)."""
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


OTHER_SHELLS = frozenset({"zsh", "fish", "csh", "tcsh"})
SHELLS = frozenset({"bash", "sh", "dash", "ksh"})  # the shells whose scripts are read as bash


def parse_shell(src: SourceText) -> ShellScript:
    shell = other_shell(src.text)
    if shell is not None:
        return _not_bash(src, shell)
    from .bash_syntax import check  # a large module: only a run that reads a script imports it

    checked = check(_as_bash_reads_it(src.text))
    lossy = list(checked.lossy_rewrites)
    if checked.problem is not None:
        # bash stops at a syntax error; the statements after it are still what the script means to do
        # (a placeholder such as MASTER_ADDR=<master_ip_address> on one line must not hide NNODES=2
        # on the next): its line is read as blank, as a last resort after the rewrites of valid bash
        lossy.append(_blank_line(src.text, checked.problem.offset))
    # tree-sitter reads the file as it is: it takes a '\\' before CRLF for the continuation meant
    script = _parse(src, src, rewrites=(checked.rewrites, lossy))
    if checked.problem is not None:
        problem = checked.problem
        script.issues = [ShellIssue(src.span(problem.offset, problem.end), problem.message)]
    elif not checked.undecided:
        script.issues = []  # what tree-sitter could not read, bash can
    else:
        script.issues = script.issues[:1]  # nested too deeply for the grammar check: tree-sitter's word
    _line_ending_issues(src, script)
    return script


def other_shell(text: str) -> str | None:
    """The shell a ``#!`` line names when it is not in the sh/bash family (``#!/usr/bin/env zsh``)."""
    if not text.startswith("#!"):
        return None
    words = text[2 : text.find("\n") if "\n" in text else len(text)].split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    name = words[0].rsplit("/", 1)[-1] if words else ""
    return name if name in OTHER_SHELLS else None


def _not_bash(src: SourceText, shell: str) -> ShellScript:
    shebang = src.line_span(0)
    line = src.text[shebang.start : shebang.end].strip()
    message = f"a {shell} script ('{line}'), not bash: not checked"
    return ShellScript(src, issues=[ShellIssue(shebang, message, "other-shell")], other_shell=shell)


def _as_bash_reads_it(text: str) -> str:
    """The text the grammar check reads: a CRLF file as if converted (its line endings are one issue
    of their own), one character for one so that offsets hold."""
    return text.replace("\r\n", " \n") if "\r" in text else text


# tree-sitter-bash 0.25 can read out of bounds (and crash the process) on a character above U+FFFF
# after a redirection and '{' ("<{" + an emoji), and it is not given bytes that are not UTF-8 (a
# GBK comment, kept as U+DC80..U+DCFF): either is given U+FFFD in its place, one character for one,
# so character offsets still hold; the words' text is then taken from the file.
NOT_FOR_TREE_SITTER = LazyPattern("[\U00010000-\U0010ffff\udc80-\udcff]")


def tree_sitter_text(text: str) -> str:
    """The text to give tree-sitter for ``text``: same length in characters (see above)."""
    if text.isascii():
        return text
    return NOT_FOR_TREE_SITTER.sub("\ufffd", text)


Rewrites = list[tuple[int, int, str]]


def _parse(
    src: SourceText,
    conv: SourceText,
    base: int = 0,
    rewrites: tuple[Rewrites, Rewrites] = ([], []),
) -> ShellScript:
    """Parse with tree-sitter; where it misreads valid bash, again with the constructs it cannot read
    rewritten, and as a last resort with its unreadable backquoted commands made opaque too."""
    script = ShellScript(src)
    text = parsed = tree_sitter_text(conv.text)
    tree = _parser().parse(to_bytes(parsed))
    safe, lossy = rewrites
    attempts = [attempt for attempt in (safe, safe + lossy if lossy else []) if attempt]
    for attempt in attempts:
        if not tree.root_node.has_error:
            break
        parsed = _rewritten(text, attempt)
        tree = _parser().parse(to_bytes(parsed))
    substituted = parsed != conv.text
    if substituted:
        conv = SourceText(conv.path, parsed)
    walker = _Walker(src, conv, script, base)
    walker.from_source = substituted
    walker.visit(tree.root_node, None)
    conv.drop_byte_map()
    script.events.sort(key=lambda e: e.span.start)
    return script


def _rewritten(text: str, rewrites: Rewrites) -> str:
    """``text`` with same-length replacements; one inside another already applied is skipped."""
    from .bash_syntax import outermost

    parts: list[str] = []
    at = 0
    for start, end, replacement in outermost(rewrites):
        parts += [text[at:start], replacement]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _blank_line(text: str, offset: int) -> tuple[int, int, str]:
    """A rewrite of the line holding ``offset`` as spaces (its line break kept)."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    end = len(text) if end == -1 else end
    return start, end, _blank(text[start:end])


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def parse_embedded(src: SourceText, start: int, end: int, fold: bool = False) -> ShellScript:
    """Parse shell text that sits at ``start:end`` of another file (an inline ``bash -c``).

    The text parsed runs from the start of ``start``'s line to the end of ``end``'s line, with what
    lies outside ``start:end`` blanked to spaces, so the shell parser sees the script where it is
    (columns included) and a position it reports plus the line's offset is a position in the file.
    """
    text = src.text
    inner = text[start:end]
    if fold:
        inner = inner.replace("\r", " ").replace("\n", " ")
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    tail = text[end : line_end + 1] if line_end != -1 else text[end:]
    masked = _blank(text[line_start:start]) + inner + _blank(tail)
    script = _parse(src, SourceText(src.path, masked), line_start)
    script.folded = fold
    return script


def parse_detached(src: SourceText, text: str, anchor: Span) -> ShellScript:
    """Parse shell text whose characters do not map onto the file (escapes); every span is the anchor."""
    script = _parse(SourceText(src.path, text), SourceText(src.path, text))
    script.source = src
    script.exact = False
    for event in script.events:
        _reanchor(event, anchor)
    script.issues = [ShellIssue(anchor, i.message) for i in script.issues]
    return script


def _reanchor(event: Event, anchor: Span) -> None:
    event.span = anchor
    event.statement = anchor
    if isinstance(event, Assignment):
        event.name_span = anchor
        event.value_span = anchor if event.value_span else None
    else:
        for word in event.words:
            word._written = word.text  # read while the span still covers it
            word.span = anchor
        for prefix in event.prefixes:
            _reanchor(prefix, anchor)


def _line_ending_issues(src: SourceText, script: ShellScript) -> None:
    """CRLF endings are one issue per file: bash reads each carriage return as part of a command."""
    crlf = src.text.find("\r\n")
    if crlf != -1:
        line0 = src.line_of(crlf)
        script.issues.append(
            ShellIssue(
                src.span(crlf, crlf + 1),
                f"CRLF line ending (line {line0 + 1}): bash reads the carriage return as part of each command",
            )
        )


class _Walker:
    def __init__(self, src: SourceText, conv: SourceText, script: ShellScript, base: int = 0) -> None:
        self.src = src  # spans are made against this text
        self.conv = conv  # the text that was parsed: src.text[base : base + len(conv.text)], or as long as src
        self.base = base  # offset in src of conv's first character
        self.script = script
        self._context = NO_CONTEXT

    def span(self, node) -> Span:
        base = self.base
        return self.src.span(base + self.conv.char_offset(node.start_byte), base + self.conv.char_offset(node.end_byte))

    from_source = False  # the parsed text had characters replaced: read text from the file

    def text(self, node) -> str:
        if self.from_source:
            span = self.span(node)
            return self.src.text[span.start : span.end]
        return node.text.decode("utf-8", "replace")

    def value(self, node) -> str | None:
        value = static_value(node)
        if self.from_source and value is not None and "\ufffd" in value:
            # a replaced character: a plain word whose only differences from the file's text are the
            # replaced characters is that text (a file name in bytes that are not UTF-8); otherwise
            # the value is not known exactly
            return self._unreplaced(node, value)
        return value

    def _unreplaced(self, node, value: str) -> str | None:
        if node.type != "word" or value != node.text.decode("utf-8", "replace"):
            return None  # quoted, escaped or expanded: the replaced text may hide any of these
        written = self.text(node)
        if len(written) != len(value):
            return None
        same = all(a == b or a == "\ufffd" for a, b in zip(value, written, strict=True))
        return written if same else None

    def statement(self, node) -> Span:
        """The statement holding the node being visited (tracked by ``visit``: ``node.parent`` costs
        a walk from the root in tree-sitter, which is quadratic in deeply nested input)."""
        return self.span(self._statement)

    def span_within(self, node, statement: Span) -> Span:
        """The node's span; the statement's own object when the node is the whole statement (most
        commands and assignments are), so the two share one."""
        span = self.span(node)
        return statement if span == statement else span

    def visit(self, root, function: str | None) -> None:
        # an explicit stack, not recursion: nesting depth is the input's choice ($( $( $( ...)
        stack = [(root, function, None, root, NO_CONTEXT)]
        while stack:
            node, function, parent_type, statement, context = stack.pop()
            self._statement = statement  # the outermost ancestor below a statement parent
            self._context = context
            kind = node.type
            if kind == "ERROR" or node.is_missing:
                self._error(node)
            elif kind == "comment":
                self.script.comments.append(self.span(node))
                continue
            elif kind == "function_definition":
                name = node.child_by_field_name("name")
                function = self.text(name) if name is not None else function
            elif kind == "command":
                self._command(node, function)
            elif kind == "declaration_command":
                self._declaration(node, function)
            elif kind == "unset_command":
                self._unset(node, function)
            elif (
                kind == "variable_assignment"
                and parent_type is not None
                and parent_type not in ("command", "declaration_command")
            ):
                self._assignment(node, "assign", function)
            inner = kind in STATEMENT_PARENTS
            # below a node without errors, unnamed children are punctuation and keywords: nothing to visit
            children = node.children if node.has_error else node.named_children
            if kind in CONTEXT_KINDS:
                contexts = self._child_contexts(node, children, context)
                stack.extend(
                    (c, function, kind, c if inner else statement, ctx)
                    for c, ctx in zip(reversed(children), reversed(contexts), strict=True)
                )
            else:
                stack.extend((c, function, kind, c if inner else statement, context) for c in reversed(children))

    def _child_contexts(self, node, children, context) -> list:
        """Whether each child runs only on a condition, the for loops around it, and the if/elif
        conditions it runs under (a condition made of one test command only: others are not kept)."""
        kind = node.type
        conditional, loops, guards = context
        if kind == "if_statement":
            condition = self._condition(node)
            then = (True, loops, (*guards, (condition, True)) if condition else guards)
            otherwise = (True, loops, (*guards, (condition, False)) if condition else guards)
            tests = {c.id for c in node.children_by_field_name("condition")}  # with its ';'
            return [
                context if c.id in tests else otherwise if c.type in ("elif_clause", "else_clause") else then
                for c in children
            ]
        if kind in CONDITIONAL_BRANCHES:
            tests = {c.id for c in node.children_by_field_name("condition")}
            return [context if c.id in tests else (True, loops, guards) for c in children]
        if kind == "elif_clause":
            condition = self._condition(node)
            tests = {c.id for c in _condition_nodes(node)}
            body = (True, loops, (*guards, (condition, True)) if condition else guards)
            return [(True, loops, guards) if c.id in tests else body for c in children]
        if kind in ("else_clause", "case_item"):
            return [(True, loops, guards)] * len(children)
        if kind == "list":  # a && b || c: only the first runs unconditionally
            return [context if i == 0 else (True, loops, guards) for i in range(len(children))]
        if kind in ("for_statement", "c_style_for_statement"):
            body = node.child_by_field_name("body")
            # the header in characters (a byte length cut into the body after a non-ASCII character)
            header = self.src.text[self.span(node).start : self.span(body).start].strip() if body is not None else ""
            inside = (conditional, (*loops, header), guards)
            return [inside if body is not None and c.id == body.id else context for c in children]
        return [context] * len(children)

    def _condition(self, node) -> str | None:
        """The text of an if/elif condition that is one test command (``[ ... ]``, ``[[ ... ]]``)."""
        tests = _condition_nodes(node)
        if len(tests) != 1 or tests[0].type != "test_command" or tests[0].has_error:
            return None
        return self.text(tests[0])

    def _emit(self, event: Event) -> None:
        event.conditional, event.loops = self._context[0], self._context[1]
        if isinstance(event, Command):
            event.guards = self._context[2]
        self.script.events.append(event)

    def _error(self, node) -> None:
        if len(self.script.issues) >= 20:
            return
        if node.is_missing:
            self.script.issues.append(ShellIssue(self.span(node), f"syntax error: missing '{node.type}'"))
            return
        # an ERROR node often starts with statements that parsed fine; point past them
        start = node
        for child in node.children:
            if child.type in COMPLETE_STATEMENTS and not child.has_error:
                continue
            start = child
            break
        begin = self.base + self.conv.char_offset(start.start_byte)
        line_end = self.src.line_end(self.src.line_of(begin))
        end = min(self.base + self.conv.char_offset(node.end_byte), max(line_end, begin + 1))
        snippet = self.src.text[begin:end].strip()[:40]
        message = f"syntax error near '{snippet}'" if snippet else "syntax error"
        self.script.issues.append(ShellIssue(self.src.span(begin, end), message))

    def _word(self, node) -> Word:
        return Word(None, self.value(node), self.span(node))  # its text is the file's, under its span

    def _command(self, node, function: str | None) -> None:
        words: list[Word] = []
        prefixes: list[Assignment] = []
        statement = self.statement(node)
        for i, child in enumerate(node.children):
            if child.type == "variable_assignment":
                a = self._make_assignment(child, "prefix", function, statement)
                if a:
                    prefixes.append(a)
            elif child.type == "command_name":
                inner = child.children[0] if child.children else child
                words.append(self._word(inner))
            elif node.field_name_for_child(i) == "argument":
                words.append(self._word(child))
        if words:
            self._emit(Command(words, self.span_within(node, statement), statement, prefixes, function))

    def _declaration(self, node, function: str | None) -> None:
        keyword = node.children[0].type if node.children else "declare"
        kind = DECLARATION_KINDS.get(keyword, "declare")
        statement = self.statement(node)
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                a = self._make_assignment(child, kind, function, statement)
                if a:
                    self._emit(a)
            elif child.type == "variable_name" or (child.type == "word" and kind == "export"):
                name = self.text(child)
                if name.isidentifier():
                    self._emit(
                        Assignment(
                            name,
                            None,
                            False,
                            self.span(child),
                            None,
                            self.span(child),
                            statement,
                            kind,
                            function,
                        )
                    )

    def _unset(self, node, function: str | None) -> None:
        statement = self.statement(node)
        whole = self.span_within(node, statement)
        for child in node.children[1:]:
            if child.type in ("variable_name", "word"):
                name = self.text(child)
                if name.startswith("-"):
                    continue
                self._emit(Assignment(name, None, False, self.span(child), None, whole, statement, "unset", function))

    def _assignment(self, node, kind: str, function: str | None) -> None:
        a = self._make_assignment(node, kind, function, self.statement(node))
        if a:
            self._emit(a)

    def _make_assignment(self, node, kind: str, function: str | None, statement: Span) -> Assignment | None:
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type != "variable_name":
            return None
        value_node = node.child_by_field_name("value")
        value = self.value(value_node) if value_node is not None else ""
        return Assignment(
            name=self.text(name_node),
            value=value,
            has_value=True,
            name_span=self.span(name_node),
            value_span=self.span(value_node) if value_node is not None else None,
            span=self.span_within(node, statement),
            statement=statement,
            kind=kind,
            function=function,
        )


def static_value(node) -> str | None:
    """The word's value after quote removal, or None when an expansion makes it dynamic."""
    kind = node.type
    raw = node.text.decode("utf-8", "replace")
    if kind in ("word", "number"):
        if "$" in raw or "`" in raw:
            return None
        return _unescape(raw)
    if kind == "raw_string":
        return raw[1:-1]
    if kind == "string":
        parts = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type == "string_content":
                parts.append(child.text.decode("utf-8", "replace").replace('\\"', '"').replace("\\\\", "\\"))
            else:
                return None
        return "".join(parts)
    if kind == "concatenation":
        parts = []
        for child in node.children:
            v = static_value(child)
            if v is None:
                return None
            parts.append(v)
        return "".join(parts)
    if kind == "ansi_c_string":
        return None
    return None


def _unescape(raw: str) -> str:
    if "\\" not in raw:
        return raw
    out = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            out.append(raw[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def shell_invocation(args: list[str]) -> tuple[str | None, int]:
    """How a shell is invoked: ("inline", i) for ``-c TEXT`` at i, ("script", i) for a script path."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if arg == "--":
            return ("script", i + 1) if i + 1 < len(args) else (None, -1)
        if _is_command_option(arg):
            return ("inline", i + 1) if i + 1 < len(args) else (None, -1)
        if arg.startswith(("-", "+")):
            i += 1
            continue
        return "script", i
    return None, -1


def _is_command_option(arg: str) -> bool:
    """``-c`` alone or among other one-letter options (``-lc``, ``-xec``): the script is the next word."""
    letters = arg[1:]
    return arg.startswith("-") and "c" in letters and letters.isascii() and letters.isalpha()


INLINE_SHELLS = SHELLS | {"zsh"}  # the shells whose -c text is read as bash


def inline_script_at(argv: list[str]) -> int | None:
    """Where the script is in a command list that runs ``bash -c TEXT`` (or another shell read as
    bash, zsh included); None for any other command."""
    if not argv or posixpath.basename(argv[0]) not in INLINE_SHELLS:
        return None
    kind, index = shell_invocation(argv[1:])
    return 1 + index if kind == "inline" else None
