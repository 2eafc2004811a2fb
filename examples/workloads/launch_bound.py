"""Batch-1 inference of a small MLP-mixer-like model: thousands of tiny kernels, the GPU waits on the
host issuing launches. Known bottleneck: idle, launch-bound (fix: CUDA/HIP graphs or torch.compile)."""

from __future__ import annotations

import torch
from _common import run
from torch import nn


class SmallNet(nn.Module):
    def __init__(self, dim: int = 256, layers: int = 24) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
            for _ in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = x + layer(x)
        return x


def build(device: str) -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    return SmallNet().to(device).eval(), torch.randn(1, 256, device=device)


def make(device: str):
    model, x = build(device)

    @torch.inference_mode()
    def step() -> None:
        for _ in range(4):
            model(x)

    return step


if __name__ == "__main__":
    run(make, default_steps=10)
