"""Inventory of the kernel names PyTorch launches on this GPU: a source of real trace-form names for the
classification draws (tests/data/classify/op_zoo_h200). Runs on the lent GPU:

    python scripts/capture_op_zoo.py OUTDIR

Calls every torch / torch.nn.functional / torch.special / torch.linalg / torch.fft / Tensor function it can
on small CUDA float32 tensors (forward, and backward where it has one), plus a hand list, in float32 and
bfloat16, of ops whose arguments a probe cannot guess (index, scatter, embedding, sort, pooling, norms,
losses, optimizers, foreach, fft, linalg, RNNs, SDPA). Each call runs once unprofiled (most probe
signatures fail fast) and then under its own profiler, so every kernel comes with the aten op it is
attached to. A device-side assert loses the CUDA context, so the calls run in worker processes that
the parent restarts after the last call logged.
Writes OUTDIR/op_zoo.tsv.gz: kernel name <TAB> aten op <TAB> the call that first ran it, one row per
distinct (name, op), plus OUTDIR/op_zoo_meta.json (versions, device, counts).
"""

from __future__ import annotations

import gzip
import inspect
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

warnings.filterwarnings("ignore")
DEV = os.environ.get("ZOO_DEVICE", "cuda")  # "cpu" only to smoke-test the script
SKIP = {  # calls that change global state, allocate huge, block or are not compute
    "manual_seed",
    "seed",
    "set_default_dtype",
    "set_default_device",
    "set_default_tensor_type",
    "save",
    "load",
    "compile",
    "set_grad_enabled",
    "use_deterministic_algorithms",
    "set_printoptions",
    "set_num_threads",
    "set_rng_state",
    "initial_seed",
    "set_flush_denormal",
    "set_warn_always",
    "empty_like",
    "cuda",
    "cpu",
    "pin_memory",
    "share_memory_",
    "tolist",
    "numpy",
    "item",
    "record_stream",
    "backward",
    "register_hook",
    "set_",
    "storage",
    "untyped_storage",
    "resize_",
    "detach_",
    "requires_grad_",
    "retain_grad",
    "to_sparse_csc",
    "to_sparse_bsc",
    "to_sparse_bsr",
    "is_pinned",
    "data_ptr",
    "apply_",
    "map_",
    "map2_",
    "kron",
    "cartesian_prod",
    "combinations",
    "block_diag",
    "vander",
    "tensordot",
    "einsum",
    "chain_matmul",
    "cdist",
    "pdist",
}


def _inputs(dtype: torch.dtype) -> dict[str, torch.Tensor]:
    g = torch.Generator(device=DEV).manual_seed(0)
    r = lambda *s: torch.randn(*s, device=DEV, generator=g).to(dtype)  # noqa: E731
    return {
        "x": r(64, 256),
        "y": r(64, 256),
        "z": r(64, 256),
        "sq": r(64, 64),
        "img": r(4, 16, 32, 32),
        "idx": torch.randint(0, 64, (64,), device=DEV),
        "pos": (r(64, 256).abs() + 0.1),
        "prob": torch.rand(64, 256, device=DEV, generator=g).to(dtype),
    }


def _probe_calls(dtype: torch.dtype):
    """(label, thunk) for every torch/F/Tensor function that accepts (x), (x, y) or (img)."""
    t = _inputs(dtype)
    out = []
    for ns_name, ns in (
        ("torch", torch),
        ("F", F),
        ("torch.special", torch.special),
        ("torch.linalg", torch.linalg),
        ("torch.fft", torch.fft),
    ):
        for name in sorted(dir(ns)):
            fn = getattr(ns, name, None)
            if name.startswith("_") or name in SKIP or not callable(fn) or inspect.isclass(fn):
                continue
            for args in (("x",), ("x", "y"), ("img",), ("sq",), ("pos",), ("prob",), ("x", "y", "z")):
                out.append((f"{ns_name}.{name}({', '.join(args)})", fn, args))
    for name in sorted(dir(torch.Tensor)):
        fn = getattr(torch.Tensor, name, None)
        if name.startswith("_") or name in SKIP or not callable(fn):
            continue
        for args in (("x",), ("x", "y")):
            out.append((f"Tensor.{name}({', '.join(args)})", fn, args))
    return t, out


def _hand_calls(dtype: torch.dtype):
    """Ops whose arguments a probe would not guess, forward and backward."""
    t = _inputs(dtype)
    x, img, idx = t["x"], t["img"], t["idx"]
    emb = torch.nn.Embedding(1000, 128).to(DEV, dtype)
    bag = torch.nn.EmbeddingBag(1000, 64, mode="sum").to(DEV, dtype)
    tok = torch.randint(0, 1000, (32, 16), device=DEV)
    conv = torch.nn.Conv2d(16, 32, 3, padding=1).to(DEV, dtype)
    dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16).to(DEV, dtype)
    convt = torch.nn.ConvTranspose2d(16, 8, 2, stride=2).to(DEV, dtype)
    conv1 = torch.nn.Conv1d(16, 16, 4, groups=16, padding=3).to(DEV, dtype)
    conv3 = torch.nn.Conv3d(4, 8, 3, padding=1).to(DEV, dtype)
    bn = torch.nn.BatchNorm2d(16).to(DEV, dtype)
    gn = torch.nn.GroupNorm(4, 16).to(DEV, dtype)
    ln = torch.nn.LayerNorm(256).to(DEV, dtype)
    rms = torch.nn.RMSNorm(256).to(DEV, dtype)
    inorm = torch.nn.InstanceNorm2d(16, affine=True).to(DEV, dtype)
    lstm = torch.nn.LSTM(64, 64, batch_first=True).to(DEV, dtype)
    gru = torch.nn.GRU(64, 64, batch_first=True).to(DEV, dtype)
    mha = torch.nn.MultiheadAttention(64, 4, batch_first=True).to(DEV, dtype)
    q = torch.randn(2, 4, 128, 64, device=DEV, dtype=dtype)
    tgt = torch.randint(0, 256, (64,), device=DEV)
    vol = torch.randn(2, 4, 8, 16, 16, device=DEV, dtype=dtype)
    seq = torch.randn(8, 32, 64, device=DEV, dtype=dtype)
    params = [torch.randn(256, 256, device=DEV, requires_grad=True) for _ in range(4)]
    for p in params:
        p.grad = torch.randn_like(p)
    calls = {
        "embedding": lambda: emb(tok),
        "embedding_bag": lambda: bag(tok),
        "conv2d": lambda: conv(img),
        "conv2d_depthwise": lambda: dw(img),
        "conv_transpose2d": lambda: convt(img),
        "conv1d_depthwise": lambda: conv1(img[:, :, 0]),
        "conv3d": lambda: conv3(vol),
        "batch_norm": lambda: bn(img),
        "group_norm": lambda: gn(img),
        "layer_norm": lambda: ln(x),
        "rms_norm": lambda: rms(x),
        "instance_norm": lambda: inorm(img),
        "lstm": lambda: lstm(seq)[0],
        "gru": lambda: gru(seq)[0],
        "mha": lambda: mha(seq, seq, seq)[0],
        "sdpa": lambda: F.scaled_dot_product_attention(q, q, q),
        "sdpa_causal": lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True),
        "sdpa_mask": lambda: F.scaled_dot_product_attention(
            q, q, q, attn_mask=torch.ones(128, 128, device=DEV, dtype=torch.bool).tril()
        ),
        "cross_entropy": lambda: F.cross_entropy(x.float(), tgt),
        "nll_loss": lambda: F.nll_loss(F.log_softmax(x.float(), -1), tgt),
        "ctc_loss": lambda: F.ctc_loss(
            seq.float().log_softmax(2),
            torch.randint(1, 64, (32, 5), device=DEV),
            torch.full((32,), 8, device=DEV),
            torch.full((32,), 5, device=DEV),
        ),
        "max_pool2d": lambda: F.max_pool2d(img, 2),
        "avg_pool2d": lambda: F.avg_pool2d(img, 2),
        "adaptive_avg_pool2d": lambda: F.adaptive_avg_pool2d(img, 3),
        "adaptive_max_pool2d": lambda: F.adaptive_max_pool2d(img, 3),
        "max_pool3d": lambda: F.max_pool3d(vol, 2),
        "avg_pool3d": lambda: F.avg_pool3d(vol, 2),
        "max_pool1d": lambda: F.max_pool1d(seq, 2),
        "lp_pool2d": lambda: F.lp_pool2d(img, 2, 2),
        "interpolate_nearest": lambda: F.interpolate(img, scale_factor=2),
        "interpolate_bilinear": lambda: F.interpolate(img, scale_factor=2, mode="bilinear"),
        "interpolate_bicubic": lambda: F.interpolate(img, scale_factor=2, mode="bicubic"),
        "interpolate_trilinear": lambda: F.interpolate(vol, scale_factor=2, mode="trilinear"),
        "grid_sample": lambda: F.grid_sample(
            img, torch.rand(4, 8, 8, 2, device=DEV, dtype=dtype) * 2 - 1, align_corners=False
        ),
        "pixel_shuffle": lambda: F.pixel_shuffle(img, 2),
        "unfold": lambda: F.unfold(img, 3),
        "fold": lambda: F.fold(F.unfold(img, 3), (32, 32), 3),
        "pad_reflect": lambda: F.pad(img, (2, 2, 2, 2), mode="reflect"),
        "pad_replicate": lambda: F.pad(img, (2, 2, 2, 2), mode="replicate"),
        "pad_constant": lambda: F.pad(img, (2, 2, 2, 2)),
        "pad_circular": lambda: F.pad(img, (2, 2, 2, 2), mode="circular"),
        "index_select": lambda: x.index_select(0, idx),
        "index": lambda: x[idx],
        "index_put": lambda: x.clone().index_put_((idx,), x, accumulate=True),
        "index_add": lambda: x.clone().index_add_(0, idx, x),
        "index_copy": lambda: x.clone().index_copy_(0, torch.randperm(64, device=DEV), x),
        "index_fill": lambda: x.clone().index_fill_(0, idx, 1.0),
        "gather": lambda: x.gather(1, idx[:, None].expand(64, 4)),
        "scatter": lambda: x.clone().scatter_(1, idx[:, None].expand(64, 4), 1.0),
        "scatter_add": lambda: x.clone().scatter_add_(1, idx[:, None].expand(64, 4), x[:, :4]),
        "scatter_reduce": lambda: x.clone().scatter_reduce_(1, idx[:, None].expand(64, 4), x[:, :4], "amax"),
        "masked_select": lambda: x.masked_select(x > 0),
        "masked_fill": lambda: x.masked_fill(x > 0, 0.0),
        "masked_scatter": lambda: x.masked_scatter(x > 0, x),
        "nonzero": lambda: (x > 0).nonzero(),
        "take": lambda: x.take(idx),
        "put": lambda: x.clone().put_(idx, x[0, :64]),
        "sort": lambda: x.sort(-1),
        "sort_large": lambda: torch.randn(1 << 20, device=DEV).sort(),
        "argsort_stable": lambda: x.argsort(-1, stable=True),
        "topk": lambda: x.topk(8, -1),
        "topk_large": lambda: torch.randn(1 << 20, device=DEV).topk(100),
        "kthvalue": lambda: x.float().kthvalue(3, -1),
        "median": lambda: x.median(-1),
        "mode": lambda: x.mode(-1),
        "unique": lambda: idx.unique(),
        "unique_consecutive": lambda: idx.unique_consecutive(),
        "cumsum": lambda: x.cumsum(-1),
        "cumsum_large": lambda: torch.randn(1 << 20, device=DEV).cumsum(0),
        "cumprod": lambda: x.cumprod(-1),
        "cummax": lambda: x.cummax(-1),
        "logcumsumexp": lambda: x.logcumsumexp(-1),
        "bincount": lambda: idx.bincount(),
        "histc": lambda: x.float().histc(),
        "searchsorted": lambda: torch.searchsorted(torch.arange(100, device=DEV), idx),
        "bucketize": lambda: torch.bucketize(x.float(), torch.linspace(-2, 2, 10, device=DEV)),
        "randperm": lambda: torch.randperm(100000, device=DEV),
        "multinomial": lambda: torch.multinomial(t["prob"].float(), 4),
        "dropout": lambda: F.dropout(x, 0.1),
        "arange": lambda: torch.arange(100000, device=DEV),
        "linspace": lambda: torch.linspace(0, 1, 10000, device=DEV),
        "zeros": lambda: torch.zeros(1000, 1000, device=DEV),
        "full": lambda: torch.full((1000, 1000), 3.0, device=DEV),
        "tril": lambda: x.tril(),
        "cat": lambda: torch.cat([x, x, x], 1),
        "stack": lambda: torch.stack([x, x]),
        "flip": lambda: x.flip(0),
        "roll": lambda: x.roll(3, 1),
        "repeat_interleave": lambda: x.repeat_interleave(2, 0),
        "repeat": lambda: x.repeat(2, 2),
        "transpose_contig": lambda: x.t().contiguous(),
        "permute_contig": lambda: img.permute(0, 2, 3, 1).contiguous(),
        "channels_last": lambda: img.to(memory_format=torch.channels_last),
        "to_half": lambda: x.half(),
        "to_float": lambda: x.float(),
        "to_long": lambda: x.long(),
        "clone": lambda: x.clone(),
        "sum": lambda: x.sum(),
        "sum_dim": lambda: x.sum(0),
        "mean": lambda: x.mean(-1),
        "var": lambda: x.var(-1),
        "std_mean": lambda: torch.std_mean(x, -1),
        "amax": lambda: x.amax(-1),
        "argmax": lambda: x.argmax(-1),
        "norm": lambda: x.norm(),
        "vector_norm": lambda: torch.linalg.vector_norm(x, dim=-1),
        "logsumexp": lambda: x.logsumexp(-1),
        "prod": lambda: x.prod(-1),
        "any": lambda: (x > 0).any(),
        "all": lambda: (x > 0).all(-1),
        "softmax": lambda: x.softmax(-1),
        "log_softmax": lambda: x.log_softmax(-1),
        "softmax_long_row": lambda: torch.randn(8, 50000, device=DEV, dtype=dtype).softmax(-1),
        "matmul": lambda: x @ x.t(),
        "bmm": lambda: torch.bmm(q[0], q[0].transpose(1, 2)),
        "addmm": lambda: torch.addmm(x[:, :64], x, x.t()[:, :64]),
        "linear": lambda: F.linear(x, x),
        "baddbmm": lambda: torch.baddbmm(q[0, :, :, :64], q[0], q[0].transpose(1, 2)[:, :, :64].transpose(1, 2)),
        "mv": lambda: t["sq"].mv(t["sq"][0]),
        "dot": lambda: x[0].float().dot(x[1].float()),
        "fft": lambda: torch.fft.rfft(x.float()),
        "fft2": lambda: torch.fft.fft2(img.float()),
        "linalg_inv": lambda: torch.linalg.inv(t["sq"].float() + 64 * torch.eye(64, device=DEV)),
        "linalg_solve": lambda: torch.linalg.solve(t["sq"].float() + 64 * torch.eye(64, device=DEV), x[:, :8].float()),
        "cholesky": lambda: torch.linalg.cholesky(t["sq"].float() @ t["sq"].float().t() + torch.eye(64, device=DEV)),
        "qr": lambda: torch.linalg.qr(t["sq"].float()),
        "svd": lambda: torch.linalg.svdvals(t["sq"].float()),
        "eigh": lambda: torch.linalg.eigh(t["sq"].float() + t["sq"].float().t()),
        "triangular_solve": lambda: torch.linalg.solve_triangular(
            t["sq"].float().triu() + 64 * torch.eye(64, device=DEV), x[:, :8].float(), upper=True
        ),
        "foreach_add": lambda: torch._foreach_add(params, params),
        "foreach_mul_scalar": lambda: torch._foreach_mul(params, 0.5),
        "foreach_norm": lambda: torch._foreach_norm(params),
        "foreach_copy": lambda: torch._foreach_copy_([p.detach().clone() for p in params], params),
        "foreach_lerp": lambda: torch._foreach_lerp([p.detach() for p in params], params, 0.1),
        "foreach_sqrt": lambda: torch._foreach_sqrt(params),
        "clip_grad_norm": lambda: torch.nn.utils.clip_grad_norm_(params, 1.0),
        "adamw_foreach": lambda: torch.optim.AdamW(params, foreach=True).step(),
        "adamw_fused": lambda: torch.optim.AdamW(params, fused=True).step(),
        "adam_fused": lambda: torch.optim.Adam(params, fused=True).step(),
        "sgd_foreach": lambda: torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=True).step(),
        "sgd_fused": lambda: torch.optim.SGD(params, lr=0.1, momentum=0.9, fused=True).step(),
        "adagrad": lambda: torch.optim.Adagrad(params, foreach=True).step(),
        "rmsprop": lambda: torch.optim.RMSprop(params, foreach=True).step(),
        "amp_unscale": lambda: torch._amp_foreach_non_finite_check_and_unscale_(
            [p.grad for p in params], torch.zeros(1, device=DEV), torch.ones(1, device=DEV)
        ),
        "amp_update_scale": lambda: torch._amp_update_scale_(
            torch.ones(1, device=DEV),
            torch.zeros(1, device=DEV, dtype=torch.int32),
            torch.zeros(1, device=DEV),
            2.0,
            0.5,
            2000,
        ),
        "weight_norm": lambda: torch._weight_norm(x, x[:, :1], 0),
        "cosine_similarity": lambda: F.cosine_similarity(x, x),
        "isin": lambda: torch.isin(idx, idx[:10]),
        "where": lambda: torch.where(x > 0, x, -x),
        "clamp": lambda: x.clamp(-1, 1),
        "polar": lambda: torch.polar(x.float().abs(), x.float()),
        "complex_mul": lambda: torch.view_as_complex(torch.randn(64, 128, 2, device=DEV)) * 2,
        "nan_to_num": lambda: x.nan_to_num(),
        "diag_embed": lambda: torch.diag_embed(x[:8]),
        "triu_indices": lambda: torch.triu_indices(100, 100, device=DEV),
        "segment_reduce": lambda: torch.segment_reduce(
            x[:, 0].float(), "sum", lengths=torch.full((16,), 4, device=DEV)
        ),
        "nested_pad": lambda: torch.nested.nested_tensor([x[:3], x[:5]], layout=torch.jagged).to_padded_tensor(0.0),
        "sparse_mm": lambda: torch.sparse.mm(t["sq"].float().relu().to_sparse(), x.float()),
        "to_sparse": lambda: x.float().relu().to_sparse(),
        "quantize_per_tensor": lambda: torch.quantize_per_tensor(x.float(), 0.1, 0, torch.qint8),
        "fake_quant": lambda: torch.fake_quantize_per_tensor_affine(x.float(), 0.1, 0, -128, 127),
        "scaled_mm_fp8": lambda: torch._scaled_mm(
            x[:, :64].float().to(torch.float8_e4m3fn),
            x[:, :64].float().t().contiguous().t().to(torch.float8_e4m3fn)[:64, :64],
            scale_a=torch.ones((), device=DEV),
            scale_b=torch.ones((), device=DEV),
            out_dtype=torch.bfloat16,
        ),
        "to_fp8": lambda: x.to(torch.float8_e4m3fn),
        "gelu_tanh": lambda: F.gelu(x, approximate="tanh"),
        "silu": lambda: F.silu(x),
        "mish": lambda: F.mish(x),
        "embedding_renorm": lambda: F.embedding(tok, emb.weight.detach().clone(), max_norm=1.0),
        "one_hot": lambda: F.one_hot(idx, 64),
        "normal_": lambda: x.clone().normal_(),
        "bernoulli": lambda: torch.bernoulli(t["prob"].float()),
        "exponential_": lambda: x.clone().float().exponential_(),
        "cross": lambda: torch.linalg.cross(x[:, :3], x[:, 3:6]),
        "dist": lambda: torch.dist(x, t["y"]),
        "renorm": lambda: x.renorm(2, 0, 1.0),
        "histogram_bins": lambda: torch.histc(x.float(), bins=100),
        "rnn_tanh": lambda: torch.nn.RNN(64, 64).to(DEV, dtype)(seq)[0],
        "channel_shuffle": lambda: F.channel_shuffle(img, 4),
        "pixel_unshuffle": lambda: F.pixel_unshuffle(img, 2),
        "upsample_nearest3d": lambda: F.interpolate(vol, scale_factor=2),
        "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(vol, 2),
        "fractional_max_pool2d": lambda: F.fractional_max_pool2d(img, 2, output_size=16),
        "max_unpool2d": lambda: F.max_unpool2d(*F.max_pool2d(img, 2, return_indices=True), 2),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(t["prob"].float(), t["prob"].float()),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(x, t["prob"]),
        "mse_loss": lambda: F.mse_loss(x, t["y"]),
        "smooth_l1": lambda: F.smooth_l1_loss(x, t["y"]),
        "kl_div": lambda: F.kl_div(x.log_softmax(-1), t["prob"], reduction="batchmean"),
        "multi_margin": lambda: F.multi_margin_loss(x.float(), tgt),
        "multilabel_margin": lambda: F.multilabel_margin_loss(x.float(), torch.randint(-1, 256, (64, 256), device=DEV)),
        "huber": lambda: F.huber_loss(x, t["y"]),
        "triplet": lambda: F.triplet_margin_loss(x, t["y"], t["z"]),
        "local_response_norm": lambda: F.local_response_norm(img, 3),
        "normalize": lambda: F.normalize(x),
        "affine_grid": lambda: F.affine_grid(
            torch.eye(2, 3, device=DEV, dtype=dtype)[None].repeat(4, 1, 1), (4, 16, 32, 32), align_corners=False
        ),
    }
    return calls


def _kernels(prof) -> list[tuple[str, str]]:
    """(kernel name, the aten op it is attached to) for each GPU kernel/memcpy/memset in a profile."""
    return [(k.name, e.name) for e in prof.events() for k in e.kernels]


def _call(thunk, backward: bool):
    res = thunk()
    if backward:
        tensors = [
            r
            for r in (res if isinstance(res, (tuple, list)) else [res])
            if isinstance(r, torch.Tensor) and r.requires_grad and r.is_floating_point()
        ]
        if not tensors:
            raise ValueError("nothing to differentiate")
        sum(r.float().sum() for r in tensors).backward()
    if DEV == "cuda":
        torch.cuda.synchronize()


def _all_calls() -> list[tuple[str, object, bool]]:
    """Every call, in a fixed order: (label, thunk, with backward)."""
    calls = []
    for dtype in (torch.float32, torch.bfloat16):
        tag = str(dtype).split(".")[1]
        for label, thunk in _hand_calls(dtype).items():
            calls.append((f"{label}[{tag}]", thunk, False))

            def with_grad(thunk=thunk):
                torch.set_grad_enabled(True)
                return thunk()

            calls.append((f"{label}[{tag}] backward", with_grad, True))
    t, probes = _probe_calls(torch.float32)
    for label, fn, args in probes:
        vals = [t[a] for a in args]
        calls.append((f"{label}[float32]", lambda fn=fn, vals=vals: fn(*vals), False))
        calls.append(
            (
                f"{label}[float32] backward",
                lambda fn=fn, vals=vals: fn(*[v.detach().clone().requires_grad_(v.is_floating_point()) for v in vals]),
                True,
            )
        )
    return calls


def _worker(start: int, log: Path) -> None:
    """Run calls from `start` on, appending one JSON line per call; a device-side assert kills the
    process (the CUDA context is lost), and the parent restarts after the last line written."""
    calls = _all_calls()
    with log.open("a") as fh:
        for i in range(start, len(calls)):
            label, thunk, backward = calls[i]
            fh.write(json.dumps({"i": i, "label": label, "started": True}) + "\n")
            fh.flush()
            try:
                _call(thunk, backward)
                with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
                    _call(thunk, backward)
                kernels = _kernels(prof)
            except Exception as exc:  # noqa: BLE001 - probing: most signatures do not fit
                if "device-side assert" in str(exc) or "CUDA error" in str(exc):
                    raise
                kernels = []
            fh.write(json.dumps({"i": i, "label": label, "kernels": kernels}) + "\n")
            fh.flush()


def main(outdir: str) -> None:
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "op_zoo_calls.jsonl"
    n = len(_all_calls())
    start, restarts = 0, 0
    while start < n:
        subprocess.run(
            [sys.executable, __file__, "--worker", str(start), str(log)],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        lines = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
        last = max((x["i"] for x in lines), default=-1)
        start = last + 1
        restarts += 1
        print(f"{start}/{n} calls done after {restarts} worker(s)", file=sys.stderr, flush=True)
    rows: dict[tuple[str, str], str] = {}
    for x in (json.loads(x) for x in log.read_text().splitlines() if x.strip()):
        if "kernels" in x:
            for name, op in x["kernels"]:
                rows.setdefault((name, op), x["label"])
    with gzip.open(out / "op_zoo.tsv.gz", "wt") as fh:
        fh.write("# kernel name\tthe aten op it is attached to\tcall\n")
        for (name, op), label in sorted(rows.items()):
            fh.write(f"{name}\t{op}\t{label}\n")
    meta = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name() if DEV == "cuda" else DEV,
        "calls": n,
        "workers": restarts,
        "distinct_kernel_op_pairs": len(rows),
        "distinct_kernels": len({k for k, _ in rows}),
    }
    (out / "op_zoo_meta.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps(meta), file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        _worker(int(sys.argv[2]), Path(sys.argv[3]))
    else:
        main(sys.argv[1])
