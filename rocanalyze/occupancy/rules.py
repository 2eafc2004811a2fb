"""LLVM's AMDGPU occupancy rules, written from the backend's documented behaviour (not copied).

Each function names the LLVM function it follows (llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp
namespace IsaInfo, AMDGPUSubtarget.cpp, GCNSubtarget.cpp). Two models, because LLVM changed:

- `llvm-legacy`: the pre-gfx10 SGPR -> waves table (<=80: 10, <=88: 9, <=100: 8, else 7) and LDS divided
  unrounded. Written by AMD clang up to at least 20 (ROCm 7.0) and Triton up to 3.8.
- `llvm-2026`: SGPR occupancy = SGPR file / (alignTo(SGPRs, 16) + 16 trap-handler SGPRs) (LLVM PR
  #201342, June 2026) and LDS rounded up to the allocation block first (PR #205637). Triton 3.9.
"""

from __future__ import annotations

from rocanalyze.occupancy.arches import ArchSpec

MODEL_2026 = "llvm-2026"
MODEL_LEGACY = "llvm-legacy"
MODELS = (MODEL_2026, MODEL_LEGACY)

# getOccupancyWithNumSGPRs before PR #201342 (VOLCANIC_ISLANDS..GFX9): (max SGPRs, waves per EU)
_LEGACY_SGPR_TABLE = ((80, 10), (88, 9), (100, 8))
_LEGACY_SGPR_FLOOR = 7


def align_up(value: int, granule: int) -> int:
    return -(-value // granule) * granule


def align_down(value: int, granule: int) -> int:
    return value // granule * granule


def total_vgprs(spec: ArchSpec, vgpr: int, agpr: int) -> int:
    """VGPRs per lane that count against the file: arch + AGPRs on gfx90a+, the larger file on gfx908."""
    if spec.unified_vgpr and agpr:
        return align_up(vgpr, 4) + agpr  # AGPRs start at accum_offset = alignTo(arch VGPRs, 4)
    if spec.separate_agpr_file:
        return max(vgpr, agpr)
    return vgpr


def addressable_vgprs(spec: ArchSpec) -> int:
    """getAddressableNumVGPRs: 512 with the unified file, else the 256 arch VGPRs."""
    return 2 * spec.addressable_arch_vgprs if spec.unified_vgpr else spec.addressable_arch_vgprs


def waves_with_vgprs(spec: ArchSpec, wave: int, vgprs: int) -> int:
    """getNumWavesPerEUWithNumVGPRs: waves per SIMD that `vgprs` per lane allow."""
    granule, limit = spec.vgpr_granule[wave], spec.max_waves_per_simd
    if vgprs < granule:
        return limit
    return min(max(spec.vgpr_file[wave] // align_up(vgprs, granule), 1), limit)


def waves_with_sgprs(spec: ArchSpec, sgprs: int, model: str) -> int:
    """getOccupancyWithNumSGPRs: waves per SIMD that `sgprs` (incl. VCC/XNACK/flat-scratch) allow."""
    limit = spec.max_waves_per_simd
    if spec.sgpr_file is None or spec.sgpr_granule is None or sgprs <= 0:
        return limit  # gfx10+: every wave gets a fixed SGPR block
    if model == MODEL_LEGACY:
        waves = next((w for top, w in _LEGACY_SGPR_TABLE if sgprs <= top), _LEGACY_SGPR_FLOOR)
        return min(waves, limit)
    budget = align_up(sgprs, spec.sgpr_granule) + spec.trap_reserved_sgprs
    return max(min(spec.sgpr_file // budget, limit), 1)


def max_sgprs_for_waves(spec: ArchSpec, waves: int, model: str) -> int:
    """getMaxNumSGPRs (without the addressable cap): most SGPRs that still allow `waves` per SIMD."""
    if spec.sgpr_file is None or spec.sgpr_granule is None:
        return 0
    if model == MODEL_LEGACY:
        if waves <= _LEGACY_SGPR_FLOOR:
            return spec.sgpr_file
        return max(top for top, w in _LEGACY_SGPR_TABLE if w >= waves)
    return align_down(spec.sgpr_file // waves, spec.sgpr_granule) - spec.trap_reserved_sgprs


def min_vgprs_for_waves(spec: ArchSpec, wave: int, waves: int) -> int:
    """getMinNumVGPRs: VGPRs LLVM pads a kernel to when amdgpu-waves-per-eu caps it at `waves`."""
    limit, total, granule = spec.max_waves_per_simd, spec.vgpr_file[wave], spec.vgpr_granule[wave]
    if waves >= limit:
        return 0
    most = align_down(total // waves, granule)
    if most == align_down(total // limit, granule):
        return 0
    floor_waves = waves_with_vgprs(spec, wave, addressable_vgprs(spec))
    if waves < floor_waves:  # fewer waves than even the largest kernel gets: pad to that level
        return min_vgprs_for_waves(spec, wave, floor_waves)
    following = align_down(total // (waves + 1), granule)
    return min(1 + min(most - granule, following), addressable_vgprs(spec))


def min_sgprs_for_waves(spec: ArchSpec, waves: int, model: str) -> int:
    """getMinNumSGPRs: SGPRs LLVM pads a kernel to when amdgpu-waves-per-eu caps it at `waves`."""
    if spec.sgpr_file is None or spec.addressable_sgprs is None or waves >= spec.max_waves_per_simd:
        return 0
    if model == MODEL_LEGACY:
        assert spec.sgpr_granule is not None
        least = align_down(spec.sgpr_file // (waves + 1), spec.sgpr_granule) + 1
    else:
        least = max_sgprs_for_waves(spec, waves + 1, model) + 1
    return min(least, spec.addressable_sgprs)


def max_workgroups_per_cu(spec: ArchSpec, wave: int, workgroup_size: int) -> tuple[int, str]:
    """getMaxWorkGroupsPerCU: workgroups of this size a CU/WGP can hold, and what caps it."""
    slots = spec.max_waves_per_simd * spec.simds
    waves = -(-workgroup_size // wave)
    if waves == 1:
        return slots, "wave_slots"  # single-wave workgroups use no barrier
    if slots // waves <= spec.max_barriers:
        return slots // waves, "wave_slots"
    return spec.max_barriers, "barriers"


def llvm_workgroup_waves(spec: ArchSpec, wave: int, lds_bytes: int, flat_min: int, flat_max: int,
                         model: str) -> int:
    """getOccupancyWithWorkGroupSizes (.second): most waves per SIMD LLVM allows for static LDS and
    the flat workgroup size range [flat_min, flat_max]."""
    if model == MODEL_2026 and lds_bytes:
        lds_bytes = align_up(lds_bytes, spec.llvm_lds_granule)
    wgs_lds = spec.llvm_lds_bytes // max(lds_bytes, 1)
    if wgs_lds == 0:
        return 1

    def props(size: int) -> tuple[int, int, int]:
        per_wg = -(-size // wave)
        wgs = min(max_workgroups_per_cu(spec, wave, size)[0], wgs_lds)
        return per_wg, wgs, per_wg * wgs

    min_per_wg, max_wgs, max_waves = props(flat_min)
    max_per_wg, _, min_waves = props(flat_max)
    if min_waves >= max_waves:
        max_waves = min_waves
    else:  # a larger group than the minimum may fill the wave slots the minimum leaves free
        spare = (spec.max_waves_per_simd * spec.simds - max_wgs * min_per_wg) // max_wgs
        max_waves += max_wgs * min(spare, max_per_wg - min_per_wg)
    return min(-(-max_waves // spec.simds), spec.max_waves_per_simd)
