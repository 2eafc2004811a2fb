"""Reader for AMDGCN assembly (.s/.amdgcn/.isa, AMDGCN_ENABLE_DUMP output): one or many kernels.

Counts come from the `.amdgpu_metadata` block (.vgpr_count, .agpr_count, .sgpr_count, LDS, scratch,
wave size, max flat workgroup size, spills) and the `.amdhsa_*` directives of each kernel descriptor
(next_free_vgpr/sgpr: what the code object allocates, waves_per_eu padding included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rocanalyze.errors import UserError
from rocanalyze.occupancy.arches import get_arch, normalize_arch
from rocanalyze.occupancy.resources import KernelResources, model_for

_META_BLOCK = re.compile(r"^\s*\.amdgpu_metadata\s*$(.*?)^\s*\.end_amdgpu_metadata", re.M | re.S)
_KERNEL_START = re.compile(r"^  - \.([\w.]+):\s*(.*)$")
_KERNEL_KEY = re.compile(r"^    \.([\w.]+):\s*(.*)$")
_TOP_TARGET = re.compile(r"^amdhsa\.target:\s*(\S+)", re.M)
_ASM_TARGET = re.compile(r'^\s*\.amdgcn_target\s+"([^"]+)"', re.M)
_IDENT = re.compile(r'^\s*\.ident\s+"([^"]*)"', re.M)
_DESCRIPTOR = re.compile(r"^\s*\.amdhsa_kernel\s+(\S+)\s*$(.*?)^\s*\.end_amdhsa_kernel", re.M | re.S)
_DIRECTIVE = re.compile(r"^\s*\.amdhsa_(\w+)\s+(-?\d+)", re.M)


def sniff(text: str) -> bool:
    """True for AMDGCN assembly (with or without its metadata block)."""
    return any(tag in text for tag in (".amdgpu_metadata", ".amdhsa_kernel", ".amdgcn_target"))


def _value(raw: str) -> int | str | bool:
    raw = raw.strip().strip("'\"")
    if raw in ("true", "false"):
        return raw == "true"
    try:
        return int(raw)
    except ValueError:
        return raw


def parse_metadata(block: str) -> tuple[str, list[dict[str, int | str | bool]]]:
    """Kernel-level scalar keys of one `amdhsa.kernels` YAML block, and its amdhsa.target."""
    kernels: list[dict[str, int | str | bool]] = []
    for line in block.splitlines():
        if m := _KERNEL_START.match(line):
            kernels.append({})
        elif not (m := _KERNEL_KEY.match(line)) or not kernels:
            continue
        if m[2].strip():  # nested lists/maps (.args) have no scalar value on the key line
            kernels[-1][m[1]] = _value(m[2])
    target = _TOP_TARGET.search(block)
    return (target[1] if target else ""), kernels


@dataclass
class _Descriptor:
    values: dict[str, int] = field(default_factory=dict)

    def get(self, key: str, default: int = 0) -> int:
        return self.values.get(key, default)


def _descriptors(text: str) -> dict[str, _Descriptor]:
    return {m[1]: _Descriptor({k: int(v) for k, v in _DIRECTIVE.findall(m[2])}) for m in _DESCRIPTOR.finditer(text)}


def extra_sgprs(arch: str, vcc: bool, xnack: bool, flat_scratch: bool) -> int:
    """getNumExtraSGPRs: SGPRs a wave holds beyond next_free_sgpr (VCC, XNACK mask, flat scratch)."""
    spec = get_arch(arch)
    extra = 2 if vcc else 0
    if not spec.sgpr_limited:  # gfx10+: only VCC
        return extra
    if xnack:
        extra = 4
    if flat_scratch or spec.architected_flat_scratch:
        extra = 6
    return extra


def _kernel_text(text: str, name: str) -> str:
    """The instructions of one kernel: from its label to its .Lfunc_end marker (or the next label)."""
    start = re.search(rf"^{re.escape(name)}:", text, re.M)
    if not start:
        return ""
    end = re.compile(r"^\.Lfunc_end\d+:", re.M).search(text, start.end())
    return text[start.end(): end.start() if end else len(text)]


def _resources(meta: dict, desc: _Descriptor | None, arch: str, source: str, text: str,
               model: str, compiler: str) -> KernelResources:
    name = str(meta.get("name", "?"))
    spec = get_arch(arch)
    total = int(meta.get("vgpr_count", 0))
    agpr = int(meta.get("agpr_count", 0))
    vgpr = total - agpr if spec.unified_vgpr and agpr else total
    vgpr_alloc = sgpr_alloc = None
    if desc is not None:
        vgpr_alloc = desc.get("next_free_vgpr") or None
        sgpr_alloc = desc.get("next_free_sgpr") + extra_sgprs(
            arch, bool(desc.get("reserve_vcc", 1)), bool(desc.get("reserve_xnack_mask", 0)),
            bool(desc.get("reserve_flat_scratch", 0)))
    return KernelResources(
        name=name, source=source, arch=spec.name, wave_size=int(meta.get("wavefront_size", 64)),
        vgpr=vgpr, agpr=agpr, sgpr=int(meta["sgpr_count"]) if "sgpr_count" in meta else None,
        vgpr_alloc=vgpr_alloc, sgpr_alloc=sgpr_alloc,
        static_lds_bytes=int(meta.get("group_segment_fixed_size", 0)),
        max_flat_workgroup_size=int(meta.get("max_flat_workgroup_size", 0)) or None,
        scratch_bytes=int(meta.get("private_segment_fixed_size", 0)),
        vgpr_spill=int(meta.get("vgpr_spill_count", 0)), sgpr_spill=int(meta.get("sgpr_spill_count", 0)),
        model=model, compiler=compiler, isa_text=_kernel_text(text, name))


def read_asm_text(text: str, source: str, *, triton_version: str = "") -> list[KernelResources]:
    """Every kernel of an AMDGCN assembly text; several modules (a dump log) give several blocks."""
    blocks = _META_BLOCK.findall(text)
    if not blocks:
        raise UserError("AMDGCN assembly without an .amdgpu_metadata block (register counts unknown); "
                        "dump the full assembly (AMDGCN_ENABLE_DUMP=1, --save-temps) or pass the code object",
                        source)
    ident = _IDENT.search(text)
    asm_target = _ASM_TARGET.search(text)
    descriptors = _descriptors(text)
    kernels: dict[str, KernelResources] = {}
    for block in blocks:
        target, metas = parse_metadata(block)
        target = target or (asm_target[1] if asm_target else "")
        if not target:
            raise UserError("AMDGCN assembly names no target (.amdgcn_target / amdhsa.target); "
                            "pass --arch", source)
        model = model_for(ident=ident[1] if ident else "", target=target, triton_version=triton_version)
        compiler = f"triton {triton_version}" if triton_version else (ident[1] if ident else "")
        for meta in metas:
            meta = {k.lstrip("."): v for k, v in meta.items()}
            res = _resources(meta, descriptors.get(str(meta["name"])), normalize_arch(target), source, text,
                             model, compiler)
            kernels[res.name] = res  # a dump holding a kernel twice: the last compile counts
    return list(kernels.values())
