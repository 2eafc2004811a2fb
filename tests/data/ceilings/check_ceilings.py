"""Device check used for h100_peaks.json (run from the repo root on the GPU machine, with OUT set):
run `ceilings` by file path when the CLI output is missing, then an independent event-timed 8192^3 bf16
GEMM, and compare. Kept as provenance; not a test."""
import importlib.util
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, ".")
out = os.environ["OUT"]
p = f"{out}/peaks.json"
if not os.path.exists(p):
    spec = importlib.util.spec_from_file_location("ceil", "rocanalyze/commands/ceilings.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    m.command(output=Path(p), device=0, force=True)
    print("ran ceilings.command directly (the CLI import failed)")
print(open(p).read()[:3500])
import torch  # noqa: E402

n = 8192
torch.manual_seed(1)
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
for _ in range(5):
    torch.mm(a, b)
torch.cuda.synchronize()
rates = []
for _ in range(5):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(20):
        torch.mm(a, b)
    e.record()
    e.synchronize()
    rates.append(2 * n**3 / (s.elapsed_time(e) / 1e3 / 20) / 1e12)
ref = statistics.median(rates)
got = json.load(open(p))["peak_tflops"]["bf16"]
print("independent event-timed bf16 8192^3 TFLOP/s per repeat", [round(x, 1) for x in rates],
      "median", round(ref, 1))
print("ceilings bf16", got, "ratio", round(got / ref, 4), "within 10%:", abs(got / ref - 1) < 0.10)
json.dump({"event_tflops_repeats": rates, "event_tflops_median": ref, "ceilings_bf16": got,
           "ratio": got / ref}, open(f"{out}/check.json", "w"), indent=1)
