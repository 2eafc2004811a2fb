"""The floors of bench_read: typed msgspec decodes of the whole file (GC paused), no tables built.

`run` decodes exactly the fields rocanalyze's Kineto reader decodes (its own Event struct);
`run_min` decodes a minimal set (phase, category, name, thread, times, the two join ids), a
lower floor than any reader that joins kernels to their launches can reach.
"""

from __future__ import annotations

import gc

import msgspec

from rocanalyze.traces.kineto_events import Event


class _Document(msgspec.Struct, gc=False):
    traceEvents: list[Event] = []  # noqa: N815 (the trace's own key)


class _MinArgs(msgspec.Struct, gc=False, frozen=True):
    external_id: int | None = msgspec.field(name="External id", default=None)
    correlation: int | None = None


class _MinEvent(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = 0.0
    dur: float = 0.0
    args: _MinArgs | None = None


class _MinDocument(msgspec.Struct, gc=False):
    traceEvents: list[_MinEvent] = []  # noqa: N815


def _decode(path: str, kind: type) -> None:
    gc.disable()
    with open(path, "rb") as fh:
        doc = msgspec.json.decode(fh.read(), type=kind)
    print(len(doc.traceEvents))


def run(path: str) -> None:
    """Decode the trace with the reader's own field set; prints the event count."""
    _decode(path, _Document)


def run_min(path: str) -> None:
    """Decode the trace with the minimal field set; prints the event count."""
    _decode(path, _MinDocument)
