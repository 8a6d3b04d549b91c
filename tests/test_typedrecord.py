"""rose.typedrecord.Record: the semantics of @dataclass without its code generation, held against @dataclass itself."""
from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from typing import ClassVar

import pytest

from rose.typedrecord import (MISSING, SPECIALISE_AFTER, FrozenRecordError, NamedTuple, Record, asdict, field, fields,
                              replace)


class Point(Record, frozen=True):
    """A frozen record."""
    x: int
    y: int = 0
    label: str = field(default="", compare=False, metadata={"why": "display only"})


class Bag(Record):
    """A mutable record with factories."""
    name: str
    items: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    kind: ClassVar[str] = "bag"


class Tagged(Bag):
    """A record that adds a field to its base's."""
    tag: str = "t"


@dataclasses.dataclass(frozen=True)
class DataPoint:
    """The same fields as Point, as a dataclass."""
    x: int
    y: int = 0
    label: str = dataclasses.field(default="", compare=False, metadata={"why": "display only"})


def test_construction_defaults_and_factories() -> None:
    assert (Point(1).x, Point(1).y, Point(1, 2).y, Point(x=3, y=4).y) == (1, 0, 2, 4)
    a, b = Bag("a"), Bag("b")
    a.items.append("one")
    assert b.items == [] and a.items == ["one"]   # a new list per instance
    assert Bag.kind == "bag" and [f.name for f in fields(Bag)] == ["name", "items", "counts"]
    assert [f.name for f in fields(Tagged)] == ["name", "items", "counts", "tag"]
    assert Tagged("n", tag="u").tag == "u" and Tagged("n").items == []
    assert Bag.__match_args__ == ("name", "items", "counts")
    assert fields(Point)[2].metadata == {"why": "display only"} and fields(Point)[0].default is MISSING
    assert list(vars(Bag("a", counts={"k": 1}))) == ["name", "items", "counts"]   # in field order


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((), {}, "missing 1 required positional argument: 'x'"),
    ((1, 2, "l", 4), {}, "takes 4 positional arguments but 5 were given"),
    ((1,), {"x": 2}, "multiple values for argument 'x'"),
    ((1,), {"z": 2}, "unexpected keyword argument 'z'"),
])
def test_bad_construction_is_a_type_error_like_a_dataclass(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        Point(*args, **kwargs)
    with pytest.raises(TypeError):
        DataPoint(*args, **kwargs)


def test_equality_hash_and_repr_match_a_dataclass() -> None:
    assert Point(1, 2, "a") == Point(1, 2, "b")   # label is not compared
    assert Point(1, 2) != Point(2, 1)
    assert Point(1, 2) != DataPoint(1, 2) and Point(1) != (1, 0)   # only the same class compares
    assert hash(Point(1, 2, "a")) == hash(Point(1, 2, "z")) == hash((1, 2))
    assert hash(DataPoint(1, 2)) == hash(Point(1, 2))   # the same hash as the dataclass
    assert len({Point(1), Point(1), Point(2)}) == 2
    with pytest.raises(TypeError):
        hash(Bag("a"))   # a mutable record is unhashable, as a mutable dataclass is
    assert repr(Point(1, 2, "l")) == repr(DataPoint(1, 2, "l")).replace("DataPoint", "Point")
    assert repr(Bag("a")) == "Bag(name='a', items=[], counts={})"
    assert Bag("a", ["x"]) == Bag("a", ["x"]) and Bag("a") != Bag("b")


def test_frozen_records_refuse_assignment() -> None:
    p = Point(1)
    with pytest.raises(FrozenRecordError):
        p.x = 2   # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y   # type: ignore[misc]
    b = Bag("a")
    b.name = "b"
    assert b.name == "b"


def test_a_class_keeps_the_methods_it_defines() -> None:
    class Own(Record, frozen=True):
        """Defines its own equality and hash."""
        a: int

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

        def __repr__(self) -> str:
            return "own"

    assert Own(1) == Own(2) and hash(Own(1)) == 7 and repr(Own(1)) == "own"


def test_post_init_runs() -> None:
    class Checked(Record):
        """Validates in __post_init__."""
        n: int

        def __post_init__(self) -> None:
            if self.n < 0:
                raise ValueError("negative")

    assert Checked(1).n == 1
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_declaration_errors_are_those_of_a_dataclass() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        class _Order(Record):
            a: int = 0
            b: int
    with pytest.raises(ValueError, match="mutable default"):
        class _Shared(Record):
            a: list = []   # noqa: RUF012 - the mistake under test
    with pytest.raises(ValueError, match="both default and default_factory"):
        field(default=1, default_factory=int)
    with pytest.raises(TypeError, match="frozen"):
        class _Mixed(Point):   # a mutable record over a frozen one
            z: int = 0


def test_the_standard_dataclass_functions_work_on_records() -> None:
    p = Point(1, 2, "l")
    assert dataclasses.is_dataclass(p) and dataclasses.is_dataclass(Point)
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y", "label"]
    assert dataclasses.fields(Point)[2].metadata["why"] == "display only"
    assert dataclasses.fields(Point)[2].compare is False
    assert dataclasses.asdict(p) == {"x": 1, "y": 2, "label": "l"} == dataclasses.asdict(DataPoint(1, 2, "l"))
    assert dataclasses.replace(p, y=5) == Point(1, 5) and dataclasses.replace(p, y=5).label == "l"

    @dataclasses.dataclass
    class Holder:
        """A dataclass holding records: asdict recurses into them."""
        points: list[Point]
        bag: Bag

    assert dataclasses.asdict(Holder([p], Bag("b", ["i"]))) == {
        "points": [{"x": 1, "y": 2, "label": "l"}], "bag": {"name": "b", "items": ["i"], "counts": {}}}
    assert dataclasses.fields(Bag)[1].default_factory is list


def test_asdict_gives_what_the_standard_one_gives() -> None:
    from collections import namedtuple
    from enum import Enum

    class Colour(Enum):
        RED = "red"

    pair = namedtuple("pair", "a b")

    class Nest(Record):
        """Records inside lists, tuples, dicts and a named tuple, beside an enum and a set."""
        points: list[Point]
        by_name: dict[str, Bag]
        both: tuple[Point, ...]
        named: tuple[int, int]
        colour: Colour
        seen: set[str]

    nest = Nest([Point(1, 2, "l")], {"b": Bag("b", ["i"])}, (Point(3),), pair(1, Point(4)), Colour.RED, {"s"})
    mine, theirs = asdict(nest), dataclasses.asdict(nest)
    assert mine == theirs
    assert type(mine["both"]) is tuple and type(mine["named"]) is pair and mine["colour"] is Colour.RED
    assert mine["seen"] == {"s"} and mine["seen"] is not nest.seen   # copied, as the standard one copies
    assert mine["by_name"]["b"]["items"] is not nest.by_name["b"].items
    with pytest.raises(TypeError):
        asdict(DataPoint(1))   # type: ignore[arg-type]


class Row(NamedTuple):
    """A row read from the index."""
    id: str
    level: int
    tags: list[str] = []   # noqa: RUF012 - a named tuple's default, as typing.NamedTuple takes it

    def label(self) -> str:
        return f"{self.id}@{self.level}"


def test_named_tuple_is_the_one_typing_makes() -> None:
    import typing

    class TypingRow(typing.NamedTuple):
        id: str
        level: int
        tags: list[str] = []   # noqa: RUF012

    row = Row("n_1", 2)
    assert Row._make(("n_1", 2, ["t"])).tags == ["t"]
    assert row == ("n_1", 2, []) == TypingRow("n_1", 2) and isinstance(row, tuple)
    assert Row._fields == TypingRow._fields and Row._field_defaults == TypingRow._field_defaults
    assert row.label() == "n_1@2" and Row.__doc__ == "A row read from the index." and Row.__qualname__ == "Row"
    assert row._replace(level=3).level == 3 and row._asdict() == {"id": "n_1", "level": 2, "tags": []}
    assert pickle.loads(pickle.dumps(row)) == row and Row.__module__ == __name__
    with pytest.raises(TypeError, match="follows"):
        class _Bad(NamedTuple):
            a: int = 0
            b: int
    with pytest.raises(TypeError):
        NamedTuple("Row", [("a", int)])


def test_replace_copy_and_pickle() -> None:
    b = Bag("a", ["x"])
    c = replace(b, name="c")
    assert c == Bag("c", ["x"]) and c.items is b.items and b.name == "a"
    assert replace(Point(1, 2, "l"), x=9) == Point(9, 2) and replace(Point(1, 2, "l"), x=9).label == "l"
    assert copy.deepcopy(b) == b and copy.deepcopy(b).items is not b.items
    assert copy.copy(Point(3)) == Point(3)
    assert pickle.loads(pickle.dumps(Point(4, 5, "p"))) == Point(4, 5)
    assert pickle.loads(pickle.dumps(Point(4, 5, "p"))).label == "p"


def test_defining_records_imports_neither_dataclasses_nor_typing() -> None:
    code = ("import sys\nfrom rose.typedrecord import Record, field\n"
            "class A(Record, frozen=True):\n    'doc'\n    a: int\n    b: list = field(default_factory=list)\n"
            "A(1) == A(1, []); hash(A(1, ())); repr(A(1))\n"
            "print(sorted(m for m in ('dataclasses', 'typing', 'inspect') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_type_hints_show_the_fields_alone() -> None:
    import typing

    assert list(typing.get_type_hints(Point)) == ["x", "y", "label"]


def test_a_class_built_often_gets_its_own_init_that_behaves_the_same() -> None:
    class Many(Record):
        """Built often enough to be specialised."""
        a: int
        b: list[int] = field(default_factory=list)
        c: str = "c"

        def __post_init__(self) -> None:
            self.checked = True

    class More(Many):
        """A subclass: never runs its base's specialised __init__ (which sets only the base's fields)."""
        d: int = 4

    class Still(Record, frozen=True):
        """A frozen one, specialised too."""
        a: int
        b: tuple[int, ...] = ()

    generic = Many.__init__
    for i in range(SPECIALISE_AFTER + 1):
        Many(i)
        Still(i)
    assert Many.__init__ is not generic and Still.__init__ is not generic and More.__init__ is generic
    m = Many(1)
    assert (m.a, m.b, m.c, m.checked) == (1, [], "c", True) and Many(1).b is not m.b
    assert Many(1, [2], c="x") == Many(a=1, b=[2], c="x") and list(vars(m)) == ["a", "b", "c", "checked"]
    assert More(1).d == 4 and More(1, d=5) == More(1, [], "c", 5) and More(1).checked
    s = Still(3)
    assert s == Still(3, ()) and hash(s) == hash((3, ()))
    with pytest.raises(FrozenRecordError):
        s.a = 4   # type: ignore[misc]
    for bad in (lambda: Many(), lambda: Many(1, a=2), lambda: Many(1, z=2), lambda: Still(1, (), 3)):
        with pytest.raises(TypeError):
            bad()   # type: ignore[no-untyped-call]
