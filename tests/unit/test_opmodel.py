"""Per-op FLOPs and bytes from the inputs torch recorded, on ops taken from real traces."""

from __future__ import annotations

import gzip
import json
import math

import pytest

from rocanalyze.analysis.opmodel import attention_flops, op_cost
from tests.conftest import data_path, realdata_path

TRACELENS = ("torch_traces", "tracelens")


def _op(path, name: str, nth: int = 0) -> dict:
    """Recorded args of the nth cpu_op called `name` in a Kineto trace (read here, not by the readers)."""
    events = json.load(gzip.open(path))["traceEvents"]
    hits = [e["args"] for e in events if e.get("cat") == "cpu_op" and e["name"] == name]
    return hits[nth]


def _cost(path, name: str, nth: int = 0):
    a = _op(path, name, nth)
    return op_cost(name, a["Input Dims"], a["Input type"], a.get("Input Strides"), a.get("Concrete Inputs"))


def test_addmm_from_mi300x_bert():
    c = _cost(realdata_path(*TRACELENS, "mi300x_bert-small_inference.json.gz"), "aten::addmm")
    # bias [512] + [141, 512] x [512, 512], bf16, beta 1
    assert c.gemm == {"M": 141, "N": 512, "K": 512, "batch": 1}
    assert c.flops == 2 * 141 * 512 * 512 + 141 * 512
    assert c.bytes == (141 * 512 + 512 * 512 + 141 * 512 + 512) * 2
    assert (c.category, c.dtype, c.matrix) == ("gemm", "bf16", True)
    # weight recorded transposed (strides [1, 512]): leading dimension 512 elements = 1024 bytes
    assert c.detail["lda"] == {"ld": 512, "ld_bytes": 1024, "transposed": False, "contiguous": True}
    assert c.detail["ldb"]["transposed"] is True and c.detail["ldb"]["ld_bytes"] == 1024


def test_mm_from_b200_lm_head():
    c = _cost(realdata_path(*TRACELENS, "nvidia_b200_eager_trace.json.gz"), "aten::mm")
    assert c.gemm == {"M": 1, "N": 25136, "K": 2880, "batch": 1}
    assert c.flops == 2 * 2880 * 25136


def test_matmul_broadcasts_batch_dims():
    c = op_cost("aten::matmul", [[4, 8, 128, 64], [64, 256]], ["c10::Half", "c10::Half"])
    assert c.gemm == {"M": 128, "N": 256, "K": 64, "batch": 32} and c.flops == 2 * 32 * 128 * 256 * 64
    c = op_cost("aten::bmm", [[12, 512, 64], [12, 64, 512]], ["float", "float"])
    assert c.flops == 2 * 12 * 512 * 512 * 64 and c.dtype == "fp32"


def test_flash_attention_forward_from_mi300x_bert():
    path = realdata_path(*TRACELENS, "mi300x_bert-small_inference.json.gz")
    c = _cost(path, "aten::_flash_attention_forward")
    # q, k, v [1, 141, 8, 64] (B, S, H, D), is_causal "False"
    assert c.detail["causal"] is False and c.detail["causal_recorded"]
    assert c.flops == 4 * 1 * 8 * 141 * 141 * 64
    assert c.bytes == 4 * 141 * 8 * 64 * 2


def test_cudnn_attention_forward_and_backward_from_h100_train_step():
    path = data_path("torch_profiler", "h100_captures", "train_step.json.gz")
    fwd = _cost(path, "aten::_cudnn_attention_forward")
    bwd = _cost(path, "aten::_cudnn_attention_backward")
    q = _op(path, "aten::_cudnn_attention_forward")["Input Dims"][0]   # (B, H, S, D) as recorded
    b, h, s, d = q
    causal_fwd = 0.5 * 4 * b * h * s * s * d   # the workload passes is_causal=True; read from the trace
    assert fwd.detail["causal"] and fwd.flops == causal_fwd
    assert bwd.detail["causal"] and bwd.detail["backward"] and bwd.flops == 2.5 * causal_fwd
    assert attention_flops(b, h, s, s, d, d, causal=False, backward=False) == 2 * causal_fwd


def test_convolution_forward_and_backward_from_mi300x_resnet():
    path = realdata_path(*TRACELENS, "mi300x_resnet_act_checkpoint_train.json.gz")
    fwd = _cost(path, "aten::miopen_convolution")
    # input [10, 256, 14, 14], weight [512, 256, 3, 3], padding [1, 1], stride [2, 2] -> 7x7 output
    assert fwd.detail["output_spatial"] == [7, 7] and fwd.detail["stride"] == [2, 2]
    assert fwd.flops == 2 * 10 * 49 * 512 * 256 * 9
    assert fwd.bytes == (10 * 256 * 196 + 512 * 256 * 9 + 10 * 512 * 49) * 2
    bwd = _cost(path, "aten::convolution_backward")
    # grad_out [10, 512, 7, 7], weight [512, 512, 3, 3], mask [True, True, False]
    assert bwd.detail["grad_mask"] == [True, True, False]
    assert bwd.flops == 2 * (2 * 10 * 49 * 512 * 512 * 9)


def test_conv_without_recorded_padding_is_marked_assumed():
    c = op_cost("aten::convolution", [[1, 3, 32, 32], [8, 3, 3, 3]], ["float", "float"])
    assert c.detail["output_spatial"] == [30, 30] and "assumed" in c.detail


def test_memory_bound_ops_count_each_tensor_once():
    ln = op_cost("aten::native_layer_norm", [[8, 512, 1024], [], [1024], [1024], []],
                 ["c10::BFloat16", "", "c10::BFloat16", "c10::BFloat16", "Scalar"])
    assert ln.category == "norm" and ln.bytes == (2 * 8 * 512 * 1024 + 2 * 1024) * 2
    copy = op_cost("aten::copy_", [[4096, 1024], [4096, 1024], []], ["c10::BFloat16", "float", "Scalar"])
    assert copy.category == "memcpy" and copy.bytes == 4096 * 1024 * (2 + 4) and copy.flops == 0
    fill = op_cost("aten::fill_", [[1000], []], ["float", "Scalar"])
    assert fill.bytes == 4000
    s = op_cost("aten::sum", [[64, 1024], [], [], []], ["float", "", "Scalar", ""])
    assert s.category == "reduction" and s.bytes == 64 * 1024 * 4


def test_unknown_ops_and_odd_inputs_are_not_modeled():
    assert op_cost("aten::view", [[2, 3]], ["float"]) is None
    assert op_cost("aten::mm", [[], []], ["", ""]) is None
    assert op_cost("aten::mm", None, None) is None
    assert op_cost("aten::_flash_attention_forward", [[1, 2, 3]], ["c10::Half"]) is None


@pytest.mark.parametrize("beta, extra", [("1", 141 * 512), ("0", 0)])
def test_addmm_bias_flops_follow_beta(beta, extra):
    c = op_cost("aten::addmm", [[512], [141, 512], [512, 512], [], []],
                ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"], None, ["", "", "", beta, "1"])
    assert c.flops == 2 * 141 * 512 * 512 + extra


def test_inductor_triton_kernels_count_each_buffer_once():
    path = realdata_path(*TRACELENS, "mi300x_torch_compile_triton.json.gz")
    events = json.load(gzip.open(path))["traceEvents"]
    name = next(e["name"] for e in events if e.get("cat") == "cpu_op" and e["name"].startswith("triton_poi_"))
    a = _op(path, name)
    c = op_cost(name, a["Input Dims"], a["Input type"], a.get("Input Strides"), a.get("Concrete Inputs"))
    tensors = [(d, t) for d, t in zip(a["Input Dims"], a["Input type"], strict=True) if d and t.startswith("c10::")]
    assert tensors and c.category == "elementwise" and not c.matrix
    assert all(t == "c10::BFloat16" for _, t in tensors)
    assert c.bytes == sum(2 * math.prod(d) for d, _ in tensors)
    assert op_cost("triton_tem_fused_mm_0", [[64, 64]], ["float"]) is None      # GEMM templates: no shapes model


def test_gather_moves_the_picked_rows_not_the_whole_source():
    """aten::gather reads what its index picks: never more than the source, and stays under the roof."""
    from rocanalyze import analyze

    a = analyze(data_path("torch_profiler", "h100_captures", "train_step.json.gz"))
    gather = next(o for o in a.ops if o["op"] == "aten::gather")
    src, index = gather["shapes"][0], gather["shapes"][2]
    out_bytes = index[0] * index[1] * 4                      # fp32 output, one element per index
    assert gather["bytes"] >= out_bytes + src[0] * src[1] * 4  # writes + reads of the (smaller) source
    assert 0 < gather["efficiency"] <= 1.0
    assert all((o["efficiency"] or 0) <= 1.05 for o in a.ops)  # no op beats its roof
