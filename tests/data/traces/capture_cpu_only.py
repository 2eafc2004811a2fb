"""Captures cpu_only.json: torch.profiler on a CPU-only machine (no GPU activity at all).

Run: python tests/data/traces/capture_cpu_only.py  (torch 2.x, CPU build)
"""

import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function

out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("cpu_only.json"))
model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
x = torch.randn(16, 64)
model(x).sum().backward()  # warm-up outside the trace
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    for step in range(2):
        with record_function(f"ProfilerStep#{step}"):
            model(x).sum().backward()
prof.export_chrome_trace(str(out))
print(out, out.stat().st_size)
