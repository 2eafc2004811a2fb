"""One kernel's resources -> its Occupancy (with lint): the function the command and reports call."""

from __future__ import annotations

import dataclasses
from typing import Any

from rocanalyze.errors import UserError
from rocanalyze.occupancy.arches import get_arch
from rocanalyze.occupancy.compute import Occupancy, check_what_if, compute_occupancy
from rocanalyze.occupancy.lint import lint_isa, lint_ttgir
from rocanalyze.occupancy.resources import KernelResources

# What-if overrides the command accepts on top of a file's values (None: keep the file's).
OVERRIDES = ("arch", "vgpr", "agpr", "sgpr", "lds_bytes", "workgroup_size", "num_warps", "wave_size",
             "waves_per_eu")


def analyze_kernel(kernel: KernelResources, **overrides: Any) -> Occupancy:
    """Occupancy and lint findings of one kernel; `overrides` replace file values (what-if)."""
    changes = {k: v for k, v in overrides.items() if v is not None}
    notes = list(kernel.notes)
    if "num_warps" in changes:  # waves of the kernel's (or the overriding) wave size
        changes["workgroup_size"] = changes.pop("num_warps") * changes.get("wave_size", kernel.wave_size)
    if "lds_bytes" in changes:
        changes["dynamic_lds_bytes"] = max(changes.pop("lds_bytes") - kernel.static_lds_bytes, 0)
    if changes:
        kernel = dataclasses.replace(kernel, **changes)
        notes.append("what-if: " + ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()) if v is not None))
    if not kernel.arch:
        raise UserError(f"kernel {kernel.name}: the file names no target arch (gfx...); pass --arch",
                        kernel.source)
    try:
        return _analyze(kernel, notes, changes)
    except UserError as err:
        if err.path:
            raise
        raise UserError(f"kernel {kernel.name}: {err}", kernel.source) from err


def _analyze(kernel: KernelResources, notes: list[str], changes: dict[str, Any]) -> Occupancy:
    spec = get_arch(kernel.arch)
    check_what_if(spec.name, vgpr=changes.get("vgpr"), agpr=changes.get("agpr"),
                  workgroup_size=changes.get("workgroup_size"))
    size = kernel.workgroup_size
    if size is None:
        size = kernel.max_flat_workgroup_size or 1024
        notes.append(f"real workgroup size unknown: assumed the {size} the code object allows; "
                     "pass --block-size for the launch's")
    registers_known = kernel.vgpr > 0 or kernel.vgpr_alloc is not None
    occ = compute_occupancy(
        spec.name, vgpr=kernel.vgpr, agpr=kernel.agpr, sgpr=kernel.sgpr, lds_bytes=kernel.lds_bytes,
        workgroup_size=size, wave_size=kernel.wave_size, waves_per_eu=kernel.waves_per_eu,
        static_lds_bytes=kernel.static_lds_bytes, max_flat_workgroup_size=kernel.max_flat_workgroup_size,
        vgpr_alloc=kernel.vgpr_alloc if "vgpr" not in changes else None,
        sgpr_alloc=kernel.sgpr_alloc if "sgpr" not in changes else None,
        scratch_bytes=kernel.scratch_bytes, model=kernel.model, kernel=kernel.name, source=kernel.source)
    lint = lint_isa(kernel.isa_text, kernel.scratch_bytes, kernel.vgpr_spill, kernel.sgpr_spill)
    if kernel.ttgir_text:
        lint += lint_ttgir(kernel.ttgir_text)
    return dataclasses.replace(
        occ, lint=lint, vgpr_spill=kernel.vgpr_spill, sgpr_spill=kernel.sgpr_spill,
        notes=notes + occ.notes,
        compiler_waves_per_simd=occ.compiler_waves_per_simd if registers_known else None)
