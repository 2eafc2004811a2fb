"""`--collector both`: join the torch.profiler pass and the rocprofv3 pass by kernel name and order.

The script ran twice, so timestamps differ; the k-th dispatch of a kernel name in one pass is
matched with the k-th dispatch of that name in the other. rocprofv3 adds what Kineto lacks
(registers, LDS, scratch per dispatch, its own durations); Kineto adds the launching op.

    torch pass:   gemm_a gemm_a relu        rocprof pass:  gemm_a gemm_a relu relu
    join.json:    gemm_a: torch 2, rocprof 2, matched 2;  relu: torch 1, rocprof 2, matched 1
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from rocanalyze import runfolder

JOIN_FILE = "join.json"
_RESOURCES = ("vgpr", "agpr", "sgpr", "lds_bytes", "scratch_bytes")


def _kernels(gpu: pd.DataFrame) -> pd.DataFrame:
    """Kernel rows in dispatch order with their occurrence number per name."""
    k = gpu[gpu["kind"].astype(str) == "kernel"].sort_values("start_ns", kind="stable")
    k = k.assign(name=k["name"].astype(str))
    return k.assign(nth=k.groupby("name").cumcount())


def join_passes(torch_gpu: pd.DataFrame, rocprof_gpu: pd.DataFrame) -> list[dict[str, Any]]:
    """Per kernel name: calls in each pass, dispatches matched by order, both passes' total µs, resources."""
    a, b = _kernels(torch_gpu), _kernels(rocprof_gpu)
    pairs = a[["name", "nth", "dur_ns"]].merge(b[["name", "nth", "dur_ns", *_RESOURCES]], on=["name", "nth"],
                                               suffixes=("_torch", "_rocprof"))
    out = []
    for name in sorted(set(a["name"]) | set(b["name"])):
        rows_b = b[b["name"] == name]
        matched = pairs[pairs["name"] == name]
        entry: dict[str, Any] = {
            "name": name, "torch_calls": int((a["name"] == name).sum()), "rocprof_calls": int(len(rows_b)),
            "matched": int(len(matched)),
            "torch_total_us": float(a.loc[a["name"] == name, "dur_ns"].sum()) / 1e3,
            "rocprof_total_us": float(rows_b["dur_ns"].sum()) / 1e3}
        for col in _RESOURCES:                   # the largest per-dispatch value; -1 where unknown
            entry[col] = int(rows_b[col].max()) if len(rows_b) else -1
        out.append(entry)
    return out


def write_join(run: Path, trace: Path, rocprof_file: Path) -> Path:
    """Read both passes with rocanalyze's readers and write rocprof/join.json."""
    from rocanalyze.traces import read

    entries = join_passes(read(trace).gpu, read(rocprof_file).gpu)
    unmatched = sum(e["torch_calls"] + e["rocprof_calls"] - 2 * e["matched"] for e in entries)
    return runfolder.write_json(run / "rocprof" / JOIN_FILE, {
        "how": "k-th dispatch of each kernel name in one pass matched with the k-th in the other",
        "torch": str(trace.relative_to(run)), "rocprof": str(rocprof_file.relative_to(run)),
        "unmatched_dispatches": unmatched, "kernels": entries})
