"""Typed msgspec structs for Chrome-trace events: only the fields rocanalyze reads are decoded.

Two decoders: the typed one (fast path) and a lenient one (every field `Any`) for traces whose
writers put strings where numbers belong (rocprof v1 writes `"ts": "3497798450324"`). Both give
objects with the same attribute names; `numbers()` turns either kind of value into floats.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pandas as pd

from rocanalyze.traces.jsonstream import JSON_ERRORS

_RAW = msgspec.Raw()


class Args(msgspec.Struct, gc=False, frozen=True):
    """The `args` keys rocanalyze uses (Kineto names; rocprof v1 JSON's BeginNs/EndNs)."""

    external_id: int | None = msgspec.field(name="External id", default=None)
    correlation: int | None = None
    device: int | None = None
    stream: int | str | None = None
    grid: list[int] | None = None
    block: list[int] | None = None
    shared_memory: int | None = msgspec.field(name="shared memory", default=None)
    registers: int | None = msgspec.field(name="registers per thread", default=None)
    bytes: int | str | None = None
    kind: str | int | None = None
    # recorded inputs stay raw JSON here: they repeat step after step and are decoded once each
    dims: msgspec.Raw = msgspec.field(name="Input Dims", default=_RAW)
    types: msgspec.Raw = msgspec.field(name="Input type", default=_RAW)
    strides: msgspec.Raw = msgspec.field(name="Input Strides", default=_RAW)
    concrete: msgspec.Raw = msgspec.field(name="Concrete Inputs", default=_RAW)
    flops: float | None = None
    py_id: int | None = msgspec.field(name="Python id", default=None)
    py_parent: int | None = msgspec.field(name="Python parent id", default=None)
    rank: int | None = None
    name: str | None = None          # metadata events: process_name / thread_name
    begin_ns: int | str | None = msgspec.field(name="BeginNs", default=None)   # rocprof v1 JSON
    end_ns: int | str | None = msgspec.field(name="EndNs", default=None)


_NO_ARGS = Args()


class Event(msgspec.Struct, gc=False):
    """One Chrome-trace event with the fields rocanalyze reads."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = 0.0
    dur: float = 0.0
    id: int | str | None = None
    args: Args = _NO_ARGS


class LenientArgs(msgspec.Struct, gc=False, frozen=True):
    external_id: Any = msgspec.field(name="External id", default=None)
    correlation: Any = None
    device: Any = None
    stream: Any = None
    grid: Any = None
    block: Any = None
    shared_memory: Any = msgspec.field(name="shared memory", default=None)
    registers: Any = msgspec.field(name="registers per thread", default=None)
    bytes: Any = None
    kind: Any = None
    dims: msgspec.Raw = msgspec.field(name="Input Dims", default=_RAW)
    types: msgspec.Raw = msgspec.field(name="Input type", default=_RAW)
    strides: msgspec.Raw = msgspec.field(name="Input Strides", default=_RAW)
    concrete: msgspec.Raw = msgspec.field(name="Concrete Inputs", default=_RAW)
    flops: Any = None
    py_id: Any = msgspec.field(name="Python id", default=None)
    py_parent: Any = msgspec.field(name="Python parent id", default=None)
    rank: Any = None
    name: Any = None
    begin_ns: Any = msgspec.field(name="BeginNs", default=None)
    end_ns: Any = msgspec.field(name="EndNs", default=None)


_NO_LENIENT = LenientArgs()


class LenientEvent(msgspec.Struct, gc=False):
    ph: Any = ""
    cat: Any = ""
    name: Any = ""
    pid: Any = 0
    tid: Any = 0
    ts: Any = 0.0
    dur: Any = 0.0
    id: Any = None
    args: LenientArgs | None = _NO_LENIENT


_TYPED = msgspec.json.Decoder(list[Event])
_LENIENT = msgspec.json.Decoder(list[LenientEvent])


def decode_events(body: bytes) -> list[Any]:
    """Events of a JSON array; typed when the trace follows Kineto's types, lenient otherwise."""
    try:
        return _TYPED.decode(body)
    except msgspec.ValidationError:
        events = _LENIENT.decode(body)
    for e in events:  # "args": null, and names or categories that are not strings
        if e.args is None:
            e.args = _NO_LENIENT
        if not isinstance(e.name, str):
            e.name = "" if e.name is None else str(e.name)
        if not isinstance(e.cat, str):
            e.cat = "" if e.cat is None else str(e.cat)
    return events


def numbers(values: list[Any], default: float = np.nan) -> np.ndarray:
    """float64 array from ints/floats/numeric strings/None (None and junk -> default)."""
    try:
        out = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        out = np.array([_num(v, default) for v in values], dtype=np.float64)
    if default == default:  # not NaN: replace the NaNs np.array made of None
        out[np.isnan(out)] = default
    return out


def _num(value: Any, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def integers(values: list[Any], default: int = -1) -> np.ndarray:
    """int64 array from ints (or numeric strings / hex strings like '0x0'); None -> default."""
    try:
        return np.array([default if v is None else v for v in values], dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.array([_int(v, default) for v in values], dtype=np.int64)


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool) or value is None:
        return default
    if isinstance(value, int):
        return value
    try:
        text = str(value).strip()
        return int(text, 16) if text.lower().startswith("0x") else int(float(text))
    except (TypeError, ValueError, OverflowError):
        return default


def us_to_ns(values: np.ndarray) -> np.ndarray:
    """Microseconds (float, 3 decimals as Kineto writes them) -> integer ns without float error.

    Whole µs and the fraction are converted apart, so the result is exact while the float keeps
    the 3 decimals (|ts| < 2^43 µs, about 100 days of uptime clock); NaN -> 0.
    """
    values = np.nan_to_num(values, nan=0.0)
    whole = np.floor(values)
    return whole.astype(np.int64) * 1000 + np.rint((values - whole) * 1000.0).astype(np.int64)


def decode_inputs(texts: list[bytes]) -> list[np.ndarray]:
    """Recorded inputs, one text per op (dims, types, strides, concrete raw JSON joined by NUL) -> 4 object
    arrays (shapes, dtypes, strides, concrete); each distinct text is decoded once (steps repeat)."""
    codes, uniques = pd.factorize(np.asarray(texts + [b""], dtype=object)[:-1])
    parts = [np.empty(len(uniques), dtype=object) for _ in range(4)]
    for u, text in enumerate(uniques):
        # NUL never occurs in JSON text, so the split is exact
        for i, piece in enumerate(text.split(b"\x00")[:4]):
            try:
                parts[i][u] = msgspec.json.decode(piece) if piece else None
            except JSON_ERRORS:
                parts[i][u] = None
    return [p[codes] if len(codes) else np.empty(0, dtype=object) for p in parts]
