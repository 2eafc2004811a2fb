"""rocprofv3 `--output-format json` (*_results.json[.gz]): the rocprofiler-sdk-tool document.

    {"rocprofiler-sdk-tool": [{"agents": [...], "kernel_symbols": [...], "strings": {...},
                               "buffer_records": {"kernel_dispatch": [...], "memory_copy": [...],
                                                  "hip_api": [...], "marker_api": [...]}}]}

Dispatches name their kernel by `kernel_id` (an index into kernel_symbols, which also holds the
register counts) and their GPU by agent handle; API records name their call by (kind, operation)
indices into strings.buffer_records. Grids are in work-items and become workgroups.
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
from rocanalyze.traces.jsonstream import JSON_ERRORS
from rocanalyze.traces.links import link_runtime
from rocanalyze.traces.schema import GPU_COLUMNS, RUNTIME_COLUMNS, DeviceInfo, EventTable, make_frame
from rocanalyze.traces.source import open_stream

DESCRIPTION = "rocprofv3 JSON (*_results.json)"


class Handle(msgspec.Struct, gc=False, frozen=True):
    handle: int = -1


class Dim(msgspec.Struct, gc=False, frozen=True):
    x: int = -1
    y: int = -1
    z: int = -1


class Corr(msgspec.Struct, gc=False, frozen=True):
    internal: int = -1
    external: Any = None


class DispatchInfo(msgspec.Struct, gc=False, frozen=True):
    agent_id: Handle = Handle()
    queue_id: Handle = Handle()
    kernel_id: int = -1
    dispatch_id: int = -1
    private_segment_size: int = -1
    group_segment_size: int = -1
    workgroup_size: Dim = Dim()
    grid_size: Dim = Dim()


class Record(msgspec.Struct, gc=False, frozen=True):
    kind: int = -1
    operation: int = -1
    thread_id: int = -1
    correlation_id: Corr = Corr()
    start_timestamp: int = 0
    end_timestamp: int = 0
    dispatch_info: DispatchInfo | None = None
    stream_id: Handle = Handle()
    dst_agent_id: Handle = Handle()
    src_agent_id: Handle = Handle()
    bytes: int = -1


class Buffers(msgspec.Struct, gc=False):
    kernel_dispatch: list[Record] = []
    memory_copy: list[Record] = []
    hip_api: list[Record] = []
    hsa_api: list[Record] = []
    marker_api: list[Record] = []
    rccl_api: list[Record] = []


class Tool(msgspec.Struct, gc=False):
    agents: list[dict[str, Any]] = []
    kernel_symbols: list[dict[str, Any]] = []
    strings: dict[str, Any] = {}
    buffer_records: Buffers = msgspec.field(default_factory=Buffers)
    metadata: dict[str, Any] = {}


class Document(msgspec.Struct, gc=False):
    tool: list[Tool] = msgspec.field(name="rocprofiler-sdk-tool", default_factory=list)


def sniff(head: bytes) -> bool:
    """The rocprofiler-sdk-tool JSON document."""
    return re.match(rb'^\s*\{\s*"rocprofiler-sdk-tool"\s*:', head) is not None


def read(path: Path, *, progress: bool = False) -> EventTable:
    """Read a rocprofv3 JSON result into an EventTable (one process per document entry)."""
    with open_stream(path, progress) as stream:
        data = stream.read()
    try:
        doc = msgspec.json.decode(data, type=Document)
    except JSON_ERRORS as exc:
        raise UserError(f"corrupt or truncated rocprofv3 JSON ({exc})", path) from None
    del data
    gpus, runtimes, devices = [], [], []
    for tool in doc.tool:
        agents = {a.get("id", {}).get("handle"): a for a in tool.agents}
        gpu_handles = sorted(h for h, a in agents.items() if a.get("type") == 2)
        index = {h: i for i, h in enumerate(gpu_handles)}
        devices = devices or [_device(i, agents[h]) for i, h in enumerate(gpu_handles)]
        gpus.append(_kernels(tool, index))
        gpus.append(_copies(tool, index))
        runtimes.append(_api(tool))
    gpu = pd.concat(gpus, ignore_index=True) if gpus else make_frame(GPU_COLUMNS, {}, 0)
    gpu = gpu.sort_values("start_ns", kind="stable", ignore_index=True)
    runtime = pd.concat(runtimes, ignore_index=True) if runtimes else make_frame(RUNTIME_COLUMNS, {}, 0)
    table = EventTable.build(source_format="rocprofv3-json", paths=[str(path)], gpu=gpu,
                             runtime=runtime.sort_values("start_ns", kind="stable", ignore_index=True),
                             devices=devices,
                             metadata={"command": doc.tool[0].metadata.get("command") if doc.tool else None})
    link_runtime(table)
    table.quality = quality.assess(table)
    return table


def _device(i: int, agent: dict[str, Any]) -> DeviceInfo:
    return DeviceInfo(index=i, name=agent.get("product_name") or None,
                      arch=agent.get("name") if str(agent.get("name", "")).startswith("gfx") else None,
                      vendor="amd", compute_units=agent.get("cu_count"), wave_size=agent.get("wave_front_size"),
                      extra={"num_xcc": agent.get("num_xcc"), "simd_per_cu": agent.get("simd_per_cu")})


def _kernels(tool: Tool, gpu_index: dict[Any, int]) -> pd.DataFrame:
    recs = [r for r in tool.buffer_records.kernel_dispatch if r.dispatch_info is not None]
    symbols = {s.get("kernel_id"): s for s in tool.kernel_symbols}
    info = [r.dispatch_info for r in recs]
    kid = [d.kernel_id for d in info]

    def sym(key: str, default: Any = -1) -> list[Any]:
        return [symbols.get(k, {}).get(key, default) for k in kid]

    names = [s or t for s, t in zip(sym("formatted_kernel_name", ""), sym("kernel_name", ""), strict=False)]
    raw = pd.DataFrame({
        "Kernel_Name": names, "Start_Timestamp": [r.start_timestamp for r in recs],
        "End_Timestamp": [r.end_timestamp for r in recs],
        "Correlation_Id": [r.correlation_id.internal for r in recs],
        "Stream_Id": [r.stream_id.handle for r in recs], "Queue_Id": [d.queue_id.handle for d in info],
        "Dispatch_Id": [d.dispatch_id for d in info],
        "Grid_Size_X": [d.grid_size.x for d in info], "Grid_Size_Y": [d.grid_size.y for d in info],
        "Grid_Size_Z": [d.grid_size.z for d in info],
        "Workgroup_Size_X": [d.workgroup_size.x for d in info],
        "Workgroup_Size_Y": [d.workgroup_size.y for d in info],
        "Workgroup_Size_Z": [d.workgroup_size.z for d in info],
        "LDS_Block_Size": [d.group_segment_size for d in info],
        "Scratch_Size": [d.private_segment_size for d in info],
        "VGPR_Count": sym("arch_vgpr_count"), "Accum_VGPR_Count": sym("accum_vgpr_count"),
        "SGPR_Count": sym("sgpr_count")})
    cols = dispatch.dispatch_columns(raw)
    cols["device"] = np.array([gpu_index.get(d.agent_id.handle, -1) for d in info], dtype=np.int32)
    return make_frame(GPU_COLUMNS, cols)


def _copies(tool: Tool, gpu_index: dict[Any, int]) -> pd.DataFrame:
    recs = tool.buffer_records.memory_copy
    if not recs:
        return make_frame(GPU_COLUMNS, {}, 0)
    ops = _operations(tool, recs)
    kinds = [_copy_kind(o) for o in ops]
    device = [gpu_index.get(r.src_agent_id.handle if k == "DtoH" else r.dst_agent_id.handle, 0)
              for r, k in zip(recs, kinds, strict=False)]
    start = np.array([r.start_timestamp for r in recs], np.int64)
    return make_frame(GPU_COLUMNS, {
        "device": device, "kind": ["memcpy"] * len(recs), "name": [f"Memcpy {k}" for k in kinds],
        "start_ns": start, "dur_ns": np.array([r.end_timestamp for r in recs], np.int64) - start,
        "correlation": [r.correlation_id.internal for r in recs], "bytes": [r.bytes for r in recs],
        "copy_kind": kinds, "stream": [r.stream_id.handle for r in recs]})


def _copy_kind(operation: str) -> str:
    for key, kind in (("HOST_TO_DEVICE", "HtoD"), ("DEVICE_TO_HOST", "DtoH"), ("DEVICE_TO_DEVICE", "DtoD"),
                      ("HOST_TO_HOST", "HtoH")):
        if key in operation:
            return kind
    return ""


def _operations(tool: Tool, recs: list[Record]) -> list[str]:
    """Operation names of records from strings.buffer_records[kind].operations[operation]."""
    table = tool.strings.get("buffer_records") or []
    out = []
    for r in recs:
        entry = table[r.kind] if 0 <= r.kind < len(table) else {}
        names = entry.get("operations") or []
        out.append(names[r.operation] if 0 <= r.operation < len(names) else f"op{r.operation}")
    return out


def _api(tool: Tool) -> pd.DataFrame:
    b = tool.buffer_records
    recs = b.hip_api + b.hsa_api + b.rccl_api
    if not recs:
        return make_frame(RUNTIME_COLUMNS, {}, 0)
    start = np.array([r.start_timestamp for r in recs], np.int64)
    return make_frame(RUNTIME_COLUMNS, {
        "tid": [r.thread_id for r in recs], "name": _operations(tool, recs), "start_ns": start,
        "dur_ns": np.array([r.end_timestamp for r in recs], np.int64) - start,
        "correlation": [r.correlation_id.internal for r in recs]})
