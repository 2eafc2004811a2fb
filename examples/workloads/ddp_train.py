"""Data-parallel training step over NCCL/RCCL (run with torchrun): an MLP whose gradients are all-reduced
every step. Shows communication, and how much of it is exposed (not hidden under compute), per rank.

    torchrun --nproc_per_node 2 -m rocanalyze profile -o RUN examples/workloads/ddp_train.py
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel


def main(steps: int = 8) -> None:
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    torch.manual_seed(rank)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4096, 4096), nn.GELU()) for _ in range(8)]).cuda()
    ddp = DistributedDataParallel(model, bucket_cap_mb=25)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(2048, 4096, device="cuda")
    for _ in range(steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(ddp(x).float(), x)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
