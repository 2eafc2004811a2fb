"""rocprof-family rows (CSV, SQLite, JSON) -> schema columns, read by column NAME.

rocprof v1, rocprofv2, rocprofv3 (CSV and rocpd) and rocprof-compute name the same facts
differently, and rocprofv3 renamed columns between releases; each schema column lists the names
it is found under, first match wins:

    BeginNs | Start_Timestamp | start  -> start_ns        grd | Grid_Size(_X) | grid_x -> grid (work-items)

rocprof counts grids in work-items: they are divided by the workgroup size, so grid_* are
workgroups as in Kineto. Register counts are taken as recorded (rocprof already rounds them up to
the allocation granule).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("KernelName", "Kernel_Name", "kernel_name", "Name", "name", "Function", "Operation"),
    "start": ("BeginNs", "Start_Timestamp", "start", "Start", "start_timestamp"),
    "end": ("EndNs", "End_Timestamp", "end", "End", "end_timestamp"),
    "device": ("gpu-id", "GPU_ID", "Agent_Id", "agent_abs_index", "dev-id", "agent_id"),
    "stream": ("Stream_Id", "stream_id", "stream-id"),
    "queue": ("queue-id", "Queue_Id", "Queue_ID", "queue_id"),
    "correlation": ("Correlation_Id", "Correlation_ID", "corr_id", "correlation_id"),
    "dispatch": ("Dispatch_Id", "Dispatch_ID", "dispatch_id", "Index"),
    "grid": ("grd", "Grid_Size", "grid_size"),
    "grid_x": ("Grid_Size_X", "grid_x", "grid_size_x"),
    "grid_y": ("Grid_Size_Y", "grid_y", "grid_size_y"),
    "grid_z": ("Grid_Size_Z", "grid_z", "grid_size_z"),
    "block": ("wgr", "Workgroup_Size", "workgroup_size"),
    "block_x": ("Workgroup_Size_X", "workgroup_x", "workgroup_size_x"),
    "block_y": ("Workgroup_Size_Y", "workgroup_y", "workgroup_size_y"),
    "block_z": ("Workgroup_Size_Z", "workgroup_z", "workgroup_size_z"),
    "vgpr": ("arch_vgpr", "Arch_VGPR", "VGPR_Count", "vgpr_count", "vgpr", "arch_vgpr_count"),
    "agpr": ("accum_vgpr", "Accum_VGPR", "Accum_VGPR_Count", "accum_vgpr_count"),
    "sgpr": ("sgpr", "SGPR", "SGPR_Count", "sgpr_count"),
    "lds_bytes": ("lds", "LDS_Per_Workgroup", "LDS_Block_Size", "Group_Segment_Size", "lds_size",
                  "group_segment_size"),
    "scratch_bytes": ("scr", "Scratch_Per_Workitem", "Scratch_Size", "Private_Segment_Size", "scratch_size",
                      "private_segment_size"),
    "wave_size": ("wave_size", "Wave_Size"),
    "pid": ("pid", "PID", "Process_Id", "process_id"),
    "tid": ("tid", "TID", "Thread_Id", "thread_id"),
    "bytes": ("size", "Size", "Bytes", "bytes"),
}
# columns of a dispatch row that are not hardware counters (rocprof pmc / rocprof-compute)
NOT_COUNTERS = {a for names in ALIASES.values() for a in names} | {
    "Index", "queue-index", "sig", "obj", "DispatchNs", "CompleteNs", "DurationNs", "Kernel_ID", "Kind",
    "Domain", "kernel-id", "Kernel_Id", "Node_Id"}
_KD = re.compile(r"(\s*\(\.kd\)|\s*\[clone \.kd\]|\.kd)$")
_AGENT = re.compile(r"(\d+)\s*$")


def column(raw: pd.DataFrame, key: str) -> pd.Series | None:
    """The raw column holding `key` (first alias present), or None."""
    for alias in ALIASES[key]:
        if alias in raw.columns:
            return raw[alias]
    return None


def ints(raw: pd.DataFrame, key: str, default: int = -1) -> np.ndarray:
    """int64 values of `key` (numbers, numeric strings, 'Agent 4'); default where absent/blank."""
    series = column(raw, key)
    if series is None:
        return np.full(len(raw), default, np.int64)
    values = pd.to_numeric(series, errors="coerce")
    if values.isna().any() and series.dtype == object:  # "Agent 4", "0x0"
        parsed = series.astype(str).str.extract(_AGENT, expand=False)
        values = values.fillna(pd.to_numeric(parsed, errors="coerce"))
    return values.fillna(default).to_numpy(np.float64).astype(np.int64)


def clean_names(series: pd.Series) -> pd.Categorical:
    """Kernel names without rocprof's quotes and `.kd` suffixes (matching Kineto's names)."""
    cat = pd.Categorical(series.astype("string").fillna("").astype(str))  # a damaged file may read as numbers
    cleaned = [_KD.sub("", n.strip().strip('"').strip()) for n in cat.categories]
    return pd.Categorical(np.asarray(cleaned, dtype=object)[cat.codes] if len(cat) else [])


def dense_device(agent: np.ndarray) -> np.ndarray:
    """GPU index 0..n-1 from profiler agent ids (agents count CPUs too), in agent order."""
    if not len(agent):
        return agent.astype(np.int32)
    return np.unique(agent, return_inverse=True)[1].astype(np.int32)


def _workgroups(items: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Work-items -> workgroups (ceil), -1 where either is unknown."""
    ok = (items >= 0) & (block > 0)
    return np.where(ok, -(-items // np.maximum(block, 1)), -1)


def dispatch_columns(raw: pd.DataFrame, kind: str = "kernel") -> dict[str, Any]:
    """Schema GPU columns from raw dispatch rows (times ns, grid in workgroups)."""
    start, end = ints(raw, "start"), ints(raw, "end")
    block = [ints(raw, f"block_{a}") for a in "xyz"]
    grid = [ints(raw, f"grid_{a}") for a in "xyz"]
    if (block[0] < 0).all():  # 1-D totals (rocprof v1/v2, pmc): x holds everything
        block_x, grid_x = ints(raw, "block"), ints(raw, "grid")
        one = np.where(block_x > 0, 1, -1)
        block, grid = [block_x, one, one], [grid_x, one, one]
    grid = [_workgroups(g, b) for g, b in zip(grid, block, strict=False)]
    stream = ints(raw, "stream")
    queue = ints(raw, "queue", 0)
    names = column(raw, "name")
    return {
        "device": dense_device(ints(raw, "device", 0)),
        "stream": np.where(stream > 0, stream, queue),  # stream 0 (default) spans HW queues
        "kind": np.full(len(raw), kind, dtype=object),
        "name": clean_names(names if names is not None else pd.Series([""] * len(raw))),
        "start_ns": start, "dur_ns": np.where((start >= 0) & (end >= start), end - start, 0),
        "correlation": ints(raw, "correlation"),
        "grid_x": grid[0], "grid_y": grid[1], "grid_z": grid[2],
        "block_x": block[0], "block_y": block[1], "block_z": block[2],
        "vgpr": ints(raw, "vgpr"), "agpr": ints(raw, "agpr"), "sgpr": ints(raw, "sgpr"),
        "lds_bytes": ints(raw, "lds_bytes"), "scratch_bytes": ints(raw, "scratch_bytes"),
        "wave_size": ints(raw, "wave_size"), "dispatch_id": ints(raw, "dispatch"),
    }


def counter_frame(raw: pd.DataFrame) -> pd.DataFrame:
    """Hardware counters per dispatch row: `gpu_row` (row in EventTable.gpu) + one column per counter."""
    names = [c for c in raw.columns if c not in NOT_COUNTERS and not re.fullmatch(r"Kernel_ID_\d+", str(c))]
    numeric = {c: pd.to_numeric(raw[c], errors="coerce") for c in names}
    numeric = {c: v for c, v in numeric.items() if v.notna().any()}
    frame = pd.DataFrame(numeric, index=raw.index)
    frame.insert(0, "gpu_row", np.arange(len(raw)))
    return frame.reset_index(drop=True)
