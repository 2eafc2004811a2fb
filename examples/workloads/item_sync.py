"""A loop that reads a scalar back with .item() every iteration (early-stopping check style): each read
blocks the host until the GPU drains. Known bottleneck: host synchronisation in the loop."""

from __future__ import annotations

import torch
from _common import run


def make(device: str, n: int = 4096):
    torch.manual_seed(0)
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    x = torch.randn(n, n, device=device, dtype=dtype)
    w = torch.randn(n, n, device=device, dtype=dtype) / n**0.5

    @torch.inference_mode()
    def step() -> None:
        y = x
        for _ in range(32):
            y = torch.tanh(y @ w)
            if y.abs().max().item() > 1e6:  # host sync every iteration
                break

    return step


if __name__ == "__main__":
    run(make)
