"""LLVM's occupancy rules and compute_occupancy, against values LLVM itself states."""

from __future__ import annotations

import pytest

from rocanalyze.errors import UserError
from rocanalyze.occupancy import compute_occupancy, get_arch, load_arches, rules


def test_arch_table_covers_the_issue_targets():
    arches = load_arches()
    for name in ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1151",
                 "gfx1200", "gfx1201"):
        assert name in arches
    assert arches["gfx950"].lds_bytes == 160 * 1024
    assert arches["gfx1100"].vgpr_file[32] == 1536 and arches["gfx1102"].vgpr_file[32] == 1024
    assert arches["gfx942"].vgpr_granule[64] == 8  # LLVM, not seed 001's 16
    assert arches["gfx908"].separate_agpr_file and arches["gfx90a"].unified_vgpr


def test_seed_001_worked_example_170_vgprs_is_2_waves_on_mi300x():
    occ = compute_occupancy("gfx942", vgpr=170, sgpr=32, workgroup_size=256)
    assert occ.vgpr_allocated == 176
    assert occ.compiler_waves_per_simd == 2 and occ.waves_per_simd == 2.0
    assert occ.limiter == "vgpr" and occ.occupancy_pct == 25.0
    # what-if: 168 VGPRs give 3 waves per SIMD, which waves_per_eu=3 asks the compiler for
    assert occ.what_if["most"] == 168 and occ.what_if["fewer"] == 2
    assert occ.what_if["waves_per_eu_hint"] == 3 and occ.what_if["next_workgroups_per_cu"] == 3


@pytest.mark.parametrize("arch,vgpr,agpr,waves", [
    # llvm/test/CodeGen/AMDGPU/agpr-register-count.ll: kernel_40_vgprs (40 VGPRs, 16 AGPRs)
    ("gfx908", 40, 16, 6), ("gfx90a", 40, 16, 8),
    # kernel_32_agprs: 9 VGPRs, 32 AGPRs -> gfx90a total alignTo(9,4)+32 = 44
    ("gfx908", 9, 32, 8), ("gfx90a", 9, 32, 8),
    ("gfx90a", 128, 128, 2), ("gfx90a", 256, 256, 1),
])
def test_vgpr_agpr_files(arch, vgpr, agpr, waves):
    assert compute_occupancy(arch, vgpr=vgpr, agpr=agpr, workgroup_size=64).compiler_waves_per_simd == waves


def test_gfx908_agpr_file_binds_as_agpr():
    occ = compute_occupancy("gfx908", vgpr=40, agpr=130, workgroup_size=256)
    assert occ.limiter == "agpr" and occ.compiler_waves_per_simd == 1


@pytest.mark.parametrize("arch,vgpr,waves", [
    ("gfx1100", 256, 5), ("gfx1100", 96, 16), ("gfx1100", 97, 12),   # 1536 / alignTo(v, 24)
    ("gfx1102", 256, 4), ("gfx1030", 128, 8), ("gfx1201", 184, 8),  # 1024 / alignTo(v, 16)
])
def test_rdna_wave32_files(arch, vgpr, waves):
    assert compute_occupancy(arch, vgpr=vgpr, sgpr=106, workgroup_size=128).compiler_waves_per_simd == waves


@pytest.mark.parametrize("sgpr,legacy,new", [(64, 10, 10), (72, 10, 8), (88, 9, 7), (100, 8, 6), (102, 7, 6)])
def test_sgpr_models_differ_as_llvm_pr_201342_says(sgpr, legacy, new):
    spec = get_arch("gfx908")
    assert rules.waves_with_sgprs(spec, sgpr, rules.MODEL_LEGACY) == legacy
    assert rules.waves_with_sgprs(spec, sgpr, rules.MODEL_2026) == new
    assert rules.waves_with_sgprs(get_arch("gfx1100"), sgpr, rules.MODEL_2026) == 16  # RDNA: never


@pytest.mark.parametrize("arch,wave,wpe,padded", [
    ("gfx90a", 64, 2, 169), ("gfx942", 64, 3, 129), ("gfx908", 64, 3, 65),
    ("gfx1100", 32, 2, 241),  # below the 5 waves 256 VGPRs allow: padded to the 5-wave level
])
def test_waves_per_eu_padding_matches_llvm_listings(arch, wave, wpe, padded):
    # NumVGPRsForWavesPerEU printed by LLVM in tests/data/occupancy/triton39 (gfx90a/gfx1100 attn wpe2)
    assert rules.min_vgprs_for_waves(get_arch(arch), wave, wpe) == padded


def test_lds_limits_whole_workgroups():
    occ = compute_occupancy("gfx942", vgpr=32, sgpr=32, lds_bytes=40000, workgroup_size=256,
                            static_lds_bytes=0)
    assert occ.compiler_waves_per_simd == 8  # LLVM does not see Triton's dynamic LDS
    assert occ.workgroups_per_cu == 1 and occ.waves_per_simd == 1.0 and occ.limiter == "lds"
    assert occ.what_if["most"] == 32768 and occ.what_if["fewer"] == 40000 - 32768
    big = compute_occupancy("gfx950", vgpr=32, lds_bytes=147456, workgroup_size=512)
    assert big.workgroups_per_cu == 1  # fits in gfx950's 160 KiB, not in 64 KiB
    assert compute_occupancy("gfx942", vgpr=32, lds_bytes=147456, workgroup_size=512).workgroups_per_cu == 0


def test_static_lds_counts_for_llvm_like_hipcc_listing():
    # realdata stencils (gfx90a, clang 17): 12288 B static LDS, max flat 256 -> "; Occupancy: 5"
    occ = compute_occupancy("gfx90a", vgpr=38, sgpr=28, lds_bytes=12288, workgroup_size=256,
                            model=rules.MODEL_LEGACY)
    assert occ.compiler_waves_per_simd == 5 and occ.workgroups_per_cu == 5


def test_workgroup_packing_and_barriers():
    occ = compute_occupancy("gfx942", vgpr=160, workgroup_size=512)  # 3 waves/SIMD x 4 / 8 waves
    assert occ.compiler_waves_per_simd == 3 and occ.workgroups_per_cu == 1 and occ.waves_per_simd == 2.0
    small = compute_occupancy("gfx908", vgpr=8, workgroup_size=128)  # 40 wave slots / 2 -> 20 > 16 barriers
    assert small.workgroups_per_cu == 16 and small.limiter == "barriers"


def test_bad_input_is_a_user_error():
    with pytest.raises(UserError, match="unknown AMD GPU arch 'gfx9999'"):
        compute_occupancy("gfx9999", vgpr=10, workgroup_size=64)
    with pytest.raises(UserError, match="not wave32"):
        compute_occupancy("gfx942", vgpr=10, workgroup_size=64, wave_size=32)
