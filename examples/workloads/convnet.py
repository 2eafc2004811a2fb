"""A ResNet-style convnet training step (channels_last, bf16 autocast). Known bottleneck: convolutions."""

from __future__ import annotations

import torch
from _common import run
from torch import nn
from torch.nn import functional as F


def block(cin: int, cout: int, stride: int) -> nn.Module:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
        self.body = nn.Sequential(block(64, 64, 1), block(64, 128, 2), block(128, 256, 2), block(256, 512, 2))
        self.fc = nn.Linear(512, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.body(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def make(device: str, batch: int = 256, compiled: bool = False):
    torch.manual_seed(0)
    model = ConvNet().to(device).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device=device).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device=device)

    fwd = torch.compile(model) if compiled else model   # benchmarks/bench_compile_saving.py compiles it

    def step() -> None:
        with torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16):
            loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


if __name__ == "__main__":
    run(make)
