"""--collector both: kernels of the two passes matched by name and order (real rocprofv3 dispatches)."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from rocanalyze.collectors.join import join_passes
from rocanalyze.traces.schema import GPU_COLUMNS, make_frame
from tests.conftest import realdata_path

ADD = "void addition_kernel<float>(float*, float const*, float const*, int, int)"
SUB = "subtract_kernel(float*, float const*, float const*, int, int)"


def _real_dispatches() -> pd.DataFrame:
    """The dispatches of rocprofiler-sdk's kernel_trace.csv sample, as a reader would table them."""
    with realdata_path("rocprofv3", "rocprofiler_sdk_docs", "kernel_trace.v2025.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    start = [int(r["Start_Timestamp"]) for r in rows]
    return make_frame(GPU_COLUMNS, {
        "name": [r["Kernel_Name"] for r in rows], "start_ns": start,
        "dur_ns": [int(r["End_Timestamp"]) - s for r, s in zip(rows, start, strict=True)],
        "vgpr": [int(r["VGPR_Count"]) for r in rows], "agpr": [int(r["Accum_VGPR_Count"]) for r in rows],
        "sgpr": [int(r["SGPR_Count"]) for r in rows], "lds_bytes": [int(r["LDS_Block_Size"]) for r in rows],
        "scratch_bytes": [int(r["Scratch_Size"]) for r in rows]})


@pytest.mark.realdata
def test_a_pass_joined_with_itself_matches_every_dispatch() -> None:
    table = _real_dispatches()
    entries = {e["name"]: e for e in join_passes(table, table)}
    assert set(entries) == set(table["name"].astype(str))
    add = entries[ADD]
    calls = int((table["name"] == ADD).sum())
    assert (add["torch_calls"], add["rocprof_calls"], add["matched"]) == (calls, calls, calls)
    assert add["torch_total_us"] == add["rocprof_total_us"] > 0
    assert (entries["divide_kernel(float*, float const*, float const*, int, int)"]["vgpr"],
            entries["divide_kernel(float*, float const*, float const*, int, int)"]["agpr"]) == (12, 4)


@pytest.mark.realdata
def test_order_decides_which_dispatches_pair() -> None:
    rocprof = _real_dispatches()
    first_sub = rocprof[rocprof["name"] == SUB].index[0]
    torch = rocprof.drop(index=first_sub).assign(vgpr=-1)       # Kineto knows no registers
    entries = {e["name"]: e for e in join_passes(torch, rocprof)}
    sub = entries[SUB]
    assert (sub["torch_calls"], sub["rocprof_calls"], sub["matched"]) == (sub["rocprof_calls"] - 1,
                                                                         sub["rocprof_calls"], sub["rocprof_calls"] - 1)
    assert sub["vgpr"] == 8                                        # resources come from the rocprof pass
