"""Wall time of `rocanalyze profile --no-report` against a bare torch.profiler with the same settings.

Both run the same workload script (default: examples/workloads/train_step.py) in a fresh process,
alternating (A B B A ...) so drift hits both sides alike. The bare side is this file's --bare mode:
torch.profiler.profile(CPU+CUDA, record_shapes, with_flops, a step-marking schedule) around the
script, steps advanced from optimizer.step like rocanalyze does, trace exported to .json.gz.
Prints each pair, the medians and their ratio (target: within 5%), and, with --analysis, how long
the analysis and reports add on top (`rocanalyze analyze` on one run folder).

    python benchmarks/bench_profile_overhead.py [--reps 5] [--script S] [-- script args]
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SCRIPT = HERE.parent / "examples" / "workloads" / "train_step.py"


def bare(script: str, args: list[str], trace: str) -> None:
    """The baseline: the script under torch.profiler as a user would write it by hand."""
    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook
    from torch.profiler import ProfilerAction, ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    prof = profile(activities=activities, record_shapes=True, with_flops=True,
                   schedule=lambda step: ProfilerAction.RECORD,
                   on_trace_ready=lambda p: p.export_chrome_trace(trace))
    handle = register_optimizer_step_post_hook(lambda opt, a, k: prof.step())
    sys.argv = [script, *args]
    sys.path[0] = str(Path(script).resolve().parent)
    prof.start()
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        handle.remove()
        prof.stop()


def timed(cmd: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one process; raises when it fails."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--script", default=str(DEFAULT_SCRIPT))
    parser.add_argument("--work", default=None, help="folder for the run folders and traces")
    parser.add_argument("--analysis", action="store_true", help="also time `rocanalyze analyze` on one run")
    parser.add_argument("--json", default=None, help="write the timings here")
    parser.add_argument("--ours", default="-m rocanalyze profile --no-report",
                        help="how to start rocanalyze's side (python arguments before -o RUN SCRIPT)")
    parser.add_argument("--bare", nargs=2, metavar=("TRACE", "SCRIPT"), help=argparse.SUPPRESS)
    opts, rest = parser.parse_known_args()
    rest = rest[1:] if rest[:1] == ["--"] else rest
    if opts.bare:
        return bare(opts.bare[1], rest, opts.bare[0])
    work = Path(opts.work or tempfile.mkdtemp(prefix="rocanalyze-overhead-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    rows: list[tuple[float, float]] = []
    for i in range(opts.reps):
        ours = [sys.executable, *opts.ours.split(), "-o", str(work / f"run{i}"), opts.script, *rest]
        base = [sys.executable, __file__, "--bare", str(work / f"bare{i}.json.gz"), opts.script, "--", *rest]
        if i % 2 == 0:
            a, b = timed(ours, env), timed(base, env)
        else:
            b, a = timed(base, env), timed(ours, env)
        rows.append((a, b))
        print(f"rep {i}: rocanalyze {a:7.3f} s   bare torch.profiler {b:7.3f} s   ratio {a / b:.3f}", flush=True)
    med_a, med_b = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
    result = {"script": opts.script, "args": rest, "reps": opts.reps, "rocanalyze_s": [r[0] for r in rows],
              "bare_s": [r[1] for r in rows], "median_rocanalyze_s": med_a, "median_bare_s": med_b,
              "ratio": med_a / med_b}
    print(f"median: rocanalyze {med_a:.3f} s, bare {med_b:.3f} s, ratio {med_a / med_b:.3f} "
          f"({(med_a / med_b - 1) * 100:+.1f}%; target within 5%)")
    if opts.analysis:
        result["analyze_s"] = timed([sys.executable, "-m", "rocanalyze", "analyze", str(work / "run0")], env)
        print(f"analysis + reports of one run: {result['analyze_s']:.3f} s")
    if opts.json:
        Path(opts.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
