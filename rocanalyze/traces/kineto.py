"""torch.profiler / Kineto Chrome traces (.json, .json.gz), ROCm (roctracer, rocprofiler-sdk) and CUDA.

Streamed: the `traceEvents` array is decoded in blocks (jsonstream), each block's events are sorted
by category into column batches (numpy arrays, names as integer codes), and the tables are built
once at the end; the file is never resident. Joins (runtime call, op, Python frame) are in
kineto_join; trace-level facts (deviceProperties) in kineto_meta.
"""

from __future__ import annotations

import gc
import re
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocanalyze.traces import kineto_join, kineto_meta, kineto_python
from rocanalyze.traces.jsonstream import EventArray
from rocanalyze.traces.kineto_events import decode_events, integers, numbers, us_to_ns
from rocanalyze.traces.schema import EventTable
from rocanalyze.traces.source import open_stream

FORMAT = "kineto"
DESCRIPTION = "torch.profiler/Kineto JSON (.json, .json.gz)"
_KEYS = re.compile(rb'"(traceEvents|schemaVersion|deviceProperties)"\s*:')
_ARRAY = re.compile(rb'^\s*\[\s*\{[^{}]*"ph"\s*:')

# Kineto `cat` -> table. Old Kineto (torch <= 1.10) wrote "Kernel", "Memcpy", "Runtime", "Operator".
GPU, RUNTIME, OP, ANNOTATION, PYTHON, FLOW, META, OTHER = range(8)
CATEGORIES: dict[str, int] = {
    "kernel": GPU, "gpu_memcpy": GPU, "gpu_memset": GPU, "memcpy": GPU, "memset": GPU,
    "cuda_runtime": RUNTIME, "cuda_driver": RUNTIME, "runtime": RUNTIME, "hip_runtime": RUNTIME,
    "cpu_op": OP, "operator": OP,
    "user_annotation": ANNOTATION, "gpu_user_annotation": ANNOTATION,
    "python_function": PYTHON, "ac2g": FLOW,
}


def sniff(head: bytes) -> bool:
    """A JSON object with a traceEvents/schemaVersion/deviceProperties key, or a bare array of events."""
    start = head.lstrip()[:1]
    return (start == b"{" and _KEYS.search(head) is not None) or _ARRAY.match(head) is not None


class Names:
    """Global string -> code table for one column, fed batch by batch (pandas factorize per batch)."""

    def __init__(self) -> None:
        self.codes: dict[Any, int] = {}

    def encode(self, values: list[Any]) -> np.ndarray:
        local, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
        table = self.codes
        mapping = np.fromiter((table.setdefault("" if u is None else str(u), len(table)) for u in uniques),
                              dtype=np.int64, count=len(uniques))
        return mapping[local] if len(local) else np.zeros(0, np.int64)

    def categorical(self, codes: np.ndarray) -> pd.Categorical:
        return pd.Categorical.from_codes(codes, categories=list(self.codes))


class _Batches:
    """Column batches per table; `add` takes one decoded block of events."""

    def __init__(self) -> None:
        self.cols: dict[int, dict[str, list[Any]]] = {k: {} for k in range(8)}
        self.names = {k: Names() for k in (GPU, RUNTIME, OP, ANNOTATION, PYTHON)}
        self.frames = kineto_python.FrameFilter()
        self.meta: list[Any] = []
        self.other: dict[str, int] = {}

    def put(self, table: int, **columns: Any) -> None:
        for key, value in columns.items():
            self.cols[table].setdefault(key, []).append(value)

    def add(self, events: list[Any]) -> None:
        cats = [e.cat for e in events]
        local, uniques = pd.factorize(np.asarray(cats + [None], dtype=object)[:-1], use_na_sentinel=False)
        table = np.array([CATEGORIES.get(c if isinstance(c, str) else "", OTHER) for c in uniques], np.int8)
        kinds = table[local]
        for table in (GPU, RUNTIME, OP, ANNOTATION, PYTHON, FLOW, OTHER):
            idx = np.flatnonzero(kinds == table)
            if not len(idx):
                continue
            sub = [events[i] for i in idx.tolist()] if len(idx) < 2 else list(itemgetter(*idx.tolist())(events))
            getattr(self, f"_add_{table}")(sub, [cats[i] for i in idx.tolist()])

    def _common(self, table: int, ev: list[Any]) -> dict[str, Any]:
        args = [e.args for e in ev]
        return dict(name=self.names[table].encode([e.name for e in ev]),
                    start_ns=us_to_ns(numbers([e.ts for e in ev], 0.0)),
                    dur_ns=us_to_ns(numbers([e.dur for e in ev], 0.0)),
                    pid=integers([e.pid for e in ev], -1), tid=integers([e.tid for e in ev], -1),
                    rank=integers([a.rank for a in args], -1)), args

    def _add_0(self, ev: list[Any], cats: list[str]) -> None:  # GPU activity
        cols, args = self._common(GPU, ev)
        self.put(GPU, cat=np.array(cats, dtype=object), device=integers([a.device for a in args], -1),
                 stream=integers([a.stream for a in args], 0),
                 correlation=integers([a.correlation for a in args]),
                 ext_id=integers([a.external_id for a in args]),
                 grid=[a.grid for a in args], block=[a.block for a in args],
                 lds_bytes=integers([a.shared_memory for a in args]),
                 vgpr=integers([a.registers for a in args]), bytes=integers([a.bytes for a in args]),
                 **cols)

    def _add_1(self, ev: list[Any], cats: list[str]) -> None:  # runtime calls
        cols, args = self._common(RUNTIME, ev)
        self.put(RUNTIME, correlation=integers([a.correlation for a in args]),
                 ext_id=integers([a.external_id for a in args]),
                 grid=[a.grid for a in args], block=[a.block for a in args], **cols)

    def _add_2(self, ev: list[Any], cats: list[str]) -> None:  # framework ops
        cols, args = self._common(OP, ev)
        self._put_op(cols, args)

    def _put_op(self, cols: dict[str, Any], args: list[Any]) -> None:
        self.put(OP, ext_id=integers([a.external_id for a in args]),
                 inputs=[b"\x00".join((a.dims, a.types, a.strides, a.concrete)) for a in args],
                 flops=numbers([a.flops for a in args]), **cols)

    def _add_3(self, ev: list[Any], cats: list[str]) -> None:  # annotations
        cols, args = self._common(ANNOTATION, ev)
        self.put(ANNOTATION, gpu=np.array([c == "gpu_user_annotation" for c in cats]), **cols)
        # ranges that record inputs (nccl:all_reduce ...) launch GPU work directly: they are ops too
        shaped = [i for i, a in enumerate(args) if len(a.dims) and cats[i] == "user_annotation"]
        if shaped:
            sub = [ev[i] for i in shaped]
            opcols, opargs = self._common(OP, sub)
            self._put_op(opcols, opargs)

    def _add_4(self, ev: list[Any], cats: list[str]) -> None:  # python frames (with_stack)
        # only frames of the user's code and nn.Module frames are kept (a tenth of them, typically)
        names = self.names[PYTHON].encode([e.name for e in ev])
        keep = self.frames.wanted(names, self.names[PYTHON].codes)
        if not keep.any():
            return
        sub = [ev[i] for i in np.flatnonzero(keep).tolist()]
        self.put(PYTHON, name=names[keep], start_ns=us_to_ns(numbers([e.ts for e in sub], 0.0)),
                 dur_ns=us_to_ns(numbers([e.dur for e in sub], 0.0)), pid=integers([e.pid for e in sub], -1),
                 tid=integers([e.tid for e in sub], -1))

    def _add_5(self, ev: list[Any], cats: list[str]) -> None:  # flow events (ac2g)
        self.put(FLOW, ph=np.array([e.ph == "s" for e in ev]), id=integers([e.id for e in ev]),
                 pid=integers([e.pid for e in ev]), tid=integers([e.tid for e in ev]),
                 ts=us_to_ns(numbers([e.ts for e in ev], 0.0)))

    def _add_7(self, ev: list[Any], cats: list[str]) -> None:  # metadata and everything else
        for e in ev:
            if e.ph == "M":
                self.meta.append(e)
            else:
                key = f"{e.cat}:{e.name}"
                self.other[key] = self.other.get(key, 0) + 1

    def table(self, table: int) -> dict[str, Any]:
        """Concatenated columns of one table ({} when the trace has none of it)."""
        out: dict[str, Any] = {}
        for key, parts in self.cols[table].items():
            if isinstance(parts[0], np.ndarray):
                out[key] = np.concatenate(parts)
            else:
                out[key] = [x for part in parts for x in part]
        return out


def read(path: Path, *, progress: bool = False) -> EventTable:
    """Read one Kineto trace file into an EventTable (times in ns on the trace's clock)."""
    batches = _Batches()
    gc_was_on = gc.isenabled()
    gc.disable()  # millions of short-lived objects: the collector's passes would dominate
    try:
        with open_stream(path, progress) as stream:
            array = EventArray(stream, path, decode_events)
            for events in array:
                batches.add(events)
                del events
    finally:
        if gc_was_on:
            gc.enable()
    meta = kineto_meta.trace_metadata(array.rest, path, batches.meta)
    return kineto_join.build(batches, meta, path)
