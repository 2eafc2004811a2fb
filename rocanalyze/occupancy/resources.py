"""What a reader learns about one kernel: registers, LDS, workgroup, and where it came from."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rocanalyze.occupancy import rules


@dataclass(frozen=True)
class KernelResources:
    """Resources of one compiled kernel, as its files state them (counts per lane / per wave, bytes)."""

    name: str
    source: str
    arch: str
    wave_size: int
    vgpr: int                         # arch VGPRs (gfx90a+: up to accum_offset)
    agpr: int = 0
    sgpr: int | None = None           # incl. VCC / XNACK / flat scratch (LLVM's TotalNumSgprs)
    vgpr_alloc: int | None = None     # what the code object allocates (includes waves_per_eu padding)
    sgpr_alloc: int | None = None
    static_lds_bytes: int = 0         # group_segment_fixed_size
    dynamic_lds_bytes: int = 0        # Triton's `shared` (the code object says 0 for it)
    workgroup_size: int | None = None  # real size when known (Triton: num_warps x warp size)
    max_flat_workgroup_size: int | None = None
    waves_per_eu: int | None = None
    scratch_bytes: int = 0
    vgpr_spill: int = 0
    sgpr_spill: int = 0
    model: str = rules.MODEL_2026
    compiler: str = ""
    isa_text: str = field(default="", repr=False)    # the kernel's instructions, for the ISA lint
    ttgir_text: str = field(default="", repr=False)  # its TTGIR, for the TTGIR lint
    notes: tuple[str, ...] = ()

    @property
    def lds_bytes(self) -> int:
        return self.static_lds_bytes + self.dynamic_lds_bytes

    def summary(self) -> dict[str, Any]:
        """The counts, without the texts (for debugging and tests)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("isa_text", "ttgir_text")}


_CLANG = re.compile(r"(?:clang version|LLD) (\d+)")
_TRITON = re.compile(r"^(\d+)\.(\d+)")


def model_for(*, ident: str = "", target: str = "", triton_version: str = "") -> str:
    """Which LLVM occupancy model the compiler that wrote the file applied.

    Evidence in order: Triton's version (3.9+ bundles a 2026 LLVM), clang's major version in
    `.ident` (23+ has PR #201342), the target triple spelling (the `amdgpu9.42-...` form came with
    2026 LLVM; `amdgcn-amd-amdhsa--gfx942` is older). No evidence: the current model.
    """
    if triton_version and (m := _TRITON.match(triton_version)):
        return rules.MODEL_2026 if (int(m[1]), int(m[2])) >= (3, 9) else rules.MODEL_LEGACY
    if m := _CLANG.search(ident):
        return rules.MODEL_2026 if int(m[1]) >= 23 else rules.MODEL_LEGACY
    if target.startswith("amdgcn-"):
        return rules.MODEL_LEGACY
    return rules.MODEL_2026
