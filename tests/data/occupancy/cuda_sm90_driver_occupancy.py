"""Provenance of cuda_sm90_driver_occupancy.json: run once on an H100 (sm_90) with Triton and torch.

Compiles a handful of Triton kernels (varying num_warps, num_stages and so registers and shared
memory), reads n_regs / shared from each compiled kernel, and asks the CUDA driver
(cuOccupancyMaxActiveBlocksPerMultiprocessor through ctypes on libcuda) how many blocks fit on one SM,
for the kernel's own shared memory and for extra dynamic shared memory sizes.

Usage: python tests/data/occupancy/cuda_sm90_driver_occupancy.py OUT.json
"""

from __future__ import annotations

import ctypes
import json
import sys

import torch
import triton
import triton.language as tl

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(x, out, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + row * stride + cols, (e / tl.sum(e, axis=0)).to(out.dtype.element_ty), mask=mask)


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a_tile = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        acc += tl.dot(a_tile, tl.load(b + (k + rk)[:, None] * N + rn[None, :]))
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def main() -> None:
    cuda = ctypes.CDLL("libcuda.so.1")
    torch.cuda.init()
    dev = torch.device("cuda")
    x = torch.randn(1 << 20, device=dev, dtype=torch.float16)
    a = torch.randn(1024, 1024, device=dev, dtype=torch.float16)
    rows = []
    launches = []
    for warps, block in ((1, 256), (2, 512), (4, 1024), (8, 2048), (16, 4096), (32, 8192)):
        launches.append((f"add_w{warps}", add_kernel, (x, x, x.clone(), x.numel()), {"BLOCK": block},
                         warps, 1))
    for warps in (4, 16):
        launches.append((f"softmax_w{warps}", softmax_kernel, (x, x.clone(), 4096, 4096), {"BLOCK": 4096},
                         warps, 1))
    for bm, bn, bk, warps, stages in ((64, 64, 32, 4, 2), (128, 128, 64, 4, 3), (128, 128, 64, 8, 3),
                                      (128, 256, 64, 8, 4), (256, 128, 32, 4, 2)):
        launches.append((f"matmul_{bm}x{bn}x{bk}_w{warps}_s{stages}", matmul_kernel,
                         (a, a, torch.empty_like(a), 1024, 1024, 1024),
                         {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, warps, stages))
    optin = ctypes.c_int()
    cuda.cuDeviceGetAttribute(ctypes.byref(optin), CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0)
    for name, fn, args, consts, warps, stages in launches:
        compiled = fn[(1, 1)](*args, **consts, num_warps=warps, num_stages=stages)
        compiled._init_handles()
        func = ctypes.c_void_p(compiled.function)
        regs, static = ctypes.c_int(), ctypes.c_int()
        cuda.cuFuncGetAttribute(ctypes.byref(regs), CU_FUNC_ATTRIBUTE_NUM_REGS, func)
        cuda.cuFuncGetAttribute(ctypes.byref(static), CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func)
        cuda.cuFuncSetAttribute(func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin.value - static.value)
        shared = int(compiled.metadata.shared)
        block = warps * 32
        for dyn in sorted({shared, 0, 1024, 20000, 48 * 1024, 100000, 200000} - {-1}):
            if dyn < shared or dyn + static.value > optin.value:
                continue
            blocks = ctypes.c_int()
            err = cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), func, block, dyn)
            rows.append({"kernel": name, "num_warps": warps, "num_stages": stages, "block_size": block,
                         "n_regs": int(compiled.n_regs), "driver_num_regs": regs.value,
                         "static_shared": static.value, "kernel_shared": shared, "dynamic_shared": dyn,
                         "n_spills": int(compiled.n_spills), "driver_blocks_per_sm": blocks.value,
                         "cu_result": err})
    props = torch.cuda.get_device_properties(0)
    out = {"device": props.name, "capability": f"sm_{props.major}{props.minor}",
           "torch": torch.__version__, "triton": triton.__version__,
           "max_shared_per_block_optin": optin.value, "rows": rows}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out)[:3000])


if __name__ == "__main__":
    main()
