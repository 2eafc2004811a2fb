"""Wording and number formats the reports share (headline, units, ladder names, ceilings to draw).

Presentation only: every number comes from the Analysis as it is.
"""

from __future__ import annotations

from typing import Any

from rocanalyze.analysis.result import Analysis

LEVEL_NAMES: dict[Any, str] = {
    1: "Level 1: environment and auto-tuning", 2: "Level 2: torch.compile and graphs",
    3: "Level 3: model surgery", 4: "Level 4: kernel and inductor tuning",
    5: "Level 5: arch-specific kernels", "host": "Host side",
}
# Recorded dtype names (torch/Kineto spellings) -> the key prefix of the GPU table's peak_tflops.
_DTYPE_PEAK = {"c10::bfloat16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16", "c10::half": "fp16",
               "half": "fp16", "float16": "fp16", "torch.float16": "fp16", "float": "fp32", "float32": "fp32",
               "torch.float32": "fp32", "double": "fp64", "float64": "fp64", "c10::float8_e4m3fnuz": "fp8",
               "c10::float8_e4m3fn": "fp8", "float8_e4m3fn": "fp8", "float8_e4m3fnuz": "fp8", "int8": "int8",
               "signed char": "int8"}


def fmt_us(us: float | None) -> str:
    """A duration in µs as text with a readable unit."""
    if us is None:
        return "n/a"
    us = float(us)
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f} s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.2f} ms"
    return f"{us:.1f} µs"


def fmt_pct(share: float | None) -> str:
    """A share (0..1) as a percentage."""
    return "n/a" if share is None else f"{100.0 * float(share):.1f}%"


def level_name(level: Any) -> str:
    return LEVEL_NAMES.get(level, f"Level {level}")


def title(a: Analysis) -> str:
    source = a.run.source.rsplit("/", 1)[-1] if a.run.source else "trace"
    return f"rocanalyze: {source}"


def dominant_category(a: Analysis) -> tuple[str, float] | None:
    """The category with the most exclusive busy time, and its µs."""
    if not a.categories_us:
        return None
    name = max(sorted(a.categories_us), key=lambda c: a.categories_us[c])
    return name, float(a.categories_us[name])


def headline(a: Analysis) -> dict[str, Any]:
    """The headline facts: window, busy share, dominant category, first recommendation."""
    window = a.window_us or 0.0
    dom = dominant_category(a)
    first = a.recommendations[0] if a.recommendations else None
    return {
        "window": fmt_us(a.window_us), "how": a.window.get("how", ""),
        "steps": len(a.window.get("steps") or []),
        "busy_pct": fmt_pct((a.busy_us or 0.0) / window) if window else "n/a",
        "idle_pct": fmt_pct((a.idle_us or 0.0) / window) if window else "n/a",
        "dominant": dom[0] if dom else "n/a",
        "dominant_pct": fmt_pct(dom[1] / window) if dom and window else "n/a",
        "device": a.device.get("name") or a.device.get("arch") or "unknown GPU",
        "assumed": bool(a.device.get("assumed")),
        "first": first, "failed": a.run.failed, "partial": a.run.partial,
        "idle_cause": _top_idle(a),
    }


def _top_idle(a: Analysis) -> str:
    """'mostly <cause> (<share>)' for the largest idle cause, or '' when idle is not split."""
    causes = {k: float(v) for k, v in a.idle_breakdown_us.items() if v}
    if not causes or not a.window_us:
        return ""
    name = max(sorted(causes), key=lambda k: causes[k])
    return f"mostly {name} ({fmt_pct(causes[name] / a.window_us)})"


def category_order(a: Analysis) -> list[str]:
    """Categories, largest first (a stable order for colours and legends)."""
    return sorted(a.categories_us, key=lambda c: (-float(a.categories_us[c]), c))


def ceilings(a: Analysis) -> dict[str, Any]:
    """The roofline ceilings to draw: memory bandwidth and the peaks of the dtypes the ops use."""
    peaks = a.device.get("peak_tflops") or {}
    present = {_DTYPE_PEAK.get(str(d).lower()) for o in a.ops for d in (o.get("dtypes") or []) if d}
    present.discard(None)
    chosen = {k: v for k, v in sorted(peaks.items()) if v and any(k.startswith(p) for p in present)}
    if not chosen and peaks:  # no dtypes recorded: still show the roofs the part has
        chosen = {k: v for k, v in sorted(peaks.items()) if v}
    return {"memory_bw_gbps": a.device.get("memory_bw_gbps"), "peaks_tflops": chosen}


def environment_rows(a: Analysis) -> list[tuple[str, str]]:
    """(name, value) rows for the environment section: run facts, device, env.json (flattened)."""
    rows: list[tuple[str, str]] = []
    run = a.run
    if run.command:
        rows.append(("command", " ".join(run.command)))
    for key in ("source", "source_format", "rocanalyze_version", "created"):
        if getattr(run, key):
            rows.append((key, str(getattr(run, key))))
    if run.exit_code is not None:
        rows.append(("exit code", str(run.exit_code)))
    for key in ("name", "arch", "vendor", "compute_units", "clock_mhz", "memory_bw_gbps", "source"):
        if a.device.get(key) not in (None, ""):
            rows.append((f"device.{key}", str(a.device[key])))
    rows.extend(_flatten("env", run.env))
    return rows


def environment_line(a: Analysis) -> str:
    """One line of version context (seed 000: optimizations are tied to their environment)."""
    env = a.run.env or {}
    torch = env.get("torch") or {}
    parts = [a.device.get("name") or a.device.get("arch") or "unknown GPU"]
    versions = (("torch", torch.get("version")), ("HIP", torch.get("hip")), ("CUDA", torch.get("cuda")),
                ("ROCm", env.get("rocm")), ("Triton", env.get("triton")), ("Python", env.get("python")))
    parts.extend(f"{k} {v}" for k, v in versions if v)
    if not env:
        parts.append("no env.json: versions unknown")
    knobs = env.get("variables") or {}
    parts.extend(f"{k}={v}" for k, v in sorted(knobs.items())[:8])
    return " · ".join(str(p) for p in parts)


def _flatten(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for k in sorted(value, key=str):
            out.extend(_flatten(f"{prefix}.{k}", value[k]))
        return out
    if isinstance(value, list):
        return [(prefix, ", ".join(str(v) for v in value))]
    return [(prefix, "" if value is None else str(value))]
