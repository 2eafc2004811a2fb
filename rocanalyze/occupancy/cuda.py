"""CUDA occupancy rules (what the CUDA occupancy calculator and the driver's occupancy API compute).

Per block: warps = ceil(block / 32); registers per warp = roundup(regs x 32, 256), and a warp lives in
one of 4 register sub-partitions (16 K registers each); shared = roundup(bytes + 1 KB reserved, 128).
Blocks per SM = min(warp limit, block limit, register limit, shared-memory limit).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from rocanalyze.errors import UserError
from rocanalyze.paths import load_data_toml


@dataclass(frozen=True)
class CudaOccupancy:
    """Blocks per SM, the warps they hold, their share of the SM's warp slots, and what limits them."""

    arch: str
    blocks_per_sm: int
    warps_per_sm: int
    occupancy_pct: float
    limiter: str            # "warps", "blocks", "registers", "shared_memory" or "none"
    limits: dict[str, int]  # resource -> blocks per SM it allows

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@lru_cache(maxsize=1)
def load_cuda_arches() -> dict[str, dict[str, int | str]]:
    """Each sm_XY row of cuda_arches.toml with the defaults filled in."""
    table = load_data_toml("cuda_arches.toml")
    defaults = table.pop("defaults")
    return {name: {**defaults, **row} for name, row in table.items()}


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def compute_cuda_occupancy(arch: str, regs_per_thread: int, shared_bytes: int, block_size: int) -> CudaOccupancy:
    """Blocks of `block_size` threads, each thread `regs_per_thread` registers and the block
    `shared_bytes` of shared memory (static + dynamic), that fit on one SM of `arch` (e.g. 'sm_90')."""
    key = arch.lower().replace("sm", "sm_").replace("__", "_")
    if key.isdigit():
        key = f"sm_{key}"
    arches = load_cuda_arches()
    if key not in arches:
        raise UserError(f"unknown CUDA arch '{arch}' (known: {', '.join(arches)})")
    a = arches[key]
    ints = {k: int(v) for k, v in a.items() if k != "name"}
    if block_size <= 0 or regs_per_thread < 0 or shared_bytes < 0:
        raise UserError("block size must be positive and registers/shared memory non-negative")
    warps = -(-block_size // ints["warp_size"])
    limits = {"warps": ints["max_warps_per_sm"] // warps, "blocks": ints["max_blocks_per_sm"]}
    if regs_per_thread:
        per_warp = _round_up(regs_per_thread * ints["warp_size"], ints["reg_alloc_unit"])
        fits_block = regs_per_thread <= ints["max_regs_per_thread"] and per_warp * warps <= ints["regs_per_block"]
        per_partition = (ints["regs_per_sm"] // ints["sub_partitions"]) // per_warp
        limits["registers"] = per_partition * ints["sub_partitions"] // warps if fits_block else 0
    if shared_bytes > ints["max_smem_per_block"]:
        limits["shared_memory"] = 0
    else:
        per_block = _round_up(shared_bytes + ints["reserved_smem_per_block"], ints["smem_alloc_unit"])
        limits["shared_memory"] = ints["smem_per_sm"] // per_block
    blocks = min(limits.values())
    warps_sm = blocks * warps
    limiter = "none" if warps_sm >= ints["max_warps_per_sm"] else next(
        name for name in ("registers", "shared_memory", "warps", "blocks") if limits.get(name) == blocks)
    return CudaOccupancy(arch=key, blocks_per_sm=blocks, warps_per_sm=warps_sm,
                         occupancy_pct=round(100.0 * warps_sm / ints["max_warps_per_sm"], 1),
                         limiter=limiter, limits=limits)
