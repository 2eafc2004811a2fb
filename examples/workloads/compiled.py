"""The launch-bound batch-1 model of launch_bound.py, under torch.compile (Inductor/Triton kernels).
Compare with launch_bound.py: fewer, fused kernels and far less launch-bound idle time."""

from __future__ import annotations

import torch
from _common import run
from launch_bound import build


def make(device: str):
    model, x = build(device)
    compiled = torch.compile(model)
    with torch.inference_mode():
        for _ in range(3):  # compile and autotune before the measured steps
            compiled(x)

    @torch.inference_mode()
    def step() -> None:
        for _ in range(4):
            compiled(x)

    return step


if __name__ == "__main__":
    run(make, default_steps=10)
