"""Records behave as the dataclasses they replace: construction, defaults, equality, hashing,
frozen fields, repr, replace and pickling."""

from __future__ import annotations

import pickle

import pytest

from recovery_lint.diagnostics import Diagnostic, Severity
from recovery_lint.jobs import EnvValue
from recovery_lint.record import Record, field, replace
from recovery_lint.span import SourceText


class Point(Record, frozen=True):
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str = field(default="", compare=False, repr=False)


class Counter(Record):
    name: str
    seen: set[str] = field(default_factory=set)


class Named(Counter):
    label: str = "plain"


class Identity(Record, eq=False):
    value: int


class Checked(Record):
    low: int
    high: int

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError("low above high")


class Slotted(Record):
    __slots__ = ("a", "b")
    a: int
    b: int

    def __init__(self, a: int, b: int = 2) -> None:
        self.a = a
        self.b = b


def test_fields_are_taken_in_order_positionally_or_by_name_with_defaults_and_factories():
    p = Point(1)
    assert (p.x, p.y, p.tags, p.note) == (1, 0, (), "")
    assert Point(1, 2, ("a",), "n") == Point(x=1, y=2, tags=("a",), note="other")
    assert Counter("a").seen is not Counter("a").seen  # a new set for every record


def test_wrong_arguments_are_refused_as_a_dataclass_refuses_them():
    with pytest.raises(TypeError, match="missing the argument 'x'"):
        Point()
    with pytest.raises(TypeError, match="has no field 'z'"):
        Point(1, z=3)
    with pytest.raises(TypeError, match="several values for 'x'"):
        Point(1, x=2)
    with pytest.raises(TypeError, match="takes 4 arguments, 5 given"):
        Point(1, 2, (), "", 5)


def test_a_field_without_default_after_one_with_a_default_is_refused_at_class_creation():
    with pytest.raises(TypeError, match="field 'b' without a default"):

        class Bad(Record):
            a: int = 0
            b: int


def test_equality_compares_fields_of_the_same_class_only():
    assert Counter("a") == Counter("a")
    assert Counter("a") != Counter("b")
    assert Counter("a") != Named("a")  # a subclass is another class, as with dataclasses
    assert Counter("a").__eq__("a") is NotImplemented
    assert Identity(1) != Identity(1)


def test_frozen_records_hash_by_compared_fields_and_refuse_assignment():
    assert hash(Point(1, 2)) == hash(Point(1, 2, note="ignored"))
    assert len({Point(1, 2), Point(1, 2), Point(2, 1)}) == 2
    with pytest.raises(AttributeError, match="frozen Point"):
        Point(1).x = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(Counter("a"))  # field equality on a mutable record: unhashable
    assert len({Identity(1), Identity(1)}) == 2 and Identity.__hash__ is object.__hash__  # identity


def test_subclasses_add_fields_after_their_bases():
    n = Named("a", {"x"}, "big")
    assert (n.name, n.seen, n.label) == ("a", {"x"}, "big")
    assert Named._fields_ == ("name", "seen", "label")


def test_post_init_runs_after_the_fields_are_set():
    assert Checked(1, 2).high == 2
    with pytest.raises(ValueError, match="low above high"):
        Checked(3, 2)


def test_repr_names_the_shown_fields():
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=())"
    assert repr(Slotted(1)) == "Slotted(a=1, b=2)"


def test_replace_copies_with_changes_and_refuses_unknown_fields():
    p = Point(1, 2, ("a",), "n")
    q = replace(p, y=5)
    assert (q.x, q.y, q.tags, q.note) == (1, 5, ("a",), "n")
    with pytest.raises(TypeError, match="no field z"):
        replace(p, z=1)


def test_a_record_with_its_own_init_and_slots_keeps_no_dict():
    s = Slotted(1)
    assert not hasattr(s, "__dict__")
    assert s == Slotted(1, 2)
    assert replace(s, b=3) == Slotted(1, 3)


def test_records_pickle_round_trip():
    for record in (Point(1, 2, ("a",), "n"), Counter("a", {"x"}), Slotted(4, 5)):
        again = pickle.loads(pickle.dumps(record))
        assert again == record and type(again) is type(record)
    assert pickle.loads(pickle.dumps(Point(1, note="n"))).note == "n"


def test_the_models_records_compare_and_copy_as_before():
    span = SourceText("a.sh", "export A=1\n").span(0, 6)
    d = Diagnostic("RL101", "watchdog-disabled", "m", Severity.WARNING, span, snippet="x")
    assert d == replace(d, snippet="other", context=("c",))  # snippet and context are not compared
    assert replace(d, message="n").message == "n"
    value = EnvValue("A", "1", "script", span)
    assert (value.exported, value.assignment, value.template) == (True, None, None)
    assert not hasattr(value, "__dict__")


def test_a_slotted_record_must_write_its_own_init():
    with pytest.raises(TypeError, match="writes its own __init__"):

        class Bad(Record):
            __slots__ = ("a",)
            a: int


class Kept(Record):
    value: int
    note: str = ""


class KeptByProperty(Kept):
    @property  # type: ignore[override]
    def value(self) -> int:
        return self._value * 10

    @value.setter
    def value(self, given: int) -> None:
        self._value = given


def test_a_field_a_property_keeps_is_set_through_its_setter():
    kept = KeptByProperty(3, "n")
    assert (kept.value, kept._value, kept.note) == (30, 3, "n")
    assert "value" not in vars(kept)
    assert Kept(3).value == 3 and vars(Kept(3)) == {"value": 3, "note": ""}


class Six(Record):
    a: int
    b: object = None
    c: str = "x"
    d: int = 1
    e: int = 2
    f: int = 3


class PlainSix:
    def __init__(self, a: int) -> None:
        self.a, self.b, self.c, self.d, self.e, self.f = a, None, "x", 1, 2, 3


def _bytes_each(make, count: int = 20_000) -> float:
    import tracemalloc

    tracemalloc.start()
    try:
        kept = make(count)
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(kept) == count
    return size / count


def test_records_built_or_unpickled_cost_what_plain_objects_cost():
    # CPython shares one key table among a class's instances when their attributes are set one by
    # one; a __dict__ filled in one update (pickle's default, or dict.update) is a table per instance
    plain = _bytes_each(lambda n: [PlainSix(i) for i in range(n)])
    built = _bytes_each(lambda n: [Six(i) for i in range(n)])
    blob = pickle.dumps([Six(i) for i in range(20_000)])
    unpickled = _bytes_each(lambda n: pickle.loads(blob))
    assert built <= plain * 1.1, (built, plain)
    assert unpickled <= plain * 1.1, (unpickled, plain)
    assert pickle.loads(pickle.dumps(Six(7, c="y"))) == Six(7, c="y")


def test_a_slotted_record_round_trips_through_its_own_state():
    value = EnvValue.__new__(EnvValue)
    value.__setstate__((None, {"name": "A", "value": "1"}))
    assert (value.name, value.value) == ("A", "1")
