"""The record reader decides once per type how a stored value is read
(:func:`sizing.records.codec._converter`, :func:`~sizing.records.codec._plan`): over
generated JSON objects (every stored key of a record class, each either absent, its value
from a real record or any JSON value) it reads exactly what the per-value reader it
replaced read (kept below as the definition), and refuses exactly what that one refused.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing import records
from sizing.records import codec
from sizing.records.codec import FLAT, VERBATIM, _hints, _keys, _Wrong

# the record classes a results database holds, and those they nest
CLASSES = [
    records.PointMeta,
    records.HostRecord,
    records.RunOptionsRecord,
    records.LatencyRecord,
    records.KvmSettings,
    records.EsxiSettings,
    records.ContainerSettings,
    records.BaremetalSettings,
    records.GatewayChecks,
    records.Guards,
    records.CpuWindow,
    records.MergedLatencyRecord,
]


def _ref_convert(tp: Any, v: Any) -> Any:  # noqa: C901, PLR0911 - the definition, as it was
    origin = get_origin(tp)
    if tp is Any:
        return v
    if origin in (typing.Union, types.UnionType):
        args = get_args(tp)
        if v is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _ref_convert(arg, v)
            except _Wrong:
                continue
        raise _Wrong
    if v is None:
        raise _Wrong
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(v, Mapping):
            raise _Wrong
        return _ref_load(tp, v)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(v)
        except ValueError:
            raise _Wrong from None
    if origin in (list, tuple):
        if not isinstance(v, list | tuple):
            raise _Wrong
        args = get_args(tp)
        inner = args[0] if args else Any
        items = [_ref_convert(inner, x) for x in v]
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping):
        if not isinstance(v, Mapping):
            raise _Wrong
        vt = get_args(tp)[1] if get_args(tp) else Any
        return {str(k): _ref_convert(vt, x) for k, x in v.items()}
    number = isinstance(v, int | float) and not isinstance(v, bool)
    if tp is bool:
        if isinstance(v, bool):
            return v
        raise _Wrong
    if tp is float:
        if number:
            return float(v)
        raise _Wrong
    if tp is int:
        if number and float(v).is_integer():
            return int(v)
        raise _Wrong
    if tp is str:
        if isinstance(v, str):
            return v
        raise _Wrong
    return v


def _ref_load(cls: Any, data: Mapping[str, Any]) -> Any:
    record: Any = cls
    if "kind_of" in vars(record):
        record = record.kind_of(data)
    hints = _hints(record)
    kwargs: dict[str, Any] = {}
    known: set[str] = set()
    keep: str | None = None
    for f in dataclasses.fields(record):
        if f.metadata.get(FLAT):
            kwargs[f.name] = _ref_load(hints[f.name], data)
            known |= _keys(hints[f.name])
            continue
        if f.metadata.get(VERBATIM):
            keep = f.name
            continue
        known.add(f.name)
        if f.name not in data:
            continue
        try:
            kwargs[f.name] = _ref_convert(hints[f.name], data[f.name])
        except _Wrong:
            continue
    if keep is not None:
        kwargs[keep] = {k: v for k, v in data.items() if k not in known}
    try:
        return record(**kwargs)
    except TypeError:
        raise _Wrong from None


json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "on", "off", "wrk", "baremetal", "kvm", "measured", "x"]),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


def _nested(tp: Any) -> Any:
    """The record class a field holds (itself, or in an Optional), else None."""
    for arg in (tp, *get_args(tp)):
        if dataclasses.is_dataclass(arg) and isinstance(arg, type):
            return arg
    return None


def _object(draw: st.DrawFn, cls: Any, depth: int) -> dict[str, Any]:
    """A JSON object for ``cls``: each stored key absent, any JSON value, or (a nested
    record's key) an object of that record."""
    keys = sorted(_keys(cls))
    hints = {f.name: _hints(cls)[f.name] for f in dataclasses.fields(cls)}
    data: dict[str, Any] = {}
    if keys:
        for key in draw(st.lists(st.sampled_from(keys), unique=True, max_size=len(keys))):
            inner = _nested(hints.get(key, Any))
            if inner is not None and depth < 2 and draw(st.booleans()):
                data[key] = _object(draw, inner, depth + 1)
            else:
                data[key] = draw(json_value)
    for extra in draw(st.lists(st.text(min_size=1, max_size=6), max_size=2)):
        data.setdefault(extra, draw(json_value))
    return data


@st.composite
def stored(draw: st.DrawFn) -> tuple[Any, dict[str, Any]]:
    """A record class and a JSON object for it (:func:`_object`)."""
    cls = draw(st.sampled_from(CLASSES))
    return cls, _object(draw, cls, 0)


def _read(reader: Any, cls: Any, data: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "read", reader(cls, data)
    except _Wrong:
        return "refused", None


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stored())
def test_the_reader_reads_what_the_per_value_reader_read(case: tuple[Any, dict[str, Any]]) -> None:
    cls, data = case
    assert _read(codec.load, cls, data) == _read(_ref_load, cls, data)


@pytest.mark.parametrize("cls", CLASSES)
def test_a_dumped_record_reads_back_alike(cls: Any) -> None:
    """Each class' default record, dumped, reads back equal by both readers."""
    try:
        made = cls()
    except TypeError:
        pytest.skip(f"{cls.__name__} has required fields")
    data = records.dump(made)
    assert codec.load(cls, data) == _ref_load(cls, data) == made


def test_a_stored_histogram_is_a_record_and_its_json_is_the_histograms() -> None:
    """``latency_histogram`` is typed (no ``Any`` in what sizing writes): a window's merged
    histogram is stored as :meth:`Histogram.to_json` wrote it, and reads back as a record
    (a row stored before, as that same JSON, reads the same)."""
    from sizing.load.latency import Histogram, bucket_of
    from sizing.records import HistogramRecord, SampleMeta

    hist = Histogram(
        count=3, sum_ms=6.5, min_ms=1.0, max_ms=4.5, buckets={bucket_of(1.0): 1, bucket_of(4.5): 2}
    )
    meta = SampleMeta(latency_histogram=HistogramRecord.parse(hist.to_json()))
    stored = meta.to_json()
    assert stored["latency_histogram"] == hist.to_json()
    back = SampleMeta.parse(stored)
    assert back == meta and back.latency_histogram is not None
    assert Histogram.from_json(records.dump(back.latency_histogram)) == hist
