"""Trace quality, reported rather than hidden: drops, skew, orphan kernels, overlaps on one stream.

Every reader calls `assess(table)`; the keys are the same for all formats (0 where not seen,
None where the format cannot tell).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from rocanalyze.traces.schema import EventTable

_DROP = re.compile(r"overflow|dropped|drop(ped)? events|buffer full|lost", re.I)


def assess(table: EventTable, other_events: dict[str, int] | None = None,
           dropped: int | None = None) -> dict[str, Any]:
    """Quality facts of one table: counts, and worst values in ns."""
    gpu = table.gpu
    gpu["start_ns"].to_numpy()
    dur = gpu["dur_ns"].to_numpy()
    kernel = (gpu["kind"] == "kernel").to_numpy()
    out: dict[str, Any] = {
        "gpu_events": int(len(gpu)),
        "kernels": int(kernel.sum()),
        "sub_us_kernels": int((kernel & (dur < 1000)).sum()),
        "nonpositive_durations": int((dur <= 0).sum()),
    }
    drop_markers = {k: v for k, v in (other_events or {}).items() if _DROP.search(k)}
    out["dropped_events"] = dropped if dropped is not None else sum(drop_markers.values())
    out["drop_markers"] = drop_markers
    out.update(_launch_facts(table, kernel))
    out.update(_stream_overlaps(gpu))
    return out


def _launch_facts(table: EventTable, kernel: np.ndarray) -> dict[str, Any]:
    """Kernels without a launch call, and device-before-host starts (host/device clock skew)."""
    gpu, runtime = table.gpu, table.runtime
    launch = gpu["launch_index"].to_numpy()
    if not len(runtime):
        return {"kernels_without_launch": None, "skewed_launches": None, "max_skew_ns": None}
    linked = launch >= 0
    rt_start = runtime["start_ns"].to_numpy()
    early = np.zeros(len(gpu), bool)
    early[linked] = gpu["start_ns"].to_numpy()[linked] < rt_start[launch[linked]]
    skew = rt_start[launch[early]] - gpu["start_ns"].to_numpy()[early]
    return {"kernels_without_launch": int((kernel & ~linked).sum()),
            "skewed_launches": int(early.sum()),
            "max_skew_ns": int(skew.max()) if len(skew) else 0}


def _stream_overlaps(gpu: Any) -> dict[str, Any]:
    """GPU work that starts before the previous item on the same stream ended (negative gap)."""
    if len(gpu) < 2:
        return {"negative_gaps": 0, "worst_negative_gap_ns": 0}
    stream = (gpu["rank"].to_numpy().astype(np.int64) << 48) ^ (gpu["device"].to_numpy().astype(np.int64)
                                                                 << 40) ^ gpu["stream"].to_numpy()
    start = gpu["start_ns"].to_numpy()
    order = np.lexsort((start, stream))
    s, st = stream[order], start[order]
    end = st + gpu["dur_ns"].to_numpy()[order]
    same = s[1:] == s[:-1]
    gap = st[1:] - end[:-1]
    neg = same & (gap < 0)
    return {"negative_gaps": int(neg.sum()), "worst_negative_gap_ns": int(-gap[neg].min()) if neg.any() else 0}
