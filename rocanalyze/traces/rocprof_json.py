"""Legacy rocprof (v1/v2 script) results.json: a Chrome trace whose numbers are strings.

    { "traceEvents":[{}
    ,{"args":{"name":"GPU0"},"ph":"M","pid":6,"name":"process_name","sort_index":2}
    ,{"ph":"X","name":"...","pid":6,"ts":"3497798443427","dur":"331634184","args":{"BeginNs":"...",...}}

Processes are named by metadata events: "GPU<n>" rows are dispatches (args carry the results.csv
columns), "COPY" rows copies, "CPU HIP API" rows runtime calls; "GPU Barriers<n>" are barrier
packets. Times come from args BeginNs/EndNs (ns, exact), not the rounded µs `ts`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from rocanalyze.errors import UserError
from rocanalyze.traces import dispatch, quality
from rocanalyze.traces.jsonstream import EventArray
from rocanalyze.traces.links import link_runtime
from rocanalyze.traces.schema import GPU_COLUMNS, RUNTIME_COLUMNS, EventTable, make_frame
from rocanalyze.traces.source import open_stream

DESCRIPTION = "legacy rocprof results.json"
_GENERIC = msgspec.json.Decoder(list[dict[str, Any]])
_GPU = re.compile(r"^GPU(\d+)$")
_WRITER = re.compile(rb'^\s*\{\s*"traceEvents"\s*:\s*\[\s*\{\s*\}')
_FRAGMENT = re.compile(rb'^\s*,\s*\{\s*"args"\s*:')
_COPY = {"CopyHostToDevice": "HtoD", "CopyDeviceToHost": "DtoH", "CopyDeviceToDevice": "DtoD"}


def sniff(head: bytes) -> bool:
    """rocprof's JSON writer: `{ "traceEvents":[{}` first, or a fragment of it (`,{"args":{"name":`)."""
    return _WRITER.match(head) is not None or (_FRAGMENT.match(head) is not None and b'"sort_index"' in head)


def read(path: Path, *, progress: bool = False) -> EventTable:
    """Read a rocprof results.json into an EventTable (ns from BeginNs/EndNs)."""
    with open_stream(path, progress) as stream:
        first = stream.read(4096).lstrip()[:1]
    if first not in (b"{", b"["):
        raise UserError(f"a fragment of rocprof's results.json, not valid JSON (it starts with "
                        f"{first.decode(errors='replace')!r}): use results.csv or re-run rocprof", path)
    events: list[dict[str, Any]] = []
    with open_stream(path, progress) as stream:
        array = EventArray(stream, path, _GENERIC.decode)
        for batch in array:
            events.extend(e for e in batch if e.get("ph") in ("X", "M"))
    # the writer quotes pids in some events and not in others: compare them as text
    processes = {str(e.get("pid")): str((e.get("args") or {}).get("name", ""))
                 for e in events if e.get("ph") == "M"}
    gpu_rows, copy_rows, api_rows = [], [], []
    for e in events:
        if e.get("ph") != "X":
            continue
        process = processes.get(str(e.get("pid")), "")
        args = dict(e.get("args") or {})
        args.setdefault("Name", e.get("name", ""))
        if _GPU.match(process):
            args.setdefault("gpu-id", _GPU.match(process).group(1))
            gpu_rows.append(args)
        elif process == "COPY":
            copy_rows.append(args)
        elif "HIP" in process or "HSA" in process:
            api_rows.append(args)
    table = EventTable.build(source_format="rocprof-v1-json", paths=[str(path)],
                             gpu=_gpu(gpu_rows, copy_rows), runtime=_runtime(api_rows),
                             metadata={"processes": processes})
    link_runtime(table)
    table.quality = quality.assess(table)
    return table


def _gpu(kernels: list[dict[str, Any]], copies: list[dict[str, Any]]) -> pd.DataFrame:
    parts = []
    if kernels:
        parts.append(pd.DataFrame(dispatch.dispatch_columns(pd.DataFrame(kernels))))
    if copies:
        raw = pd.DataFrame(copies)
        cols = dispatch.dispatch_columns(raw, kind="memcpy")
        cols["copy_kind"] = raw["Name"].map(_COPY).fillna("").to_numpy(dtype=object)
        parts.append(pd.DataFrame(cols))
    if not parts:
        return make_frame(GPU_COLUMNS, {}, 0)
    frame = pd.concat(parts, ignore_index=True).sort_values("start_ns", kind="stable")
    frame["copy_kind"] = frame["copy_kind"].fillna("") if "copy_kind" in frame else ""
    frame["device"] = dispatch.dense_device(frame["device"].to_numpy())
    return make_frame(GPU_COLUMNS, {k: frame[k].astype(object).to_numpy() if k in ("name", "kind", "copy_kind")
                                    else frame[k].to_numpy() for k in frame.columns})


def _runtime(rows: list[dict[str, Any]]) -> pd.DataFrame:
    if not rows:
        return make_frame(RUNTIME_COLUMNS, {}, 0)
    raw = pd.DataFrame(rows)
    start, end = dispatch.ints(raw, "start"), dispatch.ints(raw, "end")
    return make_frame(RUNTIME_COLUMNS, {
        "pid": dispatch.ints(raw, "pid", 0), "tid": dispatch.ints(raw, "tid", 0),
        "name": raw["Name"].astype(str).to_numpy(dtype=object), "start_ns": start,
        "dur_ns": np.maximum(end - start, 0), "correlation": dispatch.ints(raw, "correlation")})
