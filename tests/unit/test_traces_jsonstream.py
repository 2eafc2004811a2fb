"""The streaming event-array cutter agrees with json.loads on awkward documents, at tiny block sizes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import pytest

from rocanalyze.errors import UserError
from rocanalyze.traces.jsonstream import EventArray

_DECODE = msgspec.json.Decoder(list[dict]).decode


def _events(doc: bytes, block: int) -> tuple[list[dict], dict]:
    array = EventArray(io.BytesIO(doc), Path("t.json"), _DECODE, block=block)
    events = [e for batch in array for e in batch]
    return events, json.loads(array.rest) if array.rest.strip() else {}


# names full of what fools a naive cutter: `}, {`, escaped quotes, backslashes, brackets
_NASTY = [
    {"ph": "X", "name": 'void f<{lambda()#1}, {lambda(int)#2}>(int)', "ts": 1.5, "dur": 0.25},
    {"ph": "X", "name": 'quote \\" and "}, {" inside', "ts": 2, "args": {"k": [[1, 2], []]}},
    {"ph": "X", "name": "backslash at end \\\\", "ts": 3, "args": {"Input Dims": [[512], [141, 512]]}},
    {"ph": "i", "name": "]}],[{", "ts": 4},
    {},
]


@pytest.mark.parametrize("block", [7, 16, 64, 1 << 20])
@pytest.mark.parametrize("layout", ["kineto", "array", "events_last", "pretty"])
def test_matches_json_loads(block: int, layout: str) -> None:
    events = _NASTY * 5
    if layout == "kineto":
        doc = json.dumps({"schemaVersion": 1, "traceEvents": events, "traceName": "x"})
    elif layout == "array":
        doc = json.dumps(events)
    elif layout == "events_last":
        doc = json.dumps({"deviceProperties": [{"id": 0, "warpSize": 64}], "traceEvents": events})
    else:
        doc = json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}, indent=2)
    got, rest = _events(doc.encode(), block)
    assert got == json.loads(doc)["traceEvents"] if layout != "array" else got == events
    if layout == "kineto":
        assert rest == {"schemaVersion": 1, "traceEvents": [], "traceName": "x"}
    if layout == "events_last":
        assert rest["deviceProperties"] == [{"id": 0, "warpSize": 64}]


def test_truncated_array_is_one_line_user_error() -> None:
    doc = json.dumps({"traceEvents": _NASTY * 3}).encode()[:-10]
    with pytest.raises(UserError, match=r"t.json: truncated or corrupt JSON \(the event array never closes\)"):
        _events(doc, 32)


@pytest.mark.parametrize("block", [64, 1 << 20])
def test_corrupt_middle_is_user_error(block: int) -> None:
    doc = json.dumps({"traceEvents": _NASTY * 40}).encode()
    at = doc.index(b'"ts": 3') + 5
    doc = doc[:at] + b";" + doc[at + 1:]  # brackets still balance: only the decoder can tell
    with pytest.raises(UserError, match=r"^t.json: corrupt JSON .* near byte \d+"):
        _events(doc, block)


def test_unbalanced_garbage_is_user_error() -> None:
    doc = json.dumps({"traceEvents": _NASTY * 40}).encode()
    doc = doc[:300] + b"\x00garbage{{" + doc[300:]
    with pytest.raises(UserError, match="truncated or corrupt JSON"):
        _events(doc, 64)


def test_not_json_is_user_error() -> None:
    with pytest.raises(UserError, match="not JSON"):
        _events(b"hello world", 64)


def test_no_event_array_keeps_everything_in_rest() -> None:
    events, rest = _events(b'{"schemaVersion": 1}', 64)
    assert events == [] and rest == {"schemaVersion": 1}


class _Held(msgspec.Struct):
    name: str = ""
    args: msgspec.Raw = msgspec.Raw()


def test_raw_values_kept_by_the_caller_stay_intact() -> None:
    """msgspec.Raw points into the read buffer: it must not be overwritten by the next block."""
    events = [{"name": f"e{i}", "args": {"Input Dims": [[i, i + 1]], "pad": "x" * (i % 7)}} for i in range(400)]
    doc = json.dumps({"traceEvents": events}).encode()
    array = EventArray(io.BytesIO(doc), Path("t.json"), msgspec.json.Decoder(list[_Held]).decode, block=256)
    held = [e for batch in array for e in batch]  # every batch kept alive while reading goes on
    assert [json.loads(bytes(e.args)) for e in held] == [e["args"] for e in events]
