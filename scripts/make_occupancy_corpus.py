"""Regenerate tests/data/occupancy: cross-compile varied Triton kernels for AMD GPUs on a CPU machine.

Needs `pip install triton==3.9.0` (a dev tool, not a dependency of rocanalyze). No GPU is used:
`triton.compile(ASTSource(...), target=GPUTarget("hip", arch, warp))` runs the whole AMD pipeline
(TTIR -> TTGIR -> LLVM IR -> AMDGCN -> hsaco) with the LLVM bundled in Triton.

Kept per kernel: the AMDGCN assembly, gzipped (`<name>.amdgcn.gz`: LLVM's "; Occupancy:" line, the
`.amdgpu_metadata` block and the instructions the lint reads), and Triton's metadata JSON from the
cache (`<name>.json`: num_warps, shared, waves_per_eu, target). TTGIR is kept (gzipped) for the
kernels the TTGIR lint tests read. One kernel is also kept whole: its `.hsaco` and its Triton cache
directory, for the same-answer test.

Usage: python scripts/make_occupancy_corpus.py [--out tests/data/occupancy]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

ARCHS = [("gfx908", 64), ("gfx90a", 64), ("gfx942", 64), ("gfx950", 64), ("gfx1100", 32)]


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


@triton.jit
def gelu_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask).to(tl.float32)
    g = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
    tl.store(out + offs, g.to(out.dtype.element_ty), mask=mask)


@triton.jit
def softmax_kernel(x, out, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    v = v - tl.max(v, axis=0)
    e = tl.exp(v)
    tl.store(out + row * stride + cols, (e / tl.sum(e, axis=0)).to(out.dtype.element_ty), mask=mask)


@triton.jit
def layernorm_kernel(x, w, b, out, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / n_cols
    d = tl.where(mask, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    y = d * rstd * tl.load(w + cols, mask=mask) + tl.load(b + cols, mask=mask)
    tl.store(out + row * stride + cols, y.to(out.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_kernel(x, w, out, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) / n_cols + eps)
    tl.store(out + row * stride + cols, (v * rstd * tl.load(w + cols, mask=mask)).to(out.dtype.element_ty),
             mask=mask)


@triton.jit
def sum_kernel(x, out, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x + tl.program_id(0) * n + offs, mask=offs < n, other=0.0)
    tl.store(out + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def transpose_kernel(x, out, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    tile = tl.load(x + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))
    tl.store(out + rn[:, None] * M + rm[None, :], tl.trans(tile * 2.0),
             mask=(rn[:, None] < N) & (rm[None, :] < M))


@triton.jit
def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    ap = a + rm[:, None] * sam + rk[None, :] * sak
    bp = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.dot(tl.load(ap), tl.load(bp))
        ap += BLOCK_K * sak
        bp += BLOCK_K * sbk
    cp = c + rm[:, None] * scm + rn[None, :] * scn
    tl.store(cp, acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def attn_fwd_kernel(q, k, v, o, sm_scale, stride_s, N_CTX,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1) * N_CTX * stride_s
    rm = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD_DIM)
    qt = tl.load(q + off_h + rm[:, None] * stride_s + rd[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        kt = tl.load(k + off_h + rn[None, :] * stride_s + rd[:, None])
        qk = tl.dot(qt, kt) * sm_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        vt = tl.load(v + off_h + rn[:, None] * stride_s + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(vt.dtype), vt)
        m_i = m_new
    tl.store(o + off_h + rm[:, None] * stride_s + rd[None, :], (acc / l_i[:, None]).to(o.dtype.element_ty))


def _sgpr_kernel(n_args: int):
    """A kernel whose scalar arguments stay live in SGPRs: SGPR-limited, few VGPRs (tells the SGPR models
    apart: LLVM's pre-2026 table and PR #201342 disagree between 65 and 100 SGPRs)."""
    names = [f"a{i}" for i in range(n_args)]
    terms = " + ".join(f"{n} * (pid + {i})" for i, n in enumerate(names))
    source = (f"import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
              f"def sgpr_kernel(out, {', '.join(names)}, BLOCK: tl.constexpr):\n"
              f"    pid = tl.program_id(0)\n    total = {terms}\n"
              f"    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    tl.store(out + offs, total + offs)\n")
    folder = Path(tempfile.mkdtemp())
    (folder / f"sgpr_kernel_{n_args}.py").write_text(source)
    spec = importlib.util.spec_from_file_location(f"sgpr_kernel_{n_args}", folder / f"sgpr_kernel_{n_args}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    signature = {"out": "*i32", **{n: "i32" for n in names}, "BLOCK": "constexpr"}
    return module.sgpr_kernel, signature


def _sig(names: str, types: str) -> dict[str, str]:
    return dict(zip(names.split(), types.split(), strict=True))


POINTWISE = _sig("x y out n BLOCK", "*fp16 *fp16 *fp16 i32 constexpr")
GELU = _sig("x out n BLOCK", "*bf16 *bf16 i32 constexpr")
ROW = _sig("x out stride n_cols BLOCK", "*fp16 *fp16 i32 i32 constexpr")
LN = _sig("x w b out stride n_cols eps BLOCK", "*fp16 *fp16 *fp16 *fp16 i32 i32 fp32 constexpr")
RMS = _sig("x w out stride n_cols eps BLOCK", "*bf16 *bf16 *bf16 i32 i32 fp32 constexpr")
SUM = _sig("x out n BLOCK", "*fp32 *fp32 i32 constexpr")
TRANS = _sig("x out M N BLOCK_M BLOCK_N", "*fp16 *fp16 i32 i32 constexpr constexpr")
MM = _sig("a b c M N K sam sak sbk sbn scm scn BLOCK_M BLOCK_N BLOCK_K",
          "*fp16 *fp16 *fp16 i32 i32 i32 i32 i32 i32 i32 i32 i32 constexpr constexpr constexpr")
ATTN = _sig("q k v o sm_scale stride_s N_CTX BLOCK_M BLOCK_N HEAD_DIM",
            "*fp16 *fp16 *fp16 *fp16 fp32 i32 i32 constexpr constexpr constexpr")

# (file stem, kernel, signature, constexprs, options)
CASES = [
    ("add_b1024_w4", add_kernel, POINTWISE, {"BLOCK": 1024}, {"num_warps": 4}),
    ("add_b4096_w8", add_kernel, POINTWISE, {"BLOCK": 4096}, {"num_warps": 8}),
    ("gelu_b2048_w4", gelu_kernel, GELU, {"BLOCK": 2048}, {"num_warps": 4}),
    ("softmax_b1024_w4", softmax_kernel, ROW, {"BLOCK": 1024}, {"num_warps": 4}),
    ("softmax_b8192_w16", softmax_kernel, ROW, {"BLOCK": 8192}, {"num_warps": 16}),
    ("layernorm_b4096_w8", layernorm_kernel, LN, {"BLOCK": 4096}, {"num_warps": 8}),
    ("rmsnorm_b2048_w4", rmsnorm_kernel, RMS, {"BLOCK": 2048}, {"num_warps": 4}),
    ("sum_b512_w2", sum_kernel, SUM, {"BLOCK": 512}, {"num_warps": 2}),
    ("transpose_64x64_w4", transpose_kernel, TRANS, {"BLOCK_M": 64, "BLOCK_N": 64}, {"num_warps": 4}),
    ("matmul_64x64x32_w4_s2", matmul_kernel, MM, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
     {"num_warps": 4, "num_stages": 2}),
    ("matmul_128x128x32_w4_s2", matmul_kernel, MM, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32},
     {"num_warps": 4, "num_stages": 2}),
    ("matmul_128x128x64_w8_s2", matmul_kernel, MM, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
     {"num_warps": 8, "num_stages": 2}),
    ("matmul_256x128x64_w8_s3", matmul_kernel, MM, {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64},
     {"num_warps": 8, "num_stages": 3}),
    ("matmul_256x256x32_w4_s1", matmul_kernel, MM, {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 32},
     {"num_warps": 4, "num_stages": 1}),
    ("matmul_128x128x64_w4_s2_wpe2", matmul_kernel, MM, {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
     {"num_warps": 4, "num_stages": 2, "waves_per_eu": 2}),
    ("matmul_128x64x64_w4_s2_wpe3", matmul_kernel, MM, {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64},
     {"num_warps": 4, "num_stages": 2, "waves_per_eu": 3}),
    ("attn_fwd_128x64_d64_w4", attn_fwd_kernel, ATTN, {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64},
     {"num_warps": 4, "num_stages": 1}),
    ("attn_fwd_128x64_d128_w8", attn_fwd_kernel, ATTN, {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 128},
     {"num_warps": 8, "num_stages": 1}),
    ("attn_fwd_64x32_d64_w4_wpe2", attn_fwd_kernel, ATTN, {"BLOCK_M": 64, "BLOCK_N": 32, "HEAD_DIM": 64},
     {"num_warps": 4, "num_stages": 1, "waves_per_eu": 2}),
]
for _n in (50, 70, 90):
    _fn, _signature = _sgpr_kernel(_n)
    CASES.append((f"sgpr_args{_n}_w4", _fn, _signature, {"BLOCK": 256}, {"num_warps": 4}))

KEEP_TTGIR = {"transpose_64x64_w4", "matmul_128x128x64_w8_s2", "attn_fwd_128x64_d64_w4"}
WHOLE = ("gfx942", "matmul_128x128x64_w4_s2_wpe2")  # kept as .hsaco and as a Triton cache dir


def _compile(cache: Path, arch: str, warp: int, case: tuple) -> Path:
    """Compile one case into a fresh Triton cache dir; return the kernel's folder in it."""
    stem, fn, sig, constexprs, options = case
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    triton.compile(ASTSource(fn, signature=sig, constexprs=constexprs),
                   target=GPUTarget("hip", arch, warp), options=options)
    (folder,) = [p for p in cache.iterdir() if p.is_dir()]
    return folder


def _gzip(src: Path, dst: Path) -> None:
    # mtime=0: the same input gives byte-identical output, so regenerating shows no spurious diff
    with gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as out:
        out.write(src.read_bytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tests/data/occupancy", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    for arch, warp in ARCHS:
        dest = args.out / "triton39" / arch
        dest.mkdir(parents=True, exist_ok=True)
        for case in CASES:
            stem, fn = case[0], case[1].fn.__name__
            with tempfile.TemporaryDirectory() as tmp:
                folder = _compile(Path(tmp), arch, warp, case)
                _gzip(folder / f"{fn}.amdgcn", dest / f"{stem}.amdgcn.gz")
                shutil.copyfile(folder / f"{fn}.json", dest / f"{stem}.json")
                if stem in KEEP_TTGIR:
                    _gzip(folder / f"{fn}.ttgir", dest / f"{stem}.ttgir.gz")
                if (arch, stem) == WHOLE:
                    shutil.copyfile(folder / f"{fn}.hsaco", dest / f"{stem}.hsaco")
                    whole = args.out / "triton_cache_gfx942"
                    shutil.rmtree(whole, ignore_errors=True)
                    keep = [f"{fn}.amdgcn", f"{fn}.json", f"{fn}.hsaco", f"{fn}.ttgir"]
                    (whole / folder.name).mkdir(parents=True)
                    for name in keep + [p.name for p in folder.glob("__grp__*")]:
                        shutil.copyfile(folder / name, whole / folder.name / name)
            print(f"{arch} {stem}")
    meta = {"triton_version": triton.__version__, "archs": [a for a, _ in ARCHS], "cases": [c[0] for c in CASES]}
    (args.out / "triton39" / "manifest.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
