"""Roofline placement per op and per kernel on real traces: FLOPs, rates, bound, efficiency, checks."""

from __future__ import annotations

import gzip
import json
import statistics
from collections import defaultdict

import pytest

from rocanalyze.analysis.gpu_spec import select_gpu
from rocanalyze.analysis.roofline import model_ops, place
from rocanalyze.traces import read
from tests.conftest import data_path, realdata_path

H100 = ("torch_profiler", "h100_captures")
GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}


def _leaf_gemm_flops(path) -> float:
    """2*M*N*K (+ batch) summed over every mm-family op that launched a kernel, from the raw trace."""
    events = json.load(gzip.open(path))["traceEvents"]
    ops = {e["args"]["External id"]: e for e in events
           if e.get("cat") == "cpu_op" and "External id" in e.get("args", {})}
    launched = defaultdict(int)
    for e in events:
        if e.get("cat") == "kernel" and e["args"].get("External id") in ops:
            launched[e["args"]["External id"]] += 1
    total = 0.0
    for ext in launched:
        op = ops[ext]
        dims = op["args"]["Input Dims"]
        if op["name"] in ("aten::mm", "aten::bmm"):
            a, b = dims[0], dims[1]
        elif op["name"] in ("aten::addmm", "aten::baddbmm"):
            a, b = dims[1], dims[2]
        else:
            continue
        batch = a[0] if len(a) == 3 else 1
        total += 2.0 * batch * a[-2] * a[-1] * b[-1]
    return total


@pytest.fixture(scope="module")
def train_step():
    table = read(data_path(*H100, "train_step.json.gz"))
    gpu = select_gpu(table.devices)
    return table, gpu, *model_ops(table, gpu)


def test_train_step_gemm_flops_equal_leaf_matmul_shapes(train_step):
    _, _, ops, _ = train_step
    gemm = [o for o in ops if o["category"] == "gemm"]
    assert {o["op"] for o in gemm} <= GEMM_OPS          # never aten::linear / aten::matmul on top
    expected = _leaf_gemm_flops(data_path(*H100, "train_step.json.gz"))
    assert expected > 1e12
    assert sum(o["flops"] for o in gemm) == pytest.approx(expected, rel=0.01)


def test_train_step_attention_flops_follow_the_formula(train_step):
    _, _, ops, _ = train_step
    att = {o["op"]: o for o in ops if o["category"] == "attention"}
    events = json.load(gzip.open(data_path(*H100, "train_step.json.gz")))["traceEvents"]
    rec = next(e["args"] for e in events if e.get("name") == "aten::_cudnn_attention_forward")
    (b, h, s, d), causal = rec["Input Dims"][0], rec["Concrete Inputs"][10]
    assert causal == "True"                # TinyGPT calls SDPA with is_causal=True
    fwd = 2 * b * h * s * s * (d + d) / 2  # causal counts half
    assert att["aten::_cudnn_attention_forward"]["flops"] == att["aten::_cudnn_attention_forward"]["calls"] * fwd
    bwd = att["aten::_cudnn_attention_backward"]
    assert bwd["flops"] == bwd["calls"] * 2.5 * fwd and bwd["calls"] == att["aten::_cudnn_attention_forward"]["calls"]


def test_train_step_time_is_attributed_once(train_step):
    table, _, ops, kernels = train_step
    attributed = table.gpu.loc[table.gpu["op_index"] >= 0, "dur_ns"].sum() / 1e3
    assert sum(o["time_us"] for o in ops) == pytest.approx(attributed)
    assert sum(k["time_us"] for k in kernels) == pytest.approx(attributed)
    top = max((o for o in ops if o["category"] == "gemm"), key=lambda o: o["time_us"])
    assert top["bound"] == "compute" and 0.5 < top["efficiency"] < 1.0


def test_big_gemm_rate_matches_event_timing_and_h100_peak():
    manifest = json.loads(data_path(*H100, "MANIFEST.json").read_text())
    step_ms = statistics.median(manifest["captures"]["big_gemm"]["options"]["event_ms_per_step"])
    event_tflops = 5 * 2 * 8192**3 / (step_ms / 1e3) / 1e12      # 5 GEMMs per profiled step
    table = read(data_path(*H100, "big_gemm.json.gz"))
    gpu = select_gpu(table.devices)
    ops, kernels = model_ops(table, gpu)
    mm = next(o for o in ops if o["op"] == "aten::mm")
    assert mm["shapes"] == [[8192, 8192], [8192, 8192]] and mm["calls"] == 15
    assert mm["tflops"] == pytest.approx(event_tflops, rel=0.05)
    assert mm["peak"] == "bf16" and mm["bound"] == "compute"
    assert mm["efficiency"] == pytest.approx(mm["tflops"] / 989.4)
    assert 0.70 < mm["efficiency"] < 0.82
    assert mm["grid_check"] == {"workgroups": 132, "threshold": 132, "small": False, "compute_units": 132}
    nvjet = next(k for k in kernels if k["name"].startswith("nvjet"))
    assert nvjet["flops"] == mm["flops"] and nvjet["tflops"] > mm["tflops"]   # the op's time has memsets too
    memset = next(k for k in kernels if k["name"] == "Memset (Device)")
    assert memset["calls"] == 15 and memset["flops"] == 0
    measured = select_gpu(table.devices, peaks_file=data_path("ceilings", "h100_peaks.json"))
    mm2 = next(o for o in model_ops(table, measured)[0] if o["op"] == "aten::mm")
    assert mm2["efficiency"] == pytest.approx(mm["tflops"] / 775.2)


@pytest.fixture(scope="module")
def bert():
    table = read(realdata_path("torch_traces", "tracelens", "mi300x_bert-small_inference.json.gz"))
    return table, select_gpu(table.devices)


def test_mi300x_bert_addmm_and_stride_hotspot(bert):
    table, gpu = bert
    ops, _ = model_ops(table, gpu)
    assert not any(o["op"] == "aten::linear" for o in ops)
    qkv = next(o for o in ops if o["op"] == "aten::addmm" and o["shapes"][1:3] == [[141, 512], [512, 512]])
    assert qkv["flops"] == qkv["calls"] * (2 * 141 * 512 * 512 + 141 * 512)
    assert qkv["bound"] == "memory"        # 141 rows: about 60 FLOP/byte, under MI300X's ridge
    assert qkv["stride_check"]["hotspot"] and qkv["stride_check"]["multiple_of_512"] == ["lda", "ldb"]
    on_h100 = next(o for o in model_ops(table, select_gpu([], override="H100"))[0] if o is not None
                   and o["op"] == "aten::addmm" and o["shapes"] == qkv["shapes"])
    assert not on_h100["stride_check"]["applies"] and not on_h100["stride_check"]["hotspot"]


def test_torch_flops_are_compared_when_the_trace_has_them(bert):
    table, gpu = bert
    ops = table.ops.copy()
    addmm = ops["name"] == "aten::addmm"
    # torch's with_flops counts addmm as 2*M*N*K (no bias term): 0.1% under the model, inside 1%
    ops.loc[addmm, "flops"] = [2.0 * d[1][0] * d[1][1] * d[2][1] for d in ops.loc[addmm, "shapes"]]
    table2 = type(table)(**{**table.__dict__, "ops": ops})
    qkv = next(o for o in model_ops(table2, gpu)[0] if o["op"] == "aten::addmm")
    assert 0 < qkv["torch_flops_diff"] < 0.01 and qkv["notes"] == []
    ops.loc[addmm, "flops"] = ops.loc[addmm, "flops"] * 2
    qkv = next(o for o in model_ops(type(table)(**{**table.__dict__, "ops": ops}), gpu)[0]
               if o["op"] == "aten::addmm")
    assert qkv["notes"] and "differ from the model's" in qkv["notes"][0] and "by -50.0%" in qkv["notes"][0]


def test_place_on_both_sides_of_the_ridge():
    h100 = select_gpu([], override="h100-sxm")
    mem = place(flops=10e9, nbytes=1e9, seconds=1e-3, gpu=h100, peak="bf16")   # 10 FLOP/byte
    assert mem["bound"] == "memory" and mem["roof_tflops"] == pytest.approx(10 * 3350 / 1e3)
    assert mem["efficiency"] == pytest.approx(10.0 / 33.5) and mem["gbps"] == pytest.approx(1000)
    comp = place(flops=500e9, nbytes=1e9, seconds=1e-3, gpu=h100, peak="bf16")  # 500 FLOP/byte
    assert comp["bound"] == "compute" and comp["efficiency"] == pytest.approx(500 / 989.4)
    copy = place(flops=0.0, nbytes=2.5e9, seconds=1e-3, gpu=h100, peak="fp32")
    assert copy["bound"] == "memory" and copy["efficiency"] == pytest.approx(2500 / 3350)
    unknown = place(flops=1e9, nbytes=1e9, seconds=1e-3, gpu=select_gpu([]), peak="bf16")
    assert unknown["efficiency"] is None and unknown["tflops"] == pytest.approx(1.0)


def test_rocprof_compute_counters_give_measured_work():
    """Kernel rates from the counters rocprof-compute collected on an MI300X (pmc_perf.csv, 301 dispatches)."""
    import pandas as pd

    from rocanalyze.analysis.roofline import counter_work

    folder = realdata_path("rocprof_compute", "batched_gemm_bmm1_mi300x")
    pmc = pd.read_csv(folder / "pmc_perf.csv.gz")
    bmm = pmc[pmc["Kernel_Name"].str.startswith("void batched_matrix_multiplication")].iloc[0]
    flops, hbm = counter_work(bmm)
    assert flops == 4194304 * 512 == 2 * 1024**3          # SQ_INSTS_VALU_MFMA_MOPS_BF16 x 512
    assert hbm == 411655 * 128 + (410768 - 411655) * 64 + (262448 - 262365) * 32 + 262365 * 64
    table = read(folder)                                  # the readers put counters in metadata
    gpu = select_gpu(table.devices)
    assert gpu.key == "mi300x" and not gpu.assumed
    ops, kernels = model_ops(table, gpu)
    assert ops == []                                      # no framework ops: kernel rates only
    k = next(k for k in kernels if k["name"].startswith("void batched_matrix_multiplication"))
    assert k["calls"] == 150 and k["flops"] == 150 * 2 * 1024**3
    assert k["tflops"] == pytest.approx(k["flops"] / (k["time_us"] / 1e6) / 1e12)
    fill = next(k for k in kernels if k["name"] == "__amd_rocclr_fillBufferAligned")
    assert fill["flops"] == 0 and fill["bound"] == "memory"
    assert fill["efficiency"] == pytest.approx(fill["gbps"] / 5300)
