"""One 8192x8192x8192 bf16 GEMM per step: the reference point for achieved TFLOP/s and efficiency.
Also prints the TFLOP/s measured with device events, to check the profiler-based figure against."""

from __future__ import annotations

import torch
from _common import run

N = 8192


def make(device: str, n: int = N):
    torch.manual_seed(0)
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)

    def step() -> None:
        for _ in range(5):
            torch.mm(a, b)

    return step


def event_tflops(n: int = N, iters: int = 20) -> float:
    """TFLOP/s of torch.mm on n^3 bf16, timed with CUDA/HIP events after warm-up."""
    step = make("cuda", n)
    for _ in range(3):
        step()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        step()
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / (iters * 5)
    return 2 * n**3 / seconds / 1e12


if __name__ == "__main__":
    run(make)
    if torch.cuda.is_available():
        print(f"event-timed bf16 GEMM {N}^3: {event_tflops():.1f} TFLOP/s")
