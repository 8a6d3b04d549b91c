"""`Record`: rose's typed record base, a dataclass that generates no code when its class is made.

`@dataclass` writes and `exec`s an `__init__`, `__repr__` and `__eq__` per class, and importing `dataclasses` loads
`inspect` (with `ast`, `dis`, `tokenize`): at about 0.45 ms a class, the 46 records on the prompt path were a fifth
of a prompt answered in its own process (docs/benchmarks.md). A `Record` subclass reads its annotations once, in
`__init_subclass__`, into a tuple of names, and shares one `__init__`, `__eq__`, `__repr__` (and, frozen, `__hash__`
and `__setattr__`) written here, with the semantics of `@dataclass` / `@dataclass(frozen=True)`: fields in
annotation order (a base record's first), defaults and `field(default_factory=...)`, `compare=False`, metadata, a
`__post_init__` when defined, equality only between instances of the same class, a frozen record's hash of its
compared fields and a non-frozen one unhashable, and a method the class defines itself kept. A class built
SPECIALISE_AFTER times in one process then compiles the `__init__` @dataclass would have written (a command that
builds 50,000 index rows); a prompt's process builds most records a few times.

The type checker sees a dataclass (`dataclass_transform` under TYPE_CHECKING), so construction is checked. The
standard library's `dataclasses.fields`, `asdict`, `replace` and `is_dataclass` work on records too: the first
time one asks for `__dataclass_fields__`, `dataclasses` is imported and the equal `Field`s are built (by
`@dataclass` itself, on a shadow class of the same fields), so nothing off the hot path needs to know the
difference. Code on the prompt path uses `fields` and `replace` from here.

`NamedTuple` here is `typing.NamedTuple` without importing `typing` (a few ms a command): `class Row(NamedTuple)`
with annotated fields makes the `collections.namedtuple` typing would make, its methods and docstring kept.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform
    from typing import NamedTuple as NamedTuple   # re-exported: the checker sees typing's own

    R = TypeVar("R", bound="Record")
else:
    def dataclass_transform(**_kwargs):
        return lambda cls: cls


class _Missing:
    """No default given (the sentinel `dataclasses.MISSING` is, for records)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenRecordError(AttributeError):
    """A field of a frozen record was assigned or deleted (`dataclasses.FrozenInstanceError`, for records)."""


class Field:
    """One declared field: its name, its default or default factory, whether it is compared, its metadata."""

    __slots__ = ("annotation", "compare", "default", "default_factory", "metadata", "name")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, compare: bool = True,
                 metadata: dict[str, Any] | None = None):
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.metadata: dict[str, Any] = dict(metadata) if metadata else {}
        self.annotation: Any = None

    def __repr__(self) -> str:
        return (f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r}, "
                f"compare={self.compare!r}, metadata={self.metadata!r})")


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | Any = MISSING, compare: bool = True,
          metadata: dict[str, Any] | None = None) -> Any:
    """A field with a default factory, `compare=False` or metadata (what `dataclasses.field` says, for records)."""
    return Field(default, default_factory, compare, metadata)


@dataclass_transform(field_specifiers=(field, Field))
class Record:
    """Subclass with annotated fields; `class Point(Record, frozen=True)` for a frozen one."""

    __slots__ = ()
    if TYPE_CHECKING:   # annotated for the type checker only: typing.get_type_hints of a record shows its fields alone
        __record_fields__: tuple[Field, ...]
        __record_names__: tuple[str, ...]
        __record_frozen__: bool
        __record_position__: dict[str, int]
        __record_post_init__: Callable[[Any], None] | None
    __record_fields__ = ()
    __record_names__ = ()
    __record_frozen__ = False
    __record_position__ = {}   # noqa: RUF012 - a class constant, replaced per subclass
    __record_post_init__ = None

    def __init_subclass__(cls, *, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        inherited: dict[str, Field] = {}
        for base in reversed(cls.__mro__[1:]):
            if not base.__dict__.get("__record_fields__"):
                continue
            if base.__dict__["__record_frozen__"] != frozen:
                raise TypeError(f"{cls.__qualname__}: a frozen record cannot inherit from a non-frozen one, "
                                "nor the other way round")
            for f in base.__dict__["__record_fields__"]:
                inherited[f.name] = f
        own = cls.__dict__.get("__annotations__", {})   # noqa: RUF063 - the class's own, unevaluated: inspect is what this avoids
        for name, annotation in own.items():
            if _is_classvar(annotation):
                continue
            value = cls.__dict__.get(name, MISSING)
            spec = value if isinstance(value, Field) else Field(default=value)
            if isinstance(spec.default, (list, dict, set)):
                raise ValueError(f"mutable default {type(spec.default)} for field {name} is not allowed: "
                                 "use default_factory")
            spec.name = name
            spec.annotation = annotation
            if spec.default is MISSING:
                if name in cls.__dict__:
                    delattr(cls, name)   # a factory's field has no class attribute, as with @dataclass
            else:
                setattr(cls, name, spec.default)
            inherited.pop(name, None)
            inherited[name] = spec
        specs = tuple(inherited.values())
        seen_default = False
        for f in specs:
            if f.default is MISSING and f.default_factory is MISSING:
                if seen_default:
                    raise TypeError(f"{cls.__qualname__}: non-default argument {f.name!r} follows default argument")
            else:
                seen_default = True
        cls.__record_fields__ = specs
        cls.__record_names__ = tuple(f.name for f in specs)
        cls.__record_position__ = {name: i for i, name in enumerate(cls.__record_names__)}
        cls.__record_post_init__ = getattr(cls, "__post_init__", None)   # looked up once, not per instance
        cls.__record_frozen__ = frozen
        cls.__match_args__ = cls.__record_names__   # type: ignore[attr-defined,misc]  # as @dataclass sets it
        body = cls.__dict__
        if "__init__" not in body:   # its own, never a base record's specialised one (which sets only its fields)
            cls.__init__ = Record.__init__   # type: ignore[method-assign]
        explicit_hash = "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)
        if frozen:
            if "__setattr__" in body or "__delattr__" in body:
                raise TypeError(f"{cls.__qualname__}: a frozen record cannot define __setattr__ or __delattr__")
            cls.__setattr__ = _frozen_setattr   # type: ignore[method-assign,assignment]
            cls.__delattr__ = _frozen_delattr   # type: ignore[method-assign,assignment]
        if not explicit_hash:
            cls.__hash__ = _hash if frozen else None   # type: ignore[method-assign,assignment]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = self.__class__
        names = cls.__record_names__
        values = self.__dict__
        given = len(args)
        if given == len(names) and not kwargs:   # every field, in order: what the index's rows do
            values.update(zip(names, args))
        else:
            if given > len(names):
                raise TypeError(f"{cls.__qualname__}.__init__() takes {len(names) + 1} positional arguments but "
                                f"{given + 1} were given")
            position = cls.__record_position__
            for key in kwargs:
                at = position.get(key)
                if at is None:
                    raise TypeError(f"{cls.__qualname__}.__init__() got an unexpected keyword argument {key!r}")
                if at < given:
                    raise TypeError(f"{cls.__qualname__}.__init__() got multiple values for argument {key!r}")
            values.update(zip(names, args))
            missing = []
            for f in cls.__record_fields__[given:]:
                if f.name in kwargs:
                    values[f.name] = kwargs[f.name]
                elif f.default is not MISSING:
                    values[f.name] = f.default
                elif f.default_factory is not MISSING:
                    values[f.name] = f.default_factory()
                else:
                    missing.append(f.name)
            if missing:
                values.clear()
                raise TypeError(f"{cls.__qualname__}.__init__() missing {len(missing)} required positional argument"
                                f"{'s' if len(missing) > 1 else ''}: " + ", ".join(repr(m) for m in missing))
        if cls.__record_post_init__ is not None:
            cls.__record_post_init__(self)
        built = _BUILT[cls] = _BUILT.get(cls, 0) + 1
        if built == SPECIALISE_AFTER:
            _specialise(cls)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__class__.__record_names__)
        return f"{self.__class__.__qualname__}({inner})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _compared(self) == _compared(other)


# A class built this many times in one process gets an __init__ of its own, compiled as @dataclass writes it
# (`self.a = a` per field: about a third of the generic one's cost, which matters to a command that builds 50,000
# index rows); a prompt's process builds most records a few times and compiles none, or one.
SPECIALISE_AFTER = 32
_BUILT: dict[type, int] = {}


def _specialise(cls: type) -> None:
    specs = cls.__record_fields__   # type: ignore[attr-defined]
    frozen = cls.__record_frozen__   # type: ignore[attr-defined]
    post = cls.__record_post_init__   # type: ignore[attr-defined]
    names: dict[str, Any] = {"__record_missing__": MISSING, "__record_set__": object.__setattr__,
                             "__record_post__": post}
    params, lines = [], []
    for i, f in enumerate(specs):
        value = f.name
        if f.default is not MISSING:
            names[f"__record_default_{i}__"] = f.default
            params.append(f"{f.name}=__record_default_{i}__")
        elif f.default_factory is not MISSING:
            names[f"__record_factory_{i}__"] = f.default_factory
            params.append(f"{f.name}=__record_missing__")
            value = f"__record_factory_{i}__() if {f.name} is __record_missing__ else {f.name}"
        else:
            params.append(f.name)
        lines.append(f"    __record_set__(__record_self__, {f.name!r}, {value})" if frozen
                     else f"    __record_self__.{f.name} = {value}")
    if post is not None:
        lines.append("    __record_post__(__record_self__)")
    source = f"def __init__(__record_self__, {', '.join(params)}):\n" + ("\n".join(lines) or "    pass") + "\n"
    exec(source, names)   # noqa: S102 - built from the class's own field names (identifiers) alone
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init   # type: ignore[misc]


class _DataclassFields:
    """`Cls.__dataclass_fields__` (a class attribute the stdlib reads): built on first use, then kept on the class."""

    def __get__(self, obj: object, owner: type) -> dict[str, Any]:
        return _dataclass_fields(owner if obj is None else type(obj))


def _dataclass_fields(cls: type) -> dict[str, Any]:
    cached = cls.__dict__.get("_record_dataclass_fields")
    if cached is not None:
        return cached
    import dataclasses

    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": cls.__module__,
                                 "__qualname__": cls.__qualname__, "__doc__": cls.__doc__ or cls.__qualname__}
    for f in cls.__record_fields__:   # type: ignore[attr-defined]
        namespace["__annotations__"][f.name] = f.annotation
        namespace[f.name] = dataclasses.field(default=f.default if f.default is not MISSING else dataclasses.MISSING,
                                              default_factory=(f.default_factory if f.default_factory is not MISSING
                                                               else dataclasses.MISSING),
                                              compare=f.compare, metadata=f.metadata or None)
    shadow: Any = dataclasses.dataclass(frozen=cls.__record_frozen__)(type(cls.__name__, (), namespace))   # type: ignore[attr-defined]
    made = dict(shadow.__dataclass_fields__)
    type.__setattr__(cls, "_record_dataclass_fields", made)
    return made


# a class attribute (the stdlib asks the class: hasattr(type(obj), "__dataclass_fields__")), read lazily
Record.__dataclass_fields__ = _DataclassFields()   # type: ignore[attr-defined]


def _is_classvar(annotation: Any) -> bool:
    """As @dataclass decides it for a string annotation (every module here has `from __future__ import
    annotations`); an evaluated one by its repr, so that typing need not be imported to ask."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _compared(record: Record) -> tuple[Any, ...]:
    return tuple([getattr(record, f.name) for f in record.__class__.__record_fields__ if f.compare])


def _hash(self: Record) -> int:
    return hash(_compared(self))


def _frozen_setattr(self: Record, name: str, value: Any) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Record, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r}")


def fields(record_or_class: Record | type[Record]) -> tuple[Field, ...]:
    """The declared fields, in order (`dataclasses.fields`, for records)."""
    cls = record_or_class if isinstance(record_or_class, type) else type(record_or_class)
    return cls.__record_fields__


def replace(record: R, /, **changes: Any) -> R:
    """A copy with some fields changed (`dataclasses.replace`, for records): built by its own `__init__`."""
    for name in record.__class__.__record_names__:
        if name not in changes:
            changes[name] = getattr(record, name)
    return record.__class__(**changes)



_ATOMIC = (str, int, float, bool, bytes, type(None))


def asdict(record: Record) -> dict[str, Any]:
    """The record as a dict, records inside it (and in its lists, tuples and dicts) too (`dataclasses.asdict`, for
    records): other values deep-copied, which leaves text, numbers and enums as they are."""
    if not isinstance(record, Record):
        raise TypeError("asdict() should be called on record instances")
    return _as_plain(record)


def _as_plain(value: Any) -> Any:
    if value.__class__ in _ATOMIC:
        return value
    if isinstance(value, Record):
        return {name: _as_plain(getattr(value, name)) for name in value.__class__.__record_names__}
    if isinstance(value, tuple) and hasattr(value, "_fields"):   # a named tuple, rebuilt field by field
        return value.__class__(*[_as_plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return value.__class__(_as_plain(v) for v in value)
    if isinstance(value, dict):
        return value.__class__((_as_plain(k), _as_plain(v)) for k, v in value.items())
    import copy   # only for what is neither a record, a container nor a scalar

    return copy.deepcopy(value)


if not TYPE_CHECKING:
    class _NamedTupleMeta(type):
        """Makes `class Row(NamedTuple): ...` a collections.namedtuple, as typing.NamedTuple does."""

        def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
            from collections import namedtuple

            names = [n for n, a in namespace.get("__annotations__", {}).items() if not _is_classvar(a)]
            defaults = [namespace[n] for n in names if n in namespace]
            if any(n not in namespace for n in names[len(names) - len(defaults):]):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            made = namedtuple(name, names, defaults=defaults or None, module=namespace.get("__module__"))
            made.__annotations__ = dict(namespace.get("__annotations__", {}))
            made.__qualname__ = namespace.get("__qualname__", name)
            if namespace.get("__doc__"):
                made.__doc__ = namespace["__doc__"]
            for key, value in namespace.items():   # methods, properties, class constants
                if key not in names and key not in ("__annotations__", "__module__", "__qualname__", "__doc__"):
                    setattr(made, key, value)
            return made

    def NamedTuple(*_args: Any, **_kwargs: Any) -> Any:   # noqa: N802 - named as typing's
        raise TypeError("subclass NamedTuple (class Row(NamedTuple): ...); the functional form is typing's")

    _NamedTupleBase = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})
    NamedTuple.__mro_entries__ = lambda bases: (_NamedTupleBase,)
