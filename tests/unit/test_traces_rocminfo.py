"""GPU agents from rocprof's rocminfo dump (results.sysinfo.txt), ANSI colours and all."""

from __future__ import annotations

import pytest

from rocanalyze import analyze
from rocanalyze.traces.rocminfo import devices_from_folder
from tests.conftest import realdata_path


@pytest.mark.parametrize("folder, name, arch, cus, wave", [
    ("llamacpp_rdna_wave32", "AMD Radeon AI PRO R9700", "gfx1201", 64, 32),
    ("batched_gemm_mi300x", "AMD Instinct MI300X", "gfx942", 304, 64),
    ("hip_programming_mi300a", "AMD Instinct MI300A", "gfx942", 228, 64),
    ("aiter_gemm_tuning_gfx950", "AMD Radeon Graphics", "gfx950", 256, 64),  # ANSI-coloured rocminfo
])
def test_gpu_agents_from_sysinfo(folder, name, arch, cus, wave):
    dev = devices_from_folder(realdata_path("rocprof_v1", folder))[0]
    assert (dev.name, dev.arch, dev.compute_units, dev.wave_size, dev.vendor) == (name, arch, cus, wave, "amd")


def test_rocprof_folder_gets_its_arch_and_occupancy():
    a = analyze(realdata_path("rocprof_v1", "llamacpp_rdna_wave32"))
    assert a.device["arch"] == "gfx1201"
    mmq = next(o for o in a.occupancy if o["kernel"].startswith("void mul_mat_q<"))
    assert mmq["arch"] == "gfx1201" and mmq["vgpr"] == 256 and mmq["waves_per_simd"] > 0


def test_barrier_packets_are_not_kernels():
    a = analyze(realdata_path("rocprof_v1", "saltfish_pytorch_mi300x", "results.stats.csv"))
    assert all(k["name"] != "<barrier packet>" for k in a.kernels)
    assert any("barrier packet" in n for n in a.notes)
