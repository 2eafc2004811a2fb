"""Occupancy of one kernel: what LLVM states, what really fits on a CU/WGP, what limits it, what-if."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from rocanalyze.errors import UserError
from rocanalyze.occupancy import rules
from rocanalyze.occupancy.arches import ArchSpec, get_arch

# Tie-break order when several resources allow the same number of workgroups.
_LIMITER_ORDER = ("waves_per_eu", "vgpr", "agpr", "sgpr", "lds", "barriers", "wave_slots")


@dataclass(frozen=True)
class Occupancy:
    """Occupancy of one kernel; the JSON fields of `rocanalyze occupancy --json`.

    compiler_waves_per_simd: LLVM's "; Occupancy:" (registers, SGPRs, waves_per_eu, static LDS and
    the flat workgroup size range the code object declares). workgroups_per_cu: whole workgroups of
    the real size that fit on a CU (WGP on RDNA) under every limit. waves_per_simd: the resulting
    average (workgroups x waves per workgroup / SIMDs); occupancy_pct: its share of the arch maximum.
    """

    kernel: str
    source: str
    arch: str
    compiler_waves_per_simd: int | None
    waves_per_simd: float
    workgroups_per_cu: int
    occupancy_pct: float
    limiter: str
    vgpr: int
    agpr: int
    sgpr: int | None
    lds_bytes: int
    scratch_bytes: int
    lint: list[dict[str, Any]] = field(default_factory=list)
    wave_size: int = 64
    workgroup_size: int = 0
    waves_per_workgroup: int = 0
    max_waves_per_simd: int = 0
    vgpr_allocated: int = 0          # per lane, after padding and the allocation granule
    waves_per_eu: int | None = None
    vgpr_spill: int = 0
    sgpr_spill: int = 0
    model: str = rules.MODEL_2026
    limits: dict[str, int] = field(default_factory=dict)   # resource -> workgroups per CU it allows
    what_if: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Alloc:
    vgpr_used: int        # per lane, as the kernel uses them (arch + AGPRs per the file layout)
    vgpr_alloc: int       # what occupancy sees: padded for waves_per_eu, rounded to the granule
    vgpr_waves: int
    vgpr_waves_unpadded: int
    sgpr_for_waves: int
    sgpr_waves: int
    sgpr_waves_unpadded: int


def _registers(spec: ArchSpec, wave: int, vgpr: int, agpr: int, sgpr: int, waves_per_eu: int | None,
               vgpr_alloc: int | None, sgpr_alloc: int | None, model: str) -> _Alloc:
    used = rules.total_vgprs(spec, vgpr, agpr)
    padded = max(used, vgpr_alloc or 0)
    sgpr_padded = max(sgpr, sgpr_alloc or 0)
    if waves_per_eu:
        padded = max(padded, rules.min_vgprs_for_waves(spec, wave, waves_per_eu))
        sgpr_padded = max(sgpr_padded, rules.min_sgprs_for_waves(spec, waves_per_eu, model))
    granule = spec.vgpr_granule[wave]
    return _Alloc(
        vgpr_used=used, vgpr_alloc=rules.align_up(max(padded, 1), granule),
        vgpr_waves=rules.waves_with_vgprs(spec, wave, padded),
        vgpr_waves_unpadded=rules.waves_with_vgprs(spec, wave, used),
        sgpr_for_waves=sgpr_padded,
        sgpr_waves=rules.waves_with_sgprs(spec, sgpr_padded, model),
        sgpr_waves_unpadded=rules.waves_with_sgprs(spec, sgpr, model),
    )


def _limits(spec: ArchSpec, regs: _Alloc, per_wg: int, lds_bytes: int, vgpr: int, agpr: int,
            wave: int) -> dict[str, int]:
    """Workgroups per CU/WGP each resource allows (only the resources that can bind)."""
    simds = spec.simds
    vgpr_name = "agpr" if spec.separate_agpr_file and agpr > vgpr else "vgpr"
    out = {"wave_slots": spec.max_waves_per_simd * simds // per_wg}
    if per_wg > 1:
        out["barriers"] = spec.max_barriers
    reg_waves = {vgpr_name: regs.vgpr_waves_unpadded, "sgpr": regs.sgpr_waves_unpadded}
    for name, waves in reg_waves.items():
        out[name] = waves * simds // per_wg
    padded = min(regs.vgpr_waves, regs.sgpr_waves)
    if padded < min(reg_waves.values()):
        out["waves_per_eu"] = padded * simds // per_wg
    if lds_bytes:
        out["lds"] = spec.lds_bytes // rules.align_up(lds_bytes, spec.lds_granule)
    return out


def check_what_if(arch: str, *, vgpr: int | None = None, agpr: int | None = None,
                  workgroup_size: int | None = None) -> None:
    """UserError for what-if values no kernel on `arch` can have (a compiled kernel never does: this
    checks numbers a person typed, so an impossible one is not turned into an occupancy)."""
    spec = get_arch(arch)
    if vgpr is not None and vgpr > spec.addressable_arch_vgprs:
        raise UserError(f"{spec.name} addresses at most {spec.addressable_arch_vgprs} arch VGPRs per lane, "
                        f"not {vgpr}")
    if agpr:
        if not (spec.unified_vgpr or spec.separate_agpr_file):
            raise UserError(f"{spec.name} has no AGPRs (accumulation registers are CDNA's); --agpr {agpr}")
        if agpr > spec.addressable_arch_vgprs:
            raise UserError(f"{spec.name} addresses at most {spec.addressable_arch_vgprs} AGPRs per lane, "
                            f"not {agpr}")
    if workgroup_size is not None and workgroup_size > spec.max_workgroup_size:
        raise UserError(f"a workgroup holds at most {spec.max_workgroup_size} work-items on {spec.name}, "
                        f"not {workgroup_size}")


def compute_occupancy(arch: str, *, vgpr: int, agpr: int = 0, sgpr: int | None = None,
                      lds_bytes: int = 0, workgroup_size: int, wave_size: int | None = None,
                      waves_per_eu: int | None = None, static_lds_bytes: int | None = None,
                      max_flat_workgroup_size: int | None = None, vgpr_alloc: int | None = None,
                      sgpr_alloc: int | None = None, scratch_bytes: int = 0,
                      model: str = rules.MODEL_2026, kernel: str = "", source: str = "") -> Occupancy:
    """Occupancy of a kernel on `arch` (waves per SIMD, workgroups per CU, % of the arch maximum).

    vgpr/agpr/sgpr are per-lane / per-wave counts (rocprof's rounded counts work as they are);
    lds_bytes is the workgroup's whole LDS (static + dynamic); static_lds_bytes (default lds_bytes)
    and max_flat_workgroup_size (default workgroup_size) are what LLVM saw; vgpr_alloc/sgpr_alloc
    are the counts the code object allocates when known (they include waves_per_eu padding).
    """
    spec = get_arch(arch)
    wave = wave_size or spec.default_wave_size
    if wave not in spec.wave_sizes:
        raise UserError(f"{spec.name} runs wave{'/wave'.join(map(str, spec.wave_sizes))}, not wave{wave}")
    if workgroup_size <= 0 or vgpr < 0 or agpr < 0 or lds_bytes < 0:
        raise UserError(f"workgroup size must be positive and counts non-negative (kernel '{kernel}')")
    if model not in rules.MODELS:
        raise UserError(f"unknown occupancy model '{model}' (known: {', '.join(rules.MODELS)})")
    regs = _registers(spec, wave, vgpr, agpr, sgpr or 0, waves_per_eu or None, vgpr_alloc, sgpr_alloc,
                      model)
    flat_max = max_flat_workgroup_size or workgroup_size
    static_lds = lds_bytes if static_lds_bytes is None else static_lds_bytes
    compiler = min(regs.vgpr_waves, regs.sgpr_waves,
                   rules.llvm_workgroup_waves(spec, wave, static_lds, 1, flat_max, model))
    per_wg = -(-workgroup_size // wave)
    limits = _limits(spec, regs, per_wg, lds_bytes, vgpr, agpr, wave)
    wgs = max(min(limits.values()), 0)
    waves = wgs * per_wg / spec.simds
    pct = 100.0 * waves / spec.max_waves_per_simd
    limiter = "none" if waves >= spec.max_waves_per_simd else next(
        name for name in _LIMITER_ORDER if limits.get(name) == wgs)
    notes = []
    if wgs == 0:
        notes.append(f"a workgroup does not fit on one {'WGP' if spec.simds == 4 and wave == 32 else 'CU'}"
                     f" ({limiter}): the launch fails")
    occ = Occupancy(
        kernel=kernel, source=source, arch=spec.name, compiler_waves_per_simd=compiler,
        waves_per_simd=round(waves, 2), workgroups_per_cu=wgs, occupancy_pct=round(pct, 1),
        limiter=limiter, vgpr=vgpr, agpr=agpr, sgpr=sgpr, lds_bytes=lds_bytes, scratch_bytes=scratch_bytes,
        wave_size=wave, workgroup_size=workgroup_size, waves_per_workgroup=per_wg,
        max_waves_per_simd=spec.max_waves_per_simd, vgpr_allocated=regs.vgpr_alloc,
        waves_per_eu=waves_per_eu or None, model=model, limits=limits, notes=notes)
    return _with_what_if(occ, spec, regs, model)


def _with_what_if(occ: Occupancy, spec: ArchSpec, regs: _Alloc, model: str) -> Occupancy:
    """Fill `what_if`: how much of the limiting resource to give up for one more workgroup per CU."""
    if occ.limiter in ("none", "barriers", "wave_slots") or occ.workgroups_per_cu == 0:
        return occ
    target = occ.workgroups_per_cu + 1
    need = math.ceil(target * occ.waves_per_workgroup / spec.simds)  # waves per SIMD that requires
    if need > spec.max_waves_per_simd:
        return occ
    wave = occ.wave_size
    out: dict[str, Any] = {"resource": occ.limiter, "next_workgroups_per_cu": target,
                           "next_waves_per_simd": round(target * occ.waves_per_workgroup / spec.simds, 2),
                           "waves_per_eu_hint": need}
    if occ.limiter in ("vgpr", "agpr"):
        most = rules.align_down(spec.vgpr_file[wave] // need, spec.vgpr_granule[wave])
        out.update(now=regs.vgpr_used, most=most, fewer=regs.vgpr_used - most)
    elif occ.limiter == "sgpr":
        most = rules.max_sgprs_for_waves(spec, need, model)
        out.update(now=occ.sgpr, most=most, fewer=(occ.sgpr or 0) - most)
    elif occ.limiter == "lds":
        most = rules.align_down(spec.lds_bytes // target, spec.lds_granule)
        out.update(now=occ.lds_bytes, most=most, fewer=occ.lds_bytes - most)
    elif occ.limiter == "waves_per_eu":
        out.update(now=occ.waves_per_eu, most=None, fewer=None)
    return Occupancy(**{**occ.__dict__, "what_if": out})
