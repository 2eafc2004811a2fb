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


def kernel_label(kernel: dict[str, Any]) -> str:
    """The name to show for a kernel row: demangled when it was recorded mangled."""
    return str(kernel.get("display") or kernel.get("name", ""))


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
        "steps_note": _steps_note(a),
        "busy_pct": fmt_pct((a.busy_us or 0.0) / window) if window else "n/a",
        "idle_pct": fmt_pct((a.idle_us or 0.0) / window) if window else "n/a",
        "dominant": dom[0] if dom else "n/a",
        "dominant_pct": _dominant_share(a, dom),
        # aggregate-only inputs have no window: their shares are of the summed kernel time
        "dominant_of": "of the window" if window else "of summed kernel time",
        "scope": _scope(a, window),
        "device": a.device.get("name") or a.device.get("arch") or "unknown GPU",
        "assumed": bool(a.device.get("assumed")),
        "device_how": _device_how(a),
        "first": first, "failed": a.run.failed, "partial": a.run.partial,
        "idle_cause": _top_idle(a),
        "no_rule": "" if first else no_rule_summary(a),
    }


def headline_parts(h: dict[str, Any]) -> list[str]:
    """The one-line headline, in parts: window and busy share (or what the input covers), dominant, GPU."""
    if h["scope"]:
        parts = [h["scope"]]
    else:
        how = f" ({h['how']})" if h["how"] else ""
        parts = [f"window {h['window']}{how}", f"GPU busy {h['busy_pct']}"]
    if h["dominant"] != "n/a":
        parts.append(f"dominant {h['dominant']} ({h['dominant_pct']})")
    return [*parts, h["device"]]


def _scope(a: Analysis, window: float) -> str:
    """What the input covers when it has no timeline window: said instead of 'window n/a'."""
    if window:
        return ""
    if a.kernels or a.categories_us:
        return "no timeline: per-kernel totals"
    return "no GPU activity recorded" + (" (host API calls only)" if a.host_api else "")


def steps_word(count: int) -> str:
    """'1 step', '3 steps'; 'no step markers' for 0 (the window is then the trace's steady state)."""
    if count == 0:
        return "no step markers"
    return f"{count} step" if count == 1 else f"{count} steps"


def _steps_note(a: Analysis) -> str:
    """How many steps the window holds, where its name does not already say ("steps 2-7" does)."""
    count = len(a.window.get("steps") or [])
    return "" if not count or str(a.window.get("how", "")).startswith("step") else steps_word(count)


def no_rule_summary(a: Analysis) -> str:
    """What this run shows when no recommendation fired: busy share, idle cause, GEMMs against the roof.

    Every figure is read from the Analysis (window, idle breakdown, the ops' own efficiency).
    """
    parts = []
    window = a.window_us or 0.0
    if window:
        busy = f"the GPU is busy {fmt_pct((a.busy_us or 0.0) / window)} of the window"
        causes = {k: float(v) for k, v in a.idle_breakdown_us.items() if v}
        if a.idle_us and causes:
            busy += f", idle {fmt_pct(a.idle_us / window)} (mostly {max(sorted(causes), key=causes.get)})"
        parts.append(busy)
    elif a.top_kernels:
        parts.append("the trace has per-kernel totals only (no timeline, so idle time is unknown)")
    dom = dominant_category(a)
    if dom:
        of = "of the window" if window else "of summed kernel time"
        parts.append(f"{dom[0]} is the largest category ({_dominant_share(a, dom)} {of})")
    roof = gemm_roof(a)
    if roof:
        parts.append(roof)
    elif not a.device.get("peak_tflops") and a.categories_us:
        parts.append("efficiencies against the roof need the GPU's peaks (pass --gpu NAME)")
    if not parts:
        return "No rule fired on this run."
    return "No rule fired: " + "; ".join(parts) + "."


def gemm_roof(a: Analysis) -> str:
    """'GEMMs run at N% of the bf16 roof (...)': the time-weighted efficiency of the GEMM ops the
    analysis measured against a roof, for the roof most of their time is measured against."""
    by_peak: dict[str, list[tuple[float, float]]] = {}
    for o in a.ops:
        eff, t = o.get("efficiency"), float(o.get("time_us") or 0.0)
        if o.get("category") == "gemm" and isinstance(eff, (int, float)) and t > 0 and o.get("peak"):
            by_peak.setdefault(str(o["peak"]), []).append((float(eff), t))
    if not by_peak:
        return ""
    peak = max(sorted(by_peak), key=lambda p: sum(t for _, t in by_peak[p]))
    pts = by_peak[peak]
    total = sum(t for _, t in pts)
    mean = sum(e * t for e, t in pts) / total
    lo, hi = min(e for e, _ in pts), max(e for e, _ in pts)
    spread = f"; from {fmt_pct(lo)} to {fmt_pct(hi)}" if len(pts) > 1 else ""
    n = f"{len(pts)} GEMM op{'s' if len(pts) > 1 else ''}"
    return f"GEMMs run at {fmt_pct(mean)} of the {peak} roof (time-weighted over {n}, {fmt_us(total)}{spread})"


def _device_how(a: Analysis) -> str:
    """How the GPU was chosen, for the headline card. The Analysis says it only in the device's notes."""
    if a.device.get("assumed"):
        return "assumed (see notes)"
    notes = [str(n) for n in a.device.get("notes") or []]
    if any(n.startswith("GPU set by --gpu") for n in notes):
        return "set by --gpu"
    if any("device name the trace records" in n for n in notes):
        return "from the trace"
    return "see notes" if notes else ""


def _dominant_share(a: Analysis, dom: tuple[str, float] | None) -> str:
    if not dom:
        return "n/a"
    base = a.window_us or a.busy_us or sum(float(v) for v in a.categories_us.values())
    return fmt_pct(dom[1] / base) if base else "n/a"


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
    present = {_DTYPE_PEAK.get(str(d).lower()) for o in a.ops for d in _tensor_dtypes(o)}
    present.discard(None)
    chosen = {k: v for k, v in sorted(peaks.items()) if v and any(k.startswith(p) for p in present)}
    if not chosen and peaks:  # no dtypes recorded: still show the roofs the part has
        chosen = {k: v for k, v in sorted(peaks.items()) if v}
    return {"memory_bw_gbps": a.device.get("memory_bw_gbps"), "peaks_tflops": chosen}


def _tensor_dtypes(op: dict[str, Any]) -> list[str]:
    """The dtypes of an op's tensor inputs: a scalar argument (`double` eps, momentum) has no shape and
    does not make an op an fp64 op."""
    dtypes, shapes = op.get("dtypes") or [], op.get("shapes")
    if not isinstance(shapes, list) or len(shapes) != len(dtypes):
        return [str(d) for d in dtypes if d]
    return [str(d) for d, s in zip(dtypes, shapes, strict=True) if d and s]


# What each idle cause means (docs/analyze.md, "Idle time, by cause"), for the report's hover text.
IDLE_CAUSES: dict[str, str] = {
    "sync": "the host sat in a synchronize or blocking copy when the GPU went idle",
    "h2d_copy": "the host was inside a host-to-device copy call",
    "launch_bound": "the next kernel was launched only after the GPU went idle, by a busy host",
    "host_other": "the host launched late after doing something else (Python, data loading, a CPU op)",
    "other": "work was queued but waited (graph-internal dependencies, cross-stream waits, queue latency)",
    "unattributed": "the trace has no host runtime calls, so the cause of idle gaps is unknown",
}


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
