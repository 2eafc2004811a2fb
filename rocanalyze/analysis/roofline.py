"""Achieved rates and roofline placement, per op and per kernel: `model_ops(table, gpu)`.

GPU time is attributed to the op that launched it (`gpu.op_index`, the innermost op), so an
`aten::linear` whose kernels were launched by its `aten::addmm` child is counted once, as addmm.
Ops are grouped by (op, shapes, dtypes); each group gets FLOPs and bytes from opmodel, achieved
TFLOP/s and GB/s over its GPU time, arithmetic intensity, the bound (memory or compute: which side
of the ridge point it sits) and efficiency against the roof at its intensity:
min(peak, intensity x bandwidth). A kernel's rates take its share (by duration) of its op's work.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rocanalyze.analysis.gpu_spec import GpuSpec
from rocanalyze.analysis.opmodel import OpCost, op_cost

STRIDE_HOTSPOT_ARCHS = ("gfx942",)  # seed 001: MI300 TA channel hot-spotting on 512-byte strides
STRIDE_HOTSPOT_BYTES = 512
TORCH_FLOPS_TOLERANCE = 0.01

# rocprof-compute's per-dispatch work (ROCm/rocprofiler-compute src/utils/roofline_calc.py, calc_ai):
# VALU instructions count 64 lanes (FMA twice), MFMA "MOPS" counters count 512 FLOPs each.
VALU_COUNTERS = {f"SQ_INSTS_VALU_{op}_{t}": 64 * (2 if op == "FMA" else 1)
                 for op in ("ADD", "MUL", "FMA", "TRANS") for t in ("F16", "F32", "F64")}
MFMA_COUNTERS = {f"SQ_INSTS_VALU_MFMA_MOPS_{t}": 512 for t in ("F16", "BF16", "F32", "F64", "F8")}


def peak_key(gpu: GpuSpec, dtype: str | None, matrix: bool) -> str | None:
    """Which of the GPU's peaks bounds an op of this dtype: matrix units for GEMM/conv/attention."""
    if dtype is None:
        return None
    if not matrix:
        return "fp64" if dtype == "fp64" else "fp32"
    if dtype == "fp32":
        # fp32 GEMMs run on AMD's fp32 matrix cores; on NVIDIA torch keeps TF32 off by default
        return "fp32_matrix" if "fp32_matrix" in gpu.peak_tflops else "fp32"
    return dtype if dtype in ("fp64", "fp16", "bf16", "fp8", "int8") else None


def place(flops: float | None, nbytes: float | None, seconds: float, gpu: GpuSpec,
          peak: str | None) -> dict[str, Any]:
    """Achieved TFLOP/s, GB/s, FLOP/byte, bound, and efficiency (0..1) vs the roof at that intensity."""
    out: dict[str, Any] = {"tflops": None, "gbps": None, "intensity": None, "bound": None,
                           "efficiency": None, "roof_tflops": None, "peak": peak}
    if seconds <= 0:
        return out
    if flops is not None:
        out["tflops"] = flops / seconds / 1e12
    if nbytes:
        out["gbps"] = nbytes / seconds / 1e9
        if flops is not None:
            out["intensity"] = flops / nbytes
    peak_tf = gpu.peak_tflops.get(peak) if peak else None
    bw = gpu.memory_bw_gbps
    if bw and out["gbps"] is not None and not flops:
        out["bound"], out["efficiency"] = "memory", out["gbps"] / bw
    elif peak_tf and bw and out["intensity"] is not None:
        roof = min(peak_tf, out["intensity"] * bw / 1e3)
        out["roof_tflops"] = roof
        out["bound"] = "compute" if out["intensity"] * bw / 1e3 >= peak_tf else "memory"
        out["efficiency"] = out["tflops"] / roof
    elif peak_tf and out["tflops"] is not None and nbytes is None:
        out["bound"], out["roof_tflops"], out["efficiency"] = "compute", peak_tf, out["tflops"] / peak_tf
    return out


def counter_work(c: Any) -> tuple[Any, Any] | None:
    """(FLOPs, HBM bytes) from rocprof-compute counters: of one dispatch (a mapping), or per row (a
    DataFrame, giving two Series); None when no FLOP counter is there."""
    def get(name: str) -> Any:
        v = c.get(name)
        if isinstance(v, pd.Series):
            return v.fillna(0.0).astype(float)
        return 0.0 if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    weights = {**VALU_COUNTERS, **MFMA_COUNTERS}
    names = [k for k in weights if k in c]
    if not names:
        return None
    flops = sum(get(k) * weights[k] for k in names)
    if "TCC_BUBBLE_sum" in c:     # MI300: 128-byte reads show up as bubbles
        rd = (get("TCC_BUBBLE_sum") * 128 + get("TCC_EA0_RDREQ_32B_sum") * 32
              + (get("TCC_EA0_RDREQ_sum") - get("TCC_BUBBLE_sum") - get("TCC_EA0_RDREQ_32B_sum")) * 64)
        wr = (get("TCC_EA0_WRREQ_sum") - get("TCC_EA0_WRREQ_64B_sum")) * 32 + get("TCC_EA0_WRREQ_64B_sum") * 64
    else:                         # MI200 names
        rd = get("TCC_EA_RDREQ_32B_sum") * 32 + (get("TCC_EA_RDREQ_sum") - get("TCC_EA_RDREQ_32B_sum")) * 64
        wr = get("TCC_EA_WRREQ_64B_sum") * 64 + (get("TCC_EA_WRREQ_sum") - get("TCC_EA_WRREQ_64B_sum")) * 32
    return flops, rd + wr


@dataclass
class _Group:
    """One (op, shapes, dtypes) group being accumulated."""

    first: int
    cost: OpCost | None
    calls: int = 0
    time_ns: int = 0
    flops: float = 0.0
    bytes: float = 0.0
    measured_calls: int = 0
    measured_flops: float = 0.0
    measured_bytes: float = 0.0
    torch_flops: float = 0.0
    torch_calls: int = 0
    host_copy_ns: int = 0
    kernels: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0, 0.0]))
    categories: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    modules: set[str] = field(default_factory=set)
    min_workgroups: int | None = None


@dataclass
class _Rows:
    """GPU rows launched by known ops or carrying counters, sorted by op (one slice per op call; -1 first)."""

    op: np.ndarray
    dur: np.ndarray
    name: list[str]
    category: list[str]
    host_copy: np.ndarray
    kernel: np.ndarray      # a kernel, not a memcpy/memset (those get no share of the op's FLOPs)
    workgroups: np.ndarray
    flops: np.ndarray       # measured by counters; NaN where not measured
    bytes: np.ndarray


def model_ops(table: Any, gpu: GpuSpec) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(ops, kernels): one roofline entry per (op, shapes, dtypes) and rates per kernel name, by GPU time.

    Where `table.metadata["counters"]` holds hardware counters per GPU row (the readers' DataFrame:
    `gpu_row` plus one column per counter), measured FLOPs and HBM bytes replace the model's.
    """
    rows = _gpu_rows(table.gpu, table.metadata.get("counters"))
    if rows is None:
        return [], []
    ops = table.ops
    cols = {c: ops[c].tolist() for c in ("name", "shapes", "dtypes", "strides", "concrete", "module")}
    torch_flops = ops["flops"].to_numpy(dtype=float)
    groups: dict[tuple[str, str, str], _Group] = {}
    kernel_work: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0])  # calls, ns, flops, bytes
    kernel_peaks: dict[str, str | None] = {}
    uniq, starts = np.unique(rows.op, return_index=True)
    bounds = list(starts[1:]) + [len(rows.op)]
    for i, lo, hi in zip(uniq.tolist(), starts.tolist(), bounds, strict=True):
        if i < 0:   # rows with counters but no launching op: kernel rates only
            _add_kernels(kernel_work, kernel_peaks, rows, lo, hi, None, None)
            continue
        name = str(cols["name"][i])
        cost = op_cost(name, cols["shapes"][i], cols["dtypes"][i], cols["strides"][i], cols["concrete"][i])
        key = (name, json.dumps(cols["shapes"][i]), json.dumps(cols["dtypes"][i]))
        g = groups.get(key)
        if g is None:
            g = groups[key] = _Group(first=i, cost=cost)
        _add_call(g, rows, lo, hi, cost, torch_flops[i], cols["module"][i])
        peak = peak_key(gpu, cost.dtype, cost.matrix) if cost else None
        _add_kernels(kernel_work, kernel_peaks, rows, lo, hi, cost, peak, g)
    entries = [_entry(key, g, cols["strides"][g.first], gpu) for key, g in groups.items()]
    entries.sort(key=lambda e: -e["time_us"])
    kernels = [_kernel_entry(name, kw, gpu, kernel_peaks[name]) for name, kw in kernel_work.items()]
    kernels.sort(key=lambda k: -k["time_us"])
    return entries, kernels


def _add_call(g: _Group, rows: _Rows, lo: int, hi: int, cost: OpCost | None, torch_flops: float,
              module: Any) -> None:
    """Accumulate one op call (GPU rows lo:hi) into its group."""
    durs = rows.dur[lo:hi]
    g.calls += 1
    g.time_ns += int(durs.sum())
    g.host_copy_ns += int(durs[rows.host_copy[lo:hi]].sum())
    if cost is not None:
        g.flops += cost.flops
        g.bytes += cost.bytes
    mf, mb = rows.flops[lo:hi], rows.bytes[lo:hi]
    if not np.isnan(mf).any():
        g.measured_calls += 1
        g.measured_flops += float(mf.sum())
        g.measured_bytes += float(mb.sum())
    if not math.isnan(torch_flops):
        g.torch_flops += float(torch_flops)
        g.torch_calls += 1
    if module:
        g.modules.add(str(module))
    main = lo + int(np.argmax(durs))
    if rows.workgroups[main] > 0:
        wg = int(rows.workgroups[main])
        g.min_workgroups = wg if g.min_workgroups is None else min(g.min_workgroups, wg)


def _add_kernels(kernel_work: dict[str, list[float]], kernel_peaks: dict[str, str | None], rows: _Rows,
                 lo: int, hi: int, cost: OpCost | None, peak: str | None, g: _Group | None = None) -> None:
    """Give each kernel of one op call its measured work, or its share of the op's modeled work.

    The modeled FLOPs go to the op's longest kernel (the GEMM, not its split-K reduce or workspace
    memset: each would otherwise show the op's rate); the modeled bytes are split over its kernels by
    duration. Copies and memsets an op launches get no share.
    """
    weights = np.where(rows.kernel[lo:hi], rows.dur[lo:hi], 0).astype(float)
    if weights.sum() <= 0:
        weights = rows.dur[lo:hi].astype(float)
    total = float(weights.sum())
    main = lo + int(np.argmax(weights))
    for j in range(lo, hi):
        kname, dur = rows.name[j], float(rows.dur[j])
        if g is not None:
            g.kernels[kname][0] += 1
            g.kernels[kname][1] += dur
            g.categories[rows.category[j]] += dur
        share = weights[j - lo] / total if total > 0 else 0.0
        kw = kernel_work[kname]
        kw[0] += 1
        kw[1] += dur
        if not math.isnan(rows.flops[j]):
            kw[2] += rows.flops[j]
            kw[3] += rows.bytes[j]
        else:
            kw[2] += (cost.flops if j == main else 0.0) if cost else math.nan
            kw[3] += cost.bytes * share if cost else math.nan
        kernel_peaks.setdefault(kname, peak)


def _gpu_rows(gpu: pd.DataFrame, counters: Any) -> _Rows | None:
    """GPU rows launched by a known op or measured by counters, sorted by op, with workgroup counts."""
    flops = np.full(len(gpu), np.nan)
    nbytes = np.full(len(gpu), np.nan)
    if isinstance(counters, pd.DataFrame) and not counters.empty and (work := counter_work(counters)):
        # the readers give `gpu_row`, the row's position in the unwindowed gpu frame (its index label)
        keys = counters["gpu_row"].to_numpy() if "gpu_row" in counters else counters.index.to_numpy()
        pos = gpu.index.get_indexer(keys)
        hit = pos >= 0
        flops[pos[hit]] = np.asarray(work[0], dtype=float)[hit]
        nbytes[pos[hit]] = np.asarray(work[1], dtype=float)[hit]
    keep = (gpu["op_index"].to_numpy() >= 0) | ~np.isnan(flops)
    if not keep.any():
        return None
    work = gpu[keep]
    order = np.argsort(work["op_index"].to_numpy(), kind="stable")
    work = work.iloc[order]
    grid = work[["grid_x", "grid_y", "grid_z"]].to_numpy(dtype=np.int64)
    known = (grid > 0).all(axis=1)
    kinds = work["kind"].astype(str).to_numpy()
    copy_kind = work["copy_kind"].astype(str).to_numpy()
    return _Rows(op=np.maximum(work["op_index"].to_numpy(np.int64), -1), dur=work["dur_ns"].to_numpy(np.int64),
                 name=work["name"].astype(str).tolist(), category=work["category"].astype(str).tolist(),
                 host_copy=(kinds == "memcpy") & np.isin(copy_kind, ["HtoD", "DtoH", "HtoH"]),
                 kernel=kinds == "kernel",
                 workgroups=np.where(known, grid.clip(min=1).prod(axis=1), -1),
                 flops=flops[keep][order], bytes=nbytes[keep][order])


def _entry(key: tuple[str, str, str], g: _Group, strides: Any, gpu: GpuSpec) -> dict[str, Any]:
    cost = g.cost
    seconds = g.time_ns / 1e9
    kernel_category = max(g.categories.items(), key=lambda kv: kv[1])[0] if g.categories else ""
    entry: dict[str, Any] = {
        "op": key[0], "shapes": json.loads(key[1]), "dtypes": json.loads(key[2]), "strides": strides,
        "category": cost.category if cost else (kernel_category or "other"),
        "kernel_category": kernel_category, "calls": g.calls, "time_us": g.time_ns / 1e3,
        "flops": g.flops if cost else None, "bytes": g.bytes if cost else None, "modeled": cost is not None,
        "module": sorted(g.modules)[0] if g.modules else "",
        "kernels": [{"name": n, "calls": int(c), "time_us": t / 1e3}
                    for n, (c, t) in sorted(g.kernels.items(), key=lambda kv: -kv[1][1])[:3]],
        "notes": [],
    }
    entry["work_source"] = "model" if cost else None
    if g.measured_calls == g.calls:
        entry.update(model_flops=entry["flops"], model_bytes=entry["bytes"], flops=g.measured_flops,
                     bytes=g.measured_bytes, work_source="counters")
    peak = peak_key(gpu, cost.dtype, cost.matrix) if cost else None
    entry.update(place(entry["flops"], entry["bytes"], seconds, gpu, peak))
    if entry["efficiency"] is not None and entry["efficiency"] > 1.05 and entry["bound"] == "memory":
        entry["notes"].append("above the DRAM roof: its data was served from cache (L2 or Infinity Cache)")
    if g.host_copy_ns and g.host_copy_ns >= 0.5 * g.time_ns:
        entry["efficiency"] = entry["bound"] = None
        entry["notes"].append("host<->device copy: bounded by the host link, not device memory")
    if cost is not None:
        if cost.gemm:
            entry["gemm"] = cost.gemm
            entry["stride_check"] = _stride_check(cost, gpu)
        if cost.detail and not cost.gemm:
            entry["detail"] = cost.detail
        if "assumed" in cost.detail:
            entry["notes"].append(cost.detail["assumed"])
    if cost is not None and cost.category == "gemm":
        entry["grid_check"] = _grid_check(g.min_workgroups, gpu)
    if g.torch_calls:
        entry["torch_flops"] = g.torch_flops
        if cost is not None and g.torch_flops > 0:
            diff = (g.flops - g.torch_flops) / g.torch_flops
            entry["torch_flops_diff"] = diff
            if abs(diff) > TORCH_FLOPS_TOLERANCE:
                entry["notes"].append(f"torch's own flops ({g.torch_flops:.4g}) differ from the model's "
                                      f"({g.flops:.4g}) by {100 * diff:+.1f}%")
    return entry


def _stride_check(cost: OpCost, gpu: GpuSpec) -> dict[str, Any]:
    """Leading dimensions in bytes and whether they hit MI300's 512-byte channel hot-spotting (seed 001)."""
    applies = (gpu.arch or "") in STRIDE_HOTSPOT_ARCHS
    out: dict[str, Any] = {"applies": applies, "multiple_bytes": STRIDE_HOTSPOT_BYTES}
    hits = []
    for operand in ("lda", "ldb"):
        ld = cost.detail.get(operand)
        out[operand] = ld
        if ld and ld.get("ld_bytes") and ld["ld_bytes"] % STRIDE_HOTSPOT_BYTES == 0:
            hits.append(operand)
    out["multiple_of_512"] = hits
    out["hotspot"] = bool(applies and hits)
    return out


def _grid_check(workgroups: int | None, gpu: GpuSpec) -> dict[str, Any]:
    """Whether the GEMM's main kernel launched fewer workgroups than it takes to fill the GPU."""
    threshold = gpu.grid_threshold()
    small = None if workgroups is None or threshold is None else workgroups < threshold
    return {"workgroups": workgroups, "threshold": threshold, "small": small,
            "compute_units": gpu.compute_units}


def _kernel_entry(name: str, kw: list[float], gpu: GpuSpec, peak: str | None) -> dict[str, Any]:
    calls, ns, flops, nbytes = int(kw[0]), float(kw[1]), kw[2], kw[3]
    flops_v = None if math.isnan(flops) else flops
    bytes_v = None if math.isnan(nbytes) else nbytes
    return {"name": name, "calls": calls, "time_us": ns / 1e3, "flops": flops_v, "bytes": bytes_v,
            **place(flops_v, bytes_v, ns / 1e9, gpu, peak)}
