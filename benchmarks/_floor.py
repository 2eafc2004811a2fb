"""The floor of bench_read: a typed msgspec decode of only the fields rocanalyze reads, whole file."""

from __future__ import annotations

import gc

import msgspec

from rocanalyze.traces.kineto_events import Event


class _Document(msgspec.Struct, gc=False):
    traceEvents: list[Event] = []  # noqa: N815 (the trace's own key)


def run(path: str) -> None:
    """Decode the trace at `path` the fastest typed way (GC paused); prints the event count."""
    gc.disable()
    with open(path, "rb") as fh:
        doc = msgspec.json.decode(fh.read(), type=_Document)
    print(len(doc.traceEvents))
