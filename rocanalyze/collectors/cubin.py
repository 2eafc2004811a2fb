"""Registers per thread of a kernel in a CUDA cubin, for Triton kernels the process never loaded.

The count is the EIATTR_REGCOUNT record of the cubin's `.nv.info` section (what `cuobjdump
-elf` prints as "nvinfo : EIATTR_REGCOUNT"): format byte 0x04 (a sized value), attribute 0x2f,
a 16-bit size, then the kernel's symbol index and the count, both 32-bit little-endian.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

from elftools.elf.elffile import ELFFile

EIFMT_SVAL = 0x04       # record with a 16-bit size and a payload
EIATTR_REGCOUNT = 0x2F


def nv_info_records(data: bytes) -> list[tuple[int, int, bytes]]:
    """(format, attribute, payload) of each .nv.info record; non-sized records carry their 2 value bytes."""
    out, pos = [], 0
    while pos + 4 <= len(data):
        fmt, attr, value = data[pos], data[pos + 1], data[pos + 2:pos + 4]
        if fmt == EIFMT_SVAL:
            (size,) = struct.unpack_from("<H", data, pos + 2)
            out.append((fmt, attr, data[pos + 4:pos + 4 + size]))
            pos += 4 + size
        else:
            out.append((fmt, attr, value))
            pos += 4
    return out


def cubin_registers(path: Path, kernel: str) -> int | None:
    """Registers per thread the cubin states for `kernel`, or None when it has no such record."""
    elf = ELFFile(io.BytesIO(path.read_bytes()))
    info, symtab = elf.get_section_by_name(".nv.info"), elf.get_section_by_name(".symtab")
    if info is None or symtab is None:
        return None
    names = {i: sym.name for i, sym in enumerate(symtab.iter_symbols())}
    for fmt, attr, payload in nv_info_records(info.data()):
        if fmt == EIFMT_SVAL and attr == EIATTR_REGCOUNT and len(payload) >= 8:
            index, count = struct.unpack_from("<II", payload)
            if names.get(index) == kernel:
                return int(count)
    return None
