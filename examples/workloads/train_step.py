"""A small GPT-style transformer training step (bf16 autocast, AdamW), 64k tokens per step.
Known bottleneck: GEMMs. Smaller batches leave an H100 waiting on the host (launch-bound)."""

from __future__ import annotations

import torch
from _common import run
from torch import nn
from torch.nn import functional as F


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)  # fused QKV projection
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int = 8192, dim: int = 1024, heads: int = 16, layers: int = 4) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.head(self.ln(self.blocks(self.emb(idx))))


def make(device: str, batch: int = 32, seq: int = 2048, compiled: bool = False):
    torch.manual_seed(0)
    model = TinyGPT().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.startswith("cuda"))
    idx = torch.randint(0, 8192, (batch, seq), device=device)
    target = torch.randint(0, 8192, (batch, seq), device=device)

    fwd = torch.compile(model) if compiled else model   # benchmarks/bench_compile_saving.py compiles it

    def step() -> None:
        with torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16):
            logits = fwd(idx)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), target.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


if __name__ == "__main__":
    run(make)
