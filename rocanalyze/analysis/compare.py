"""Compare two Analyses: per-step, per-category, per-kernel (same vendor) or per-op (cross-vendor) deltas.

Each delta carries the noise of both runs (mean, sample std, n over the steps of the window) and a
verdict: "significant" only when the change is beyond the noise margin AND Welch's t-test on the
per-step samples rejects "no change" at 95% (when either side has fewer than 2 samples, the margin
alone decides and the row says so). docs/compare.md explains the margin from seed 000.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from rocanalyze.analysis.demangle import demangle
from rocanalyze.analysis.result import Analysis

DEFAULT_MARGIN_PCT = 2.0  # seed 000: "within noise margin: ±2%" on repeated runs of one workload
MIN_SHARE = 0.005         # rows under 0.5% of both windows are left out of the tables
# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom (then the normal 1.96).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def compare(base: Analysis, new: Analysis, *, margin_pct: float = DEFAULT_MARGIN_PCT) -> dict[str, Any]:
    """The comparison as a JSON-able dict: step row, category rows, kernel or op rows, summary."""
    for side, a in (("BASE", base), ("NEW", new)):
        if not a.window_us and not any(k.get("total_us") is not None for k in a.kernels):
            from rocanalyze.errors import UserError

            raise UserError(f"{side} ({a.run.source or 'analysis'}) holds no GPU times (hardware counters "
                            "without timestamps, or no GPU activity): compare needs traces with kernel durations")
    cross = _vendor(base) != _vendor(new) and "" not in (_vendor(base), _vendor(new))
    timed = bool(base.window_us) and bool(new.window_us)
    step = delta_row("step time" if timed else "kernel time (no timeline)", _step_samples(base), _step_samples(new),
                     margin_pct)
    cats = [delta_row(c, _cat_samples(base, c), _cat_samples(new, c), margin_pct)
            for c in sorted(set(base.categories_us) | set(new.categories_us) | {"idle"})]
    cats = [r for r in cats if _visible(r, base, new)]
    if cross:
        detail = [delta_row(k, [v], [new_v], margin_pct) for k, v, new_v in _op_pairs(base, new)]
        detail_kind = "op"
    else:
        base_kernels, new_kernels = _kernels_by_key(base), _kernels_by_key(new)
        detail = [delta_row(k, _kernel_samples(base, base_kernels.get(k)), _kernel_samples(new, new_kernels.get(k)),
                            margin_pct) for k in _kernel_names(base, new)]
        detail_kind = "kernel"
    detail = sorted((r for r in detail if _visible(r, base, new)), key=lambda r: -abs(r["delta_us"]))
    base_ids = {r["id"] for r in base.recommendations}
    new_ids = {r["id"] for r in new.recommendations}
    result = {
        "base": _side(base), "new": _side(new), "cross_vendor": cross, "margin_pct": margin_pct,
        "step": step, "categories": sorted(cats, key=lambda r: -abs(r["delta_us"])),
        "detail_kind": detail_kind, "detail": detail[:40],
        "only_base": sorted(set(_kernel_names(base, base)) - set(_kernel_names(new, new)))[:20] if not cross else [],
        "only_new": sorted(set(_kernel_names(new, new)) - set(_kernel_names(base, base)))[:20] if not cross else [],
        "recommendations_gone": sorted(base_ids - new_ids), "recommendations_new": sorted(new_ids - base_ids),
        # analysis.json files classified with other rules (an older rocanalyze, another --rules file)
        "rules_differ": bool(base.run.rules_digest and new.run.rules_digest
                             and base.run.rules_digest != new.run.rules_digest),
    }
    result["summary"] = summary(result)
    return result


def delta_row(name: str, base: list[float], new: list[float], margin_pct: float) -> dict[str, Any]:
    """One row: mean/std/n per side, delta (µs and %), Welch t, and the verdict."""
    b, n = _stats(base), _stats(new)
    delta = n["mean"] - b["mean"]
    pct = 100.0 * delta / b["mean"] if b["mean"] else (math.inf if delta else 0.0)
    t, df = welch(base, new)
    beyond_margin = abs(pct) > margin_pct
    tested = t is not None
    if tested:
        significant = beyond_margin and abs(t) > t_critical(df)
    else:
        significant = beyond_margin
    verdict = ("significant" if significant else "within noise") + ("" if tested else " (margin only)")
    return {"name": name, "base": b, "new": n, "delta_us": delta, "delta_pct": pct if math.isfinite(pct) else None,
            "t": t if t is None or math.isfinite(t) else None, "df": df, "significant": significant,
            "tested": tested, "verdict": verdict}


def welch(a: list[float], b: list[float]) -> tuple[float | None, float | None]:
    """Welch's t statistic and Welch-Satterthwaite degrees of freedom; (None, None) when n < 2."""
    if len(a) < 2 or len(b) < 2:
        return None, None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    diff = statistics.fmean(b) - statistics.fmean(a)
    if va + vb == 0:
        return (0.0 if diff == 0 else math.copysign(math.inf, diff)), float(len(a) + len(b) - 2)
    df = (va + vb) ** 2 / ((va ** 2 / (len(a) - 1)) + (vb ** 2 / (len(b) - 1)))
    return diff / math.sqrt(va + vb), df


def t_critical(df: float | None) -> float:
    """Two-sided 95% critical value of Student's t at `df` (rounded down: conservative)."""
    if df is None or df < 1:
        return _T975[0]
    k = int(math.floor(df))
    return _T975[k - 1] if k <= len(_T975) else 1.96


def regression(result: dict[str, Any], pct: float) -> dict[str, Any] | None:
    """The step-time row when it got significantly slower by more than `pct` percent, else None."""
    step = result["step"]
    if step["significant"] and step["delta_pct"] is not None and step["delta_pct"] > pct:
        return step
    return None


def summary(result: dict[str, Any]) -> str:
    """One or two sentences naming the change (or saying there is none beyond noise)."""
    step = result["step"]
    head = (f"{step['name']} {_ms(step['base']['mean'])} → {_ms(step['new']['mean'])} "
            f"({_signed(step['delta_pct'])}, {step['verdict']})")
    moved = [r for r in result["categories"] if r["significant"]][:3]
    if not step["significant"] and not moved:
        return head + ": no change beyond noise."
    parts = [f"{r['name']} {_signed(r['delta_pct'])}" for r in moved]
    text = head + (": " + ", ".join(parts) if parts else "")
    if result["recommendations_gone"]:
        text += f"; no longer fires: {', '.join(result['recommendations_gone'])}"
    if result["recommendations_new"]:
        text += f"; now fires: {', '.join(result['recommendations_new'])}"
    return text + "."


# --- samples ------------------------------------------------------------------------------------

def _step_samples(a: Analysis) -> list[float]:
    durs = [float(s["dur_us"]) for s in a.steps if s.get("dur_us")]
    return durs or [float(a.window_us or a.busy_us or 0.0)]  # per-kernel totals only: the summed kernel time


def _cat_samples(a: Analysis, category: str) -> list[float]:
    """Per-step µs of one category (idle = step minus busy); the window total when there are no steps."""
    if a.steps:
        if category == "idle":
            return [float(s["dur_us"]) - float(s.get("busy_us") or 0.0) for s in a.steps]
        return [float((s.get("categories_us") or {}).get(category, 0.0)) for s in a.steps]
    if category == "idle":
        return [float(a.idle_us or 0.0)]
    return [float(a.categories_us.get(category, 0.0))]


def _kernel_key(kernel: dict) -> str:
    """A kernel's name for matching across runs: demangled, so a run recorded with mangled names
    (rocprofv3 --mangled-kernels, code-object symbols) matches one recorded demangled."""
    name = str(kernel.get("name", ""))
    return demangle(name.strip()) or name  # not the display outline: distinct kernels may share one


def _kernels_by_key(a: Analysis) -> dict[str, dict]:
    """Each kernel row by its matching name; the first (largest) when two records demangle alike."""
    by_key: dict[str, dict] = {}
    for k in a.kernels:
        by_key.setdefault(_kernel_key(k), k)
    return by_key


def _kernel_samples(a: Analysis, k: dict | None) -> list[float]:
    """Per-step µs of one kernel row (zeros when the run does not have it)."""
    if k is None:
        return [0.0] * max(1, len(a.steps))
    if k.get("per_step_us"):
        return [float(v) for v in k["per_step_us"]]
    return [float(k.get("total_us") or 0.0) / max(1, len(a.steps))]  # a kernel without a recorded time adds none


def _kernel_names(base: Analysis, new: Analysis) -> list[str]:
    """Kernel names in either run, the 200 largest of each."""
    names = [_kernel_key(k) for k in base.kernels[:200]] + [_kernel_key(k) for k in new.kernels[:200]]
    return sorted(set(names))


def _op_pairs(base: Analysis, new: Analysis) -> list[tuple[str, float, float]]:
    """(op label, µs per step in BASE, in NEW) for ops keyed by name, shapes and dtypes."""
    def per_step(a: Analysis) -> dict[str, float]:
        out: dict[str, float] = {}
        for o in a.ops:
            key = f"{o.get('op')} {o.get('shapes')} {o.get('dtypes')}"
            out[key] = out.get(key, 0.0) + float(o.get("time_us") or 0.0) / max(1, len(a.steps))
        return out
    b, n = per_step(base), per_step(new)
    return [(k, b.get(k, 0.0), n.get(k, 0.0)) for k in sorted(set(b) | set(n))]


def _stats(xs: list[float]) -> dict[str, float]:
    return {"mean": statistics.fmean(xs) if xs else 0.0, "std": statistics.stdev(xs) if len(xs) > 1 else 0.0,
            "n": len(xs)}


def _visible(row: dict[str, Any], base: Analysis, new: Analysis) -> bool:
    b_step, n_step = statistics.fmean(_step_samples(base)), statistics.fmean(_step_samples(new))
    return row["base"]["mean"] >= MIN_SHARE * b_step or row["new"]["mean"] >= MIN_SHARE * n_step


def _vendor(a: Analysis) -> str:
    return str(a.device.get("vendor") or "").lower()


def _side(a: Analysis) -> dict[str, Any]:
    return {"source": a.run.source, "device": a.device.get("name") or a.device.get("arch"),
            "rules_digest": a.run.rules_digest,
            "vendor": _vendor(a), "steps": len(a.steps), "window_us": a.window_us,
            "versions": {k: v for k, v in ((a.run.env or {}).get("torch") or {}).items()
                         if k in ("version", "hip", "cuda")}}


def _ms(us: float) -> str:
    return f"{us / 1e3:.3f} ms"


def _signed(pct: float | None) -> str:
    return "new" if pct is None else f"{pct:+.1f}%"
