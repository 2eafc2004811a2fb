"""Third round of whole-workload kernel tables on the lent GPU (torch and triton only, no model zoo):
workloads no earlier capture ran. torch.compile'd training with the optimizer step compiled too (foreach
kernels), flex attention forward and backward, FP8 and int8 GEMMs, each SDPA backend, 2:4 sparse linear,
grouped GEMM MoE, nested-jagged attention, compiled convnet training, compiled inference with dynamic
shapes and combo kernels, single-rank NCCL collectives and hand-written Triton kernels.

    OUT=outdir python scripts/capture_model_tables3.py

Writes OUT/tables3.json: per workload, rows [kernel name, launching op, calls, device time in us] for
every GPU kernel, memcpy and memset of the profiled iterations, or "ERR: ..." when the workload failed.
The launching op is the innermost CPU op with the kernel's External id (the profiler's own link), so
the labels can be read with the op beside the name.
"""

from __future__ import annotations

import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from _profile_tables import RowCapture

dev = "cuda"
OUT = os.environ.get("OUT", "/tmp/o")
BUDGET_S = float(os.environ.get("BUDGET", "420"))


capture = RowCapture(OUT, "tables3.json", BUDGET_S)
run = capture.run


class Block(nn.Module):
    def __init__(s, d=512, h=8):
        super().__init__()
        s.h = h
        s.n1 = nn.RMSNorm(d)
        s.qkv = nn.Linear(d, 3 * d, bias=False)
        s.o = nn.Linear(d, d, bias=False)
        s.n2 = nn.RMSNorm(d)
        s.up = nn.Linear(d, 4 * d, bias=False)
        s.gate = nn.Linear(d, 4 * d, bias=False)
        s.down = nn.Linear(4 * d, d, bias=False)

    def forward(s, x):
        b, t, c = x.shape
        q, k, v = s.qkv(s.n1(x)).view(b, t, 3, s.h, c // s.h).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + s.o(a.transpose(1, 2).reshape(b, t, c))
        y = s.n2(x)
        return x + s.down(F.silu(s.gate(y)) * s.up(y))


def gpt(d=512, layers=4, vocab=8192):
    return nn.Sequential(nn.Embedding(vocab, d), *[Block(d) for _ in range(layers)], nn.RMSNorm(d), nn.Linear(d, vocab))


def b_compiled_train_compiled_optimizer():
    m = gpt().to(dev)
    cm = torch.compile(m)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=True)
    step = torch.compile(opt.step)
    ids = torch.randint(0, 8192, (8, 256), device=dev)

    def f():
        with torch.autocast("cuda", torch.bfloat16):
            loss = F.cross_entropy(cm(ids).flatten(0, 1).float(), ids.flatten())
        loss.backward()
        step()
        opt.zero_grad(set_to_none=True)

    return f


def b_flex_attention():
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    fa = torch.compile(flex_attention)
    B, H, S, D = 4, 8, 1024, 64
    q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    doc = torch.arange(S, device=dev) // 256

    def mask(b, h, qi, ki):
        return (qi >= ki) & (doc[qi] == doc[ki])

    bm = create_block_mask(mask, None, None, S, S)

    def soft_cap(score, b, h, qi, ki):
        return 30 * torch.tanh(score / 30)

    def f():
        o = fa(q, k, v, block_mask=bm, score_mod=soft_cap)
        o.sum().backward()
        fa(q[:, :, :1].detach(), k.detach(), v.detach())  # decoding: one query row

    return f


def b_fp8_int8_gemm():
    a = torch.randn(2048, 4096, device=dev).to(torch.float8_e4m3fn)
    bt = torch.randn(4096, 4096, device=dev).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=dev)
    ra = torch.ones(2048, 1, device=dev)
    rb = torch.ones(1, 4096, device=dev)
    ai = torch.randint(-128, 127, (2048, 4096), device=dev, dtype=torch.int8)
    bi = torch.randint(-128, 127, (4096, 4096), device=dev, dtype=torch.int8)
    w8 = torch.randint(-128, 127, (4096, 4096), device=dev, dtype=torch.int8)
    sc = torch.rand(4096, device=dev, dtype=torch.bfloat16)
    xb = torch.randn(64, 4096, device=dev, dtype=torch.bfloat16)

    def f():
        torch._scaled_mm(a, bt, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        torch._scaled_mm(a, bt, scale_a=ra, scale_b=rb, out_dtype=torch.bfloat16)
        torch._int_mm(ai, bi)
        torch._weight_int8pack_mm(xb, w8, sc)

    return f


def b_sdpa_backends():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (torch.randn(4, 16, 1024, 128, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    mask = torch.ones(1024, 1024, device=dev, dtype=torch.bool).tril()

    def f():
        for be in (
            SDPBackend.CUDNN_ATTENTION,
            SDPBackend.FLASH_ATTENTION,
            SDPBackend.EFFICIENT_ATTENTION,
            SDPBackend.MATH,
        ):
            flash = be == SDPBackend.FLASH_ATTENTION  # flash takes no mask: causal instead
            try:
                with sdpa_kernel(be):
                    out = F.scaled_dot_product_attention(q, k, v, attn_mask=None if flash else mask, is_causal=flash)
                    out.sum().backward()
            except RuntimeError as exc:
                print("sdpa backend", be, "failed:", str(exc)[:120])

    return f


def b_sparse_24():
    from torch.sparse import to_sparse_semi_structured

    lin = nn.Linear(4096, 4096, bias=False).half().to(dev)
    w = lin.weight.detach()
    w = w * torch.tensor([1, 1, 0, 0], device=dev, dtype=w.dtype).repeat(4096, 1024)
    lin.weight = nn.Parameter(to_sparse_semi_structured(w))
    x = torch.randn(512, 4096, device=dev, dtype=torch.half)

    def f():
        with torch.no_grad():
            lin(x)

    return f


def b_grouped_gemm_moe():
    E, d, ff, T = 8, 1024, 2048, 4096
    w1 = torch.randn(E, d, ff, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w2 = torch.randn(E, ff, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    router = nn.Linear(d, E).to(dev, torch.bfloat16)
    x = torch.randn(T, d, device=dev, dtype=torch.bfloat16)

    def f():
        logits = router(x)
        p, e = torch.topk(logits.softmax(-1), 2)
        order = e.flatten().argsort()
        xs = x.repeat_interleave(2, 0)[order]
        counts = torch.bincount(e.flatten(), minlength=E)
        offs = counts.cumsum(0).to(torch.int32)
        h = torch._grouped_mm(xs, w1, offs=offs)
        y = torch._grouped_mm(F.silu(h), w2, offs=offs)
        out = torch.zeros_like(x).index_add_(0, order // 2, y * p.flatten()[order, None])
        out.float().pow(2).mean().backward()

    return f


def b_nested_attention():
    lens = [100, 300, 511, 64]
    xs = [torch.randn(n, 8, 64, device=dev, dtype=torch.bfloat16) for n in lens]
    nt = torch.nested.nested_tensor(xs, layout=torch.jagged).transpose(1, 2)

    def f():
        with torch.no_grad():
            F.scaled_dot_product_attention(nt, nt, nt)

    return f


def b_compiled_convnet_train():
    m = nn.Sequential(
        nn.Conv2d(3, 64, 7, 2, 3),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1),
        nn.Conv2d(64, 128, 3, 1, 1),
        nn.BatchNorm2d(128),
        nn.ReLU(),
        nn.Conv2d(128, 128, 3, 2, 1, groups=128),
        nn.Conv2d(128, 256, 1),
        nn.GroupNorm(8, 256),
        nn.GELU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.1),
        nn.Linear(256, 1000),
    ).to(dev, memory_format=torch.channels_last)
    cm = torch.compile(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(64, 3, 128, 128, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (64,), device=dev)

    def f():
        with torch.autocast("cuda", torch.float16):
            loss = F.cross_entropy(cm(x), y, label_smoothing=0.1)
        loss.backward()
        opt.step()
        opt.zero_grad()

    return f


def b_compiled_dynamic_combo():
    import torch._inductor.config as ic

    ic.combo_kernels = True
    m = gpt(d=256, layers=2).to(dev).eval()
    cm = torch.compile(m, dynamic=True)
    ids = [torch.randint(0, 8192, (2, n), device=dev) for n in (37, 64, 129)]

    def f():
        with torch.no_grad(), torch.autocast("cuda", torch.bfloat16):
            for i in ids:
                logits = cm(i)[:, -1]
                torch.multinomial(F.softmax(logits.float() / 0.7, -1), 1)

    return f


def b_nccl_single_rank():
    import torch.distributed as dist

    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    t = torch.randn(1 << 22, device=dev, dtype=torch.bfloat16)
    out = torch.empty_like(t)

    def f():
        dist.all_reduce(t)
        dist.all_gather_into_tensor(out, t)
        dist.reduce_scatter_tensor(out, t)
        dist.broadcast(t, 0)
        dist.all_to_all_single(out, t)
        torch.cuda.synchronize()

    return f


def b_triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def fused_bias_gelu_kernel(x_ptr, b_ptr, y_ptr, n, ncol, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m) + tl.load(b_ptr + offs % ncol, mask=m)
        tl.store(y_ptr + offs, 0.5 * x * (1 + tl.erf(x * 0.7071067811865476)), mask=m)

    @triton.jit
    def row_softmax_kernel(x_ptr, y_ptr, ncol, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * ncol + offs, mask=offs < ncol, other=-float("inf"))
        e = tl.exp(x - tl.max(x, 0))
        tl.store(y_ptr + row * ncol + offs, e / tl.sum(e, 0), mask=offs < ncol)

    x = torch.randn(4096, 1024, device=dev)
    b = torch.randn(1024, device=dev)
    y = torch.empty_like(x)

    def f():
        fused_bias_gelu_kernel[(x.numel() // 1024,)](x, b, y, x.numel(), 1024, BLOCK=1024)
        row_softmax_kernel[(4096,)](x, y, 1024, BLOCK=1024)

    return f


WORKLOADS = [
    ("c1_compiled_gpt_train_compiled_adamw", b_compiled_train_compiled_optimizer),
    ("c2_flex_attention_fwd_bwd_decode", b_flex_attention),
    ("c3_fp8_int8_gemm", b_fp8_int8_gemm),
    ("c4_sdpa_backends_fwd_bwd", b_sdpa_backends),
    ("c5_sparse_24_linear", b_sparse_24),
    ("c6_grouped_gemm_moe_train", b_grouped_gemm_moe),
    ("c7_nested_jagged_sdpa", b_nested_attention),
    ("c8_compiled_convnet_train_amp", b_compiled_convnet_train),
    ("c9_compiled_dynamic_combo_sampling", b_compiled_dynamic_combo),
    ("c10_nccl_single_rank", b_nccl_single_rank),
    ("c11_triton_user_kernels", b_triton_kernels),
]

if __name__ == "__main__":
    only = os.environ.get("ONLY")
    for tag, build in WORKLOADS:
        if not only or any(o in tag for o in only.split(",")):
            run(tag, build)
    print("done", round(time.time() - capture.start, 1), flush=True)
