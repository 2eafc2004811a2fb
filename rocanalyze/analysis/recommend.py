"""Recommendation rules: the records in data/recommendations.toml evaluated on a finished Analysis.

Each rule names a *measure* (a function below) that turns the Analysis into named numbers, the
conditions on those numbers that make it fire, and text templates filled with this run's numbers.
A measure returns None when the Analysis lacks what it needs: the rule stays silent, never guesses.
"""

from __future__ import annotations

import operator
import statistics
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from rocanalyze.analysis.result import Analysis
from rocanalyze.paths import load_data_toml

Metrics = dict[str, Any]
LEVEL_ORDER = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, "host": 6}
_OPS: dict[str, Callable[[Any, Any], bool]] = {">=": operator.ge, ">": operator.gt, "<=": operator.le,
                                               "<": operator.lt, "==": operator.eq, "!=": operator.ne}
_FP32 = {"float", "float32", "torch.float32", "fp32"}

@lru_cache(maxsize=1)
def load_rules() -> tuple[dict[str, Any], ...]:
    """The rule records of data/recommendations.toml, in file order."""
    return tuple(load_data_toml("recommendations.toml")["rule"])


def recommend(analysis: Analysis) -> list[dict[str, Any]]:
    """The rules that fire on `analysis`, as dicts, ordered by saving_us (µs, largest first)."""
    out = [rec for rule in load_rules() if (rec := evaluate(rule, analysis)) is not None]
    return sorted(out, key=lambda r: (-r["saving_us"], LEVEL_ORDER.get(r["level"], 9), r["id"]))


def evaluate(rule: dict[str, Any], analysis: Analysis) -> dict[str, Any] | None:
    """One rule on one Analysis: the recommendation dict when it fires, else None."""
    if not _applies_to_device(rule, analysis.device):
        return None
    metrics = MEASURES[rule["measure"]](analysis, **rule.get("params", {}))
    if metrics is None:
        return None
    for name, op, value in rule["when"]:
        if name not in metrics or metrics[name] is None or not _OPS[op](metrics[name], value):
            return None
    metrics = {**_context(analysis), **metrics}
    saving = float(metrics.get(rule["saving"], 0.0) or 0.0) * float(rule["fraction"])
    window = analysis.window_us or 0.0
    return {
        "id": rule["id"], "level": rule["level"], "title": rule["title"].format_map(_Missing(metrics)),
        "saving_us": round(saving, 3), "saving_pct": round(100.0 * saving / window, 2) if window else None,
        "saving_source": rule["fraction_source"], "evidence": rule["evidence"].format_map(_Missing(metrics)),
        "action": rule["action"].format_map(_Missing(metrics)), "seed": rule["seed"],
        "metrics": {k: v for k, v in metrics.items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool)},
    }


class _Missing(dict):
    """Template fields a pattern did not record read as "?" (patterns evolve; a report must not crash)."""

    def __missing__(self, key: str) -> str:
        return "?"


def _applies_to_device(rule: dict[str, Any], device: dict[str, Any]) -> bool:
    vendor, arch = (device.get("vendor") or "unknown").lower(), (device.get("arch") or "").lower()
    if "vendors" in rule and vendor not in rule["vendors"]:
        return False
    if "archs" in rule and not any(arch.startswith(p) for p in rule["archs"]):
        return False
    return not ("not_archs" in rule and any(arch.startswith(p) for p in rule["not_archs"]))


def _context(a: Analysis) -> Metrics:
    """Numbers every template may quote."""
    return {"window_us": a.window_us or 0.0, "arch": a.device.get("arch") or "unknown arch",
            "compute_units": a.device.get("compute_units") or 0, "none_us": 0.0}


def _share(us: float, a: Analysis) -> float:
    return us / a.window_us if a.window_us else 0.0


def _pct_fields(prefix: str, us: float, a: Analysis) -> Metrics:
    share = _share(us, a)
    return {f"{prefix}_us": us, f"{prefix}_share": share, f"{prefix}_pct": 100.0 * share}


def _env_vars(a: Analysis) -> dict[str, str] | None:
    """Allowlisted variables recorded in env.json (`variables`), or None when no env.json was read."""
    if not a.run.env:
        return None
    return {str(k): str(v) for k, v in (a.run.env.get("variables") or {}).items()}


# --- measures: Analysis -> named numbers (None when the Analysis cannot say) ------------------------

def measure_idle(a: Analysis) -> Metrics | None:
    """Idle split by cause and launch statistics."""
    if not a.window_us or not a.idle_breakdown_us:
        return None
    idle, launch = a.idle_breakdown_us, a.launch
    syncs = [p for p in a.patterns if p.get("kind") == "host_sync"]
    return {
        **_pct_fields("launch_bound", float(idle.get("launch_bound", 0.0)), a),
        **_h2d(a, float(idle.get("h2d_copy", 0.0))),
        **_pct_fields("sync", float(idle.get("sync", 0.0)), a),
        **_pct_fields("unattributed", float(idle.get("unattributed", 0.0)), a),
        "kernels_per_step": float(launch.get("kernels_per_step") or 0.0),
        "short_kernel_pct": 100.0 * float(launch.get("short_kernel_share") or 0.0),
        "launch_call_mean_us": float(launch.get("launch_call_mean_us") or 0.0),
        "sync_note": _sync_note(syncs),
    }


def _h2d(a: Analysis, idle_us: float) -> Metrics:
    """Host-to-device copy cost: GPU idle behind the copies plus the copies' own time (pageable part)."""
    copies = [k for k in a.kernels if k.get("kind") == "memcpy" and "HtoD" in str(k.get("name"))]
    busy = sum(float(k["total_us"]) for k in copies)
    pageable = sum(float(k["total_us"]) for k in copies if "Pageable" in str(k.get("name")))
    return {**_pct_fields("h2d", idle_us + busy, a), "h2d_idle_us": idle_us, "h2d_copy_us": busy,
            "h2d_pageable_us": pageable, "h2d_calls": sum(int(k.get("calls") or 0) for k in copies)}


def measure_pattern(a: Analysis, kind: str) -> Metrics | None:
    """Total time and count of one cross-kernel pattern kind."""
    found = [p for p in a.patterns if p.get("kind") == kind]
    if not found or not a.window_us:
        return None
    total = sum(_time(p) for p in found)
    largest = max(found, key=_time)
    return {**_pct_fields("pattern", total, a), "pattern_count": sum(int(p.get("count") or 1) for p in found),
            "pattern_kernels": sum(int(p.get("kernels") or 0) for p in found),
            "pattern_detail": _detail(largest), **_flat("p", largest)}


def measure_eager_pointwise(a: Analysis) -> Metrics | None:
    """Memory-bound kernel time (elementwise, norm, softmax, reduction) of an eager PyTorch run, and what says
    it is one: its share launched by ATen, Inductor kernels (`triton_`) seen, and the shares of the patterns whose
    own rules already recommend compiling (an eager chain) or SDPA (unfused attention)."""
    if not a.window_us or not a.categories_us or not a.kernels:
        return None
    parts = {c: float(a.categories_us.get(c, 0.0)) for c in ("elementwise", "norm", "softmax", "reduction")}
    names = [str(k.get("name") or "") for k in a.kernels]
    aten_us = sum(float(k.get("total_us") or 0.0) for k, name in zip(a.kernels, names, strict=True)
                  if "at::native::" in name or str(k.get("op") or "").startswith("aten::"))
    pattern_us = {kind: sum(_time(p) for p in a.patterns if p.get("kind") == kind)
                  for kind in ("eager_elementwise_chain", "unfused_attention")}
    busy = a.busy_us or sum(a.categories_us.values())
    return {**_pct_fields("eager_pointwise", sum(parts.values()), a),
            **{f"{c}_pct": 100.0 * _share(us, a) for c, us in parts.items()},
            "inductor_kernels": sum(name.startswith("triton_") for name in names),
            "aten_share": aten_us / busy if busy else 0.0,
            "chain_share": _share(pattern_us["eager_elementwise_chain"], a),
            "unfused_attention_share": _share(pattern_us["unfused_attention"], a)}


def measure_gemm_efficiency(a: Analysis, below: float) -> Metrics | None:
    """GEMM ops under `below` of the roof: their time, time-weighted efficiency, and the gap (µs)."""
    gemms = [o for o in a.ops if o.get("category") == "gemm" and o.get("efficiency") is not None]
    under = [o for o in gemms if float(o["efficiency"]) < below]
    if not gemms:
        return None
    t = sum(float(o["time_us"]) for o in under)
    eff = sum(float(o["time_us"]) * float(o["efficiency"]) for o in under) / t if t else 0.0
    env = _env_vars(a) or {}
    worst = max(under, key=lambda o: float(o["time_us"]) * (1 - float(o["efficiency"])), default=None)
    return {**_pct_fields("gemm_under", t, a), "gemm_eff_pct": 100.0 * eff,
            "gemm_gap_us": sum(float(o["time_us"]) * (1 - float(o["efficiency"])) for o in under),
            "gemm_worst": _op_text(worst) if worst else "",
            "tunableop_on": int(env.get("PYTORCH_TUNABLEOP_ENABLED", "0") == "1")}


def measure_dtype_gemm(a: Analysis, dtype: str) -> Metrics | None:
    """GEMM ops whose tensor inputs are all `dtype` (only float32 is recognised)."""
    if dtype != "float32":
        raise ValueError(f"dtype_gemm measures float32 only, not {dtype}")
    hits = [o for o in a.ops if o.get("category") == "gemm" and _all_fp32(o.get("dtypes"))]
    if not hits:
        return None
    t = sum(float(o["time_us"]) for o in hits)
    torch = (a.run.env or {}).get("torch") or {}
    tf32_on = torch.get("float32_matmul_precision") in ("high", "medium") or bool(torch.get("matmul_allow_tf32"))
    return {**_pct_fields("dtype_gemm", t, a), "dtype_gemm_ops": len(hits), "tf32_on": int(tf32_on),
            "dtype_gemm_worst": _op_text(max(hits, key=lambda o: float(o["time_us"])))}


def measure_gemm_stride(a: Analysis) -> Metrics | None:
    """GEMM ops the op model flags with a 512-byte-multiple leading stride on MI300 (`stride_check.hotspot`)."""
    checked = [o for o in a.ops if o.get("stride_check")]
    if not checked:
        return None
    hits = [o for o in checked if o["stride_check"].get("hotspot")]
    if not hits:
        return {"stride_gemm_share": 0.0}
    t = sum(float(o["time_us"]) for o in hits)
    effs = [(float(o["time_us"]), float(o["efficiency"])) for o in hits if o.get("efficiency") is not None]
    eff = sum(w * e for w, e in effs) / sum(w for w, _ in effs) if effs else None
    top = max(hits, key=lambda o: float(o["time_us"]))
    sc = top["stride_check"]
    lds = ", ".join(f"{k} = {sc[k]['ld']} ({sc[k]['ld_bytes']} bytes)" for k in sc.get("multiple_of_512", [])
                    if isinstance(sc.get(k), dict))
    return {**_pct_fields("stride_gemm", t, a), "stride_gemm_ops": len(hits), "stride_gemm_eff": eff,
            "stride_gemm_eff_pct": 100.0 * eff if eff is not None else 0.0,
            "stride_gemm_example": f"{_op_text(top)}; {lds}"}


def measure_small_grid(a: Analysis, min_mean_us: float = 10.0, max_efficiency: float = 0.5) -> Metrics | None:
    """Ops whose kernels launch fewer workgroups than the GPU needs (`grid_check.small`), mean >= min_mean_us,
    and that run under `max_efficiency` of their roof: a persistent kernel sized to the CU count that
    already reaches the roof (cuBLAS nvjet, hipBLASLt stream-K) is not starved, however small its grid."""
    checked = [o for o in a.ops if (o.get("grid_check") or {}).get("small") is not None]
    if not checked:
        return None
    small = [o for o in checked if o["grid_check"]["small"]
             and float(o["time_us"]) / max(1, int(o.get("calls") or 1)) >= min_mean_us
             and (o.get("efficiency") is None or float(o["efficiency"]) < max_efficiency)]
    t = sum(float(o["time_us"]) for o in small)
    top = max(small, key=lambda o: float(o["time_us"]), default=None)
    gc = (top or checked[0])["grid_check"]
    return {**_pct_fields("small_grid", t, a), "small_grid_ops": len(small), "min_workgroups": gc.get("threshold"),
            "small_grid_example": (f"{_op_text(top)}: {gc.get('workgroups')} workgroups" if top else "")}


def measure_occupancy_step(a: Analysis, max_vgpr_over: int) -> Metrics | None:
    """Kernels limited by VGPRs at most `max_vgpr_over` registers above the next occupancy step.

    Reads the occupancy engine's `what_if` (`fewer` registers buy one more workgroup per CU at
    `waves_per_eu_hint` waves per SIMD).
    """
    if not a.occupancy:
        return None
    hits = [o for o in a.occupancy if o.get("limiter") == "vgpr"
            and 0 < int((o.get("what_if") or {}).get("fewer") or 0) <= max_vgpr_over]
    if not hits:
        return {"vgpr_step_kernels": 0}
    top = max(hits, key=lambda o: _kernel_us(a, o))
    wi = top["what_if"]
    return {"vgpr_step_kernels": len(hits), "vgpr_step_us": sum(_kernel_us(a, o) for o in hits),
            "waves_per_eu_hint": wi.get("waves_per_eu_hint"),
            "vgpr_step_example": (f"{_short(str(top.get('kernel', '')))}: {wi.get('now', top.get('vgpr'))} VGPRs "
                                  f"give {top.get('waves_per_simd')} waves per SIMD; {wi['fewer']} fewer (at most "
                                  f"{wi.get('most')}) give {wi.get('next_waves_per_simd')}")}


def measure_scratch(a: Analysis) -> Metrics | None:
    """Kernels with register spills or scratch (private segment) use."""
    if not a.occupancy:
        return None
    hits = [o for o in a.occupancy if int(o.get("scratch_bytes") or 0) > 0
            or int(o.get("vgpr_spill") or 0) > 0 or int(o.get("sgpr_spill") or 0) > 0]
    if not hits:
        return {"scratch_kernels": 0}
    top = max(hits, key=lambda o: _kernel_us(a, o))
    return {"scratch_kernels": len(hits), "scratch_us": sum(_kernel_us(a, o) for o in hits),
            "scratch_example": (f"{_short(str(top.get('kernel', '')))}: {top.get('scratch_bytes', 0)} scratch "
                                f"bytes per work-item, {top.get('vgpr_spill', 0)} VGPR and "
                                f"{top.get('sgpr_spill', 0)} SGPR spills")}


def _kernel_us(a: Analysis, entry: dict[str, Any]) -> float:
    """Time of an occupancy entry's kernel in the window: its own total_us, else the kernel table's."""
    if entry.get("total_us") is not None:
        return float(entry["total_us"])
    return next((float(k["total_us"]) for k in a.kernels if k.get("name") == entry.get("kernel")), 0.0)


def measure_communication(a: Analysis) -> Metrics | None:
    """Exposed (not overlapped) communication time."""
    if not a.overlap or not a.overlap.get("communication_us"):
        return None
    return {**_pct_fields("exposed_comm", float(a.overlap.get("exposed_communication_us") or 0.0), a),
            "comm_us": float(a.overlap["communication_us"]),
            "overlapped_us": float(a.overlap.get("overlapped_us") or 0.0)}


def measure_env_var(a: Analysis, var: str, want: str) -> Metrics | None:
    """Whether env.json recorded `var` with the wanted value ("" = unset)."""
    env = _env_vars(a)
    if env is None:
        return {"env_known": 0}
    value = env.get(var, "")
    n = int(a.launch.get("kernels") or 0)
    mean = float(a.launch.get("launch_to_start_mean_us") or 0.0)
    return {"env_known": 1, "env_matches": int(value == want), "env_value": value or "unset",
            "launch_to_start_mean_us": mean, "kernels": n, "launch_to_start_total_us": mean * n}


def measure_env_numa(a: Analysis) -> Metrics | None:
    """kernel.numa_balancing as recorded in env.json."""
    value = (a.run.env.get("sysctl") or {}).get("kernel.numa_balancing") if a.run.env else None
    return None if value in (None, "") else {"numa_balancing": int(str(value).strip())}


def measure_step_noise(a: Analysis) -> Metrics | None:
    """Mean, std (sample) and spread of the step durations in the window."""
    durs = [float(s["dur_us"]) for s in a.steps if s.get("dur_us")]
    if len(durs) < 2:
        return None
    mean, std, med = statistics.fmean(durs), statistics.stdev(durs), statistics.median(durs)
    slow = max(a.steps, key=lambda s: float(s.get("dur_us") or 0.0))
    return {"steps_n": len(durs), "step_mean_us": mean, "step_std_us": std, "step_cv": std / mean,
            "step_cv_pct": 100.0 * std / mean, "step_min_us": min(durs), "step_max_us": max(durs),
            "step_excess_us": sum(d - med for d in durs if d > med),
            "step_slowest": f"{slow.get('name')} ({float(slow['dur_us']):.0f} µs)"}


MEASURES: dict[str, Callable[..., Metrics | None]] = {
    "idle": measure_idle, "pattern": measure_pattern, "eager_pointwise": measure_eager_pointwise,
    "gemm_efficiency": measure_gemm_efficiency,
    "dtype_gemm": measure_dtype_gemm, "gemm_stride": measure_gemm_stride, "small_grid": measure_small_grid,
    "occupancy_step": measure_occupancy_step, "scratch": measure_scratch,
    "communication": measure_communication,
    "env_var": measure_env_var, "env_numa": measure_env_numa, "step_noise": measure_step_noise,
}


# --- helpers ------------------------------------------------------------------------------------

def _time(p: dict[str, Any]) -> float:
    return float(p.get("time_us") or 0.0)


def _detail(p: dict[str, Any]) -> str:
    """A pattern's own evidence fields as `key value` text (the generic fallback)."""
    return "; ".join(f"{k} {_fmt(v)}" for k, v in sorted(p.items()) if k not in {"kind", "action", "time_us"})[:300]


def _flat(prefix: str, p: dict[str, Any]) -> Metrics:
    """A pattern's fields as `p_<key>` (and `p_<key>_<sub>` for dicts), formatted for quoting."""
    out: Metrics = {}
    for k, v in p.items():
        if isinstance(v, dict):
            out.update({f"{prefix}_{k}_{sk}": _fmt(sv) for sk, sv in v.items()})
            out[f"{prefix}_{k}"] = ", ".join(f"{sk} {_fmt(sv)}" for sk, sv in v.items())
        else:
            out[f"{prefix}_{k}"] = v if isinstance(v, (int, float)) and not isinstance(v, bool) else _fmt(v)
    return out


def _sync_note(syncs: list[dict[str, Any]]) -> str:
    if not syncs:
        return "the trace does not say which call synchronised"
    p = max(syncs, key=_time)
    calls = ", ".join(f"{name} x{n}" for name, n in sorted((p.get("calls") or {}).items()))
    ops = ", ".join(p.get("example_ops") or [])
    return (f"{sum(int(s.get('count') or 1) for s in syncs)} synchronising calls in the loop ({calls or 'unnamed'})"
            + (f" from {ops}" if ops else "") + f", the longest GPU wait {float(p.get('gpu_idle_us_max') or 0):.0f} µs")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.1f}"
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, str) for x in v):
            return ", ".join(_short(x, 60) for x in v[:6]) + (", ..." if len(v) > 6 else "")
        return "[" + ", ".join(_short(str(x), 40) for x in v[:6]) + (", ..." if len(v) > 6 else "") + "]"
    return _short(str(v), 80)


def _short(name: str, n: int = 80) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


def _op_text(o: dict[str, Any]) -> str:
    eff = o.get("efficiency")
    eff_text = f", {100 * float(eff):.0f}% of roof" if eff is not None else ""
    return (f"{o.get('op')} {o.get('shapes')} {o.get('dtypes')}: {float(o['time_us']):.0f} µs over "
            f"{o.get('calls')} calls{eff_text}")


def _all_fp32(dtypes: Any) -> bool:
    names = [str(d).lower() for d in (dtypes or []) if d]
    return bool(names) and all(d in _FP32 for d in names)
