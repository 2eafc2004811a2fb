"""Reader for AMDGPU code objects (.hsaco/.co ELF) and clang offload bundles (plain and CCOB/zstd).

No ROCm tool needed: the AMDGPU metadata note (NT_AMDGPU_METADATA, msgpack) gives the counts, the
kernel descriptor (`<kernel>.kd`, 64 bytes, AMDGPUUsage "Kernel Descriptor") the allocated blocks.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator

import msgpack
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from rocanalyze.errors import UserError
from rocanalyze.occupancy.arches import get_arch, normalize_arch
from rocanalyze.occupancy.resources import KernelResources, model_for

ELF_MAGIC = b"\x7fELF"
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
EM_AMDGPU = 224
NT_AMDGPU_METADATA = 32


def sniff(head: bytes) -> bool:
    return head.startswith((ELF_MAGIC, BUNDLE_MAGIC, CCOB_MAGIC))


def _notes(data: bytes) -> Iterator[tuple[bytes, int, bytes]]:
    """(name, type, desc) of every note in a note section's bytes (4-byte aligned fields)."""
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
        pos += 12
        name = data[pos:pos + namesz].rstrip(b"\0")
        pos += (namesz + 3) & ~3
        yield name, ntype, data[pos:pos + descsz]
        pos += (descsz + 3) & ~3


def _metadata(elf: ELFFile) -> dict:
    for section in elf.iter_sections():
        if section["sh_type"] != "SHT_NOTE":
            continue
        for name, ntype, desc in _notes(section.data()):
            if name == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
                return msgpack.unpackb(desc, raw=False, strict_map_key=False)
    return {}


def _descriptor_bytes(elf: ELFFile, symbol_name: str) -> bytes | None:
    symtab = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
    if symtab is None:
        return None
    syms = symtab.get_symbol_by_name(symbol_name)
    if not syms:
        return None
    addr = syms[0]["st_value"]
    for section in elf.iter_sections():
        start = section["sh_addr"]
        if section["sh_type"] == "SHT_PROGBITS" and start <= addr < start + section["sh_size"]:
            offset = addr - start
            return section.data()[offset:offset + 64]
    return None


def _allocated(kd: bytes | None, arch: str, wave: int) -> tuple[int | None, int | None]:
    """VGPRs per lane and SGPRs per wave the kernel descriptor allocates (COMPUTE_PGM_RSRC1)."""
    if kd is None or len(kd) < 64:
        return None, None
    rsrc1 = struct.unpack_from("<I", kd, 48)[0]
    spec = get_arch(arch)
    vgpr_blocks, sgpr_blocks = rsrc1 & 0x3F, (rsrc1 >> 6) & 0xF
    # encoding granule: 8 with the unified file (gfx90a+) and for wave32, else 4 (getVGPREncodingGranule)
    granule = 8 if spec.unified_vgpr or wave == 32 else 4
    sgprs = (sgpr_blocks + 1) * 8 if spec.sgpr_limited else None  # getSGPREncodingGranule = 8
    return (vgpr_blocks + 1) * granule, sgprs


def read_elf(data: bytes, source: str) -> list[KernelResources]:
    """Every kernel of one AMDGPU ELF code object."""
    try:
        elf = ELFFile(io.BytesIO(data))
        if elf["e_machine"] not in ("EM_AMDGPU", EM_AMDGPU):
            raise UserError(f"ELF file for {elf['e_machine']}, not an AMDGPU code object", source)
        meta = _metadata(elf)
    except (ELFError, struct.error, ValueError, msgpack.UnpackException) as err:
        raise UserError(f"unreadable AMDGPU code object ({err})", source) from err
    kernels = meta.get("amdhsa.kernels")
    target = str(meta.get("amdhsa.target", ""))
    if not kernels or not target:
        raise UserError("AMDGPU code object without kernel metadata (amdhsa.kernels)", source)
    arch = normalize_arch(target)
    comment = elf.get_section_by_name(".comment")
    ident = comment.data().decode("utf-8", "replace") if comment is not None else ""
    model = model_for(ident=ident, target=target)
    out = []
    for k in kernels:
        spec = get_arch(arch)
        wave = int(k.get(".wavefront_size", 64))
        total, agpr = int(k.get(".vgpr_count", 0)), int(k.get(".agpr_count", 0))
        vgpr_alloc, sgpr_alloc = _allocated(_descriptor_bytes(elf, str(k.get(".symbol", ""))), arch, wave)
        out.append(KernelResources(
            name=str(k.get(".name", "?")), source=source, arch=spec.name, wave_size=wave,
            vgpr=total - agpr if spec.unified_vgpr and agpr else total, agpr=agpr,
            sgpr=int(k[".sgpr_count"]) if ".sgpr_count" in k else None,
            vgpr_alloc=vgpr_alloc, sgpr_alloc=sgpr_alloc,
            static_lds_bytes=int(k.get(".group_segment_fixed_size", 0)),
            max_flat_workgroup_size=int(k.get(".max_flat_workgroup_size", 0)) or None,
            scratch_bytes=int(k.get(".private_segment_fixed_size", 0)),
            vgpr_spill=int(k.get(".vgpr_spill_count", 0)), sgpr_spill=int(k.get(".sgpr_spill_count", 0)),
            model=model, compiler=ident.strip("\0 \n")))
    return out


def _bundle_entries(data: bytes, source: str) -> Iterator[tuple[str, bytes]]:
    """(target triple, payload) of each entry of an uncompressed clang offload bundle."""
    try:
        (count,) = struct.unpack_from("<Q", data, 24)
        pos = 32
        for _ in range(count):
            offset, size, tlen = struct.unpack_from("<QQQ", data, pos)
            triple = data[pos + 24:pos + 24 + tlen].decode("ascii", "replace")
            pos += 24 + tlen
            yield triple, data[offset:offset + size]
    except struct.error as err:
        raise UserError(f"truncated clang offload bundle ({err})", source) from err


def decompress_ccob(data: bytes, source: str) -> bytes:
    """The offload bundle inside a compressed one (CCOB v1-v3; zstd or zlib payload)."""
    import zlib

    import zstandard

    if len(data) < 20:
        raise UserError("truncated compressed offload bundle (CCOB)", source)
    version, method = struct.unpack_from("<HH", data, 4)
    header = {1: 20, 2: 24, 3: 32}.get(version)
    if header is None:
        raise UserError(f"compressed offload bundle version {version} is not supported (1-3 are)", source)
    size_fmt, size_at = ("<Q", 16) if version == 3 else ("<I", 12 if version == 2 else 8)
    (size,) = struct.unpack_from(size_fmt, data, size_at)
    payload = data[header:]
    try:
        if method == 1:
            return zstandard.ZstdDecompressor().decompress(payload, max_output_size=size)
        return zlib.decompress(payload)
    except (zstandard.ZstdError, zlib.error) as err:
        raise UserError(f"corrupt compressed offload bundle ({err})", source) from err


def read_code_object(data: bytes, source: str) -> list[KernelResources]:
    """Kernels of an ELF code object or of every AMDGPU code object in an offload bundle."""
    if data.startswith(CCOB_MAGIC):
        data = decompress_ccob(data, source)
    if data.startswith(ELF_MAGIC):
        return read_elf(data, source)
    out: list[KernelResources] = []
    for triple, payload in _bundle_entries(data, source):
        if "amdgcn" in triple and payload.startswith(ELF_MAGIC):
            out.extend(read_elf(payload, f"{source}[{normalize_arch(triple)}]"))
    if not out:
        raise UserError("offload bundle holds no AMDGPU code object", source)
    return out
