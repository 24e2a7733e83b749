"""What a Python training source holds, for the rules: its imports, calls with their literal
arguments, environment settings and main guards. ``python_parse`` reads a file into this model
with the stdlib ``ast`` (never importing or running it); the model itself needs no ``ast``, so
a run that parses no Python file never imports it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ..span import Located, SourceText, Span


@dataclass(slots=True)
class PyImport:
    """One import of a Python file."""

    module: str  # full module name, e.g. "torch_npu" or "torch_npu.npu"
    bound: str  # the name bound in the module namespace
    span: Span  # the whole import statement
    top_level: bool


class PyArg(Located):
    """One argument of a call: its literal value (or DYNAMIC) and where it is written. Its text is read
    from the file when asked: a parse keeps hundreds of thousands."""

    __slots__ = ("value",)

    def __init__(self, value: object, span: Span) -> None:
        self.value = value  # literal value, or the sentinel DYNAMIC
        self._locate(span)

    @property
    def source(self) -> str:
        return self._text()

    def __repr__(self) -> str:
        return f"PyArg({self.source!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_restore_arg, (self.value, self._source, self._high, self._low, self._size))


def _restore_arg(value: object, source: SourceText, high: int, low: int, size: int) -> PyArg:
    """An argument from a pickle, its fields set as they were kept."""
    arg = object.__new__(PyArg)
    arg.value = value
    arg._source, arg._high, arg._low, arg._size = source, high, low, size
    return arg


class _Dynamic:
    """The value of an argument that is not a literal: one object, in a worker, a cache and here."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DYNAMIC"

    def __reduce__(self) -> str:
        return "DYNAMIC"  # pickled by name: loads as this module's DYNAMIC, so ``is DYNAMIC`` holds


DYNAMIC = _Dynamic()


NO_KEYWORDS: Mapping[str, PyArg] = MappingProxyType({})  # shared by the calls with no keyword argument


class PyCall(Located):
    """One call: its name resolved through import aliases (``torch.npu.set_compile_mode``) and as
    written, its arguments, and where the call and its function name are written. A parse keeps
    every call of a file, so the spans are kept as offsets and made when asked."""

    __slots__ = (
        "_func_size",
        "_func_start",
        "_keywords",
        "conditional",
        "function",
        "guard",
        "in_loop",
        "positional",
        "qualname",
        "written",
    )

    def __init__(
        self,
        qualname: str,
        written: str,
        span: Span,
        func_span: Span,
        keywords: Mapping[str, PyArg] = NO_KEYWORDS,
        positional: Sequence[PyArg] = (),
        conditional: bool = False,
        function: str | None = None,
        guard: str = "",
        in_loop: bool = False,
    ) -> None:
        self.qualname = qualname
        self.written = written
        self._locate(span)
        # relative to the call's start: two small ints, shared by CPython, instead of a span object
        self._func_start, self._func_size = func_span.start - span.start, func_span.end - func_span.start
        # a flat (name, argument, ...) tuple: far smaller than a dict per call with keywords
        self._keywords = tuple(part for pair in keywords.items() for part in pair) if keywords else ()
        self.positional = positional
        self.conditional = conditional  # inside an if/else branch (a main guard aside) or a try/except handler
        self.function = function  # the innermost function (or method) the call is written in
        self.guard = guard  # the names the innermost condition around the call tests ("args.pretrained")
        self.in_loop = in_loop  # written in the body of a loop of its own function (repeated)

    @property
    def keywords(self) -> Mapping[str, PyArg]:
        """The keyword arguments by name (made when asked)."""
        flat = self._keywords
        if not flat:
            return NO_KEYWORDS
        return dict(zip(flat[0::2], flat[1::2], strict=True))  # type: ignore[arg-type]

    @property
    def func_span(self) -> Span:
        start = self.start + self._func_start
        return Span(self._source, start, start + self._func_size)

    def __repr__(self) -> str:
        return f"PyCall({self.qualname!r}, {self.span!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # the fields as they are kept: no spans or keywords' dict made to pickle a call, and no
        # __init__ run to load it (sending models from the pool is most of a worker's overhead)
        fields = (self._source, self._high, self._low, self._size, self._func_start, self._func_size, self._keywords)
        context = (self.conditional, self.function, self.guard, self.in_loop)
        return (_restore_call, (*fields, self.qualname, self.written, self.positional, *context))


def _restore_call(
    source: SourceText,
    high: int,
    low: int,
    size: int,
    func_start: int,
    func_size: int,
    keywords: tuple[object, ...],
    qualname: str,
    written: str,
    positional: Sequence[PyArg],
    conditional: bool,
    function: str | None,
    guard: str,
    in_loop: bool = False,
) -> PyCall:
    call = object.__new__(PyCall)
    call._source, call._high, call._low, call._size = source, high, low, size
    call._func_start, call._func_size, call._keywords = func_start, func_size, keywords
    call.written, call.qualname = written, qualname
    call.positional, call.conditional = positional, conditional
    call.guard, call.function = guard, function
    call.in_loop = in_loop
    return call


@dataclass
class PyEnvSet:
    """One assignment to os.environ in a Python file."""

    name: str
    value: str | None
    span: Span


@dataclass
class PythonIssue:
    """A Python file that could not be read, and why."""

    span: Span
    message: str


@dataclass(eq=False, repr=False)
class PythonFile:
    """A Python file's imports, calls and environment settings."""

    source: SourceText
    imports: list[PyImport] = field(default_factory=list)
    # ``from .misc import setup``: the module written with its leading dots (kept apart: no absolute
    # name a rule asks about can match it)
    relative_imports: list[PyImport] = field(default_factory=list)
    calls: list[PyCall] = field(default_factory=list)
    env_sets: list[PyEnvSet] = field(default_factory=list)
    issues: list[PythonIssue] = field(default_factory=list)
    has_main_guard: bool = False
    top_level_call: bool = False  # a call statement at module level: the file runs something when executed
    str_names: frozenset[str] = frozenset()  # names every assignment of which builds a str (a path)
    buffer_names: frozenset[str] = frozenset()  # names assigned an in-memory buffer (io.BytesIO())
    main_guards: tuple[tuple[int, int], ...] = ()  # offsets of each `if __name__ == "__main__":` block
    # ``if torch.__version__ >= "1.8": import torch_npu``: the version torch_npu is imported from, and the test
    npu_since: tuple[str, Span] | None = None
    chained_npu: bool = False  # moves a call's result to an NPU (``torch.ones(2).npu()``)
    looped_calls: frozenset[str] = frozenset()  # last names of the calls written in a loop body

    def imports_module(self, *prefixes: str) -> bool:
        return any(i.module == p or i.module.startswith(p + ".") for i in self.imports for p in prefixes)

    def top_import(self, module: str) -> PyImport | None:
        for imp in self.imports:
            if imp.top_level and imp.module == module and imp.bound == module.split(".")[0]:
                return imp
        return None

    def first_top_import(self, *prefixes: str) -> PyImport | None:
        """The first module-level import of a module under ``prefixes``, in any form."""
        for imp in self.imports:
            if imp.top_level and any(imp.module == p or imp.module.startswith(p + ".") for p in prefixes):
                return imp
        return None

    def calls_to(self, *suffixes: str) -> list[PyCall]:
        return [c for c in self.calls if any(c.qualname == s or c.qualname.endswith("." + s) for s in suffixes)]
