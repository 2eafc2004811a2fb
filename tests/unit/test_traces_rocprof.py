"""rocprof v1/v2/v3, rocpd and rocprof-compute outputs: columns read by name, grids in workgroups."""

from __future__ import annotations

import pytest

from rocanalyze.errors import UserError
from rocanalyze.traces import read, rocprof_csv
from rocanalyze.traces.source import read_head
from tests.conftest import realdata_path

pytestmark = pytest.mark.realdata


def test_v1_results_csv_dispatch_resources() -> None:
    table = read(realdata_path("rocprof_v1", "gunrock_bfs_mi300x", "results.csv"))
    assert table.source_format == "rocprof-v1-csv" and len(table.gpu) == 56
    row = table.gpu.iloc[0]
    assert row["name"] == "__amd_rocclr_copyBuffer"  # ".kd" and quotes stripped
    assert (row["start_ns"], row["dur_ns"]) == (3599977333839958, 5573)
    # grd 155648 work-items / wgr 512 = 304 workgroups
    assert (row["grid_x"], row["block_x"], row["vgpr"], row["agpr"], row["sgpr"], row["wave_size"]) == (
        304, 512, 16, 0, 32, 64)


def test_v1_wave32_rdna() -> None:
    table = read(realdata_path("rocprof_v1", "llamacpp_rdna_wave32", "results.csv"))
    assert set(table.gpu["wave_size"]) == {32} and len(table.gpu) == 1963


@pytest.mark.parametrize("name,vgpr,agpr", [("kernel_trace.v2024-07.csv", -1, -1),
                                            ("kernel_trace.v2024-08.csv", -1, -1),
                                            ("kernel_trace.v2025.csv", 8, 0)])
def test_v3_kernel_trace_headers_across_releases(name: str, vgpr: int, agpr: int) -> None:
    table = read(realdata_path("rocprofv3", "rocprofiler_sdk_docs", name))
    row = table.gpu.iloc[0]
    assert (row["vgpr"], row["agpr"]) == (vgpr, agpr)
    assert row["block_x"] in (4, 64) and row["grid_x"] * row["block_x"] == 1024  # work-items -> workgroups
    assert row["device"] == 0  # "Agent 4" or 1: the first GPU agent


def test_v3_copies_and_api_and_markers() -> None:
    copies = read(realdata_path("rocprofv3", "rocprofiler_sdk_docs", "memory_copy_trace.v2025.csv"))
    assert copies.gpu["copy_kind"].astype(str).tolist()[:2] == ["HtoD", "HtoD"]
    assert (copies.gpu["kind"] == "memcpy").all()
    api = read(realdata_path("rocprofv3", "llamacpp_strixhalo_subset", "decode_hip_api_trace.csv"))
    first = api.runtime.iloc[0]
    assert (first["name"], first["correlation"], first["dur_ns"]) == ("hipLaunchKernel", 40071, 3046606)
    markers = read(realdata_path("rocprofv3", "rocprofiler_sdk_docs", "marker_api_trace.csv"))
    assert markers.annotations["name"].iloc[0] == "before hipLaunchKernel"


def test_v3_counter_collection_pivots_to_one_row_per_dispatch() -> None:
    table = read(realdata_path("rocprofv3", "llamacpp_strixhalo_subset", "decode_stall_counter_collection.csv"))
    counters = table.metadata["counters"]
    assert len(table.gpu) == 34 == len(counters)
    assert counters.loc[0, "GRBM_EA_BUSY"] == 3564.0 and counters.loc[0, "GRBM_GUI_ACTIVE"] == 16283.0


def test_stats_give_aggregates_with_barrier_packets() -> None:
    table = read(realdata_path("rocprof_v1", "saltfish_pytorch_mi300x", "results.stats.csv"))
    barrier = table.aggregates[table.aggregates["name"] == "<barrier packet>"].iloc[0]
    assert (barrier["calls"], barrier["total_ns"], barrier["kind"]) == (85112, 142976988030, "kernel")
    hip = read(realdata_path("rocprof_v1", "batched_gemm_mi300x", "results.hip_stats.csv"))
    assert set(hip.aggregates["kind"]) == {"runtime"}


def test_rocpd_links_kernels_to_launches() -> None:
    table = read(realdata_path("rocprofv3", "batched_gemm_mi300x_att", "28_results.db"))
    assert table.source_format == "rocpd" and len(table.gpu) == 151
    assert (table.gpu["launch_index"] >= 0).all()
    assert table.runtime.iloc[table.gpu["launch_index"].iloc[1]]["name"] == "hipLaunchKernel"
    ck = table.gpu.iloc[1]
    assert (ck["vgpr"], ck["agpr"], ck["sgpr"], ck["lds_bytes"], ck["block_x"]) == (128, 384, 112, 65536, 256)
    assert table.devices[0].arch == "gfx942" and table.devices[0].name == "AMD Instinct MI300X"


def test_legacy_results_db_and_json_agree() -> None:
    db = read(realdata_path("rocprof_v1", "hip_programming_mi300a", "results.db"))
    js = read(realdata_path("rocprof_v1", "hip_programming_mi300a", "results.json"))
    for table in (db, js):
        assert table.gpu["kind"].astype(str).tolist() == ["memcpy", "memcpy", "kernel", "memcpy"]
        assert table.gpu["dur_ns"].tolist() == [92212447, 88505203, 3431611, 885689740]
        assert len(table.runtime) == 13


@pytest.mark.parametrize("folder", ["hpctraining_finite_difference_mi250x", "hpctraining_seismic_stencils_mi250x"])
def test_broken_results_json_fragments_are_refused(folder: str) -> None:
    path = realdata_path("rocprof_v1", folder, "results.json")
    with pytest.raises(UserError) as err:
        read(path)
    assert str(err.value) == (f"{path}: a fragment of rocprof's results.json, not valid JSON (it starts with "
                              "','): use results.csv or re-run rocprof")


def test_rocprofv3_json_dispatches_and_symbols() -> None:
    table = read(realdata_path("rocprofv3", "tracelens_mi350x_aorta", "908_results.json.gz"))
    assert len(table.gpu) == 43915 and table.devices[0].arch == "gfx950"
    first = table.gpu.iloc[0]
    assert (first["name"], first["dur_ns"], first["vgpr"], first["sgpr"]) == ("__amd_rocclr_copyBuffer", 2840, 8, 32)


def test_rocprofv2_csv_and_log() -> None:
    csv = read(realdata_path("rocprofv2", "aiter_fmla", "results_430889.csv"))
    log = read(realdata_path("rocprofv2", "aiter_fmla", "kernel.log"))
    assert (len(csv.gpu), len(log.gpu)) == (187, 197)
    assert log.gpu["start_ns"].iloc[0] == 802411030916244 and log.gpu["dur_ns"].iloc[0] == 2920
    assert log.gpu["name"].iloc[0].endswith("std::array<char*, 1ul>)")  # " (.kd)" stripped


def test_rocprof_compute_folder_has_counters_and_device() -> None:
    table = read(realdata_path("rocprof_compute", "batched_gemm_bmm1_mi300x"))
    assert len(table.gpu) == 301 and table.devices[0].arch == "gfx942" and table.devices[0].compute_units == 304
    counters = table.metadata["counters"]
    assert len(counters) == 301 and counters.loc[0, "SQ_WAVE_CYCLES"] == 1787201.0
    assert any("skipped roofline.csv: not a trace" == n for n in table.notes)


def test_csv_flavors_by_header() -> None:
    def flavor(*parts: str) -> str | None:
        return rocprof_csv.flavor(rocprof_csv.header(read_head(realdata_path(*parts))))

    assert flavor("rocprof_v1", "hip_programming_mi300a", "output_vec_add_gpu.csv") == "pmc"
    assert flavor("rocprofv3", "aiter_skinny_gemm_gfx950_att", "50136_agent_info.csv") == "agents"
    assert flavor("tracelens_reports", "mi300x_bert-small_kernel_summary.csv") is None
