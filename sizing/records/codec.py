"""Frozen dataclasses to JSON and back: the one place a stored record's keys are spelled.

A record class is a frozen dataclass whose fields are JSON values, other record classes,
or lists, tuples and string-keyed dicts of them. :func:`dump` gives its JSON object (a
field that is None or an empty list or mapping is left out); :func:`load` reads one back,
leniently: a key the class does not know is kept, verbatim, in the record's field declared
with ``verbatim()`` when it has one (another sizing, or a host script of another version,
wrote it; nothing is lost when the record is written again), a value of the wrong JSON
type is dropped to the field's default (a damaged or foreign row reads as "not
recorded", never as a crash). A field declared with ``flat()`` is a group of fields
stored at its parent's level: the stored shape stays flat while the code reads
``meta.env.kernel``. A record class with a ``kind_of(data)`` classmethod of its own is
read as the subclass that method names (a record of several kinds, told apart by their
keys).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import TypeVar, cast, get_args, get_origin

__all__ = ["dump", "dump_object", "flat", "load", "verbatim"]

T = TypeVar("T")

FLAT = "records.flat"
VERBATIM = "records.verbatim"


# A reader of one stored value: the value as its field's type, or _Wrong.
Reader = Callable[[object], object]


def flat(cls: type[T]) -> T:
    """A group of fields stored at the parent's level (see the module)."""
    field: T = dataclasses.field(default_factory=cls, metadata={FLAT: True})
    return field


def verbatim() -> dict[str, object]:
    """The field that keeps, as read, the keys its record does not declare (see the
    module): foreign data, never what this sizing writes."""
    field: dict[str, object] = dataclasses.field(default_factory=dict, metadata={VERBATIM: True})
    return field


@cache
def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


@cache
def _fields(cls: type) -> tuple[dataclasses.Field[object], ...]:
    return dataclasses.fields(cls)


def dump_object(record: object) -> dict[str, object]:
    """A record's JSON object (:func:`dump` of a dataclass)."""
    out = dump(record)
    if not isinstance(out, dict):
        raise TypeError(f"{type(record).__name__} is not a record")
    return out


def dump(obj: object) -> object:
    """The JSON value of a record (or of any JSON-ready value holding records)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, object] = {}
        for f in _fields(type(obj)):
            value = getattr(obj, f.name)
            if f.metadata.get(FLAT):
                out.update(dump_object(value))
            elif f.metadata.get(VERBATIM):
                out.update({k: v for k, v in value.items() if k not in out})
            elif value is not None and not _empty(value):
                out[f.name] = dump(value)
        return out
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Mapping):
        return {str(k): dump(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [dump(v) for v in obj]
    return obj


def _empty(value: object) -> bool:
    return isinstance(value, list | tuple | dict) and not value


class _Wrong(ValueError):
    """A stored value of another JSON type than its field's (or a record lacking a field it
    cannot do without)."""


def _convert(tp: object, v: object) -> object:
    """``v`` read as a value of type ``tp``, or :class:`_Wrong`."""
    return _converter(tp)(v)


def _same(v: object) -> object:
    return v


@cache
def _converter(tp: object) -> Reader:  # noqa: C901, PLR0911 - one per JSON type
    """How a stored value of type ``tp`` is read (:func:`_convert`): decided once per type,
    not per value (a results database holds thousands of records, each read the same).
    A field declared ``object`` is kept as stored."""
    origin = get_origin(tp)
    if tp is object:
        return _same
    if origin in (typing.Union, types.UnionType):
        args = get_args(tp)
        nullable = type(None) in args
        each = [_converter(arg) for arg in args if arg is not type(None)]

        def union(v: object) -> object:
            if v is None and nullable:
                return None
            for conv in each:
                try:
                    return conv(v)
                except _Wrong:
                    continue
            raise _Wrong

        return union
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        record: type = tp

        def nested(v: object) -> object:
            if v is None or not isinstance(v, Mapping):
                raise _Wrong
            return load(record, v)

        return nested
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        kind: type[enum.Enum] = tp

        def member(v: object) -> object:
            if v is None:
                raise _Wrong
            try:
                return kind(v)
            except ValueError:
                raise _Wrong from None

        return member
    if origin in (list, tuple):
        args = get_args(tp)
        inner = _converter(args[0]) if args else _same
        as_tuple = origin is tuple

        def sequence(v: object) -> object:
            if v is None or not isinstance(v, list | tuple):
                raise _Wrong
            items = [inner(x) for x in v]
            return tuple(items) if as_tuple else items

        return sequence
    if origin in (dict, Mapping):
        value = _converter(get_args(tp)[1]) if get_args(tp) else _same

        def mapping(v: object) -> object:
            if v is None or not isinstance(v, Mapping):
                raise _Wrong
            return {str(k): value(x) for k, x in v.items()}

        return mapping
    return _SCALARS.get(tp, _present)


def _present(v: object) -> object:
    if v is None:
        raise _Wrong
    return v


def _bool(v: object) -> bool:
    if isinstance(v, bool):
        return v
    raise _Wrong


def _float(v: object) -> float:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    raise _Wrong


def _int(v: object) -> int:
    if isinstance(v, int | float) and not isinstance(v, bool) and float(v).is_integer():
        return int(v)
    raise _Wrong


def _str(v: object) -> str:
    if isinstance(v, str):
        return v
    raise _Wrong


_SCALARS: dict[object, Reader] = {bool: _bool, float: _float, int: _int, str: _str}


def load(cls: type[T], data: Mapping[str, object]) -> T:
    """The record ``cls`` read from its JSON object ``data`` (see the module)."""
    record: type = cls  # a dataclass type: hashable, whatever the cache's signature says
    if "kind_of" in vars(record):
        record = record.kind_of(data)  # type: ignore[attr-defined]  # the check above
    plain, groups, keep = _plan(record)
    kwargs: dict[str, object] = {name: load(group, data) for name, group in groups}
    for name, value in data.items():
        conv = plain.get(name)
        if conv is None:
            continue
        try:
            kwargs[name] = conv(value)
        except _Wrong:
            continue  # the field's default: a value of another shape reads as unrecorded
    if keep is not None:
        known = _keys(record)
        kwargs[keep] = {k: v for k, v in data.items() if k not in known}
    try:
        return cast(T, record(**kwargs))
    except TypeError:  # a required field is missing: the record cannot be read
        raise _Wrong from None


@cache
def _plan(
    cls: type,
) -> tuple[dict[str, Reader], tuple[tuple[str, type], ...], str | None]:
    """How :func:`load` reads ``cls``, once per class: its stored fields by name with
    their readers, its flat groups (name, class), and its ``verbatim()`` field's name."""
    hints = _hints(cls)
    plain: dict[str, Reader] = {}
    groups: list[tuple[str, type]] = []
    keep: str | None = None
    for f in _fields(cls):
        if f.metadata.get(FLAT):
            groups.append((f.name, _record_type(hints[f.name])))
        elif f.metadata.get(VERBATIM):
            keep = f.name
        else:
            plain[f.name] = _converter(hints[f.name])
    return plain, tuple(groups), keep


def _record_type(hint: object) -> type:
    """A flat group's declared type: a record class."""
    if not isinstance(hint, type):
        raise TypeError(f"a flat() field holds a record class, not {hint!r}")
    return hint


@cache
def _keys(cls: type) -> frozenset[str]:
    """Every stored key of ``cls``, its flat groups' included."""
    hints = _hints(cls)
    out: set[str] = set()
    for f in _fields(cls):
        if f.metadata.get(FLAT):
            out |= _keys(_record_type(hints[f.name]))
        elif not f.metadata.get(VERBATIM):
            out.add(f.name)
    return frozenset(out)
