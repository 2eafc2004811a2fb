"""`rocanalyze ceilings`: measure the local GPU's GEMM and copy ceilings; write the peaks JSON."""

from __future__ import annotations

import datetime as _dt
import json
import statistics
from pathlib import Path
from typing import Any

import typer

from rocanalyze.errors import UserError

GEMM_SIZES = {"bf16": 8192, "fp16": 8192, "fp32": 4096}   # square GEMM edge per dtype
COPY_BYTES = 1 << 30                                      # 1 GiB source buffer, far beyond any L2
WARMUP, REPEATS = 3, 7


def command(
    output: Path = typer.Option(Path("peaks.json"), "-o", "--output", help="Peaks JSON to write."),
    device: int = typer.Option(0, "--device", help="GPU index (as torch counts them)."),
    force: bool = typer.Option(False, "--force", help="Overwrite the output file."),
) -> None:
    """Measure this machine's GPU ceilings with torch: bf16, fp16 and fp32 GEMM TFLOP/s and
    device-to-device copy GB/s (bytes read + written). Writes the peaks JSON that `analyze --peaks`
    uses in place of datasheet peaks.

    \b
    Example:
      rocanalyze ceilings -o peaks.json
      rocanalyze analyze trace.json.gz --peaks peaks.json
    """
    if output.exists() and not force:
        raise UserError("already exists: pass --force to overwrite it", output)
    if not output.parent.exists():
        raise UserError("output folder does not exist", output.parent)
    peaks = measure_ceilings(device)
    output.write_text(json.dumps(peaks, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for dtype, value in sorted(peaks["peak_tflops"].items()):
        print(f"  {dtype:12s} GEMM {value:8.1f} TFLOP/s")
    print(f"  device copy   {peaks['memory_bw_gbps']:8.0f} GB/s")
    print(f"wrote {output}")
    print(f"next: rocanalyze analyze TRACE --peaks {output}")


def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise UserError("torch is not installed: 'ceilings' measures with torch; install your ROCm or CUDA "
                        "build of PyTorch") from None
    if not torch.cuda.is_available():
        raise UserError("torch sees no GPU (torch.cuda.is_available() is False): run 'ceilings' on the "
                        "GPU machine") from None
    return torch


def measure_ceilings(device: int = 0) -> dict[str, Any]:
    """Peaks JSON for GPU `device`: median GEMM TFLOP/s per dtype, copy GB/s, and how each was measured."""
    torch = _import_torch()
    if device >= torch.cuda.device_count():
        raise UserError(f"--device {device}: torch sees {torch.cuda.device_count()} GPU(s)")
    torch.cuda.set_device(device)
    props = torch.cuda.get_device_properties(device)
    rocm = bool(getattr(torch.version, "hip", None))
    measurements = []
    peaks: dict[str, float] = {}
    old_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # measure true fp32, as torch runs it by default
    try:
        for dtype, n in GEMM_SIZES.items():
            m = _gemm(torch, dtype, n)
            # fp32 GEMMs run on CDNA matrix cores; on NVIDIA (TF32 off) on the FP32 CUDA cores
            key = "fp32_matrix" if dtype == "fp32" and rocm else dtype
            peaks[key] = round(m["tflops_median"], 1)
            measurements.append({**m, "peak": key})
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old_tf32
    copy = _copy(torch)
    measurements.append(copy)
    return {
        "format": "rocanalyze-peaks", "version": 1,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "device": _device_facts(torch, props, rocm),
        "software": {"torch": torch.__version__, "hip": getattr(torch.version, "hip", None),
                     "cuda": getattr(torch.version, "cuda", None)},
        "peak_tflops": peaks, "memory_bw_gbps": round(copy["gbps_median"], 1),
        "measurements": measurements,
        "method": (f"torch.mm on random square matrices ({', '.join(f'{d} {n}^3' for d, n in GEMM_SIZES.items())}),"
                   f" {WARMUP} warm-ups, then {REPEATS} repeats timed with device events; each figure is the "
                   "median repeat. Copy: Tensor.copy_ of a 1 GiB device buffer, counting bytes read + written."),
    }


def _device_facts(torch: Any, props: Any, rocm: bool) -> dict[str, Any]:
    arch = getattr(props, "gcnArchName", None) if rocm else f"sm_{props.major}{props.minor}"
    return {"name": props.name, "arch": arch, "vendor": "amd" if rocm else "nvidia",
            "compute_units": props.multi_processor_count, "memory_bytes": props.total_memory,
            "l2_bytes": getattr(props, "L2_cache_size", None), "compute_capability": [props.major, props.minor],
            "wave_size": getattr(props, "warp_size", None)}


def _timed(torch: Any, fn: Any, iters: int) -> list[float]:
    """Milliseconds per call of `fn`, one figure per repeat of `iters` calls, timed with device events."""
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) / iters)
    return out


def _gemm(torch: Any, dtype: str, n: int) -> dict[str, Any]:
    tdtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=tdtype, generator=gen)  # never zeros: they run faster
    b = torch.randn(n, n, device="cuda", dtype=tdtype, generator=gen)
    out = torch.empty(n, n, device="cuda", dtype=tdtype)
    flops = 2.0 * n**3
    ms = _timed(torch, lambda: torch.mm(a, b, out=out), iters=10 if dtype != "fp32" else 5)
    rates = [flops / (t / 1e3) / 1e12 for t in ms]
    return {"what": "gemm", "dtype": dtype, "m": n, "n": n, "k": n, "ms": ms,
            "tflops_median": statistics.median(rates), "tflops_max": max(rates)}


def _copy(torch: Any) -> dict[str, Any]:
    numel = COPY_BYTES // 4
    src = torch.rand(numel, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    ms = _timed(torch, lambda: dst.copy_(src), iters=10)
    rates = [2 * COPY_BYTES / (t / 1e3) / 1e9 for t in ms]
    return {"what": "copy", "bytes": COPY_BYTES, "counted_bytes": 2 * COPY_BYTES, "ms": ms,
            "gbps_median": statistics.median(rates), "gbps_max": max(rates)}
