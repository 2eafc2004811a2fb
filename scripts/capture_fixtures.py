"""Capture the GPU test fixtures in one batched run (on the lent GPU): every example workload under
torch.profiler, written as <name>.json.gz plus MANIFEST.json (versions, device, event-timed GEMM rate).

    python scripts/capture_fixtures.py OUTDIR

Each capture: schedule(wait=1, warmup=1, active=3), record_shapes, with_flops; `*_cold` captures profile
from the first call (start-up included, no step markers) to test start-up detection.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples" / "workloads"))

# (capture name, workload module, profiler options, known bottleneck as the analysis should put it first)
CAPTURES = [
    ("train_step", "train_step", {"with_stack": True}, "category:gemm"),
    ("train_step_cold", "train_step", {"cold": True}, "startup"),
    ("launch_bound", "launch_bound", {}, "idle:launch_bound"),
    ("launch_bound_rerun", "launch_bound", {}, "idle:launch_bound"),
    ("compiled", "compiled", {}, "idle:launch_bound"),
    ("convnet", "convnet", {}, "category:conv"),
    ("manual_attention", "manual_attention", {}, "pattern:unfused_attention"),
    ("elementwise_chain", "elementwise_chain", {}, "pattern:eager_elementwise_chain"),
    ("fp32_gemm", "fp32_gemm", {}, "category:gemm"),
    ("h2d_copy", "h2d_copy", {}, "category:memcpy"),
    ("item_sync", "item_sync", {}, "pattern:host_sync"),
    ("big_gemm", "big_gemm", {}, "category:gemm"),
]


def capture(out: Path, name: str, module: str, opts: dict) -> dict:
    mod = importlib.import_module(module)
    t0 = time.perf_counter()
    step = mod.make("cuda")
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    common = dict(activities=activities, record_shapes=True, with_flops=True,
                  with_stack=opts.get("with_stack", False))
    if opts.get("cold"):
        with profile(**common) as prof:
            for _ in range(4):
                step()
            torch.cuda.synchronize()
    else:
        # device events around each step: the profiler-derived rate is checked against them
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(5)]
        with profile(schedule=schedule(wait=1, warmup=1, active=3), **common) as prof:
            for start, end in events:
                start.record()
                step()
                end.record()
                prof.step()
            torch.cuda.synchronize()
        opts = {**opts, "event_ms_per_step": [round(s.elapsed_time(e), 4) for s, e in events[2:]]}
    path = out / f"{name}.json.gz"
    prof.export_chrome_trace(str(path))
    return {"file": path.name, "workload": f"examples/workloads/{module}.py", "options": opts,
            "seconds": round(time.perf_counter() - t0, 2), "bytes": path.stat().st_size}


def main() -> None:
    out = Path(sys.argv[1])  # further arguments: capture only these names
    out.mkdir(parents=True, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    manifest = {
        "torch": torch.__version__, "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
        "python": platform.python_version(), "device": props.name,
        "multiprocessors": props.multi_processor_count, "memory_bytes": props.total_memory,
        "captures": {},
    }
    try:
        import triton
        manifest["triton"] = triton.__version__
    except ImportError:
        pass
    only = set(sys.argv[2:])
    for name, module, opts, bottleneck in CAPTURES:
        if only and name not in only:
            continue
        try:
            info = capture(out, name, module, opts)
            info["known_bottleneck"] = bottleneck
            manifest["captures"][name] = info
            print(name, info, flush=True)
        except Exception as err:  # keep the batch going; the manifest says what failed
            manifest["captures"][name] = {"error": repr(err)}
            print(name, "FAILED", repr(err), flush=True)
    big_gemm = importlib.import_module("big_gemm")
    manifest["big_gemm_event_tflops"] = [round(big_gemm.event_tflops(), 1) for _ in range(3)]
    print("event tflops", manifest["big_gemm_event_tflops"])
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    main()
