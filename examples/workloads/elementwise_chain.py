"""An eager chain of small pointwise ops (a hand-written activation + normalisation), one kernel each.
Known bottleneck: eager elementwise chain (fix: torch.compile fuses it into one kernel)."""

from __future__ import annotations

import torch
from _common import run


def swish_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    y = x * torch.sigmoid(1.702 * x)
    y = y - y.mean(dim=-1, keepdim=True)
    y = y * torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + 1e-5)
    y = y * gamma + beta
    y = torch.tanh(y) * 0.5 + 0.5
    return torch.clamp(y, 0.01, 0.99).log1p().exp() - 1.0


def make(device: str, rows: int = 8192, cols: int = 2048):
    torch.manual_seed(0)
    x = torch.randn(rows, cols, device=device)
    gamma = torch.randn(cols, device=device)
    beta = torch.randn(cols, device=device)

    @torch.inference_mode()
    def step() -> None:
        y = x
        for _ in range(4):
            y = swish_norm(y, gamma, beta)

    return step


if __name__ == "__main__":
    run(make)
