"""GPU table and GPU choice: every figure sourced, devices from real traces mapped to the right part."""

from __future__ import annotations

import csv
import gzip
import json

import pytest

from rocanalyze.analysis.gpu_spec import (
    PEAK_DTYPES,
    GpuSpec,
    gpu_entries,
    select_gpu,
    source_of,
    spec_from_entry,
)
from rocanalyze.errors import UserError
from rocanalyze.paths import load_data_toml
from rocanalyze.traces.schema import DeviceInfo
from tests.conftest import data_path, realdata_path

REQUIRED = {"mi100", "mi210", "mi250x", "mi300x", "mi300a", "mi325x", "mi350x", "mi355x", "rx7900xtx",
            "ryzen-ai-max", "rx9070xt", "a100", "h100-sxm", "h100-pcie", "h200", "b200"}
FIGURES = ("arch", "compute_units", "clock_mhz", "memory_gib", "memory_bw_gbps", "lds_kib", "l2_mib",
           "wave_size", "grid_min_workgroups")


def _devices_of(path) -> list[DeviceInfo]:
    """DeviceInfo from a Kineto trace's deviceProperties, read here independently of the readers."""
    props = json.load(gzip.open(path))["deviceProperties"]
    return [DeviceInfo(index=p["id"], name=p.get("name"), compute_units=p.get("numSms"),
                       wave_size=p.get("warpSize"), compute_major=p.get("computeMajor"),
                       compute_minor=p.get("computeMinor"), memory_bytes=p.get("totalGlobalMem"))
            for p in props]


def test_table_lists_every_required_gpu_with_a_source_for_each_figure():
    table = load_data_toml("gpus.toml")
    entries = {e["key"]: e for e in table["gpu"]}
    assert REQUIRED <= set(entries)
    for key, entry in entries.items():
        assert set(entry["peak_tflops"]) <= set(PEAK_DTYPES), key
        for fig in FIGURES:
            if entry.get(fig) is not None:
                assert source_of(entry, fig) in table["sources"], (key, fig)
        for dtype in entry["peak_tflops"]:
            assert source_of(entry, f"peak_tflops.{dtype}") in table["sources"], (key, dtype)
    for sid, src in table["sources"].items():
        assert src["url"].startswith("https://") and src["title"], sid


def test_peaks_agree_with_per_cu_rates_and_clocks():
    # CDNA 3 matrix rates per CU per clock from AMD's MI300 table: fp16/bf16 2048, fp8/int8 4096
    e = {x["key"]: x for x in gpu_entries()}
    for key in ("mi300x", "mi300a", "mi325x"):
        cu, ghz = e[key]["compute_units"], e[key]["clock_mhz"] / 1e3
        assert e[key]["peak_tflops"]["bf16"] == pytest.approx(2048 * cu * ghz / 1e3, rel=2e-3)
        assert e[key]["peak_tflops"]["fp8"] == pytest.approx(4096 * cu * ghz / 1e3, rel=2e-3)
    for key in ("mi350x", "mi355x"):  # CDNA 4 doubles the 16-bit and 8-bit rates per CU
        cu, ghz = e[key]["compute_units"], e[key]["clock_mhz"] / 1e3
        assert e[key]["peak_tflops"]["fp16"] == pytest.approx(4096 * cu * ghz / 1e3, rel=2e-3)
    for key in ("a100", "h100-sxm", "h200", "b200"):  # NVIDIA: bf16 is twice tf32
        assert e[key]["peak_tflops"]["bf16"] == pytest.approx(2 * e[key]["peak_tflops"]["tf32"], rel=0.03)


def test_mi300x_trace_name_picks_mi300x():
    spec = select_gpu(_devices_of(realdata_path("torch_traces", "tracelens",
                                                 "mi300x_bert-small_inference.json.gz")))
    assert (spec.key, spec.arch, spec.compute_units, spec.assumed) == ("mi300x", "gfx942", 304, False)
    assert spec.peak_tflops["bf16"] == 1307.4 and spec.memory_bw_gbps == 5300
    assert spec.grid_threshold() == 1024
    assert "MI300X VF" in spec.notes[0]


@pytest.mark.parametrize("trace, key, sms", [
    ("torch_traces/tracelens/nvidia_b200_eager_trace.json.gz", "b200", 148),
    ("torch_traces/tracelens/nvidia_h100_bert-small_inference.json.gz", "h100-sxm", 132),
])
def test_nvidia_traces_pick_their_part(trace, key, sms):
    devices = _devices_of(realdata_path(trace))
    spec = select_gpu(devices)
    assert spec.key == key and spec.compute_units == sms == devices[0].compute_units and not spec.assumed


def test_compute_capability_alone_is_ambiguous_on_gfx942_and_says_so():
    spec = select_gpu([DeviceInfo(compute_major=9, compute_minor=4, wave_size=64)])
    assert spec.key == "mi300x" and spec.assumed
    assert "MI300X" in spec.notes[0] and "MI300A" in spec.notes[0] and "MI325X" in spec.notes[0]
    assert "assumed AMD Instinct MI300X" in spec.notes[0]


def test_cu_count_and_memory_resolve_gfx942():
    mi300a = select_gpu([DeviceInfo(compute_major=9, compute_minor=4, wave_size=64, compute_units=228)])
    assert mi300a.key == "mi300a" and not mi300a.assumed
    mi325x = select_gpu([DeviceInfo(compute_major=9, compute_minor=4, wave_size=64, compute_units=304,
                                    memory_bytes=256 * 2**30)])
    assert mi325x.key == "mi325x" and mi325x.memory_bw_gbps == 6000 and not mi325x.assumed


def test_gfx950_agent_info_clock_picks_mi350x():
    path = realdata_path("rocprofv3", "aiter_skinny_gemm_gfx950_att", "50136_agent_info.csv")
    gpu = next(r for r in csv.DictReader(open(path)) if r["Agent_Type"] == "GPU")
    dev = DeviceInfo(name=gpu["Product_Name"], arch=gpu["Name"], compute_units=int(gpu["Cu_Count"]),
                     wave_size=int(gpu["Wave_Front_Size"]),
                     clock_khz=int(gpu["Max_Engine_Clk_Fcompute"]) * 1000)
    spec = select_gpu([dev])
    assert (dev.name, dev.arch, dev.compute_units) == ("AMD Radeon Graphics", "gfx950", 256)
    assert spec.key == "mi350x" and not spec.assumed and "2200 MHz" in spec.notes[0]
    dev.clock_khz = None
    unsure = select_gpu([dev])
    assert unsure.key == "mi350x" and unsure.assumed and "MI355X" in unsure.notes[0]


def test_gcd_of_mi250x_and_mi210_told_apart_by_cu_count():
    assert select_gpu([DeviceInfo(arch="gfx90a", compute_units=110)]).key == "mi250x"
    gcd = select_gpu([DeviceInfo(arch="gfx90a", compute_units=104)])
    assert gcd.key == "mi210" and gcd.assumed and "MI250 (one GCD)" in gcd.notes[0]
    assert gcd.peak_tflops == spec_from_entry(next(e for e in gpu_entries() if e["key"] == "mi250")).peak_tflops
    assert select_gpu([DeviceInfo(arch="gfx908", compute_units=120)]).key == "mi100"


def test_h100_pcie_by_name():
    assert select_gpu([DeviceInfo(name="NVIDIA H100 PCIe", compute_units=114)]).key == "h100-pcie"


def test_compute_partition_scales_peaks():
    spec = select_gpu([DeviceInfo(name="AMD Instinct MI300X", compute_units=38)])
    assert spec.compute_units == 38 and spec.assumed
    assert spec.peak_tflops["bf16"] == pytest.approx(1307.4 / 8, abs=0.1)
    assert "38 of AMD Instinct MI300X's 304 CUs" in spec.notes[-1]


def test_override_and_unknown_override():
    spec = select_gpu([], override="MI300A")
    assert spec.key == "mi300a" and spec.notes[0] == "GPU set by --gpu MI300A."
    with pytest.raises(UserError) as err:
        select_gpu([], override="MI999")
    assert str(err.value).startswith("unknown GPU 'MI999' for --gpu: use one of mi100, mi210, mi250, mi250x")


def test_no_device_info_gives_an_unknown_spec_that_says_why():
    spec = select_gpu([])
    assert spec.name == "unknown GPU" and spec.assumed and not spec.known
    assert "records no GPU properties" in spec.notes[0]


def test_measured_peaks_file_replaces_datasheet_peaks():
    path = data_path("ceilings", "h100_peaks.json")
    spec = select_gpu(_devices_of(data_path("torch_profiler", "h100_captures", "big_gemm.json.gz")),
                      peaks_file=path)
    assert spec.key == "h100-sxm"
    assert spec.peak_tflops["bf16"] == 775.2 and spec.peak_tflops["fp32"] == pytest.approx(51.4, abs=0.05)
    assert spec.peak_tflops["fp8"] == 1978.9  # not measured: datasheet kept
    assert spec.memory_bw_gbps == pytest.approx(2991.9, abs=0.1)
    assert spec.sources["peak_tflops.bf16"] == f"measured: {path}"
    assert "bf16 775.2 (datasheet 989.4)" in spec.notes[-1]


def test_peaks_from_another_gpu_are_flagged():
    spec = select_gpu([], override="MI300X", peaks_file=data_path("ceilings", "h100_peaks.json"))
    assert spec.peak_tflops["bf16"] == 775.2
    assert any("measured on 'NVIDIA H100 80GB HBM3', not on this trace's AMD Instinct MI300X" in n
               for n in spec.notes)


def test_peaks_file_alone_names_the_gpu():
    spec = select_gpu([], peaks_file=data_path("ceilings", "h100_peaks.json"))
    assert spec.key == "h100-sxm" and spec.peak_tflops["bf16"] == 775.2


def test_bad_peaks_files_are_user_errors(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(UserError, match="peaks file not found"):
        select_gpu([], peaks_file=missing)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"peak_tflops": {"bf16": 1}}))
    with pytest.raises(UserError) as err:
        select_gpu([], peaks_file=wrong)
    assert str(err.value) == (f"{wrong}: not a peaks JSON: expected \"format\": \"rocanalyze-peaks\" "
                              "(the file 'rocanalyze ceilings' writes)")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "rocanalyze-peaks", "peak_tflops": {"bf17": 3}}))
    with pytest.raises(UserError, match="unknown dtypes or non-positive values: \\['bf17'\\]"):
        select_gpu([], peaks_file=bad)


def test_to_dict_has_the_fields_reports_draw_from():
    d = spec_from_entry(next(e for e in gpu_entries() if e["key"] == "mi355x")).to_dict()
    for key in ("name", "arch", "vendor", "compute_units", "clock_mhz", "peak_tflops", "memory_bw_gbps",
                "lds_kib", "l2_mib", "wave_size", "source", "assumed", "notes"):
        assert key in d
    assert d["lds_kib"] == 160 and d["arch"] == "gfx950" and d["peak_tflops"]["fp8"] == 5033.2
    assert "tf32" not in d["peak_tflops"] and "rocm.docs.amd.com" in d["source"]
    assert isinstance(GpuSpec(name="x").to_dict()["notes"], list)
