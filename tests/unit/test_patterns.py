"""Cross-kernel patterns on real traces: where each must fire (H100 captures of the workloads that have
it, Hugging Face models with separate Q/K/V) and where it must not (SDPA models, compiled code,
CUDA-graph replay, back-to-back equal GEMMs, a softmax feeding a matmul that is not attention)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rocanalyze.analysis.classify import classify_kernel, classify_table
from rocanalyze.analysis.patterns import find_patterns, settings
from rocanalyze.traces import read
from rocanalyze.traces.schema import EventTable
from tests.conftest import data_path, realdata_path

CAPTURES = ("torch_profiler", "h100_captures")


def _capture(name: str) -> EventTable:
    return read(data_path(*CAPTURES, name))


def _realdata(*parts: str) -> EventTable:
    return read(realdata_path(*parts))


def _kinds(patterns: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for p in patterns:
        assert {"kind", "time_us"} <= set(p) and p["time_us"] >= 0
        out.setdefault(p["kind"], []).append(p)
    return out


def _raw_events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as fh:
        return json.load(fh)["traceEvents"]


def _outermost_op_gpu_us(table: EventTable, keep) -> float:
    """GPU µs of kernels whose outermost launching op satisfies keep(name, input dims)."""
    ops, gpu = table.ops, table.gpu
    parent = ops["parent"].to_numpy()
    total = 0.0
    for idx, dur in zip(gpu["op_index"].to_numpy(), gpu["dur_ns"].to_numpy(), strict=True):
        if idx < 0:
            continue
        while parent[idx] >= 0:
            idx = parent[idx]
        if keep(str(ops["name"].iat[idx]), ops["shapes"].iat[idx]):
            total += dur / 1e3
    return total


def test_manual_attention_is_unfused_attention_first_and_separate_qkv() -> None:
    table = _capture("manual_attention.json.gz")
    patterns = find_patterns(table)
    kinds = _kinds(patterns)
    assert patterns[0]["kind"] == "unfused_attention"
    (att,) = kinds["unfused_attention"]
    assert att["count"] == 6  # 2 attention calls per step, 3 profiled steps
    assert att["shapes"] == {"q": [4, 16, 2048, 64], "k_t": [4, 16, 64, 2048], "scores": [4, 16, 2048, 2048],
                             "v": [4, 16, 2048, 64]}

    # independent: every kernel under the 4-D matmuls, the score scaling and the softmax
    def attention_op(name: str, shapes: Any) -> bool:
        return name in {"aten::matmul", "aten::div", "aten::softmax"} and len(shapes[0]) == 4

    assert att["time_us"] == pytest.approx(_outermost_op_gpu_us(table, attention_op), rel=1e-9)
    (qkv,) = kinds["unfused_qkv"]
    assert qkv["count"] == 6 and qkv["input_shape"] == [4, 2048, 1024] and qkv["out_features"] == [1024] * 3


def test_eager_elementwise_chain_capture_and_its_example_chain() -> None:
    table = _capture("elementwise_chain.json.gz")
    patterns = find_patterns(table)
    assert patterns[0]["kind"] == "eager_elementwise_chain"
    chains = _kinds(patterns)["eager_elementwise_chain"]
    assert sum(c["kernels"] for c in chains) >= 150
    # independent check of the longest chain: walk that stream from its first kernel
    cfg = settings()
    ex = chains[0]["example_chain"]
    lane = table.gpu[table.gpu["stream"] == ex["stream"]].sort_values("start_ns")
    names, start = lane["name"].astype(str).to_numpy(), lane["start_ns"].to_numpy()
    end = start + lane["dur_ns"].to_numpy()
    i = int(np.flatnonzero(start == ex["start_ns"])[0])
    chain = slice(i, i + ex["kernels"])
    assert all(classify_kernel(n) == "elementwise" for n in names[chain])
    assert (np.diff(start[chain]) > 0).all()
    assert ((start[chain][1:] - end[chain][:-1]) <= cfg["eager_chain_max_gap_us"] * 1e3).all()
    after = i + ex["kernels"]
    assert classify_kernel(names[after]) != "elementwise" or start[after] - end[after - 1] > 200e3


def test_item_sync_capture_counts_every_item_in_the_steps() -> None:
    path = data_path(*CAPTURES, "item_sync.json.gz")
    (sync,) = _kinds(find_patterns(read(path)))["host_sync"]
    events = _raw_events(path)
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events if str(e.get("name", "")).startswith("ProfilerStep#")
             and e.get("cat") == "user_annotation"]
    in_steps = [e for e in events if any(a <= e["ts"] < b for a, b in steps)]
    syncs = [e for e in in_steps if e.get("cat") == "cuda_runtime" and e["name"] == "cudaStreamSynchronize"]
    items = [e for e in in_steps if e.get("cat") == "cpu_op" and e["name"] == "aten::item"]
    assert len(steps) == 3
    assert sync["count"] == len(syncs) == sync["item_calls"] == len(items) == 96  # 32 iterations per step
    assert sync["per_step"] == [sum(a <= e["ts"] < b for e in syncs) for a, b in steps] == [32, 32, 32]
    assert sync["calls"] == {"cudaStreamSynchronize": 96}
    assert 0 < sync["gpu_idle_us_max"] <= settings()["host_sync_idle_cap_us"]
    assert sync["time_us"] > 95 * 5  # each .item() but the last drains the queue: a launch latency at least


@pytest.mark.parametrize("name", ["compiled.json.gz", "big_gemm.json.gz", "fp32_gemm.json.gz", "convnet.json.gz",
                                  "launch_bound.json.gz", "train_step.json.gz"])
def test_captures_without_these_patterns(name: str) -> None:
    kinds = _kinds(find_patterns(_capture(name)))
    assert "unfused_attention" not in kinds
    assert "unfused_qkv" not in kinds  # big_gemm: 5 equal GEMMs in a row are a loop, not Q/K/V
    assert "eager_elementwise_chain" not in kinds  # compiled: Triton kernels are fused already


@pytest.mark.realdata
@pytest.mark.parametrize(("parts", "count", "shape", "width"), [
    (("tracelens", "mi300x_bert-small_inference.json.gz"), 4, [1, 141, 512], 512),
    (("tracelens", "nvidia_h100_bert-small_inference.json.gz"), 4, [1, 141, 512], 512),
    (("tracelens", "mi300x_qwen1.5-0.5b_inference.json.gz"), 24, [16, 559, 1024], 1024),
    (("tracelens", "mi300x_falconsai_vit_inference.json.gz"), 12, [4, 197, 768], 768),
])
def test_hugging_face_models_have_separate_qkv_but_sdpa(parts: tuple[str, ...], count: int, shape: list[int],
                                                        width: int) -> None:
    table = _realdata("torch_traces", *parts)
    kinds = _kinds(find_patterns(table))
    (qkv,) = kinds["unfused_qkv"]
    assert qkv["count"] == count  # one per layer
    assert qkv["input_shape"] == shape and qkv["out_features"] == [width] * 3
    assert "unfused_attention" not in kinds  # these models call scaled_dot_product_attention
    assert (table.ops["name"].astype(str) == "aten::scaled_dot_product_attention").sum() > 0


@pytest.mark.realdata
def test_softmax_into_matmul_that_is_not_attention() -> None:
    # a mixture-of-experts gate: softmax over 2 experts, then [2048, 2] x [2, 1]; and training mm's
    table = _realdata("torch_traces", "hta", "nvidia_multirank", "sampled_rank-0.json.gz")
    kinds = _kinds(find_patterns(table))
    assert (table.ops["name"].astype(str) == "aten::softmax").sum() == 2
    assert "unfused_attention" not in kinds
    assert "unfused_qkv" not in kinds


@pytest.mark.realdata
def test_cuda_graph_replay_is_not_an_eager_chain() -> None:
    table = _realdata("torch_traces", "tracelens", "vllm_decode_full_graph_execution.json.gz")
    classify_table(table)
    elementwise = table.gpu[table.gpu["category"].astype(str) == "elementwise"]
    assert len(elementwise) >= 50 and elementwise["graph"].mean() > 0.9  # replayed from the graph
    assert "eager_elementwise_chain" not in _kinds(find_patterns(table))


@pytest.mark.realdata
def test_host_sync_counts_per_rank_and_step() -> None:
    table = _realdata("torch_traces", "hpctraining_tracelens", "merged_4rank_all_events.json.gz")
    (sync,) = _kinds(find_patterns(table))["host_sync"]
    steps = table.annotations[table.annotations["kind"].astype(str) == "step"]
    assert len(sync["per_step"]) == len(steps) == 12  # 4 ranks x 3 steps
    assert sum(sync["per_step"]) == sync["count"]
    assert set(sync["calls"]) <= {"hipEventSynchronize", "hipMemcpyWithStream", "hipDeviceSynchronize"}
    assert sync["calls"]["hipMemcpyWithStream"] > 0


def test_no_events_no_patterns() -> None:
    assert find_patterns(EventTable.build(source_format="test", paths=[])) == []


def _memcpy_with_stream_directions(path: Path) -> list[str]:
    """Raw JSON: the copy direction each hipMemcpyWithStream call launched (by correlation id)."""
    events = _raw_events(path)
    calls = {e["args"]["correlation"] for e in events if e.get("name") == "hipMemcpyWithStream"}
    return sorted(e["name"].split()[1] for e in events
                  if e.get("cat") == "gpu_memcpy" and e.get("args", {}).get("correlation") in calls)


@pytest.mark.realdata
def test_rocm_blocking_copy_that_uploads_is_h2d_not_a_host_sync() -> None:
    # On ROCm a synchronous copy is hipMemcpyWithStream both ways: .item() (DtoH) is a host sync,
    # a pageable upload (HtoD) is the h2d_copy idle cause. The MI250 trace has only uploads.
    from rocanalyze import analyze
    path = realdata_path("torch_traces", "hta", "amd_mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    assert _memcpy_with_stream_directions(path) == ["HtoD", "HtoD"]
    a = analyze(path)
    assert "host_sync" not in _kinds(a.patterns)
    assert "sync" not in a.idle_breakdown_us and a.idle_breakdown_us["h2d_copy"] > 0


@pytest.mark.realdata
def test_rocm_item_copies_are_host_syncs_in_pattern_and_idle() -> None:
    # The 4-rank MI300X trace: 18 hipMemcpyWithStream calls copied DtoH (.item()/.cpu()), 24 uploaded.
    from rocanalyze import analyze
    path = realdata_path("torch_traces", "hpctraining_tracelens", "merged_4rank_all_events.json.gz")
    directions = _memcpy_with_stream_directions(path)
    assert directions.count("DtoH") == 18 and directions.count("HtoD") == 24
    a = analyze(path)
    (sync,) = _kinds(a.patterns)["host_sync"]
    assert 0 < sync["calls"]["hipMemcpyWithStream"] <= 18   # the primary rank's DtoH calls only
    assert a.idle_breakdown_us["sync"] > sync["time_us"] > 0
