"""Kineto column batches -> EventTable: GPU rows joined to their runtime call and launching op.

    kernel (correlation 5179) --correlation--> hipLaunchKernel (External id 45) --ext id--> aten::cat
    gpu.launch_index = row of the runtime call; gpu.op_index = row of the op; all vectorised.
"""

from __future__ import annotations

import re
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocanalyze.traces import kineto_python, quality
from rocanalyze.traces.keys import join_key as _key
from rocanalyze.traces.keys import lookup
from rocanalyze.traces.kineto_events import decode_inputs
from rocanalyze.traces.schema import (
    ANNOTATION_COLUMNS,
    GPU_COLUMNS,
    OP_COLUMNS,
    RUNTIME_COLUMNS,
    EventTable,
    make_frame,
)

_GLOBAL_SIZE_LAUNCH = frozenset({"hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel"})
_GRAPH_LAUNCH = {"cudaGraphLaunch", "hipGraphLaunch", "cuGraphLaunch", "cudaGraphLaunch_v10000",
                 "hipGraphLaunch_spt", "cudaGraphLaunch_ptsz"}
_COPY = re.compile(r"^Memcpy (HtoD|DtoH|DtoD|HtoH|PtoP|DtoA|AtoD|AtoH|HtoA|AtoA)")
_COPY_NAMES = {"DtoA": "DtoD", "AtoD": "DtoD", "AtoA": "DtoD", "AtoH": "DtoH", "HtoA": "HtoD"}


def _triples(values: list[Any]) -> np.ndarray:
    """(n, 3) int64 from [x, y, z] lists (None or malformed -> -1)."""
    out = np.full((len(values), 3), -1, np.int64)
    rows = [i for i, v in enumerate(values) if v is not None]
    if not rows:
        return out
    picked = [values[i] for i in rows]
    flat = list(chain.from_iterable(picked))
    if len(flat) == 3 * len(rows):
        try:
            out[rows] = np.array(flat, dtype=np.int64).reshape(-1, 3)
            return out
        except (TypeError, ValueError):
            pass
    for i, v in zip(rows, picked, strict=False):  # malformed somewhere: row by row
        if isinstance(v, list) and len(v) == 3 and all(isinstance(x, int) for x in v):
            out[i] = v
    return out


def _ranks(cols: dict[str, Any], default: int) -> np.ndarray:
    rank = cols.get("rank", np.zeros(0, np.int64))
    return np.where(rank >= 0, rank, default).astype(np.int32)


def _runtime(batches: Any, rank_default: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    cols = batches.table(1)
    names = batches.names[1]
    n = len(cols.get("start_ns", []))
    if not n:
        return make_frame(RUNTIME_COLUMNS, {}, 0), {"ext_id": np.zeros(0, np.int64), "grid": [], "block": []}
    frame = make_frame(RUNTIME_COLUMNS, {
        "rank": _ranks(cols, rank_default), "pid": cols["pid"], "tid": cols["tid"],
        "name": names.categorical(cols["name"]), "start_ns": cols["start_ns"], "dur_ns": cols["dur_ns"],
        "correlation": cols["correlation"]})
    return frame, cols


def _ops(batches: Any, rank_default: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The ops table sorted by (rank, pid, tid, start, longest first), with parents; and op ext keys."""
    cols = batches.table(2)
    if not cols:
        return make_frame(OP_COLUMNS, {}, 0), np.zeros(0, np.int64)
    rank = _ranks(cols, rank_default)
    order = np.lexsort((-cols["dur_ns"], cols["start_ns"], cols["tid"], cols["pid"], rank))
    data = {"rank": rank[order], "pid": cols["pid"][order], "tid": cols["tid"][order],
            "name": batches.names[2].categorical(cols["name"][order]),
            "start_ns": cols["start_ns"][order], "dur_ns": cols["dur_ns"][order],
            "ext_id": cols["ext_id"][order], "flops": cols["flops"][order]}
    inputs = decode_inputs(cols["inputs"])
    for i, key in enumerate(("shapes", "dtypes", "strides", "concrete")):
        data[key] = inputs[i][order]
    data["parent"] = parents(data["pid"] * (1 << 24) + data["tid"], data["start_ns"], data["dur_ns"])
    frame = make_frame(OP_COLUMNS, data)
    return frame, _key(data["rank"], data["ext_id"])


def parents(thread: np.ndarray, start: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """Row of the innermost enclosing interval on the same thread (rows sorted by thread, start); -1 none."""
    out = [-1] * len(start)
    stack: list[int] = []
    ends = (start + dur).tolist()
    threads = thread.tolist()
    starts = start.tolist()
    for i in range(len(starts)):
        while stack and (threads[stack[-1]] != threads[i] or ends[stack[-1]] < ends[i]
                         or ends[stack[-1]] <= starts[i]):
            stack.pop()
        out[i] = stack[-1] if stack else -1
        stack.append(i)
    return np.asarray(out, dtype=np.int64)


def _copy_columns(names: pd.Categorical) -> tuple[pd.Categorical, np.ndarray]:
    """copy_kind and pageable from names like 'Memcpy HtoD (Pageable -> Device)', per distinct name."""
    kinds, pageable = [], []
    for name in names.categories:
        m = _COPY.match(str(name))
        kinds.append(_COPY_NAMES.get(m.group(1), m.group(1)) if m else "")
        pageable.append("Pageable" in str(name))
    codes = names.codes
    return (pd.Categorical(np.asarray(kinds, dtype=object)[codes]) if len(codes) else pd.Categorical([]),
            np.asarray(pageable, dtype=bool)[codes] if len(codes) else np.zeros(0, bool))


def _gpu(batches: Any, rank_default: int, runtime: pd.DataFrame, rt_cols: dict[str, Any],
         op_keys: np.ndarray) -> pd.DataFrame:
    cols = batches.table(0)
    if not cols:
        return make_frame(GPU_COLUMNS, {}, 0)
    rank = _ranks(cols, rank_default)
    names = batches.names[0].categorical(cols["name"])
    cats = cols["cat"]
    _correlation_from_flows(cols, batches.table(5))
    kind = np.where(np.char.find(cats.astype(str), "memcpy") >= 0, "memcpy",
                    np.where(np.char.find(cats.astype(str), "memset") >= 0, "memset", "kernel"))
    launch = lookup(_key(rank, cols["correlation"]),
                    _key(runtime["rank"].to_numpy(), runtime["correlation"].to_numpy()))
    has = launch >= 0
    ext = cols["ext_id"].copy()
    rt_ext = rt_cols["ext_id"]
    ext[(ext < 0) & has] = rt_ext[launch[(ext < 0) & has]]
    op_index = lookup(_key(rank, ext), op_keys)
    grid, block = _triples(cols["grid"]), _triples(cols["block"])
    if len(rt_cols.get("grid", [])):  # ROCm kernels carry no grid: the launch call has it
        rt_grid, rt_block = _triples(rt_cols["grid"]), _triples(rt_cols["block"])
        fill = has & (grid[:, 0] < 0)
        grid[fill] = rt_grid[launch[fill]]
        block[fill] = rt_block[launch[fill]]
    if len(runtime):
        # hipExtModuleLaunchKernel/hipHccModuleLaunchKernel take the global size in work-items, and the
        # kernel event repeats it (Tensile/hipBLASLt GEMMs: 73728 = 288 workgroups x 256): normalise
        global_size = runtime["name"].cat.categories.isin(list(_GLOBAL_SIZE_LAUNCH))
        items = np.zeros(len(rank), bool)
        items[has] = global_size[runtime["name"].cat.codes.to_numpy()[launch[has]]]
        items &= (grid > 0).all(axis=1) & (block > 0).all(axis=1)
        grid[items] = -(-grid[items] // block[items])
    rt_names = runtime["name"].cat.categories.isin(list(_GRAPH_LAUNCH))
    graph = np.zeros(len(rank), bool)
    if len(runtime):
        graph[has] = rt_names[runtime["name"].cat.codes.to_numpy()[launch[has]]]
    copy_kind, pageable = _copy_columns(names)
    device = np.where(cols["device"] >= 0, cols["device"], cols["pid"])
    return make_frame(GPU_COLUMNS, {
        "rank": rank, "device": device, "stream": np.where(cols["stream"] != 0, cols["stream"], cols["tid"]),
        "kind": kind, "name": names, "start_ns": cols["start_ns"], "dur_ns": cols["dur_ns"],
        "correlation": cols["correlation"], "grid_x": grid[:, 0], "grid_y": grid[:, 1],
        "grid_z": grid[:, 2], "block_x": block[:, 0], "block_y": block[:, 1], "block_z": block[:, 2],
        "vgpr": cols["vgpr"], "lds_bytes": cols["lds_bytes"], "bytes": cols["bytes"],
        "copy_kind": copy_kind, "pageable": pageable, "graph": graph, "op_index": op_index,
        "launch_index": launch})


def _correlation_from_flows(cols: dict[str, Any], flows: dict[str, Any]) -> None:
    """GPU events without a `correlation` arg take it from the flow (ac2g 'f') ending on them, in place.

    Kineto draws each launch -> kernel arrow as a flow whose id is the correlation id; the arrow's
    end sits on the GPU event's (pid, tid, ts).
    """
    missing = np.flatnonzero(cols["correlation"] < 0)
    if not len(missing) or not flows or not len(flows.get("id", [])):
        return
    ends = ~flows["ph"]
    table = pd.DataFrame({"pid": flows["pid"][ends], "tid": flows["tid"][ends], "ts": flows["ts"][ends],
                          "id": flows["id"][ends]}).drop_duplicates(["pid", "tid", "ts"])
    want = pd.DataFrame({"pid": cols["pid"][missing], "tid": cols["tid"][missing],
                         "ts": cols["start_ns"][missing], "row": missing})
    hit = want.merge(table, on=["pid", "tid", "ts"], how="inner")
    cols["correlation"][hit["row"].to_numpy()] = hit["id"].to_numpy()


def _annotations(batches: Any, rank_default: int) -> pd.DataFrame:
    cols = batches.table(3)
    if not cols:
        return make_frame(ANNOTATION_COLUMNS, {}, 0)
    names = batches.names[3].categorical(cols["name"])
    is_step = names.categories.str.startswith("ProfilerStep#")[names.codes] if len(names) else np.zeros(0, bool)
    kind = np.where(cols["gpu"], "gpu_user", np.where(is_step, "step", "user"))
    return make_frame(ANNOTATION_COLUMNS, {"rank": _ranks(cols, rank_default), "kind": kind, "name": names,
                                           "start_ns": cols["start_ns"], "dur_ns": cols["dur_ns"]})


def build(batches: Any, meta: dict[str, Any], path: Path) -> EventTable:
    """Assemble the EventTable of one Kineto file from its column batches and metadata."""
    rank_default = meta["rank"] if meta["rank"] is not None else 0
    runtime, rt_cols = _runtime(batches, rank_default)
    ops, op_keys = _ops(batches, rank_default)
    gpu = _gpu(batches, rank_default, runtime, rt_cols, op_keys)
    notes: list[str] = []
    if len(ops):
        kineto_python.attach_frames(ops, batches, notes)
    table = EventTable.build(
        source_format="kineto", paths=[str(path)], gpu=gpu, runtime=runtime, ops=ops,
        annotations=_annotations(batches, rank_default), devices=meta["devices"],
        metadata={**meta["doc"], "vendor": meta["vendor"], "world_size": meta["world_size"],
                  "processes": meta["processes"]},
        notes=notes)
    table.quality = quality.assess(table, other_events=batches.other)
    return table
