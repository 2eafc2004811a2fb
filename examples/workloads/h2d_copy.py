"""A loop that feeds the GPU from pageable host memory: each step copies a batch host-to-device, then
does a little compute. Known bottleneck: host-to-device copies (fix: pin_memory + non_blocking, prefetch)."""

from __future__ import annotations

import torch
from _common import run


def make(device: str, batch: int = 64):
    torch.manual_seed(0)
    host_batches = [torch.randn(batch, 3, 224, 224) for _ in range(2)]  # pageable, not pinned
    w = torch.randn(224, 224, device=device)

    def step() -> None:
        for hb in host_batches:
            x = hb.to(device)
            (x @ w).sum()

    return step


if __name__ == "__main__":
    run(make)
