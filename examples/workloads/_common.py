"""Shared runner for the example workloads: `python <workload>.py [--steps N] [--device cuda]`.

Each workload module defines `make(device) -> step_fn`; one call of step_fn is one training or inference
step. Steps are marked with rocanalyze.step() when rocanalyze is importable, so `rocanalyze profile`
can window on them; the scripts run the same without it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch

try:  # the marker is optional: the workloads are plain PyTorch scripts
    from rocanalyze import step as mark_step
except ImportError:  # pragma: no cover
    def mark_step() -> None:
        return None


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def run(make: Callable[[str], Callable[[], None]], default_steps: int = 8, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=default_steps)
    parser.add_argument("--device", default=default_device())
    args = parser.parse_args(argv)
    step = make(args.device)
    for _ in range(args.steps):
        step()
        mark_step()
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
