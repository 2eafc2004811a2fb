"""CUDA occupancy rules against the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor on an H100."""

from __future__ import annotations

import json

import pytest

from rocanalyze.errors import UserError
from rocanalyze.occupancy.cuda import compute_cuda_occupancy, load_cuda_arches
from tests.conftest import data_path

DRIVER = json.loads(data_path("occupancy", "cuda_sm90_driver_occupancy.json").read_text())
ROWS = DRIVER["rows"]


def test_fixture_is_the_h100_run():
    assert DRIVER["capability"] == "sm_90" and "H100" in DRIVER["device"]
    assert DRIVER["max_shared_per_block_optin"] == load_cuda_arches()["sm_90"]["max_smem_per_block"]
    assert len(ROWS) == 64 and {r["cu_result"] for r in ROWS} == {0}
    # the rows exercise every limit: registers, shared memory, warps and blocks
    assert len({r["driver_blocks_per_sm"] for r in ROWS}) >= 8


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['kernel']}-smem{r['dynamic_shared']}")
def test_rules_equal_the_driver(row):
    occ = compute_cuda_occupancy("sm_90", row["driver_num_regs"], row["static_shared"] + row["dynamic_shared"],
                                 row["block_size"])
    assert occ.blocks_per_sm == row["driver_blocks_per_sm"]


def test_limiters_and_other_arches():
    assert compute_cuda_occupancy("sm_90", 208, 98304, 128).limiter == "registers"
    assert compute_cuda_occupancy("sm_90", 20, 200000, 512).limiter == "shared_memory"
    assert compute_cuda_occupancy("sm_90", 22, 0, 32).limiter == "blocks"
    full = compute_cuda_occupancy("90", 32, 0, 256)
    assert (full.blocks_per_sm, full.occupancy_pct, full.limiter) == (8, 100.0, "none")
    # sm_86: 48 warps and 16 blocks per SM, 100 KB of shared memory
    assert compute_cuda_occupancy("sm_86", 32, 0, 64).blocks_per_sm == 16
    assert compute_cuda_occupancy("sm_86", 32, 0, 512).warps_per_sm == 48
    assert compute_cuda_occupancy("sm_86", 32, 101376 + 1, 128).blocks_per_sm == 0
    assert set(load_cuda_arches()) == {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100"}
    with pytest.raises(UserError, match="unknown CUDA arch 'sm_70'"):
        compute_cuda_occupancy("sm_70", 32, 0, 128)
