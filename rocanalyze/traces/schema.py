"""The one event table every reader produces: columns declared once, with dtype, unit and default.

Readers build plain dicts of columns (lists or numpy arrays) and call `make_frame(SCHEMA, columns)`,
which fills defaults for missing columns, casts to the declared dtypes and rejects unknown columns.
Times are integer nanoseconds on one clock per trace (`start_ns`, `dur_ns`); never rounded to µs,
since sub-microsecond kernels would get zero or negative durations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # pandas dtype string; "category" for names
    default: Any
    unit: str = ""
    doc: str = ""


# One row per GPU activity: kernel, copy or memset.
GPU_COLUMNS: tuple[Column, ...] = (
    Column("rank", "int32", 0, doc="process rank (torchrun); 0 for single-process traces"),
    Column("device", "int32", 0, doc="GPU index within the rank"),
    Column("stream", "int64", 0, doc="stream (CUDA) or queue (HIP/HSA) id"),
    Column("kind", "category", "kernel", doc="kernel | memcpy | memset"),
    Column("name", "category", "", doc="kernel name as recorded (demangled when the tool did)"),
    Column("start_ns", "int64", 0, "ns"),
    Column("dur_ns", "int64", 0, "ns"),
    Column("correlation", "int64", -1, doc="runtime-call correlation id; -1 unknown"),
    Column("grid_x", "int64", -1, "workgroups"),
    Column("grid_y", "int64", -1, "workgroups"),
    Column("grid_z", "int64", -1, "workgroups"),
    Column("block_x", "int32", -1, "work-items"),
    Column("block_y", "int32", -1, "work-items"),
    Column("block_z", "int32", -1, "work-items"),
    Column("vgpr", "int32", -1, "registers", "arch VGPRs per work-item (allocated)"),
    Column("agpr", "int32", -1, "registers", "accumulation VGPRs per work-item"),
    Column("sgpr", "int32", -1, "registers"),
    Column("lds_bytes", "int64", -1, "bytes", "LDS / shared memory per workgroup"),
    Column("scratch_bytes", "int64", -1, "bytes", "private segment per work-item"),
    Column("bytes", "int64", -1, "bytes", "bytes moved by a copy or memset"),
    Column("copy_kind", "category", "", doc="HtoD | DtoH | DtoD | HtoH | PtoP | '' (not a copy)"),
    Column("pageable", "bool", False, doc="host side of the copy is pageable (not pinned)"),
    Column("graph", "bool", False, doc="replayed from a CUDA/HIP graph (not launch-bound)"),
    Column("op_index", "int64", -1, doc="row in EventTable.ops of the CPU op that launched it"),
    Column("launch_index", "int64", -1, doc="row in EventTable.runtime of the launching runtime call"),
    Column("category", "category", "", doc="filled by analysis.classify"),
)

# One row per host runtime call (launch, sync, copy, graph launch): the host side of the GPU work.
RUNTIME_COLUMNS: tuple[Column, ...] = (
    Column("rank", "int32", 0),
    Column("pid", "int64", 0),
    Column("tid", "int64", 0),
    Column("name", "category", "", doc="e.g. cudaLaunchKernel, hipLaunchKernel, cudaStreamSynchronize"),
    Column("start_ns", "int64", 0, "ns"),
    Column("dur_ns", "int64", 0, "ns"),
    Column("correlation", "int64", -1),
)

# One row per framework op on the host (aten::mm, aten::linear, ...), with recorded inputs.
OP_COLUMNS: tuple[Column, ...] = (
    Column("rank", "int32", 0),
    Column("pid", "int64", 0),
    Column("tid", "int64", 0),
    Column("name", "category", ""),
    Column("start_ns", "int64", 0, "ns"),
    Column("dur_ns", "int64", 0, "ns"),
    Column("ext_id", "int64", -1, doc="Kineto 'External id'"),
    Column("shapes", "object", None, doc="list of input dims as recorded (JSON-able)"),
    Column("dtypes", "object", None, doc="list of input dtypes as recorded"),
    Column("strides", "object", None, doc="list of input strides as recorded"),
    Column("concrete", "object", None, doc="'Concrete Inputs' as recorded (scalars such as causal flags)"),
    Column("flops", "float64", np.nan, "FLOP", "torch's own estimate when with_flops recorded it"),
    Column("module", "category", "", doc="innermost nn.Module path when the trace has it"),
    Column("stack", "category", "", doc="innermost Python frame of the user's code, when recorded"),
    Column("parent", "int64", -1, doc="row of the enclosing op on the same thread; -1 top-level"),
)

# Steps (ProfilerStep#N) and user ranges (record_function, rocanalyze.step, roctx markers).
ANNOTATION_COLUMNS: tuple[Column, ...] = (
    Column("rank", "int32", 0),
    Column("kind", "category", "user", doc="step | user | gpu_user (the GPU-side copy Kineto writes of a range)"),
    Column("name", "category", ""),
    Column("start_ns", "int64", 0, "ns"),
    Column("dur_ns", "int64", 0, "ns"),
)

# Aggregate-only rows (stats CSVs) for traces without a timeline.
AGGREGATE_COLUMNS: tuple[Column, ...] = (
    Column("rank", "int32", 0),
    Column("kind", "category", "kernel"),
    Column("name", "category", ""),
    Column("calls", "int64", 0),
    Column("total_ns", "int64", 0, "ns"),
    Column("category", "category", ""),
)


def make_frame(columns: tuple[Column, ...], data: dict[str, Any], length: int | None = None) -> pd.DataFrame:
    """Build a frame with exactly `columns`: missing ones get their default, all get their dtype."""
    known = {c.name for c in columns}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown columns {sorted(unknown)}")
    if length is None:
        length = len(next(iter(data.values()))) if data else 0
    out: dict[str, Any] = {}
    for col in columns:
        if col.name in data:
            values = data[col.name]
        elif col.dtype == "object":
            values = np.full(length, None, dtype=object)
        else:
            values = np.full(length, col.default)
        if col.dtype == "category":
            out[col.name] = pd.Categorical(values)
        elif col.dtype == "object":
            out[col.name] = pd.Series(list(values) if not isinstance(values, np.ndarray) else values,
                                      dtype=object)
        else:
            out[col.name] = np.asarray(values).astype(col.dtype, copy=False)
    frame = pd.DataFrame(out)
    if len(frame) != length:
        raise ValueError(f"column lengths differ: expected {length} rows, got {len(frame)}")
    return frame


def empty(columns: tuple[Column, ...]) -> pd.DataFrame:
    return make_frame(columns, {}, 0)


@dataclass
class DeviceInfo:
    """What the trace says about one GPU; any field may be unknown (None)."""

    index: int = 0
    name: str | None = None          # "AMD Instinct MI300X", "NVIDIA H100 80GB HBM3"
    arch: str | None = None          # "gfx942", "sm_90"
    vendor: str | None = None        # "amd" | "nvidia"
    compute_units: int | None = None
    wave_size: int | None = None
    compute_major: int | None = None
    compute_minor: int | None = None
    memory_bytes: int | None = None
    l2_bytes: int | None = None
    clock_khz: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class EventTable:
    """Everything a trace (file or folder) says, in columnar form; analyzers only read it."""

    gpu: pd.DataFrame
    runtime: pd.DataFrame
    ops: pd.DataFrame
    annotations: pd.DataFrame
    aggregates: pd.DataFrame
    devices: list[DeviceInfo]
    source_format: str               # e.g. "kineto", "rocprofv3-csv", "rocpd", "rocprof-v1-csv"
    paths: list[str]
    metadata: dict[str, Any] = field(default_factory=dict)  # trace-level facts (torch/ROCm version...)
    quality: dict[str, Any] = field(default_factory=dict)   # dropped events, skew, orphan kernels...
    notes: list[str] = field(default_factory=list)          # caveats for the report

    @classmethod
    def build(cls, *, source_format: str, paths: list[str], gpu: pd.DataFrame | None = None,
              runtime: pd.DataFrame | None = None, ops: pd.DataFrame | None = None,
              annotations: pd.DataFrame | None = None, aggregates: pd.DataFrame | None = None,
              devices: list[DeviceInfo] | None = None, **kw: Any) -> EventTable:
        return cls(
            gpu=empty(GPU_COLUMNS) if gpu is None else gpu,
            runtime=empty(RUNTIME_COLUMNS) if runtime is None else runtime,
            ops=empty(OP_COLUMNS) if ops is None else ops,
            annotations=empty(ANNOTATION_COLUMNS) if annotations is None else annotations,
            aggregates=empty(AGGREGATE_COLUMNS) if aggregates is None else aggregates,
            devices=devices or [], source_format=source_format, paths=paths, **kw)


# --- appended by the trace readers (columns only added, never renamed or removed) ---
# wave size per dispatch (rocprof records it; RDNA kernels may run wave32) and the profiler's own
# dispatch id (rocprof/rocprofv3), which per-dispatch counters (EventTable.metadata["counters"]) key on.
GPU_COLUMNS = GPU_COLUMNS + (
    Column("wave_size", "int32", -1, "lanes", "wavefront size of the dispatch when the profiler recorded it"),
    Column("dispatch_id", "int64", -1, doc="profiler's dispatch id (rocprof, rocprofv3); -1 unknown"),
)
# the operator that launched an aggregated kernel, when the summary says (TraceLens' "Parent cpu_op")
AGGREGATE_COLUMNS = AGGREGATE_COLUMNS + (
    Column("op", "category", "", doc="launching operator (aten::addmm), empty when the summary does not say"),
)
