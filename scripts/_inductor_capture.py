"""Shared by the capture_inductor scripts: run torch.compile workloads and keep every Triton kernel Inductor writes.

For every compiled graph the wrapper code Inductor generates is intercepted (the hook that
``torch._inductor.utils.run_and_get_code`` uses, ``GraphLowering.save_output_code``); each
``async_compile.triton('<name>', '''<source>''')`` in it gives one kernel's name and Triton source, and the
"Original ATen:" comment above it the ATen nodes fused into it. As a fallback, output-code files written to
the Inductor cache dir during the workload are scanned too.

Environment (read when the capture is made):
    OUT      where kernels and meta.json go
    BUDGET   seconds a worker may spend; workloads that would start later are recorded as skipped
    ONLY     comma-separated workload names to run (default: all)
    JOBS     worker processes compiling side by side on the one GPU (compilation is mostly
             single-threaded Python); their tables are merged, the earliest workload in file order owning
             a name that several generated
    HARD     seconds after which workers still running are killed (their partial tables are kept)
    CHECK    "eager" runs every workload eagerly on the CPU, "aot_eager" through dynamo and AOT autograd
             on the CPU: a shape and syntax check without a GPU, nothing is captured
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from unittest import mock

import torch

KERNEL_RE = re.compile(r"async_compile\.triton\(\s*'(\w+)'\s*,\s*'''(.*?)'''", re.DOTALL)
ATEN_RE = re.compile(r"#\s*(?:Topologically Sorted Source Nodes:.*?\n#\s*)?Original ATen:\s*(.*)")


class InductorCapture:
    def __init__(self, *, out: str, kernels_file: str, budget_s: float, jobs: int, cache_prefix: str) -> None:
        self.out = os.environ.get("OUT", out)
        self.kernels_file = kernels_file
        self.budget_s = float(os.environ.get("BUDGET", budget_s))
        self.jobs = int(os.environ.get("JOBS", jobs))
        self.hard_s = float(os.environ.get("HARD", 420))
        self.only = [w for w in os.environ.get("ONLY", "").split(",") if w]
        self.check = os.environ.get("CHECK", "")
        self.device = "cpu" if self.check else "cuda"
        # A fresh cache dir: nothing is served from an earlier run, and the fallback scan sees only this run.
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix=cache_prefix))
        self.workloads: list = []
        self.kernels: dict[str, dict] = {}
        self.meta: dict = {"workloads": {}}
        self._codes: list[str] = []
        self._t_start = time.time()

    # ---------------------------------------------------------------- what the workload scripts use
    def workload(self, fn):
        """Decorator: `fn()` builds a workload and returns its step function."""
        self.workloads.append(fn)
        return fn

    def compile(self, fn, **kw):
        if self.check == "eager":
            return fn
        if self.check == "aot_eager":
            return torch.compile(fn, backend="aot_eager", **kw)
        return torch.compile(fn, **kw)

    def main(self) -> None:
        from torch._inductor.graph import GraphLowering

        os.makedirs(self.out, exist_ok=True)
        self.meta.update(torch=torch.__version__, check=self.check, budget_s=self.budget_s,
                         device=(torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"))
        try:
            import triton

            self.meta["triton"] = triton.__version__
        except ImportError:
            self.meta["triton"] = None
        if self.jobs > 1 and not self.check:
            self._run_parallel()
        else:
            with mock.patch.object(GraphLowering, "save_output_code", self._codes.append):
                self._run_all()
        self._dump()
        print(f"{self.meta['kernel_count']} kernels -> {os.path.join(self.out, self.kernels_file)}; "
              f"{self.meta['total_seconds']}s", flush=True)
        for tag, status in self.meta["workloads"].items():
            print(f"  {tag}: {status}", flush=True)

    # ---------------------------------------------------------------- one worker
    def _record(self, tag: str, code: str) -> int:
        """Add every Triton kernel defined in one output-code module; return how many were new names."""
        new = 0
        for m in KERNEL_RE.finditer(code):
            name, src = m.group(1), m.group(2)
            aten = ATEN_RE.findall(code[max(0, m.start() - 3000): m.start()])
            entry = self.kernels.get(name)
            if entry is None:
                self.kernels[name] = {"workload": tag, "aten": aten[-1].strip() if aten else "", "source": src,
                                      "also_in": [], "_sources": {src}}
                new += 1
            else:
                if tag != entry["workload"] and tag not in entry["also_in"]:
                    entry["also_in"].append(tag)
                entry["_sources"].add(src)
        return new

    def _run_all(self) -> None:
        cache_dir = os.environ["TORCHINDUCTOR_CACHE_DIR"]
        for build in self.workloads:
            tag = build.__name__
            if self.only and tag not in self.only:
                continue
            elapsed = time.time() - self._t_start
            if elapsed > self.budget_s:
                self.meta["workloads"][tag] = {"status": "skipped (budget)"}
                print(f"[skip] {tag}: budget spent ({elapsed:.0f}s)", flush=True)
                continue
            t0 = time.time()
            self._codes.clear()
            status = "ok"
            try:
                torch._dynamo.reset()
                torch.manual_seed(0)
                step = build()
                for _ in range(2):  # the first call compiles (forward and backward graphs), the second re-runs
                    step()
                if self.device == "cuda":
                    torch.cuda.synchronize()
            except Exception as e:  # keep going: one workload's failure loses only its kernels
                status = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
                traceback.print_exc()
            graphs = len(self._codes)
            codes = list(self._codes)
            if not self.check:  # fallback: output code written to the cache dir during this workload
                for path in glob.glob(os.path.join(cache_dir, "**", "*.py"), recursive=True):
                    try:
                        if os.path.getmtime(path) >= t0 - 1:
                            with open(path) as fh:
                                codes.append(fh.read())
                    except OSError:
                        pass
            new = sum(self._record(tag, c) for c in codes)
            seconds = round(time.time() - t0, 1)
            self.meta["workloads"][tag] = {"status": status, "new_kernels": new, "graphs": graphs, "seconds": seconds}
            print(f"[{status[:60]}] {tag}: {new} new kernels, {graphs} graphs, {seconds}s", flush=True)
            self._dump()  # partial results survive a worker killed at the deadline

    # ---------------------------------------------------------------- several workers
    def _run_parallel(self) -> None:
        names = [w.__name__ for w in self.workloads if not self.only or w.__name__ in self.only]
        tmp = tempfile.mkdtemp(prefix="inductor_parts_")
        procs = []
        for i in range(self.jobs):
            share = names[i :: self.jobs]
            if share:
                part = os.path.join(tmp, f"part{i}")
                env = dict(os.environ, OUT=part, ONLY=",".join(share), JOBS="1",
                           TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, f"cache{i}"))
                procs.append((part, subprocess.Popen([sys.executable, sys.argv[0]], env=env)))
        deadline = time.time() + self.hard_s
        for part, proc in procs:
            try:
                rc = proc.wait(timeout=max(1.0, deadline - time.time()))
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = "killed at the deadline"
                self.meta["workloads"][f"worker {part}"] = {"status": rc}
            try:
                self._merge_part(part)
            except (OSError, ValueError) as e:
                self.meta["workloads"][f"worker {part}"] = {"status": f"failed: rc={rc} ({e})"}
        self.meta["jobs"] = self.jobs

    def _merge_part(self, part: str) -> None:
        with open(os.path.join(part, "meta.json")) as fh:
            self.meta["workloads"].update(json.load(fh).get("workloads", {}))
        with open(os.path.join(part, self.kernels_file)) as fh:
            table = json.load(fh)
        for name, e in table.items():
            for tag in [e["workload"], *e["also_in"]]:
                if name not in self.kernels:
                    self.kernels[name] = {"workload": tag, "aten": e["aten"], "source": e["source"], "also_in": [],
                                          "_sources": set(), "_variants": 0}
                elif tag != self.kernels[name]["workload"] and tag not in self.kernels[name]["also_in"]:
                    self.kernels[name]["also_in"].append(tag)
            self.kernels[name]["_sources"].add(e["source"])
            self.kernels[name]["_variants"] = self.kernels[name].get("_variants", 0) + e["variants"]

    def _dump(self) -> None:
        """Write the kernel table and meta.json (atomically: a worker may be killed mid-run)."""
        order = {w.__name__: i for i, w in enumerate(self.workloads)}
        table = {}
        for name, e in sorted(self.kernels.items()):
            tags = sorted([e["workload"], *e["also_in"]], key=lambda t: order.get(t, 1 << 30))
            table[name] = {"workload": tags[0], "also_in": tags[1:], "aten": e["aten"],
                           "variants": max(len(e["_sources"]), e.get("_variants", 0)), "source": e["source"]}
        self.meta["kernel_count"] = len(table)
        self.meta["total_seconds"] = round(time.time() - self._t_start, 1)
        os.makedirs(self.out, exist_ok=True)
        for filename, obj in ((self.kernels_file, table), ("meta.json", self.meta)):
            path = os.path.join(self.out, filename)
            with open(path + ".tmp", "w") as fh:
                json.dump(obj, fh, indent=1)
            os.replace(path + ".tmp", path)
