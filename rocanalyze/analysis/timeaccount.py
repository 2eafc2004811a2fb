"""Where the window's time goes on one device: busy by category (overlaps by precedence), idle by cause,
launch statistics and per-step figures. Category times + idle == window, to the nanosecond.

Idle causes, judged per idle gap from what the host was doing when the GPU ran dry:
  sync         the host sat in a synchronize (or blocking copy) call when the GPU went idle
  h2d_copy     the host was inside a host-to-device copy call (pageable copies block the host)
  launch_bound the next GPU activity was launched after the GPU went idle, by a host that was busy
               issuing work (framework + launch overhead per op)
  host_other   the host launched late after doing something else (Python, data loading, a long CPU op)
  other        work was queued but waited (graph-internal dependencies, cross-stream waits)
  unattributed the trace has no host runtime calls to judge by (kernel-only rocprof traces)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rocanalyze.analysis import intervals as iv
from rocanalyze.analysis.window import Window
from rocanalyze.paths import load_data_toml

NS_PER_US = 1000.0


@dataclass(frozen=True)
class TimeAccount:
    categories_ns: dict[str, int]
    busy_ns: int
    idle_ns: dict[str, int]
    overlap: dict[str, float]
    launch: dict[str, float]
    steps: list[dict]
    covered: dict[str, iv.Intervals]   # cumulative unions in precedence order (for per-bin/step sums)


def _runtime_mask(runtime: pd.DataFrame, patterns: list[str]) -> np.ndarray:
    names = runtime["name"].astype("category")
    rx = re.compile("|".join(patterns))
    hits = np.array([bool(rx.search(str(n))) for n in names.cat.categories], dtype=bool)
    codes = names.cat.codes.to_numpy()
    return hits[codes] if len(hits) else np.zeros(len(runtime), dtype=bool)


def sync_calls(runtime: pd.DataFrame, gpu: pd.DataFrame) -> np.ndarray:
    """Mask of the runtime calls that block the host on the GPU (analysis.toml [runtime].sync).

    A blocking call that itself launched a host-to-device copy (a synchronous hipMemcpyWithStream
    from pageable memory) is the copy's cost, not a sync: it is left to the h2d_copy cause. The
    host_sync pattern reads the same mask, so its calls and the "sync" idle agree.
    """
    mask = _runtime_mask(runtime, load_data_toml("analysis.toml")["runtime"]["sync"])
    if len(gpu) and mask.any():
        li = gpu["launch_index"].to_numpy(np.int64)
        h2d = li[(gpu["copy_kind"].astype(str).to_numpy() == "HtoD") & (li >= 0) & (li < len(runtime))]
        mask[h2d] = False
    return mask


def account(gpu: pd.DataFrame, runtime: pd.DataFrame, window: Window) -> TimeAccount:
    """Time accounting of `gpu` (one device, categories filled) on `window`."""
    cfg = load_data_toml("analysis.toml")
    lo, hi = window.start_ns, window.end_ns
    starts = gpu["start_ns"].to_numpy(np.int64)
    ends = starts + gpu["dur_ns"].to_numpy(np.int64)
    order = np.argsort(starts, kind="stable")
    s_sorted, e_sorted = starts[order], ends[order]
    cats = gpu["category"].astype(str).to_numpy()[order] if len(gpu) else np.zeros(0, dtype=object)

    categories_ns, covered = _by_precedence(s_sorted, e_sorted, cats, cfg["overlap"]["precedence"], lo, hi)
    busy = covered["__all__"]
    idle = _idle_by_cause(busy, s_sorted, gpu.iloc[order] if len(gpu) else gpu, runtime, lo, hi, cfg)
    per_stream = sum(iv.clip(iv.merge(starts[m], ends[m]), lo, hi).total
                     for m in (gpu["stream"].to_numpy() == s for s in np.unique(gpu["stream"].to_numpy())))
    comm = cats == "communication"
    comm_total = iv.clip(iv.merge(s_sorted[comm], e_sorted[comm], presorted=True), lo, hi).total
    overlap = {"precedence": cfg["overlap"]["precedence"],
               "overlapped_us": (per_stream - busy.total) / NS_PER_US,
               "communication_us": comm_total / NS_PER_US,
               "exposed_communication_us": categories_ns.get("communication", 0) / NS_PER_US}
    return TimeAccount(categories_ns, busy.total, idle, overlap,
                       _launch_stats(gpu, runtime, window, idle), _steps(window, covered), covered)


def _by_precedence(s: np.ndarray, e: np.ndarray, cats: np.ndarray, precedence: list[str], lo: int, hi: int
                   ) -> tuple[dict[str, int], dict[str, iv.Intervals]]:
    """Exclusive time per category: each instant goes to the first active category in `precedence`."""
    present = list(dict.fromkeys(cats.tolist()))
    ordered = [c for c in precedence if c in present] + [c for c in present if c not in precedence]
    covered_mask = np.zeros(len(s), dtype=bool)
    prev = iv.EMPTY
    out: dict[str, int] = {}
    cumulative: dict[str, iv.Intervals] = {}
    for cat in ordered:
        covered_mask |= cats == cat
        now = iv.clip(iv.merge(s[covered_mask], e[covered_mask], presorted=True), lo, hi)
        out[cat] = now.total - prev.total
        cumulative[cat] = now
        prev = now
    cumulative["__all__"] = prev
    return {k: v for k, v in out.items() if v > 0}, cumulative


def _idle_by_cause(busy: iv.Intervals, s_sorted: np.ndarray, gpu: pd.DataFrame, runtime: pd.DataFrame,
                   lo: int, hi: int, cfg: dict) -> dict[str, int]:
    gaps = iv.complement(busy, lo, hi)
    lengths = gaps.ends - gaps.starts
    if len(gaps) == 0:
        return {}
    if not len(runtime) or not len(gpu) or (gpu["launch_index"].to_numpy() < 0).all():
        return {"unattributed": int(lengths.sum())}
    slack = int(cfg["idle"]["clock_slack_ns"])
    r_start = runtime["start_ns"].to_numpy(np.int64)
    r_end = r_start + runtime["dur_ns"].to_numpy(np.int64)
    sync = sync_calls(runtime, gpu)
    sync_set = iv.merge(r_start[sync], r_end[sync] + slack)
    # host-to-device copy calls: the runtime calls that launched HtoD copies
    li = gpu["launch_index"].to_numpy(np.int64)
    h2d_rows = li[(gpu["copy_kind"].astype(str).to_numpy() == "HtoD") & (li >= 0)]
    h2d_set = iv.merge(r_start[h2d_rows], r_end[h2d_rows] + slack)
    # the GPU activity that ends each gap, and the host call that launched it
    nxt = np.searchsorted(s_sorted, gaps.ends, side="left")
    has_next = nxt < len(s_sorted)
    nxt_c = np.minimum(nxt, len(s_sorted) - 1)
    launch = li[nxt_c]
    has_launch = has_next & (launch >= 0)
    launch_c = np.maximum(launch, 0)
    graph = gpu["graph"].to_numpy(bool)[nxt_c]
    issue_gap = _issue_gaps(runtime)[launch_c]

    cause = np.full(len(gaps), "other", dtype=object)
    late = has_launch & (r_start[launch_c] > gaps.starts - slack)
    cause[late & ~graph & (issue_gap < cfg["idle"]["launch_issue_gap_ns"])] = "launch_bound"
    cause[late & (graph | (issue_gap >= cfg["idle"]["launch_issue_gap_ns"]))] = "host_other"
    cause[~has_next] = "host_other"          # trailing gap: the host issued nothing more in the window
    cause[iv.overlap_length(h2d_set, gaps.starts, gaps.ends) > 0] = "h2d_copy"
    cause[iv.contains(sync_set, gaps.starts)] = "sync"
    out: dict[str, int] = {}
    for name in np.unique(cause):
        out[str(name)] = int(lengths[cause == name].sum())
    return out


def _issue_gaps(runtime: pd.DataFrame) -> np.ndarray:
    """For each runtime call: ns since the previous runtime call on the same thread ended (inf if first)."""
    start = runtime["start_ns"].to_numpy(np.int64)
    end = start + runtime["dur_ns"].to_numpy(np.int64)
    tid = runtime["tid"].to_numpy(np.int64)
    order = np.lexsort((start, tid))
    gap = np.full(len(runtime), np.iinfo(np.int64).max, dtype=np.int64)
    same = tid[order][1:] == tid[order][:-1]
    prev_end = np.maximum.accumulate(end[order])  # nested calls: the latest end so far on the thread
    g = start[order][1:] - prev_end[:-1]
    gap_sorted = np.where(same, g, np.iinfo(np.int64).max)
    gap[order[1:]] = gap_sorted
    return gap


def _launch_stats(gpu: pd.DataFrame, runtime: pd.DataFrame, window: Window, idle: dict[str, int]) -> dict:
    kernels = gpu[gpu["kind"].astype(str) == "kernel"]
    n = len(kernels)
    out: dict[str, float] = {"kernels": n, "launch_overhead_us": idle.get("launch_bound", 0) / NS_PER_US}
    li = kernels["launch_index"].to_numpy(np.int64)
    has = li >= 0
    if has.any() and len(runtime):
        r_start = runtime["start_ns"].to_numpy(np.int64)[li[has]]
        r_dur = runtime["dur_ns"].to_numpy(np.int64)[np.unique(li[has])]
        launch_mean = float(r_dur.mean())
        out["launch_call_mean_us"] = launch_mean / NS_PER_US
        delay = kernels["start_ns"].to_numpy(np.int64)[has] - r_start
        out["launch_to_start_mean_us"] = float(delay.mean()) / NS_PER_US
        out["short_kernel_share"] = float((kernels["dur_ns"].to_numpy() < launch_mean).mean()) if n else 0.0
    if n:
        out["kernel_mean_us"] = float(kernels["dur_ns"].mean()) / NS_PER_US
    if window.steps:
        out["kernels_per_step"] = n / len(window.steps)
    return out


def _steps(window: Window, covered: dict[str, iv.Intervals]) -> list[dict]:
    if not window.steps:
        return []
    edges = np.array([s.start_ns for s in window.steps] + [window.end_ns], dtype=np.int64)
    keys = [k for k in covered if k != "__all__"]
    cum = {k: np.diff(iv.coverage(covered[k], edges)) for k in keys}
    busy = np.diff(iv.coverage(covered["__all__"], edges))
    rows = []
    prev = np.zeros(len(edges) - 1, dtype=np.int64)
    per_cat: dict[str, np.ndarray] = {}
    for k in keys:  # cumulative unions in precedence order: differences are exclusive times
        per_cat[k] = cum[k] - prev
        prev = cum[k]
    for i, step in enumerate(window.steps):
        rows.append({"name": step.name, "start_us": step.start_ns / NS_PER_US,
                     "dur_us": (edges[i + 1] - edges[i]) / NS_PER_US, "busy_us": busy[i] / NS_PER_US,
                     "categories_us": {k: v[i] / NS_PER_US for k, v in per_cat.items() if v[i] > 0}})
    return rows
