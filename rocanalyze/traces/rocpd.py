"""SQLite traces: rocprofv3's rocpd database (ROCm 7 default) and legacy rocprof's results.db.

rocpd tables carry a GUID suffix (rocpd_kernel_dispatch_00003fdc_...), so only its views are
queried: `kernels`, `memory_copies`, `regions` (API calls), `rocpd_info_agent`. Legacy rocprof
writes plain tables KERN (kernel trace, results.csv columns), OPS, COPY and HIP.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocanalyze.errors import UserError
from rocanalyze.traces import dispatch, quality
from rocanalyze.traces.links import link_runtime
from rocanalyze.traces.schema import (
    ANNOTATION_COLUMNS,
    GPU_COLUMNS,
    RUNTIME_COLUMNS,
    DeviceInfo,
    EventTable,
    make_frame,
)

DESCRIPTION = "rocprofv3 rocpd SQLite (*_results.db), legacy rocprof results.db"
_MAGIC = b"SQLite format 3\x00"
_COPY = {"HOST_TO_DEVICE": "HtoD", "DEVICE_TO_HOST": "DtoH", "DEVICE_TO_DEVICE": "DtoD",
         "HostToDevice": "HtoD", "DeviceToHost": "DtoH", "DeviceToDevice": "DtoD"}


def sniff(head: bytes) -> bool:
    """An SQLite 3 file (which kind is decided from its tables)."""
    return head.startswith(_MAGIC)


def _query(db: sqlite3.Connection, sql: str) -> pd.DataFrame:
    return pd.read_sql_query(sql, db)


def read(path: Path, *, progress: bool = False) -> EventTable:
    """Read a rocpd or legacy rocprof SQLite database into an EventTable."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.DatabaseError as exc:
        raise UserError(f"unreadable SQLite database ({exc})", path) from None
    try:
        names = {r[0] for r in db.execute("select name from sqlite_master where type in ('table','view')")}
        if "kernels" in names and "rocpd_info_agent" in names:
            table = _rocpd(db, names, path)
        elif names & {"KERN", "OPS", "COPY", "HIP"}:
            table = _legacy(db, names, path)
        else:
            raise UserError("an SQLite database, but neither rocpd (rocprofv3) nor rocprof's results.db",
                            path)
    except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:  # pandas wraps the sqlite3 error
        raise UserError(f"corrupt SQLite database ({str(exc).splitlines()[0]})", path) from None
    except UnicodeDecodeError as exc:  # a damaged byte inside schema text, which sqlite3 decodes itself
        raise UserError(f"corrupt SQLite database: text that is not UTF-8 ({exc.reason}, byte "
                        f"0x{exc.object[exc.start]:02x}); re-capture or re-copy it", path) from None
    finally:
        db.close()
    link_runtime(table)
    table.quality = quality.assess(table)
    return table


def _rocpd(db: sqlite3.Connection, names: set[str], path: Path) -> EventTable:
    # rocpd's internal correlation id is `stack_id` on both sides (corr_id is the external one)
    kernels = _query(db, "select * from kernels order by start").drop(columns=["corr_id"], errors="ignore")
    kernels = kernels.rename(columns={"stack_id": "corr_id"})
    cols = dispatch.dispatch_columns(kernels)
    gpu = [pd.DataFrame(cols)]
    if "memory_copies" in names:
        copies = _query(db, "select * from memory_copies order by start")
        copies = copies.drop(columns=["corr_id"], errors="ignore").rename(columns={"stack_id": "corr_id"})
        if len(copies):
            gpu.append(pd.DataFrame(_copy_columns(copies)))
    frame = pd.concat(gpu, ignore_index=True) if len(gpu) > 1 else gpu[0]
    frame["copy_kind"] = frame["copy_kind"].fillna("") if "copy_kind" in frame else ""
    frame["device"] = dispatch.dense_device(frame["device"].to_numpy())
    regions = _query(db, "select category, name, pid, tid, start, end, stack_id as corr_id from regions "
                         "order by start") \
        if "regions" in names else pd.DataFrame()
    runtime, annotations = _regions(regions)
    return EventTable.build(source_format="rocpd", paths=[str(path)], gpu=make_frame(GPU_COLUMNS, {
        k: (frame[k].to_numpy() if k not in ("name", "kind", "copy_kind") else frame[k].astype(object).to_numpy())
        for k in frame.columns}), runtime=runtime, annotations=annotations, devices=_agents(db),
        metadata={"rocpd": {r[0]: r[1] for r in db.execute("select tag, value from rocpd_metadata")}
                  if "rocpd_metadata" in names else {}})


def _copy_columns(copies: pd.DataFrame) -> dict[str, Any]:
    cols = dispatch.dispatch_columns(copies.drop(columns=["name"]), kind="memcpy")
    raw_kind = copies["name"].astype(str).str.replace("MEMORY_COPY_", "", regex=False)
    cols["copy_kind"] = raw_kind.map(_COPY).fillna("").to_numpy(dtype=object)
    cols["name"] = np.array([f"Memcpy {k}" if k else "Memcpy" for k in cols["copy_kind"]], dtype=object)
    cols["bytes"] = dispatch.ints(copies, "bytes")
    gpu_end = np.where(cols["copy_kind"] == "DtoH", copies["src_agent_abs_index"], copies["dst_agent_abs_index"])
    cols["device"] = np.asarray(gpu_end, dtype=np.int64)
    return cols


def _regions(regions: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """API calls -> runtime rows; markers (roctx ranges) -> user annotations."""
    if not len(regions):
        return make_frame(RUNTIME_COLUMNS, {}, 0), make_frame(ANNOTATION_COLUMNS, {}, 0)
    marker = regions["category"].astype(str).str.startswith("MARKER").to_numpy()
    start = regions["start"].to_numpy(np.int64)
    dur = regions["end"].to_numpy(np.int64) - start
    names = regions["name"].astype(str).to_numpy(dtype=object)
    runtime = make_frame(RUNTIME_COLUMNS, {
        "pid": regions["pid"].to_numpy()[~marker], "tid": regions["tid"].to_numpy()[~marker],
        "name": names[~marker], "start_ns": start[~marker], "dur_ns": dur[~marker],
        "correlation": regions["corr_id"].to_numpy()[~marker]})
    annotations = make_frame(ANNOTATION_COLUMNS, {
        "kind": np.full(int(marker.sum()), "user", dtype=object), "name": names[marker],
        "start_ns": start[marker], "dur_ns": dur[marker]})
    return runtime, annotations


def _agents(db: sqlite3.Connection) -> list[DeviceInfo]:
    out = []
    rows = db.execute("select type, name, product_name, extdata from rocpd_info_agent order by absolute_index")
    for kind, name, product, extdata in rows:
        if str(kind).upper() != "GPU":
            continue
        try:
            ext = json.loads(extdata or "{}")
        except json.JSONDecodeError:
            ext = {}
        out.append(DeviceInfo(index=len(out), name=product or None,
                              arch=name if str(name).startswith("gfx") else None, vendor="amd",
                              compute_units=ext.get("cu_count"), wave_size=ext.get("wave_front_size"),
                              extra={"num_xcc": ext.get("num_xcc"), "simd_per_cu": ext.get("simd_per_cu")}))
    return out


def _legacy(db: sqlite3.Connection, names: set[str], path: Path) -> EventTable:
    """Legacy rocprof results.db: KERN holds the kernel trace (else OPS), COPY the copies, HIP the API."""
    parts = []
    kern = _query(db, 'select * from "KERN"') if "KERN" in names else pd.DataFrame()
    if len(kern) and "BeginNs" in kern.columns:
        parts.append(pd.DataFrame(dispatch.dispatch_columns(kern)))
    elif "OPS" in names:
        ops = _query(db, 'select * from "OPS"')
        if len(ops):
            parts.append(pd.DataFrame(dispatch.dispatch_columns(ops)))
    if "COPY" in names:
        copy = _query(db, 'select * from "COPY"')
        if len(copy):
            cols = dispatch.dispatch_columns(copy, kind="memcpy")
            kinds = copy["Name"].astype(str).str.replace("Copy", "", regex=False).map(_COPY).fillna("")
            cols["copy_kind"] = kinds.to_numpy(dtype=object)
            parts.append(pd.DataFrame(cols))
    gpu = make_frame(GPU_COLUMNS, {}, 0)
    if parts:
        frame = pd.concat(parts, ignore_index=True).sort_values("start_ns", kind="stable")
        frame["device"] = dispatch.dense_device(frame["device"].to_numpy())
        frame["copy_kind"] = frame["copy_kind"].fillna("") if "copy_kind" in frame else ""
        gpu = make_frame(GPU_COLUMNS, {k: frame[k].to_numpy() if not isinstance(frame[k].dtype, pd.CategoricalDtype)
                                       else frame[k].astype(object).to_numpy() for k in frame.columns})
    runtime = make_frame(RUNTIME_COLUMNS, {}, 0)
    if "HIP" in names:
        hip = _query(db, 'select * from "HIP"')
        runtime = make_frame(RUNTIME_COLUMNS, {
            "pid": dispatch.ints(hip, "pid", 0), "tid": dispatch.ints(hip, "tid", 0),
            "name": hip["Name"].astype(str).to_numpy(dtype=object), "start_ns": dispatch.ints(hip, "start"),
            "dur_ns": dispatch.ints(hip, "end") - dispatch.ints(hip, "start")})
    return EventTable.build(source_format="rocprof-v1-db", paths=[str(path)], gpu=gpu, runtime=runtime)
