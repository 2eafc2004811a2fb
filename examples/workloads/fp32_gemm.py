"""FP32 GEMMs with TF32 off (the default 'highest' matmul precision): the GEMMs run on the FP32 pipe,
far under the bf16/TF32 matrix peak. Known bottleneck: GEMM, FP32 (fix: bf16 autocast or TF32)."""

from __future__ import annotations

import torch
from _common import run


def make(device: str, n: int = 4096):
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    w = torch.randn(n, 1024, device=device)

    @torch.inference_mode()
    def step() -> None:
        c = a @ b
        torch.nn.functional.relu(c @ w)

    return step


if __name__ == "__main__":
    run(make)
