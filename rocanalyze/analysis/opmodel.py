"""FLOPs and bytes of one framework op from its recorded shapes, dtypes, strides and scalar inputs.

`op_cost(name, shapes, dtypes, strides, concrete) -> OpCost | None` covers the matmul family (mm,
addmm, bmm, baddbmm, matmul with broadcast, linear, _scaled_mm, grouped GEMMs), convolutions forward
and backward, attention (SDPA, flash, efficient, cuDNN; forward and backward, causal counts half) and
the bytes of elementwise, norm, softmax, reduction and copy ops. Bytes are the fewest a kernel must
move: each input read once, each output written once. `None` means the op is not modeled.
`model_ops` (per-op roofline points for an EventTable) lives in roofline.py and is re-exported here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# torch's recorded "Input type" -> (short dtype, bytes per element)
DTYPES: dict[str, tuple[str, int]] = {
    "float": ("fp32", 4), "double": ("fp64", 8), "c10::Half": ("fp16", 2), "c10::BFloat16": ("bf16", 2),
    "c10::Float8_e4m3fn": ("fp8", 1), "c10::Float8_e5m2": ("fp8", 1), "c10::Float8_e4m3fnuz": ("fp8", 1),
    "c10::Float8_e5m2fnuz": ("fp8", 1), "signed char": ("int8", 1), "unsigned char": ("uint8", 1),
    "short int": ("int16", 2), "int": ("int32", 4), "long int": ("int64", 8), "bool": ("bool", 1),
    "c10::complex<float>": ("complex64", 8), "c10::complex<double>": ("complex128", 16),
}
# short dtype -> the GpuSpec peak a matrix unit runs it at (fp32 resolves per GPU: roofline.peak_key)
MATRIX_PEAK = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8", "int8": "int8"}


@dataclass(frozen=True)
class OpCost:
    """Work of one op call: FLOPs (multiply-add = 2), bytes moved, and what the roof is for it."""

    flops: float
    bytes: float
    category: str                      # kernel categories: gemm conv attention elementwise norm ... memcpy
    dtype: str | None                  # short dtype of the main input ("bf16")
    matrix: bool                       # runs on matrix/tensor cores (GEMM, conv, attention)
    gemm: dict[str, int] | None = None  # M, N, K, batch for the matmul family
    detail: dict[str, Any] = field(default_factory=dict)


class Args:
    """One op's recorded inputs, with helpers that tolerate missing or odd entries."""

    def __init__(self, shapes: Any, dtypes: Any, strides: Any, concrete: Any) -> None:
        self.shapes = list(shapes or [])
        self.dtypes = list(dtypes or [])
        self.strides = list(strides or [])
        self.concrete = list(concrete or [])

    def shape(self, i: int) -> list[int] | None:
        s = self.shapes[i] if i < len(self.shapes) else None
        if isinstance(s, (list, tuple)) and all(isinstance(d, int) for d in s) and self.dtype(i):
            return list(s)
        return None

    def dtype(self, i: int) -> str | None:
        return DTYPES.get(self.dtypes[i], (None, 0))[0] if i < len(self.dtypes) else None

    def size(self, i: int) -> int:
        return DTYPES.get(self.dtypes[i], (None, 0))[1] if i < len(self.dtypes) else 0

    def nbytes(self, i: int) -> int:
        s = self.shape(i)
        return math.prod(s) * self.size(i) if s is not None else 0

    def stride(self, i: int) -> list[int] | None:
        s = self.strides[i] if i < len(self.strides) else None
        return list(s) if isinstance(s, (list, tuple)) and all(isinstance(d, int) for d in s) else None

    def scalar(self, i: int) -> str:
        v = self.concrete[i] if i < len(self.concrete) else ""
        return v.strip() if isinstance(v, str) else ""

    def ints(self, i: int) -> list[int] | None:
        found = re.findall(r"-?\d+", self.scalar(i))
        return [int(x) for x in found] if found else None

    def flag(self, i: int) -> bool | None:
        v = self.scalar(i).lower()
        return True if v in ("true", "1") else False if v in ("false", "0") else None

    def tensors(self) -> list[int]:
        return [i for i in range(len(self.shapes)) if self.shape(i) is not None]


# ------------------------------------------------------------------------------------------- matmul

def _ld(stride: list[int] | None, size: int) -> dict[str, Any] | None:
    """Leading dimension of a matrix operand from its last two strides: elements, bytes, transposed."""
    if not stride or len(stride) < 2:
        return None
    rows, cols = stride[-2], stride[-1]
    if cols == 1:
        ld, transposed = rows, False
    elif rows == 1:
        ld, transposed = cols, True
    else:
        return {"ld": None, "ld_bytes": None, "transposed": None, "contiguous": False}
    return {"ld": ld, "ld_bytes": ld * size, "transposed": transposed, "contiguous": True}


def _gemm(a: Args, ia: int, ib: int, kind: str, bias: int | None = None,
          beta: int | None = None) -> OpCost | None:
    sa, sb = a.shape(ia), a.shape(ib)
    if sa is None or sb is None:
        return None
    if kind == "linear":                       # input [..., K] x weight [N, K]
        batch, m, k, n = 1, math.prod(sa[:-1]), sa[-1], sb[0]
    elif kind == "bmm":
        batch, m, k, n = sa[0], sa[1], sa[2], sb[2]
    elif kind == "grouped":                    # [total_M, K] x [G, K, N] (MoE); or 3D x 3D like bmm
        if len(sa) == 2 and len(sb) == 3:
            batch, m, k, n = 1, sa[0], sa[1], sb[2]
        elif len(sa) == 3 and len(sb) == 3:
            batch, m, k, n = sa[0], sa[1], sa[2], sb[2]
        else:
            return None
    else:                                      # mm / matmul with broadcast batch dims
        a2 = [1] + sa if len(sa) == 1 else sa
        b2 = sb + [1] if len(sb) == 1 else sb
        batch = _broadcast_numel(a2[:-2], b2[:-2])
        m, k, n = a2[-2], a2[-1], b2[-1]
    flops = 2.0 * batch * m * n * k
    elem = a.size(ia)
    out_elem = 2 if a.dtype(ia) in ("fp8", "int8") else elem
    nbytes = float(a.nbytes(ia) + a.nbytes(ib) + batch * m * n * out_elem)
    detail: dict[str, Any] = {"lda": _ld(a.stride(ia), elem), "ldb": _ld(a.stride(ib), a.size(ib))}
    if bias is not None and a.shape(bias) is not None and (beta is None or a.scalar(beta) not in ("0", "0.")):
        flops += batch * m * n
        nbytes += a.nbytes(bias)
    return OpCost(flops, nbytes, "gemm", a.dtype(ia), True, {"M": m, "N": n, "K": k, "batch": batch}, detail)


def _broadcast_numel(x: list[int], y: list[int]) -> int:
    n = max(len(x), len(y))
    x, y = [1] * (n - len(x)) + x, [1] * (n - len(y)) + y
    return math.prod(max(p, q) for p, q in zip(x, y, strict=True))


# --------------------------------------------------------------------------------------------- conv

# op -> (input, weight, stride, padding, dilation, transposed, groups) argument positions; -1 absent
CONV_ARGS = {
    "aten::convolution": (0, 1, 3, 4, 5, 6, 8), "aten::_convolution": (0, 1, 3, 4, 5, 6, 8),
    "aten::conv1d": (0, 1, 3, 4, 5, -1, 6), "aten::conv2d": (0, 1, 3, 4, 5, -1, 6),
    "aten::conv3d": (0, 1, 3, 4, 5, -1, 6), "aten::cudnn_convolution": (0, 1, 3, 2, 4, -1, 5),
    "aten::miopen_convolution": (0, 1, 4, 3, 5, -1, 6), "aten::mkldnn_convolution": (0, 1, 3, 2, 4, -1, 5),
    "aten::miopen_depthwise_convolution": (0, 1, 4, 3, 5, -1, 6),
    "aten::cudnn_convolution_transpose": (0, 1, 4, 3, 5, -2, 6),
    "aten::miopen_convolution_transpose": (0, 1, 5, 3, 6, -2, 7),
}


def _conv(a: Args, name: str) -> OpCost | None:
    iin, iw, ist, ipad, idil, itr, igroups = CONV_ARGS[name]
    x, w = a.shape(iin), a.shape(iw)
    if x is None or w is None or len(x) < 3:
        return None
    nsp = len(x) - 2
    transposed = itr == -2 or (itr >= 0 and bool(a.flag(itr)))
    stride = a.ints(ist) or [1] * nsp
    pad = a.ints(ipad) or [0] * nsp
    dil = a.ints(idil) or [1] * nsp
    assumed = not a.ints(ist) or not a.ints(ipad)
    stride, pad, dil = (v * nsp if len(v) == 1 else v for v in (stride, pad, dil))
    spatial = x[2:]
    if transposed:  # weight [C_in, C_out/g, *k]: every input pixel scatters into the output
        flops = 2.0 * x[0] * math.prod(spatial) * math.prod(w)
        out_sp = [(s - 1) * st - 2 * p + d * (k - 1) + 1
                  for s, st, p, d, k in zip(spatial, stride, pad, dil, w[2:], strict=False)]
        out_c = w[1] * ((a.ints(igroups) or [1])[0])
    else:
        out_sp = [(s + 2 * p - d * (k - 1) - 1) // st + 1
                  for s, st, p, d, k in zip(spatial, stride, pad, dil, w[2:], strict=False)]
        flops = 2.0 * x[0] * math.prod(out_sp) * math.prod(w)
        out_c = w[0]
    out_bytes = x[0] * out_c * math.prod(out_sp) * a.size(iin)
    detail = {"stride": stride, "padding": pad, "dilation": dil, "output_spatial": out_sp,
              "transposed": transposed}
    if assumed:
        detail["assumed"] = "stride/padding not recorded: assumed stride 1, padding 0"
    return OpCost(flops, float(a.nbytes(iin) + a.nbytes(iw) + out_bytes), "conv", a.dtype(iin), True,
                  detail=detail)


def _conv_backward(a: Args, name: str) -> OpCost | None:
    go, x, w = a.shape(0), a.shape(1), a.shape(2)
    if go is None or x is None or w is None:
        return None
    transposed = bool(a.flag(7))
    mask = [v == "true" for v in re.findall(r"true|false", a.scalar(10).lower())] or [True, True, True]
    one = 2.0 * x[0] * math.prod((x if transposed else go)[2:]) * math.prod(w)
    flops = one * (int(mask[0]) + int(mask[1] if len(mask) > 1 else 1))
    nbytes = a.nbytes(0) + a.nbytes(1) + a.nbytes(2)
    nbytes += (a.nbytes(1) if mask[0] else 0) + (a.nbytes(2) if len(mask) < 2 or mask[1] else 0)
    return OpCost(flops, float(nbytes), "conv", a.dtype(0), True, detail={"grad_mask": mask[:3]})


# ---------------------------------------------------------------------------------------- attention

# op -> (query position, layout of q/k/v, causal flag position, flag kind, backward)
ATTENTION_ARGS = {
    "aten::_scaled_dot_product_flash_attention": (0, "bhsd", 4, "bool", False),
    "aten::_scaled_dot_product_flash_attention_for_cpu": (0, "bhsd", 4, "bool", False),
    "aten::_scaled_dot_product_efficient_attention": (0, "bhsd", 6, "bool", False),
    "aten::_scaled_dot_product_cudnn_attention": (0, "bhsd", 6, "bool", False),
    "aten::_cudnn_attention_forward": (0, "bhsd", 10, "bool", False),
    "aten::scaled_dot_product_attention": (0, "bhsd", 5, "bool", False),
    "aten::_flash_attention_forward": (0, "bshd", 8, "bool", False),
    "aten::_efficient_attention_forward": (0, "bshd", 9, "mask_type", False),
    "aten::_scaled_dot_product_flash_attention_backward": (1, "bhsd", 11, "bool", True),
    "aten::_scaled_dot_product_efficient_attention_backward": (1, "bhsd", 11, "bool", True),
    "aten::_scaled_dot_product_cudnn_attention_backward": (1, "bhsd", 14, "bool", True),
    "aten::_cudnn_attention_backward": (1, "bhsd", 14, "bool", True),
    "aten::_flash_attention_backward": (1, "bshd", 11, "bool", True),
    "aten::_efficient_attention_backward": (1, "bshd", 14, "mask_type", True),
}
BACKWARD_FACTOR = 2.5   # backward runs 5 matmuls of the forward's size where the forward runs 2


def attention_flops(b: int, h: int, sq: int, sk: int, d: int, dv: int, causal: bool, backward: bool) -> float:
    """FLOPs of scaled-dot-product attention: 2*B*H*Sq*Sk*(D+Dv), half when causal, x2.5 for backward."""
    flops = 2.0 * b * h * sq * sk * (d + dv) * (0.5 if causal else 1.0)
    return flops * (BACKWARD_FACTOR if backward else 1.0)


def _attention(a: Args, name: str) -> OpCost | None:
    iq, layout, icausal, kind, backward = ATTENTION_ARGS[name]
    q, k, v = a.shape(iq), a.shape(iq + 1), a.shape(iq + 2)
    if q is None or k is None or v is None or len(q) != 4 or len(k) != 4:
        return None
    if layout == "bhsd":
        (b, h, sq, d), sk, dv = q, k[2], v[3]
    else:
        (b, sq, h, d), sk, dv = q, k[1], v[3]
    if kind == "bool":
        causal = bool(a.flag(icausal))
    else:
        ints = a.ints(icausal)
        causal = bool(ints and ints[0] != 0)
    flops = attention_flops(b, h, sq, sk, d, dv, causal, backward)
    io = a.nbytes(iq) + a.nbytes(iq + 1) + a.nbytes(iq + 2) + b * h * sq * dv * a.size(iq)
    return OpCost(flops, float(io * (2 if backward else 1)), "attention", a.dtype(iq), True,
                  detail={"B": b, "H": h, "Sq": sq, "Sk": sk, "D": d, "Dv": dv, "causal": causal,
                          "causal_recorded": a.scalar(icausal) != "", "backward": backward})


# ----------------------------------------------------------------------- memory-bound op families

# op -> (category, FLOPs per output element, how bytes are counted)
#   "rw": read every tensor input once, write one output the size of the largest input
#   "write": the op only writes its first input (fill_, zero_)
#   "copy": read input 1 (the source), write input 0
#   "reduce": read the inputs; the output is small
MEMORY_OPS: dict[str, tuple[str, float, str]] = {}
for _op in ("add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "pow", "relu", "gelu",
            "silu", "sigmoid", "tanh", "clamp", "clamp_min", "clamp_max", "where", "masked_fill", "eq", "ne",
            "lt", "gt", "le", "ge", "threshold_backward", "gelu_backward", "silu_backward",
            "sigmoid_backward", "tanh_backward", "native_dropout", "native_dropout_backward", "addcmul",
            "addcdiv", "lerp",
            "hardtanh", "leaky_relu", "bitwise_and", "bitwise_or", "bitwise_not", "reciprocal", "sin", "cos",
            "mse_loss_backward", "_foreach_add", "_foreach_mul"):
    MEMORY_OPS[f"aten::{_op}"] = MEMORY_OPS[f"aten::{_op}_"] = ("elementwise", 1.0, "rw")
for _op in ("native_layer_norm", "native_batch_norm", "_fused_rms_norm", "rms_norm", "native_group_norm",
            "cudnn_batch_norm", "miopen_batch_norm", "_batch_norm_with_update"):
    MEMORY_OPS[f"aten::{_op}"] = ("norm", 5.0, "rw")
for _op in ("native_layer_norm_backward", "native_batch_norm_backward", "_fused_rms_norm_backward",
            "native_group_norm_backward", "cudnn_batch_norm_backward", "miopen_batch_norm_backward"):
    MEMORY_OPS[f"aten::{_op}"] = ("norm", 8.0, "rw")
for _op in ("_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data"):
    MEMORY_OPS[f"aten::{_op}"] = ("softmax", 5.0, "rw")
for _op in ("sum", "mean", "amax", "amin", "max", "min", "norm", "linalg_vector_norm", "prod", "any", "all"):
    MEMORY_OPS[f"aten::{_op}"] = ("reduction", 1.0, "reduce")
for _op in ("_to_copy", "clone", "contiguous", "cat", "constant_pad_nd"):
    MEMORY_OPS[f"aten::{_op}"] = ("memcpy", 0.0, "rw")
MEMORY_OPS["aten::copy_"] = ("memcpy", 0.0, "copy")
MEMORY_OPS["aten::fill_"] = MEMORY_OPS["aten::zero_"] = ("elementwise", 0.0, "write")


def _memory_op(a: Args, name: str) -> OpCost | None:
    category, per_elem, how = MEMORY_OPS[name]
    tensors = a.tensors()
    if not tensors:
        return None
    first = tensors[0]
    if how == "write":
        out, read = a.nbytes(first), 0
        numel = math.prod(a.shape(first) or [0])
    elif how == "copy" and len(tensors) >= 2:
        numel = math.prod(a.shape(first) or [0])
        out, read = a.nbytes(first), numel * a.size(tensors[1])
    else:
        read = sum(a.nbytes(i) for i in tensors)
        big = max(tensors, key=lambda i: math.prod(a.shape(i) or [0]))
        numel = math.prod(a.shape(big) or [0])
        if name in ("aten::cat",):
            numel = sum(math.prod(a.shape(i) or [0]) for i in tensors)
        out = 0 if how == "reduce" else numel * a.size(first)
    return OpCost(per_elem * numel, float(read + out), category, a.dtype(first), False)


def _index_op(a: Args, name: str) -> OpCost | None:
    """Gathers touch only what they pick, not the whole source (gather(src, dim, index), index_select(src,
    dim, index), embedding(weight, indices), index(src, [indices])). Bytes: the picked elements written,
    the distinct source elements read (at most the source), and the index's distinct elements (an
    expanded index has stride 0: one row stands for all)."""
    tensors = a.tensors()
    if len(tensors) < 2:
        return None
    src, idx = tensors[0], tensors[1]
    src_shape, idx_shape = a.shape(src) or [], a.shape(idx) or []
    if name == "aten::gather":
        picked = math.prod(idx_shape)
    elif name == "aten::index_select":
        dim = (a.ints(1) or [0])[0] % max(1, len(src_shape))
        picked = math.prod(idx_shape) * math.prod(src_shape) // max(1, src_shape[dim] if src_shape else 1)
    else:  # embedding(weight, indices), index(src, indices): each index picks a row of src
        picked = math.prod(idx_shape) * math.prod(src_shape[1:])
    reads = min(picked, math.prod(src_shape)) * a.size(src)
    moved = picked * a.size(src) + reads + _distinct_elements(idx_shape, a.stride(idx)) * a.size(idx)
    return OpCost(0.0, float(moved), "index", a.dtype(src), False,
                  detail={"bytes": "picked elements written, distinct source elements read, distinct index "
                                   "elements read"})


def _distinct_elements(shape: list[int], stride: list[int] | None) -> int:
    """Elements a tensor really holds: broadcast (stride-0) dimensions count once."""
    if not stride or len(stride) != len(shape):
        return math.prod(shape)
    return math.prod(d for d, st in zip(shape, stride, strict=True) if st != 0)


def _triton(a: Args, name: str) -> OpCost | None:
    """Inductor-generated Triton kernel: its recorded arguments are its input and output buffers."""
    tensors = a.tensors()
    if not tensors:
        return None
    numel = max(math.prod(a.shape(i) or [0]) for i in tensors)
    category = "elementwise" if name.startswith("triton_poi_") else "reduction"
    return OpCost(float(numel), float(sum(a.nbytes(i) for i in tensors)), category, a.dtype(tensors[0]), False,
                  detail={"bytes": "each recorded kernel argument (inputs and outputs) counted once"})


# Inductor names its kernels triton_{poi,per,red}_fused_...: pointwise, persistent and loop reductions
TRITON_PREFIXES = ("triton_poi_", "triton_per_", "triton_red_")


# --------------------------------------------------------------------------------------- registry

Model = Callable[[Args, str], "OpCost | None"]
GEMM_OPS: dict[str, Model] = {
    "aten::mm": lambda a, n: _gemm(a, 0, 1, "mm"),
    "aten::addmm": lambda a, n: _gemm(a, 1, 2, "mm", bias=0, beta=3),
    "aten::bmm": lambda a, n: _gemm(a, 0, 1, "bmm"),
    "aten::baddbmm": lambda a, n: _gemm(a, 1, 2, "bmm", bias=0, beta=3),
    "aten::matmul": lambda a, n: _gemm(a, 0, 1, "matmul"),
    "aten::linear": lambda a, n: _gemm(a, 0, 1, "linear", bias=2),
    "aten::_scaled_mm": lambda a, n: _gemm(a, 0, 1, "mm"),
    "aten::_grouped_mm": lambda a, n: _gemm(a, 0, 1, "grouped"),
    "aten::_scaled_grouped_mm": lambda a, n: _gemm(a, 0, 1, "grouped"),
}
MODELS: dict[str, Model] = {
    **GEMM_OPS,
    **{name: _conv for name in CONV_ARGS},
    "aten::convolution_backward": _conv_backward,
    **{name: _attention for name in ATTENTION_ARGS},
    **{name: _memory_op for name in MEMORY_OPS},
    **{f"aten::{name}": _index_op for name in ("gather", "index_select", "embedding", "index")},
}


def op_cost(name: str, shapes: Any, dtypes: Any, strides: Any = None, concrete: Any = None) -> OpCost | None:
    """FLOPs and bytes of one call of op `name` from its recorded inputs; None when not modeled."""
    model = MODELS.get(name) or (_triton if name.startswith(TRITON_PREFIXES) else None)
    if model is None:
        return None
    # training steps repeat the same few hundred (op, inputs) signatures: model each one once
    try:
        key = (name, repr(shapes), repr(dtypes), repr(strides), repr(concrete))
    except RecursionError:  # pragma: no cover
        key = None
    if key is not None and key in _COST_CACHE:
        return _COST_CACHE[key]
    try:
        cost = model(Args(shapes, dtypes, strides, concrete), name)
    except (IndexError, TypeError, ValueError, ZeroDivisionError):
        cost = None  # recorded inputs do not have the layout this op's model expects
    if key is not None:
        if len(_COST_CACHE) > 200_000:
            _COST_CACHE.clear()
        _COST_CACHE[key] = cost
    return cost


_COST_CACHE: dict[tuple[str, str, str, str, str], OpCost | None] = {}


def model_ops(table: Any, gpu: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-op roofline entries and per-kernel rates: see roofline.model_ops."""
    from rocanalyze.analysis.roofline import model_ops as _model_ops

    return _model_ops(table, gpu)
