"""Occupancy of the kernels a trace dispatched, from the resources recorded with each dispatch
(rocprof/rocprofv3 VGPR/AGPR/SGPR/LDS/workgroup; CUPTI registers per thread and shared memory)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

_KEYS = ["name", "vgpr", "agpr", "sgpr", "lds_bytes", "block"]


def dispatch_occupancy(rows: pd.DataFrame, arch: str | None) -> list[dict]:
    """One entry per (kernel, resources) seen in `rows`: calls, total time and the occupancy result."""
    if not len(rows) or (rows["vgpr"].to_numpy() < 0).all():
        return []
    arch = arch or ""
    frame = rows[rows["vgpr"].to_numpy() >= 0]
    block = (frame["block_x"].clip(lower=1) * frame["block_y"].clip(lower=1) * frame["block_z"].clip(lower=1))
    frame = pd.DataFrame({"name": frame["name"].astype(str).to_numpy(), "vgpr": frame["vgpr"].to_numpy(),
                          "agpr": frame["agpr"].clip(lower=0).to_numpy(), "sgpr": frame["sgpr"].to_numpy(),
                          "lds_bytes": frame["lds_bytes"].clip(lower=0).to_numpy(), "block": block.to_numpy(),
                          "dur": frame["dur_ns"].to_numpy(np.int64)})
    groups = frame.groupby(_KEYS, sort=False)["dur"].agg(["count", "sum"]).reset_index()
    out = []
    for g in groups.sort_values("sum", ascending=False).head(50).itertuples(index=False):
        result = _compute(arch, g)
        entry = {"kernel": g.name, "calls": int(g.count), "total_us": g.sum / 1000.0, "arch": arch or None,
                 "vgpr": int(g.vgpr), "agpr": int(g.agpr), "sgpr": int(g.sgpr), "lds_bytes": int(g.lds_bytes),
                 "workgroup_size": int(g.block), "source": "dispatch"}
        out.append({**result, **entry})  # the engine's own (empty) kernel/source must not win
    return out


def _compute(arch: str, g: Any) -> dict:
    """The occupancy engine's answer, or why there is none (unknown arch, missing fields)."""
    if not arch:
        return {"error": "the trace does not say which GPU ran it: pass --gpu NAME (e.g. mi300x) for occupancy"}
    try:
        if arch.startswith("sm_"):
            from rocanalyze.occupancy.cuda import compute_cuda_occupancy

            occ = compute_cuda_occupancy(arch, regs_per_thread=int(g.vgpr), shared_bytes=int(g.lds_bytes),
                                         block_size=int(g.block))
        else:
            from rocanalyze.occupancy import compute_occupancy

            occ = compute_occupancy(arch, vgpr=int(g.vgpr), agpr=int(g.agpr),
                                    sgpr=int(g.sgpr) if g.sgpr >= 0 else None, lds_bytes=int(g.lds_bytes),
                                    workgroup_size=int(g.block))
    except Exception as err:  # an unknown arch is a caveat of this entry, not a failed analysis
        return {"error": f"{type(err).__name__}: {err}"}
    return occ.to_json()
