"""rocprof CSV files of every generation, recognised by their header and read by column name.

    rocprof v1/v2 results.csv        Index,KernelName,gpu-id,...,BeginNs,EndNs     -> gpu (kernels)
    rocprofv2 results_<pid>.csv       Dispatch_ID,GPU_ID,...,Start_Timestamp        -> gpu (kernels)
    rocprofv3 *_kernel_trace.csv      Kind,Agent_Id,...,Grid_Size_X                  -> gpu (kernels)
    rocprofv3 *_memory_copy_trace.csv Kind,Direction,...                             -> gpu (copies)
    rocprofv3 *_counter_collection    ...,Counter_Name,Counter_Value                 -> gpu + counters
    rocprof pmc / -i counter CSVs     Index,KernelName,...,FETCH_SIZE (no times)     -> counters only
    *_api_trace.csv, *_hip_api_*.csv  Domain,Function,...                            -> runtime / markers
    *stats.csv                        Name,Calls,TotalDurationNs                     -> aggregates
    *_agent_info.csv                  Agent_Type,Wave_Front_Size,...                 -> devices only
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocanalyze.errors import UserError
from rocanalyze.traces import dispatch, quality
from rocanalyze.traces.schema import (
    AGGREGATE_COLUMNS,
    ANNOTATION_COLUMNS,
    GPU_COLUMNS,
    RUNTIME_COLUMNS,
    DeviceInfo,
    EventTable,
    make_frame,
)
from rocanalyze.traces.source import open_stream

DESCRIPTION = "rocprof v1/v2/v3 CSV (results.csv, *_kernel_trace.csv, *stats.csv, ...)"
_COPY_DIRECTION = {"HOST_TO_DEVICE": "HtoD", "DEVICE_TO_HOST": "DtoH", "DEVICE_TO_DEVICE": "DtoD",
                   "HOST_TO_HOST": "HtoH", "PEER_TO_PEER": "PtoP"}
_STATS_KIND = (("copy", "memcpy"), ("hip", "runtime"), ("hsa", "runtime"), ("api", "runtime"),
               ("marker", "runtime"), ("rccl", "runtime"), ("memory", "memcpy"))


def header(head: bytes) -> list[str]:
    """Column names of the CSV whose first bytes are `head` ([] when not a CSV header)."""
    try:
        line = head.decode("utf-8", "replace").lstrip("\ufeff").splitlines()[0]
    except IndexError:
        return []
    try:
        return [c.strip() for c in next(csv.reader([line]))]
    except (csv.Error, StopIteration):
        return []


def flavor(cols: list[str]) -> str | None:
    """Which rocprof CSV this header belongs to, or None."""
    have = set(cols)
    named = have & {"KernelName", "Kernel_Name"}
    if {"Counter_Name", "Counter_Value"} <= have and named:
        return "counters_long"
    if named and have & {"BeginNs", "Start_Timestamp"}:
        return "dispatch"
    if named and have & {"grd", "Grid_Size", "arch_vgpr", "vgpr"}:
        return "pmc"  # counters per dispatch, no timestamps
    if {"Direction", "Start_Timestamp"} <= have:
        return "copy"
    if {"Domain", "Function", "Start_Timestamp"} <= have:
        return "api"
    if {"Name", "Calls", "TotalDurationNs"} <= have:
        return "stats"
    if {"Agent_Type", "Wave_Front_Size"} <= have:
        return "agents"
    return None


def sniff(head: bytes) -> bool:
    """A CSV whose header is one of rocprof's."""
    return flavor(header(head)) is not None


def load(path: Path) -> pd.DataFrame:
    """The CSV as strings-and-numbers, any compression; a malformed file is a UserError."""
    with open_stream(path) as stream:
        text = stream.read()
    try:
        return pd.read_csv(io.BytesIO(text), dtype_backend="numpy_nullable", keep_default_na=False,
                           na_values=[""], skipinitialspace=True)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"malformed CSV ({str(exc).splitlines()[0]})", path) from None


def read(path: Path, *, progress: bool = False) -> EventTable:
    """Read one rocprof CSV into an EventTable (times ns, grids in workgroups)."""
    raw = load(path)
    raw.columns = [str(c).strip() for c in raw.columns]
    kind = flavor(list(raw.columns))
    if kind is None:
        raise UserError("not a rocprof CSV this version reads", path)
    table = _READERS[kind](raw, path)
    table.quality = quality.assess(table)
    return table


def _dispatch(raw: pd.DataFrame, path: Path) -> EventTable:
    cols = dispatch.dispatch_columns(raw)
    gpu = make_frame(GPU_COLUMNS, cols)
    meta: dict[str, Any] = {}
    counters = dispatch.counter_frame(raw)
    if counters.shape[1] > 1:
        meta["counters"] = counters
    fmt = "rocprofv3-csv" if "Kind" in raw.columns else (
        "rocprof-compute" if path.name.startswith("pmc_perf") else
        "rocprofv2-csv" if "Dispatch_ID" in raw.columns else "rocprof-v1-csv")
    return EventTable.build(source_format=fmt, paths=[str(path)], gpu=gpu, metadata=meta)


def _pmc(raw: pd.DataFrame, path: Path) -> EventTable:
    counters = dispatch.counter_frame(raw)
    counters.insert(1, "name", dispatch.clean_names(dispatch.column(raw, "name")))
    return EventTable.build(
        source_format="rocprof-pmc-csv", paths=[str(path)],
        metadata={"counters": counters, "dispatches": _untimed(raw)},
        notes=[f"{path.name}: hardware counters per dispatch without timestamps: no timeline"])


def _untimed(raw: pd.DataFrame) -> pd.DataFrame:
    """Dispatch rows without timestamps (counter files): name, grid, block and resources, times unknown."""
    cols = dispatch.dispatch_columns(raw)
    keep = ("name", "device", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "vgpr", "agpr",
            "sgpr", "lds_bytes", "scratch_bytes")
    return pd.DataFrame({k: cols[k] for k in keep})


def _counters_long(raw: pd.DataFrame, path: Path) -> EventTable:
    """rocprofv3 counter_collection: one row per (dispatch, counter) -> one row per dispatch."""
    key = "Dispatch_Id" if "Dispatch_Id" in raw.columns else "Correlation_Id"
    first = raw.drop_duplicates(key).reset_index(drop=True)
    wide = raw.pivot_table(index=key, columns="Counter_Name", values="Counter_Value", aggfunc="sum")
    wide = wide.reindex(first[key].to_numpy())
    counters = pd.DataFrame({"gpu_row": np.arange(len(first))})
    for name in wide.columns:
        counters[str(name)] = pd.to_numeric(wide[name], errors="coerce").to_numpy()
    if "Start_Timestamp" not in raw.columns:
        counters.insert(1, "name", dispatch.clean_names(dispatch.column(first, "name")))
        return EventTable.build(source_format="rocprofv3-counters-csv", paths=[str(path)],
                                metadata={"counters": counters, "dispatches": _untimed(first)},
                                notes=[f"{path.name}: counters per dispatch without timestamps: no timeline"])
    gpu = make_frame(GPU_COLUMNS, dispatch.dispatch_columns(first))
    return EventTable.build(source_format="rocprofv3-counters-csv", paths=[str(path)], gpu=gpu,
                            metadata={"counters": counters})


def _copy(raw: pd.DataFrame, path: Path) -> EventTable:
    cols = dispatch.dispatch_columns(raw, kind="memcpy")
    direction = raw["Direction"].astype(str).str.replace("MEMORY_COPY_", "", regex=False)
    copy_kind = direction.map(_COPY_DIRECTION).fillna("").to_numpy(dtype=object)
    cols["copy_kind"] = copy_kind
    cols["name"] = np.array([f"Memcpy {k}" if k else "Memcpy" for k in copy_kind], dtype=object)
    cols["bytes"] = dispatch.ints(raw, "bytes")
    # a copy names both agents: the GPU end is the source of a DtoH, the destination otherwise
    src = dispatch.ints(raw.rename(columns={"Source_Agent_Id": "agent_id"}), "device", 0)
    dst = dispatch.ints(raw.rename(columns={"Destination_Agent_Id": "agent_id"}), "device", 0)
    cols["device"] = dispatch.dense_device(np.where(copy_kind == "DtoH", src, dst))
    return EventTable.build(source_format="rocprofv3-csv", paths=[str(path)],
                            gpu=make_frame(GPU_COLUMNS, cols))


def _api(raw: pd.DataFrame, path: Path) -> EventTable:
    start, end = dispatch.ints(raw, "start"), dispatch.ints(raw, "end")
    domain = raw["Domain"].astype(str)
    marker = domain.str.startswith("MARKER").to_numpy()
    names = raw["Function"].astype(str).str.strip('"').to_numpy(dtype=object)
    runtime = make_frame(RUNTIME_COLUMNS, {
        "pid": dispatch.ints(raw, "pid", 0)[~marker], "tid": dispatch.ints(raw, "tid", 0)[~marker],
        "name": names[~marker], "start_ns": start[~marker], "dur_ns": (end - start)[~marker],
        "correlation": dispatch.ints(raw, "correlation")[~marker]})
    annotations = make_frame(ANNOTATION_COLUMNS, {
        "kind": np.full(int(marker.sum()), "user", dtype=object), "name": names[marker],
        "start_ns": start[marker], "dur_ns": (end - start)[marker]})
    fmt = "rocprofv2-csv" if "Correlation_ID" in raw.columns else "rocprofv3-csv"
    return EventTable.build(source_format=fmt, paths=[str(path)], runtime=runtime, annotations=annotations)


def stats_kind(path: Path) -> str:
    """kernel | memcpy | runtime from the stats file's name (results.copy_stats.csv, hip_api_stats.csv)."""
    stem = path.name.lower().replace("results.", "")
    if "stats" in stem and not stem.startswith(("stats", "kernel")):
        for key, kind in _STATS_KIND:
            if stem.startswith(key) or f"_{key}" in stem:
                return kind
    return "kernel"


def _stats(raw: pd.DataFrame, path: Path) -> EventTable:
    kind = stats_kind(path)
    aggregates = make_frame(AGGREGATE_COLUMNS, {
        "kind": np.full(len(raw), kind, dtype=object), "name": dispatch.clean_names(raw["Name"]),
        "calls": pd.to_numeric(raw["Calls"], errors="coerce").fillna(0).to_numpy(np.int64),
        "total_ns": pd.to_numeric(raw["TotalDurationNs"], errors="coerce").fillna(0).to_numpy(np.int64)})
    return EventTable.build(source_format="rocprof-stats-csv", paths=[str(path)], aggregates=aggregates)


def agent_devices(raw: pd.DataFrame) -> list[DeviceInfo]:
    """GPU agents of a rocprofv3 agent_info.csv as DeviceInfo, in agent order."""
    gpus = raw[raw["Agent_Type"].astype(str).str.upper().str.contains("GPU")]
    out = []
    for i, row in enumerate(gpus.to_dict("records")):
        version = int(row.get("Gfx_Target_Version") or 0)
        arch = f"gfx{version // 10000}{(version // 100) % 100:x}{version % 100:x}" if version else None
        out.append(DeviceInfo(index=i, name=row.get("Product_Name") or row.get("Marketing_Name") or None,
                              arch=row.get("Name") if str(row.get("Name", "")).startswith("gfx") else arch,
                              vendor="amd", compute_units=_int(row.get("Cu_Count")),
                              wave_size=_int(row.get("Wave_Front_Size")),
                              extra={"num_xcc": _int(row.get("Num_Xcc")),
                                     "simd_per_cu": _int(row.get("Simd_Per_Cu"))}))
    return out


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _agents(raw: pd.DataFrame, path: Path) -> EventTable:
    return EventTable.build(source_format="rocprofv3-agent-info", paths=[str(path)],
                            devices=agent_devices(raw), metadata={"not_a_trace": True})


_READERS = {"dispatch": _dispatch, "pmc": _pmc, "counters_long": _counters_long, "copy": _copy,
            "api": _api, "stats": _stats, "agents": _agents}
