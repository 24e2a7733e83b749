"""Plain data classes declared like dataclasses, at no cost on import.

``dataclasses`` writes each class's ``__init__``, ``__repr__`` and ``__eq__`` as source text and
compiles it while the module is imported: about 0.4 ms a class, some 30 ms for the classes a
one-file run imports, and it pulls in ``inspect``. A one-file run in a pre-commit hook is mostly
start-up, so the model's classes derive from :class:`Record` instead. A record declares its fields
as annotations, with defaults and :func:`field` as on a dataclass; ``__init_subclass__`` reads them
once and nothing is compiled::

    class Support(Record, frozen=True):
        status: str
        reason: str = ""

What a record gets, as a dataclass would:

- ``__init__`` taking the fields in order, positionally or by name, filling defaults and
  factories, then calling ``__post_init__`` when the class has one. A class created by the
  hundred thousand writes its own ``__init__`` (and ``__slots__``); the record then only reads its
  fields for the methods below.
- ``__repr__`` naming every field declared with ``repr=True``.
- ``__eq__`` comparing the fields declared with ``compare=True`` when both sides are of the same
  class; ``eq=False`` keeps identity. A method the class writes itself is never replaced.
- ``frozen=True``: assigning a field raises ``AttributeError`` and the record hashes by its
  compared fields. An unfrozen record with field equality is unhashable, as a dataclass is.
- :func:`replace` makes a copy with some fields changed.
"""

from __future__ import annotations

from sys import intern

TYPE_CHECKING = False  # typing itself is not imported: it costs a one-file run more than this module
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> object:
        return lambda cls: cls  # only type checkers read it


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """How a field is declared: what :func:`field` returns, read by the class when it is created."""

    __slots__ = ("compare", "default", "factory", "repr")

    def __init__(self, default: object, factory: Callable[[], object] | None, repr: bool, compare: bool) -> None:
        self.default = default
        self.factory = factory
        self.repr = repr
        self.compare = compare


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | None = None,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field's default (or a factory called for every new record), and whether repr and
    equality see it."""
    if default is not MISSING and default_factory is not None:
        raise ValueError("a field has a default or a default_factory, not both")
    return Field(default, default_factory, repr, compare)


_SLOT = type(Field.default)

# strings up to this length are kept once per run (``one_copy``); longer ones rarely repeat
SHARED_LENGTH = 120


def one_copy(text: Any) -> Any:
    """One object for all equal short strings: a model repeats names (``torch.npu.set_device``,
    ``MASTER_ADDR``, a YAML tag) across thousands of files, and each parse, and each unpickling of
    a worker's model, makes a string of its own."""
    if text.__class__ is str and len(text) <= SHARED_LENGTH:
        return intern(text)
    return text


def _set_frozen(self: object, name: str, value: object) -> None:
    raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def _del_frozen(self: object, name: str) -> None:
    raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")


def _hash_fields(self: Record) -> int:
    return hash(tuple([getattr(self, name) for name in self._compared_]))


@dataclass_transform(field_specifiers=(field,))
class Record:
    """Base of plain data classes; see the module's docstring."""

    __slots__ = ()
    _fields_: tuple[str, ...] = ()
    _defaults_: dict[str, object] = {}  # noqa: RUF012 - replaced per class, never mutated
    _factories_: dict[str, Callable[[], object]] = {}  # noqa: RUF012
    _shown_: tuple[str, ...] = ()
    _compared_: tuple[str, ...] = ()
    _field_set_: frozenset[str] = frozenset()
    _frozen_ = False

    def __init_subclass__(cls, *, eq: bool = True, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - inspect is what start-up avoids
        names = [*cls._fields_]
        defaults = dict(cls._defaults_)
        factories = dict(cls._factories_)
        shown, compared = set(cls._shown_), set(cls._compared_)
        for name, annotation in own.items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in names:
                names.append(name)
            declared = cls.__dict__.get(name, MISSING)
            if isinstance(declared, _SLOT):  # a field kept in __slots__ has no class-level default
                declared = MISSING
            spec = declared if isinstance(declared, Field) else Field(declared, None, True, True)
            defaults.pop(name, None)
            factories.pop(name, None)
            if spec.factory is not None:
                factories[name] = spec.factory
            elif spec.default is not MISSING:
                defaults[name] = spec.default
            if isinstance(declared, Field):  # the class attribute becomes the plain default, or goes
                if spec.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, spec.default)
            (shown.add if spec.repr else shown.discard)(name)
            (compared.add if spec.compare else compared.discard)(name)
        _check_order(cls, names, defaults, factories)
        cls._fields_ = tuple(names)
        cls._field_set_ = frozenset(names)
        cls._defaults_ = defaults
        cls._factories_ = factories
        cls._shown_ = tuple(n for n in names if n in shown)
        cls._compared_ = tuple(n for n in names if n in compared)
        _give_methods(cls, eq, frozen)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        fields = cls._fields_
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments, {len(args)} given")
        values = dict(zip(fields, args, strict=False))  # no more args than fields: checked above
        if kwargs:
            if not cls._field_set_.issuperset(kwargs):
                unknown = ", ".join(map(repr, sorted(set(kwargs) - cls._field_set_)))
                raise TypeError(f"{cls.__name__}() has no field {unknown}")
            if not values.keys().isdisjoint(kwargs):
                twice = ", ".join(map(repr, sorted(values.keys() & kwargs)))
                raise TypeError(f"{cls.__name__}() got several values for {twice}")
            values.update(kwargs)
        if len(values) < len(fields):
            for name in fields:
                if name not in values:
                    if name in cls._factories_:
                        values[name] = cls._factories_[name]()
                    elif name in cls._defaults_:
                        values[name] = cls._defaults_[name]
                    else:
                        raise TypeError(f"{cls.__name__}() is missing the argument {name!r}")
        # one attribute at a time, past a frozen record's __setattr__ and through the setter of a
        # property that keeps a field: CPython then keeps the instance's attributes in a table the
        # class's instances share (168 bytes for six fields), where filling ``__dict__`` in one
        # update makes each a dict of its own (368 bytes; 9 MiB more at 10,000 files)
        for name, value in values.items():
            object.__setattr__(self, name, value)
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def __setstate__(self, state: object) -> None:
        """Unpickled attribute by attribute, as ``__init__`` sets them: pickle's own way fills the
        instance's ``__dict__`` in one go, which gives each model from a worker a table of its own
        (232 bytes against 168 for six fields). ``state`` is the ``__dict__``, or for a slotted
        record a pair of it (or None) and the slots' values."""
        attributes, slots = state if isinstance(state, tuple) else (state, None)
        for part in (attributes, slots):
            if part:
                for name, value in part.items():  # type: ignore[attr-defined]
                    # a short string once per run, as the parsers keep it
                    object.__setattr__(self, name, one_copy(value))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown_)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        fields = self._compared_
        return tuple([getattr(self, n) for n in fields]) == tuple([getattr(other, n) for n in fields])

    __hash__ = None  # type: ignore[assignment]  # field equality on a mutable record: unhashable


def _check_order(cls: type, names: list[str], defaults: dict[str, object], factories: dict[str, Any]) -> None:
    if "__init__" in cls.__dict__:
        return  # the class's own __init__ decides what is optional
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: a record with __slots__ writes its own __init__")
    optional = False
    for name in names:
        if name in defaults or name in factories:
            optional = True
        elif optional:
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with a default")


def _give_methods(cls: type, eq: bool, frozen: bool) -> None:
    own = cls.__dict__
    if not eq:
        if "__eq__" not in own:
            cls.__eq__ = object.__eq__  # type: ignore[method-assign,assignment]
        if "__hash__" not in own or (own["__hash__"] is None and "__eq__" not in own):
            cls.__hash__ = object.__hash__  # type: ignore[method-assign,assignment]
    elif frozen and own.get("__hash__") is None:
        cls.__hash__ = _hash_fields  # type: ignore[method-assign,assignment]
    if frozen:
        if "__slots__" in own:
            raise TypeError(f"{cls.__name__}: a frozen record keeps its fields in __dict__")
        cls._frozen_ = True
        cls.__setattr__ = _set_frozen  # type: ignore[method-assign,assignment]
        cls.__delattr__ = _del_frozen  # type: ignore[method-assign,assignment]


def replace(record: Any, **changes: Any) -> Any:
    """A copy of ``record`` with ``changes`` to its fields (``dataclasses.replace`` for records)."""
    values = {name: getattr(record, name) for name in record._fields_}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(record).__name__} has no field {', '.join(sorted(unknown))}")
    values.update(changes)
    return type(record)(**values)
