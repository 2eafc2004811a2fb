"""Hand-written attention (matmul, softmax, matmul) in fp16 with separate Q, K, V projections.
Known bottleneck: unfused attention (fix: F.scaled_dot_product_attention) and unfused QKV."""

from __future__ import annotations

import math

import torch
from _common import run
from torch import nn


class ManualAttention(nn.Module):
    def __init__(self, dim: int = 1024, heads: int = 16) -> None:
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.heads
        q = self.q_proj(x).view(b, s, h, d // h).transpose(1, 2)
        k = self.k_proj(x).view(b, s, h, d // h).transpose(1, 2)
        v = self.v_proj(x).view(b, s, h, d // h).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // h)
        probs = torch.softmax(scores, dim=-1)
        return self.out(torch.matmul(probs, v).transpose(1, 2).reshape(b, s, d))


def make(device: str, batch: int = 4, seq: int = 2048):
    torch.manual_seed(0)
    dtype = torch.float16 if device.startswith("cuda") else torch.float32
    model = ManualAttention().to(device, dtype).eval()
    x = torch.randn(batch, seq, 1024, device=device, dtype=dtype)

    @torch.inference_mode()
    def step() -> None:
        for _ in range(2):
            model(x)

    return step


if __name__ == "__main__":
    run(make)
