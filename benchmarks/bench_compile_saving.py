"""What torch.compile removes of the memory-bound kernel time that `eager-not-compiled` estimates (needs a GPU).

The rule (rocanalyze/data/recommendations.toml) says a third of the elementwise, norm, softmax and reduction time
of an eager run could go once the model is compiled. This measures it, in one process and one run, on the two
example workloads it fires on: each is profiled eager and with `torch.compile(model)` (the model only, as the
rule's action says), both traces are analyzed by rocanalyze, and the memory-bound time per step and the step time
(CUDA events) are compared.

    python benchmarks/bench_compile_saving.py [--out results.json]

Prints per workload: memory-bound ms per step eager and compiled, the share compile removed (the rule's fraction
is 0.33), and the step-time ratio.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples" / "workloads")]

from rocanalyze.analysis.build import analyze  # noqa: E402

MEMORY_BOUND = ("elementwise", "norm", "softmax", "reduction")
WARM, ACTIVE, TIMED = 3, 4, 10


def step_ms(step) -> float:
    """Mean step time over TIMED steps, from CUDA events (after the warm-up the caller did)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(TIMED):
        step()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / TIMED


def measure(module, compiled: bool, folder: Path) -> dict:
    step = module.make("cuda", compiled=compiled)
    for _ in range(WARM):        # compilation and autotuning happen here
        step()
    torch.cuda.synchronize()
    ms = step_ms(step)
    trace = folder / f"{module.__name__}_{'compiled' if compiled else 'eager'}.json"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=ACTIVE),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(trace))) as prof:
        for _ in range(1 + ACTIVE):
            step()
            prof.step()
    a = analyze(trace)
    steps = max(len(a.steps), 1)
    rec = next((r for r in a.recommendations if r["id"] == "eager-not-compiled"), None)
    return {"step_ms": round(ms, 3), "window_steps": len(a.steps),
            "memory_bound_ms_per_step": round(sum(a.categories_us.get(c, 0.0) for c in MEMORY_BOUND) / steps / 1e3, 3),
            "categories_ms_per_step": {c: round(us / steps / 1e3, 3) for c, us in a.categories_us.items()},
            "rule_saving_ms_per_step": round(rec["saving_us"] / steps / 1e3, 3) if rec else None,
            "inductor_kernels": sum(str(k["name"]).startswith("triton_") for k in a.kernels)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a GPU")
    import convnet
    import train_step

    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    with tempfile.TemporaryDirectory() as tmp:
        for module in (train_step, convnet):
            eager, compiled = measure(module, False, Path(tmp)), measure(module, True, Path(tmp))
            if not eager["memory_bound_ms_per_step"]:
                sys.exit(f"{module.__name__}: the eager trace holds no memory-bound kernel time: {eager}")
            removed = 1 - compiled["memory_bound_ms_per_step"] / eager["memory_bound_ms_per_step"]
            results[module.__name__] = {"eager": eager, "compiled": compiled,
                                        "memory_bound_removed": round(removed, 3),
                                        "step_speedup": round(eager["step_ms"] / compiled["step_ms"], 3)}
            print(f"{module.__name__}: memory-bound {eager['memory_bound_ms_per_step']:.2f} -> "
                  f"{compiled['memory_bound_ms_per_step']:.2f} ms/step ({100 * removed:.0f}% removed; the rule "
                  f"estimates 33%, {eager['rule_saving_ms_per_step']} ms/step); step {eager['step_ms']:.2f} -> "
                  f"{compiled['step_ms']:.2f} ms ({eager['step_ms'] / compiled['step_ms']:.2f}x)", flush=True)
    text = json.dumps(results, indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
