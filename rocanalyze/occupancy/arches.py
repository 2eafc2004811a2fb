"""The AMDGPU arch table (rocanalyze/data/amdgpu_arches.toml) as typed records."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rocanalyze.errors import UserError
from rocanalyze.paths import load_data_toml


@dataclass(frozen=True)
class ArchSpec:
    """Occupancy facts of one gfx target; see the TOML for the source of each figure."""

    name: str
    family: str
    wave_sizes: tuple[int, ...]
    simds: int
    max_waves_per_simd: int
    vgpr_file: dict[int, int]      # wave size -> VGPRs per lane in one SIMD's file
    vgpr_granule: dict[int, int]   # wave size -> allocation granule (VGPRs)
    addressable_arch_vgprs: int
    unified_vgpr: bool
    separate_agpr_file: bool
    architected_flat_scratch: bool
    sgpr_file: int | None          # None: SGPRs never limit occupancy (gfx10+)
    sgpr_granule: int | None
    addressable_sgprs: int | None
    trap_reserved_sgprs: int
    lds_bytes: int
    llvm_lds_bytes: int
    lds_granule: int
    llvm_lds_granule: int
    max_barriers: int
    max_workgroup_size: int

    @property
    def default_wave_size(self) -> int:
        """Wave size a compiler picks when nothing says otherwise (32 on RDNA, 64 on CDNA)."""
        return min(self.wave_sizes)

    @property
    def sgpr_limited(self) -> bool:
        return self.sgpr_file is not None


def _spec(name: str, raw: dict, defaults: dict) -> ArchSpec:
    row = {**defaults, **raw}
    waves = tuple(row["wave_sizes"])
    return ArchSpec(
        name=name, family=row["family"], wave_sizes=waves, simds=row["simds"],
        max_waves_per_simd=row["max_waves_per_simd"],
        vgpr_file={w: row[f"vgpr_file_w{w}"] for w in waves},
        vgpr_granule={w: row[f"vgpr_granule_w{w}"] for w in waves},
        addressable_arch_vgprs=row["addressable_arch_vgprs"], unified_vgpr=row["unified_vgpr"],
        separate_agpr_file=row["separate_agpr_file"],
        architected_flat_scratch=row["architected_flat_scratch"],
        sgpr_file=row.get("sgpr_file"), sgpr_granule=row.get("sgpr_granule"),
        addressable_sgprs=row.get("addressable_sgprs"), trap_reserved_sgprs=row["trap_reserved_sgprs"],
        lds_bytes=row["lds_bytes"], llvm_lds_bytes=row["llvm_lds_bytes"], lds_granule=row["lds_granule"],
        llvm_lds_granule=row["llvm_lds_granule"], max_barriers=row["max_barriers"],
        max_workgroup_size=row["max_workgroup_size"],
    )


@lru_cache(maxsize=1)
def load_arches() -> dict[str, ArchSpec]:
    """Every gfx target of the table, by name."""
    table = load_data_toml("amdgpu_arches.toml")
    defaults = table.pop("defaults")
    return {name: _spec(name, raw, defaults) for name, raw in table.items()}


_GFX = re.compile(r"gfx[0-9a-f]{3,4}")


def normalize_arch(text: str) -> str:
    """'amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-' or 'gfx942:xnack-' -> 'gfx942'; unchanged if no gfx."""
    found = _GFX.findall(text.lower())
    return found[-1] if found else text.strip().lower()


def get_arch(text: str) -> ArchSpec:
    """The ArchSpec for a gfx name or target triple; UserError naming the known ones if absent."""
    arches = load_arches()
    name = normalize_arch(text)
    if name not in arches:
        raise UserError(f"unknown AMD GPU arch '{text}' (known: {', '.join(sorted(arches))}); "
                        "pass --arch with one of them")
    return arches[name]
