"""Shared by the capture_model_tables scripts: profile one workload at a time, keep every CUDA row."""

from __future__ import annotations

import json
import os
import tempfile
import time
import traceback
from collections import defaultdict

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile


def profiled(fn, warm: int = 2, iters: int = 2, cuda: bool = True) -> profile:
    """The profiler that recorded `iters` calls of `fn`, after `warm` unprofiled calls (compilation, autotuning).
    cuda=False records the CPU only (a smoke test of a workload's code on a machine without a GPU)."""
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(warm):
        fn()
    sync()
    with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])) as prof:
        for _ in range(iters):
            fn()
        sync()
    return prof


def kernel_rows(trace_path: str) -> list:
    """[name, op, calls, us] per (kernel, op) from a Chrome trace the profiler exported."""
    with open(trace_path) as fh:
        events = json.load(fh)["traceEvents"]
    op_of_ext: dict = {}
    for e in events:  # innermost op wins: later-starting ops with the same External id are nested deeper
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            ext = e["args"]["External id"]
            if ext not in op_of_ext or e["ts"] >= op_of_ext[ext][0]:
                op_of_ext[ext] = (e["ts"], e["name"])
    agg: dict = defaultdict(lambda: [0, 0.0])
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            op = op_of_ext.get(e.get("args", {}).get("External id"), (0, ""))[1]
            a = agg[(e["name"], op)]
            a[0] += 1
            a[1] += e.get("dur", 0)
    rows = [[n, op, c, round(us, 1)] for (n, op), (c, us) in agg.items()]
    return sorted(rows, key=lambda r: -r[3])


class TableCapture:
    """After each workload, OUT/tables.json holds every CUDA row of key_averages() so far:
    per workload tag, [kernel name, calls, self device time] slowest first, or "ERR" when it failed.
    A workload that starts after `budget_s` seconds is skipped (the lent GPU's per-call limit)."""

    def __init__(self, out: str, budget_s: float | None = None) -> None:
        os.makedirs(out, exist_ok=True)
        self.path = os.path.join(out, "tables.json")
        self.tables: dict[str, object] = {}
        self.start = time.time()
        self.budget_s = budget_s

    def capture(self, tag: str, fn, warm: int = 2, iters: int = 2) -> None:
        if self.budget_s is not None and time.time() - self.start > self.budget_s:
            print("skip", tag, "(budget)")
            return
        t0 = time.time()
        try:
            prof = profiled(fn, warm, iters)
            rows = [[e.key, e.count, e.self_device_time_total]
                    for e in prof.key_averages() if e.device_type == DeviceType.CUDA]
            rows.sort(key=lambda r: -r[2])
            self.tables[tag] = rows
            print(tag, len(rows), "rows", round(time.time() - t0, 1), "s", flush=True)
        except Exception:
            self.failed(tag)
        self.save()
        torch.cuda.empty_cache()

    def failed(self, tag: str) -> None:
        """Record the exception being handled as the workload's failure."""
        traceback.print_exc()
        self.tables[tag] = "ERR"

    def save(self) -> None:
        with open(self.path, "w") as fh:
            json.dump(self.tables, fh, indent=0)


class RowCapture:
    """After each workload, OUT/<name> holds {torch, device, tables}: per workload tag, kernel_rows() of its
    profiled iterations, or "ERR: ..." when it failed. A workload that starts after `budget_s` is skipped."""

    def __init__(self, out: str, name: str, budget_s: float, cuda: bool = True) -> None:
        os.makedirs(out, exist_ok=True)
        self.path, self.budget_s, self.cuda = os.path.join(out, name), budget_s, cuda
        self.tables: dict[str, object] = {}
        self.start = time.time()

    def run(self, tag: str, build, warm: int = 2, iters: int = 2) -> None:
        if time.time() - self.start > self.budget_s:
            print("skip", tag, "(budget)", flush=True)
            return
        t0 = time.time()
        try:
            prof = profiled(build(), warm, iters, cuda=self.cuda)
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
                path = tmp.name
            prof.export_chrome_trace(path)
            self.tables[tag] = kernel_rows(path)
            os.unlink(path)
            print(tag, len(self.tables[tag]), "rows", round(time.time() - t0, 1), "s", flush=True)
        except Exception as exc:
            traceback.print_exc()
            self.tables[tag] = f"ERR: {type(exc).__name__}: {str(exc)[:300]}"
        device = torch.cuda.get_device_name() if self.cuda else "cpu"
        with open(self.path, "w") as fh:
            json.dump({"torch": torch.__version__, "device": device, "tables": self.tables}, fh, indent=0)
        if self.cuda:
            torch.cuda.empty_cache()
