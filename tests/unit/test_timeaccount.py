"""Time accounting on the H100 captures, checked against an independent computation from the raw JSON.

The independent side re-derives the window (GPU work launched inside the selected ProfilerSteps), the busy
union and the GEMM/attention time with plain Python loops over the trace events, sharing no code with
rocanalyze's readers or analyzers.
"""

from __future__ import annotations

import gzip
import json
import re
from decimal import Decimal
from functools import cache

import pytest

from rocanalyze import analyze
from tests.conftest import data_path

CAPTURES = ("torch_profiler", "h100_captures")
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


@cache
def _analysis(name: str):
    return analyze(data_path(*CAPTURES, f"{name}.json.gz"))


def _ns(us: Decimal) -> int:
    return int(us * 1000)  # exact: the JSON numbers are parsed as Decimal


@cache
def _independent(name: str) -> dict:
    """Window and GPU intervals straight from the JSON: no rocanalyze code involved."""
    with gzip.open(data_path(*CAPTURES, f"{name}.json.gz")) as fh:
        events = json.load(fh, parse_float=Decimal)["traceEvents"]
    steps = sorted((_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
    launches = {e["args"]["correlation"]: _ns(e["ts"]) for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    gpu = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e["name"], e["args"].get("correlation"))
           for e in events if e.get("cat") in GPU_CATS]
    first_host, last_host = steps[0][0], steps[-1][1]
    in_steps = [g for g in gpu if g[3] in launches and first_host <= launches[g[3]] < last_host]
    in_first = [g for g in in_steps if launches[g[3]] < steps[0][1]]
    in_last = [g for g in in_steps if launches[g[3]] >= steps[-1][0]]
    return {"lo": min(g[0] for g in in_first), "hi": max(g[1] for g in in_last), "gpu": gpu}


def _union(intervals, lo, hi) -> int:
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted((max(s, lo), min(e, hi)) for s, e in intervals if e > lo and s < hi):
        if cur_e is None or s > cur_e:
            total += 0 if cur_e is None else cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (0 if cur_e is None else cur_e - cur_s)


WORKLOADS = ["train_step", "big_gemm", "convnet", "manual_attention", "elementwise_chain", "fp32_gemm",
             "h2d_copy", "item_sync", "launch_bound", "compiled"]


@pytest.mark.parametrize("name", WORKLOADS)
def test_window_busy_and_idle_match_independent_computation(name):
    a, ind = _analysis(name), _independent(name)
    assert a.window_us == pytest.approx((ind["hi"] - ind["lo"]) / 1000, abs=1e-3)
    busy = _union([(s, e) for s, e, _, _ in ind["gpu"]], ind["lo"], ind["hi"])
    assert a.busy_us == pytest.approx(busy / 1000, abs=1e-3)
    # every nanosecond of the window is in exactly one category or idle cause
    assert sum(a.categories_us.values()) + a.idle_us == pytest.approx(a.window_us, abs=1e-3)
    assert sum(a.idle_breakdown_us.values()) == pytest.approx(a.idle_us, abs=1e-3)
    assert a.startup_us == 0.0


@pytest.mark.parametrize("name", ["train_step", "big_gemm", "fp32_gemm", "manual_attention"])
def test_gemm_and_attention_time_match_independent_union(name):
    """GEMM comes first in the overlap precedence, attention second: their exclusive times are unions."""
    a, ind = _analysis(name), _independent(name)
    is_gemm = re.compile(r"^nvjet_|gemm|^void cutlass::Kernel2<cutlass_80_simt_sgemm|splitKreduce").search
    is_attention = re.compile(r"sdpa|flash|fmha|^void cudnn::fusion::").search  # cuDNN SDPA backward helpers
    gemm = [(s, e) for s, e, n, _ in ind["gpu"] if is_gemm(n)]
    attn = [(s, e) for s, e, n, _ in ind["gpu"] if is_attention(n)]
    gemm_us = _union(gemm, ind["lo"], ind["hi"]) / 1000
    attn_us = (_union(gemm + attn, ind["lo"], ind["hi"]) - _union(gemm, ind["lo"], ind["hi"])) / 1000
    assert a.categories_us.get("gemm", 0.0) == pytest.approx(gemm_us, abs=1e-3)
    assert a.categories_us.get("attention", 0.0) == pytest.approx(attn_us, abs=1e-3)


def test_steps_are_measured_on_the_gpu():
    """The host runs ahead; per-step GPU spans must match the device events the capture recorded."""
    manifest = json.loads(data_path(*CAPTURES, "MANIFEST.json").read_text())
    for name in ("train_step", "convnet", "big_gemm"):
        events_ms = manifest["captures"][name]["options"]["event_ms_per_step"]
        steps = _analysis(name).steps
        assert len(steps) == 3
        # the last step has no next step to bound it: compare the first two
        for step, ms in zip(steps[:2], events_ms[:2], strict=True):
            assert step["dur_us"] / 1000 == pytest.approx(ms, rel=0.03)


def test_cold_start_is_startup_not_launch_overhead():
    cold, warm = _analysis("train_step_cold"), _analysis("train_step")
    assert cold.window["how"] == "steady state"
    assert cold.startup_us > 0.05 * cold.window_us
    # what remains after start-up looks like the warm steps: idle share within a few points
    assert cold.idle_us / cold.window_us == pytest.approx(warm.idle_us / warm.window_us, abs=0.05)
    assert cold.launch["launch_overhead_us"] < 0.05 * cold.window_us


def _first(a) -> dict:
    top_cat = next(iter(a.categories_us))
    top_idle = max(a.idle_breakdown_us, key=a.idle_breakdown_us.get) if a.idle_breakdown_us else None
    return {"category": top_cat, "idle": top_idle, "pattern": a.patterns[0]["kind"] if a.patterns else None}


@pytest.mark.parametrize("name", [n for n in WORKLOADS if n != "compiled"] + ["compiled", "launch_bound_rerun"])
def test_known_bottleneck_comes_first(name):
    manifest = json.loads(data_path(*CAPTURES, "MANIFEST.json").read_text())
    kind, what = manifest["captures"][name]["known_bottleneck"].split(":")
    a = _analysis(name)
    first = _first(a)
    assert first[kind] == what, (name, first)
    if kind == "category":
        assert a.categories_us[what] > a.idle_us  # the GPU is busy with it, not waiting
    if kind == "idle":
        assert a.idle_us > 0.5 * a.window_us
    if kind == "pattern":  # the pattern's own recommendation leads the list
        assert a.recommendations[0]["id"] == what.replace("_", "-"), [r["id"] for r in a.recommendations]


def test_the_tail_after_the_last_step_is_not_a_step(tmp_path):
    # `rocanalyze profile` of big_gemm.py on the H200: 8 marked steps, then the script times 115 more
    # GEMMs with device events (event_tflops) after the last marker. torch keeps that work in
    # ProfilerStep#8, the tail range the profiler's stop closes; run.json says the script marked 8.
    run = data_path("e2e_gpu", "h200_20261129", "big_gemm")
    events = json.loads(gzip.decompress((run / "trace.json.gz").read_bytes()))["traceEvents"]
    steps = sorted(int(e["name"].split("#")[1]) for e in events if e.get("ph") == "X"
                   and e.get("name", "").startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation")
    assert steps == list(range(9))
    assert json.loads((run / "run.json").read_text())["torch"]["steps"] == 8
    a = analyze(run)
    assert a.window["steps"] == [f"ProfilerStep#{i}" for i in range(1, 8)]   # #0 is start-up, #8 the tail
    assert "left out ProfilerStep#8: the tail after the script's last step (run.json: 8 steps), not a step" in a.notes
    # 5 GEMMs per step: the window holds 35 of them, not the tail's
    gemms = [k for k in a.kernels if k["category"] == "gemm"]
    assert sum(k["calls"] for k in gemms) == 35
    assert "noisy-steps" not in [r["id"] for r in a.recommendations]
    assert a.patterns == []     # the script's closing torch.cuda.synchronize() is in the tail, not a step
    assert max(s["dur_us"] for s in a.steps) < 1.2 * min(s["dur_us"] for s in a.steps)
    # the trace file read alone from its run folder: the same window
    assert analyze(run / "trace.json.gz").window["steps"] == a.window["steps"]
    # without run.json nothing says where the steps end: the tail counts as a step, with its 115 GEMMs
    (tmp_path / "trace.json.gz").write_bytes((run / "trace.json.gz").read_bytes())
    alone = analyze(tmp_path)
    assert alone.window["steps"][-1] == "ProfilerStep#8"
    assert sum(k["calls"] for k in alone.kernels if k["category"] == "gemm") == 150
