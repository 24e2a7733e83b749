"""Reads a Python source into the model of ``python.py`` with the stdlib ``ast``; nothing in the
file is imported or executed. Imported only when a run parses a Python file."""

from __future__ import annotations

import ast
import re
import sys
import warnings

from ..span import SourceText, Span
from .python import DYNAMIC, NO_KEYWORDS, PyArg, PyCall, PyEnvSet, PyImport, PythonFile, PythonIssue

# Python ends a line at a lone carriage return as well; SourceText only at "\n". ast's line numbers
# are read against a copy with each lone "\r" made "\n": one character for one, so offsets agree.
LONE_CR = re.compile(r"\r(?!\n)")


def parse_python(src: SourceText) -> PythonFile:
    result = PythonFile(src)
    text = src.text
    bom = text.startswith("\ufeff")
    lines = SourceText(src.path, LONE_CR.sub("\n", text)) if "\r" in text and LONE_CR.search(text) else src
    try:
        with warnings.catch_warnings():  # the source's own warnings (SyntaxWarning) are not ours to print
            warnings.simplefilter("ignore")
            tree = ast.parse(lines.text[1:] if bom else lines.text, filename=src.path)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = max((exc.offset or 1) - 1, 0)
        offset = lines.line_start(min(line, len(lines.line_starts)) - 1) + col
        hint = ""
        if exc.msg and "invalid syntax" in exc.msg:
            hint = f" (read with the Python {sys.version_info.major}.{sys.version_info.minor} grammar)"
        result.issues.append(PythonIssue(src.span(min(offset, len(text))), f"Python syntax error: {exc.msg}{hint}"))
        return result
    except (ValueError, RecursionError, MemoryError) as exc:
        result.issues.append(PythonIssue(src.span(0), f"Python source could not be read: {exc}"))
        return result
    indexed = src.indexed
    _Collector(src, result, 3 if bom else 0, lines).collect(tree)
    if not indexed:
        src.drop_line_index()  # it served the parse; a finding needs it for a line or two, and rebuilds it
    return result


class _Collector:
    def __init__(self, src: SourceText, result: PythonFile, bom_bytes: int, lines: SourceText | None = None) -> None:
        self.src = src
        self.lines = lines or src  # the text ast's line numbers count in
        self.result = result
        self.bom_bytes = bom_bytes
        self.aliases: dict[str, str] = {}
        self.looped_names: set[str] = set()  # the last name of every call written in a loop

    def offset(self, line: int, col: int) -> int:
        return self.lines.offset_of_line_byte_col(line, col + (self.bom_bytes if line == 1 else 0))

    def span(self, node: ast.AST) -> Span:
        if self.plain:  # ASCII, no BOM: a UTF-8 column is a character column
            starts = self.line_starts
            start = starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
            end = starts[(node.end_lineno or node.lineno) - 1] + (node.end_col_offset or 0)  # type: ignore[attr-defined]
            return self.src.span(start, end)
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]
        return self.src.span(start, end)

    def collect(self, tree: ast.Module) -> None:
        self.plain = self.src.ascii and not self.bom_bytes
        self.line_starts = self.lines.line_starts
        top = {id(stmt) for stmt in tree.body}
        self.result.top_level_call = any(
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) for stmt in tree.body
        )
        nodes, guarded, functions, looped = _walk_in_context(tree)
        # imports first (in any scope) so that calls resolve through every alias
        for node in nodes:
            cls = node.__class__
            if cls is ast.Import or cls is ast.ImportFrom:
                self._import(node, id(node) in top)  # type: ignore[arg-type]
            elif cls is ast.If and _is_main_guard(node.test):  # type: ignore[attr-defined]
                self.result.has_main_guard = True
                body = node.body  # type: ignore[attr-defined]  # its else branch runs on import
                self.result.main_guards += ((self.span(body[0]).start, self.span(body[-1]).end),)
            elif cls is ast.If and self.result.npu_since is None:
                since = _npu_since(node)  # type: ignore[arg-type]
                if since is not None:
                    self.result.npu_since = (since, self.span(node.test))  # type: ignore[attr-defined]
        self.result.imports.sort(key=lambda i: i.span.start)
        strings: set[str] = set()
        others: set[str] = set()
        buffers: set[str] = set()
        for node in nodes:
            cls = node.__class__
            if cls is ast.Call:
                in_loop = id(node) in looped
                self._call(node, guarded.get(id(node)), functions.get(id(node)), in_loop)  # type: ignore[arg-type]
            elif cls is ast.Assign:
                self._environ_assign(node)  # type: ignore[arg-type]
                for target in node.targets:  # type: ignore[attr-defined]
                    if isinstance(target, ast.Name):
                        value = node.value  # type: ignore[attr-defined]
                        (strings if builds_str(value, self.aliases) else others).add(target.id)
                        if isinstance(value, ast.Call) and dotted(value.func).endswith(("BytesIO", "StringIO")):
                            buffers.add(target.id)
                    else:
                        others.update(n.id for n in _walk(target) if isinstance(n, ast.Name))
            elif cls in (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr):
                target = getattr(node, "target", None) or getattr(node, "items", None)
                for n in _walk(target) if isinstance(target, ast.AST) else []:
                    if isinstance(n, ast.Name):
                        others.add(n.id)
            elif cls in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
                others.update(a.arg for a in _walk(node.args) if isinstance(a, ast.arg))  # type: ignore[attr-defined]
        self.result.looped_calls = frozenset(self.looped_names)
        self.result.str_names = frozenset(strings - others)
        self.result.buffer_names = frozenset(buffers)
        self.result.calls.sort(key=lambda c: c.start)

    def _import(self, node: ast.Import | ast.ImportFrom, top_level: bool) -> None:
        span = self.span(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                self.aliases[bound] = alias.name if alias.asname else bound
                self.result.imports.append(PyImport(alias.name, bound, span, top_level))  # names kept once there
            return
        if node.level:  # from .misc import setup: a module of the same package, looked up from the file
            for alias in node.names:
                full = "." * node.level + (f"{node.module}.{alias.name}" if node.module else alias.name)
                self.result.relative_imports.append(PyImport(full, alias.asname or alias.name, span, top_level))
            return
        if not node.module:
            return
        for alias in node.names:
            bound = alias.asname or alias.name
            full = f"{node.module}.{alias.name}"
            self.aliases[bound] = full
            self.result.imports.append(PyImport(full, bound, span, top_level))

    def _call(self, node: ast.Call, guard: str | None = None, function: str | None = None, loop: bool = False) -> None:
        written = dotted(node.func)
        if not written:
            if _npu_on_a_result(node):  # torch.ones(2).npu(), nn.Linear(2, 2).to("npu")
                self.result.chained_npu = True
            return
        qualname = resolve_alias(written, self.aliases)
        keywords = {kw.arg: self._arg(kw.value) for kw in node.keywords if kw.arg}
        call = PyCall(
            qualname,
            written,
            self.span(node),
            self.span(node.func),
            keywords or NO_KEYWORDS,
            tuple([self._arg(a) for a in node.args]) if node.args else (),
            conditional=guard is not None,
            function=function,
            guard=guard or "",
            in_loop=loop,
        )
        self.result.calls.append(call)
        if loop:  # what a loop calls runs again at every iteration, a function of the file included
            self.looped_names.add(written.rsplit(".", 1)[-1])

    def _arg(self, node: ast.AST) -> PyArg:
        cls = node.__class__
        if cls is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
        elif cls not in _MAYBE_LITERAL:
            value = DYNAMIC  # literal_eval rejects every other node type
        else:
            try:
                value = literal(node)
            except (ValueError, TypeError, MemoryError, RecursionError):
                value = DYNAMIC
        return PyArg(value, self.span(node))

    def _environ_assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if (
                isinstance(target, ast.Subscript)
                and dotted(target.value) in ("os.environ", "environ")
                and isinstance(target.slice, ast.Constant)
                and isinstance(target.slice.value, str)
            ):
                value = node.value.value if isinstance(node.value, ast.Constant) else None
                self.result.env_sets.append(
                    PyEnvSet(target.slice.value, value if isinstance(value, str) else None, self.span(node))
                )


def literal(node: ast.AST) -> object:
    """What ``ast.literal_eval`` gives for an expression node, or ValueError where it refuses. Written
    without closures: literal_eval's nested helpers form a reference cycle on every call, garbage that
    a run (which holds the cyclic collector off) would keep until it ends."""
    cls = node.__class__
    if cls is ast.Constant:
        return node.value  # type: ignore[attr-defined]
    if cls is ast.Tuple:
        return tuple(literal(e) for e in node.elts)  # type: ignore[attr-defined]
    if cls is ast.List:
        return [literal(e) for e in node.elts]  # type: ignore[attr-defined]
    if cls is ast.Set:
        return {literal(e) for e in node.elts}  # type: ignore[attr-defined]
    if cls is ast.Call:
        if dotted(node.func) == "set" and not node.args and not node.keywords:  # type: ignore[attr-defined]
            return set()
    elif cls is ast.Dict:
        keys, values = node.keys, node.values  # type: ignore[attr-defined]
        if len(keys) == len(values) and None not in keys:
            return dict(zip(map(literal, keys), map(literal, values), strict=True))
    elif cls is ast.BinOp and node.op.__class__ in (ast.Add, ast.Sub):  # type: ignore[attr-defined]
        left, right = _signed_number(node.left), _number(node.right)  # type: ignore[attr-defined]
        if isinstance(left, int | float) and isinstance(right, complex):
            return left + right if node.op.__class__ is ast.Add else left - right  # type: ignore[attr-defined]
    else:
        return _signed_number(node)
    raise ValueError("not a literal")


def _number(node: ast.AST) -> object:
    if node.__class__ is ast.Constant and node.value.__class__ in (int, float, complex):  # type: ignore[attr-defined]
        return node.value  # type: ignore[attr-defined]
    raise ValueError("not a number")


def _signed_number(node: ast.AST) -> object:
    if node.__class__ is ast.UnaryOp and node.op.__class__ in (ast.UAdd, ast.USub):  # type: ignore[attr-defined]
        operand = _number(node.operand)  # type: ignore[attr-defined]
        return +operand if node.op.__class__ is ast.UAdd else -operand  # type: ignore[attr-defined, operator]
    return _number(node)


# node types ast.literal_eval may accept (a Call only as ``set()``); every other one is rejected
_MAYBE_LITERAL = frozenset({ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.Call})
_NOT_CHILDREN = frozenset({"ctx", "id", "attr", "arg", "name", "asname", "module", "level", "kind", "type_comment"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class that can hold child nodes (remembered per class)."""
    skip = _NOT_CHILDREN | ({"value"} if cls is ast.Constant else set())
    fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in skip)
    return fields


def _walk(tree: ast.AST) -> list[ast.AST]:
    """Every node of the tree in ``ast.walk`` order (breadth first), without its generator overhead."""
    nodes = [tree]
    append = nodes.append
    fields_of = _CHILD_FIELDS
    node_type = ast.AST
    i = 0
    while i < len(nodes):
        node = nodes[i]
        i += 1
        cls = node.__class__
        fields = fields_of.get(cls)
        if fields is None:  # () for a leaf class: remembered too
            fields = _child_fields(cls)
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_type):
                        append(item)
            elif isinstance(value, node_type):
                append(value)
    return nodes


_PATH_JOINS = frozenset({"os.path.join", "posixpath.join", "os.path.abspath", "os.path.realpath", "str"})


def builds_str(node: ast.AST, aliases: dict[str, str]) -> bool:
    """Whether an expression always builds a str: a string literal or f-string, ``os.path.join(...)``,
    ``"…".format(...)``, ``str(...)``, or ``+``/``%`` with a string literal."""
    cls = node.__class__
    if cls is ast.Constant:
        return isinstance(node.value, str)  # type: ignore[attr-defined]
    if cls is ast.JoinedStr:
        return True
    if cls is ast.BinOp:
        left, right = node.left, node.right  # type: ignore[attr-defined]
        return isinstance(node.op, (ast.Add, ast.Mod)) and (  # type: ignore[attr-defined]
            builds_str(left, aliases) or (isinstance(node.op, ast.Add) and builds_str(right, aliases))  # type: ignore[attr-defined]
        )
    if cls is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        if resolve_alias(dotted(func), aliases) in _PATH_JOINS:
            return True
        return isinstance(func, ast.Attribute) and func.attr == "format" and builds_str(func.value, aliases)
    return False


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})
_CONTEXT_GIVERS = frozenset({*_FUNCTIONS, *_LOOPS, ast.If, ast.IfExp, ast.ExceptHandler})


def _walk_in_context(tree: ast.AST) -> tuple[list[ast.AST], dict[int, str], dict[int, str], set[int]]:
    """Every node in ``ast.walk`` order, and for each call the names its innermost condition tests
    and the innermost function it is written in, in one pass that hands each node's context down
    (walking each function's and each branch's subtree again was quadratic in nesting).

    A call's condition is that of the innermost ``if``/``else`` branch (the ``__main__`` guard aside),
    conditional expression branch or ``except`` handler around it, named by what its test reads
    (``args.pretrained``; ``except`` for a handler); the test itself runs under the outer condition.
    Also the calls written in the body of a loop of their own function (what a training loop repeats)."""
    nodes: list[ast.AST] = [tree]
    # (function, condition, in a loop of that function) per node
    contexts: list[tuple[str | None, str | None, bool]] = [(None, None, False)]
    guarded: dict[int, str] = {}
    functions: dict[int, str] = {}
    looped: set[int] = set()
    fields_of = _CHILD_FIELDS
    node_type = ast.AST
    i = 0
    while i < len(nodes):
        node = nodes[i]
        here = contexts[i]
        function, condition, loop = here
        i += 1
        cls = node.__class__
        if cls is ast.Call:
            if condition is not None:
                guarded[id(node)] = condition
            if function is not None:
                functions[id(node)] = function
            if loop:
                looped.add(id(node))
        fields = fields_of.get(cls)
        if fields is None:  # () for a leaf class: remembered too
            fields = _child_fields(cls)
        inner = _inner_context(node, cls, function, condition, loop) if cls in _CONTEXT_GIVERS else None
        for name in fields:
            value = getattr(node, name, None)
            context = inner.get(name, here) if inner else here
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_type):
                        nodes.append(item)
                        contexts.append(context)
            elif isinstance(value, node_type):
                nodes.append(value)
                contexts.append(context)
    return nodes, guarded, functions, looped


def _inner_context(
    node: ast.AST, cls: type, function: str | None, condition: str | None, loop: bool
) -> dict[str, tuple[str | None, str | None, bool]] | None:
    """The context a node gives the children in some of its fields, or None when they keep its own."""
    if cls in _FUNCTIONS:
        inside = (node.name, condition, False)  # type: ignore[attr-defined]  # decorators and defaults included
        return dict.fromkeys(cls._fields, inside)
    if (cls is ast.If and not _is_main_guard(node.test)) or cls is ast.IfExp:  # type: ignore[attr-defined]
        names = " ".join(d for d in (dotted(n) for n in _walk(node.test)) if d)  # type: ignore[attr-defined]
        return {"body": (function, names, loop), "orelse": (function, names, loop)}
    if cls is ast.ExceptHandler:
        return {"body": (function, "except", loop)}
    if cls in _LOOPS:
        return {"body": (function, condition, True)}
    return None


def resolve_alias(written: str, aliases: dict[str, str]) -> str:
    """A dotted name as written, its first part replaced by what an import bound it to."""
    head, _, rest = written.partition(".")
    resolved = aliases.get(head, head)
    if resolved == head:
        return written  # the same text: one string, not two equal ones
    return f"{resolved}.{rest}" if rest else resolved


def dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _npu_on_a_result(node: ast.Call) -> bool:
    """A call that moves what another call returns to an NPU: ``.npu()`` or ``.to("npu…")``."""
    func = node.func
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Call):
        return False
    if func.attr == "npu":
        return True
    if func.attr != "to":
        return False
    for arg in [*node.args, *(kw.value for kw in node.keywords)]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.lower().startswith("npu"):
            return True
    return False


def _npu_since(node: ast.If) -> str | None:
    """The torch version from which a file imports torch_npu, when it guards the import by torch's
    version (``if torch.__version__ >= "1.8": import torch_npu``): it also runs on older torch, whose
    NPU support was built in (torch 1.5)."""
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.GtE, ast.Gt))):
        return None
    if dotted(test.left) != "torch.__version__":
        return None
    bound = test.comparators[0]
    if not (isinstance(bound, ast.Constant) and isinstance(bound.value, str)):
        return None
    for stmt in node.body:
        if isinstance(stmt, ast.Import) and any(a.name.split(".")[0] == "torch_npu" for a in stmt.names):
            return bound.value
        if isinstance(stmt, ast.ImportFrom) and (stmt.module or "").split(".")[0] == "torch_npu":
            return bound.value
    return None


def _is_main_guard(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def module_level_imports(data: bytes) -> list[str]:
    """The modules a Python file imports at module level, from its bytes (its coding line honoured):
    ``import a.b`` as ``a.b``, ``from a import b`` as ``a.b``, ``from .misc import x`` as
    ``.misc.x``. Module level includes the blocks of a module-level ``if``, ``try`` or ``with``
    (``try: import torch_npu``, ``if is_npu_available(): import torch_npu``), not a function or a
    class body, nor ``if TYPE_CHECKING:``. Only the statements are read, not the rest of the model:
    what following an entry's imports through a package needs. Empty when the file does not parse."""
    import ast

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (f"{node.module}." if node.module else "")
            names += [base + alias.name for alias in node.names]
        elif isinstance(node, ast.If):
            if not _type_checking(node.test):
                pending[:0] = [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            pending[:0] = [*node.body, *(s for h in node.handlers for s in h.body), *node.orelse, *node.finalbody]
        elif isinstance(node, ast.With):
            pending[:0] = list(node.body)
    return names


def _type_checking(test: object) -> bool:
    import ast

    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
