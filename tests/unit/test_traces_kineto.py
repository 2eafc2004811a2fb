"""Kineto (torch.profiler) traces: joins, ns precision, copies, graphs, ranks, devices, Python frames."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal

import numpy as np
import pytest

from rocanalyze.traces import kineto, read
from rocanalyze.traces.kineto_events import us_to_ns
from rocanalyze.traces.source import read_head
from tests.conftest import data_path, realdata_path

pytestmark = pytest.mark.realdata
TL = ("torch_traces", "tracelens")


@pytest.fixture(scope="module")
def resnet():
    return read(realdata_path(*TL, "mi300x_resnet_act_checkpoint_train.json.gz"))


def test_rocm_kernel_joins_launch_and_op(resnet) -> None:
    gpu = resnet.gpu
    assert gpu["kind"].value_counts().to_dict() == {"kernel": 2995, "memcpy": 550, "memset": 108}
    row = gpu[gpu["correlation"] == 5179].iloc[0]
    assert row["start_ns"] == 3743411252944510 and row["dur_ns"] == 3879
    assert row["device"] == 2 and row["stream"] == 0
    # ROCm kernels carry no grid: it comes from the hipLaunchKernel args (workgroups)
    assert (row["grid_x"], row["grid_y"], row["grid_z"], row["block_x"]) == (1, 40, 1, 256)
    launch = resnet.runtime.iloc[row["launch_index"]]
    assert launch["name"] == "hipLaunchKernel" and launch["correlation"] == 5179
    assert launch["start_ns"] == 3743411223546042 and launch["dur_ns"] == 6619
    op = resnet.ops.iloc[row["op_index"]]
    assert op["name"] == "aten::cat" and op["ext_id"] == 45 and op["dtypes"] == ["TensorList", "Scalar"]
    assert resnet.ops.iloc[op["parent"]]["name"] == "aten::flatten_dense_tensors"


def test_nanoseconds_exact_against_decimal_parse(resnet) -> None:
    with gzip.open(realdata_path(*TL, "mi300x_resnet_act_checkpoint_train.json.gz")) as fh:
        raw = json.load(fh, parse_float=Decimal)["traceEvents"]
    kernels = [e for e in raw if e.get("cat") == "kernel"]
    want = sorted(int(Decimal(e["ts"]) * 1000) for e in kernels)
    got = sorted(resnet.gpu.loc[resnet.gpu["kind"] == "kernel", "start_ns"].tolist())
    assert got == want
    durs = resnet.gpu.loc[resnet.gpu["kind"] == "kernel", "dur_ns"]
    assert (durs > 0).all() and (durs < 1000).sum() == 96 == resnet.quality["sub_us_kernels"]


def test_us_to_ns_keeps_three_decimals() -> None:
    ts = np.array([3743411222894.405, 4203669603187.439, 0.001, 7999999999999.999])
    assert us_to_ns(ts).tolist() == [3743411222894405, 4203669603187439, 1, 7999999999999999]


def test_rocm_device_has_no_gfx_name(resnet) -> None:
    dev = resnet.devices[2]
    assert (dev.name, dev.vendor, dev.wave_size, dev.compute_units) == ("AMD Instinct MI300X", "amd", 64, 304)
    assert (dev.compute_major, dev.compute_minor, dev.arch) == (9, 4, None)
    assert resnet.metadata["world_size"] == 8 and resnet.metadata["roctracer_version"] == 4.1


def test_annotations_steps_and_user_ranges(resnet) -> None:
    assert resnet.annotations["kind"].value_counts().to_dict() == {"gpu_user": 21, "user": 21, "step": 3}
    # nccl:* ranges record their inputs: they are ops too (kernels launched under them join to them)
    nccl = resnet.ops[resnet.ops["name"].astype(str).str.startswith("nccl:")]
    assert nccl["name"].astype(str).value_counts().to_dict() == {"nccl:all_reduce": 6, "nccl:broadcast": 6}
    assert nccl[nccl["name"] == "nccl:all_reduce"]["shapes"].iloc[0] == [[2873320]]


def test_cuda_kernel_registers_and_pageable_copy() -> None:
    b200 = read(realdata_path(*TL, "nvidia_b200_eager_trace.json.gz"))
    kernel = b200.gpu[b200.gpu["kind"] == "kernel"].iloc[0]
    assert (kernel["vgpr"], kernel["lds_bytes"], kernel["block_x"]) == (22, 0, 128)
    assert b200.ops.iloc[kernel["op_index"]]["name"] == "aten::sub"
    assert b200.devices[0].arch == "sm_100" and b200.devices[0].vendor == "nvidia"
    alexnet = read(realdata_path("torch_traces", "hta", "nvidia_alexnet_trace.json.gz"))
    copies = alexnet.gpu[alexnet.gpu["name"] == "Memcpy HtoD (Pageable -> Device)"]
    assert len(copies) == 16 and copies["pageable"].all() and (copies["copy_kind"] == "HtoD").all()
    assert copies["bytes"].iloc[0] == 92928


def test_graph_replayed_kernels_are_marked() -> None:
    vllm = read(realdata_path(*TL, "vllm_decode_full_graph_execution.json.gz"))
    graph = vllm.gpu[vllm.gpu["graph"]]
    assert len(graph) == 421
    assert set(vllm.runtime.iloc[graph["launch_index"]]["name"]) == {"hipGraphLaunch"}
    assert vllm.devices[0].name is None and vllm.devices[0].wave_size == 64  # no device name recorded


def test_merged_multirank_trace() -> None:
    merged = read(realdata_path("torch_traces", "hpctraining_tracelens", "merged_4rank_all_events.json.gz"))
    assert merged.gpu["rank"].value_counts().sort_index().to_dict() == {0: 4095, 1: 4064, 2: 4064, 3: 4064}
    assert (merged.gpu["launch_index"] >= 0).all() and (merged.gpu["op_index"] >= 0).all()
    launch_rank = merged.runtime["rank"].to_numpy()[merged.gpu["launch_index"].to_numpy()]
    assert (launch_rank == merged.gpu["rank"].to_numpy()).all()
    steps = merged.annotations[merged.annotations["kind"] == "step"]
    assert steps.groupby("rank").size().to_dict() == {0: 3, 1: 3, 2: 3, 3: 3}


def test_python_frames_give_module_and_user_frame() -> None:
    bert = read(realdata_path(*TL, "mi300x_bert-small_inference.json.gz"))
    addmm = bert.ops[bert.ops["name"] == "aten::addmm"].iloc[0]
    assert addmm["shapes"] == [[512], [141, 512], [512, 512], [], []]
    assert addmm["module"] == "Linear_0"
    assert addmm["stack"] == "transformers/models/bert/modeling_bert.py(364): forward"


def test_cpu_only_trace_has_no_gpu_rows() -> None:
    table = read(data_path("traces", "cpu_only.json"))
    assert len(table.gpu) == 0 and len(table.ops) == 202
    assert table.annotations["name"].tolist() == ["ProfilerStep#0", "ProfilerStep#1"]
    assert table.annotations["kind"].tolist() == ["step", "step"]


@pytest.mark.parametrize("name", ["mi300x_bert-small_inference.json.gz", "nvidia_b200_eager_trace.json.gz",
                                  "mi300x_torch_compile_triton.json.gz"])
def test_sniff_accepts_kineto_heads(name: str) -> None:
    assert kineto.sniff(read_head(realdata_path(*TL, name)))


def _b200_events() -> dict:
    with gzip.open(realdata_path(*TL, "nvidia_b200_eager_trace.json.gz")) as fh:
        return json.load(fh)


def test_flow_events_join_kernels_without_correlation_arg(tmp_path) -> None:
    doc = _b200_events()
    for e in doc["traceEvents"]:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            e["args"].pop("correlation", None)
            e["args"].pop("External id", None)
    path = tmp_path / "no_corr.json"
    path.write_text(json.dumps(doc))
    stripped, original = read(path), read(realdata_path(*TL, "nvidia_b200_eager_trace.json.gz"))
    assert stripped.gpu["launch_index"].tolist() == original.gpu["launch_index"].tolist()
    assert stripped.gpu["op_index"].tolist() == original.gpu["op_index"].tolist()


def test_numbers_as_strings_and_null_args_take_the_lenient_path(tmp_path) -> None:
    doc = _b200_events()
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            e["ts"], e["dur"] = repr(e["ts"]), repr(e["dur"])
        elif e.get("cat") == "python_function":
            e["args"] = None
    path = tmp_path / "strings.json"
    path.write_text(json.dumps(doc))
    lenient, original = read(path), read(realdata_path(*TL, "nvidia_b200_eager_trace.json.gz"))
    assert lenient.gpu["start_ns"].tolist() == original.gpu["start_ns"].tolist()
    assert lenient.gpu["dur_ns"].tolist() == original.gpu["dur_ns"].tolist()
    assert lenient.gpu["op_index"].tolist() == original.gpu["op_index"].tolist()


def test_rocm_global_size_launches_are_normalised_to_workgroups():
    """hipExtModuleLaunchKernel records the global size in work-items (kernel event and API call alike)."""
    table = read(realdata_path("torch_traces", "tracelens", "mi300x_bert-small_inference.json.gz"))
    gpu = table.gpu
    launched_by = table.runtime["name"].astype(str).to_numpy()[gpu["launch_index"].to_numpy()]
    tensile = gpu[(launched_by == "hipExtModuleLaunchKernel") & gpu["name"].astype(str).str.startswith("Cijk")]
    assert len(tensile) and set(tensile["block_x"]) == {256}
    assert 288 in set(tensile["grid_x"])            # recorded as 73728 work-items
    plain = gpu[launched_by == "hipLaunchKernel"]
    assert 141 in set(plain["grid_x"])             # hipLaunchKernel records workgroups: unchanged
