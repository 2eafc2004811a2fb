"""Triton inputs: a kernel's metadata JSON (+ the .amdgcn/.hsaco beside it), TTGIR/MLIR dumps.

Triton's LDS is dynamic: the code object says 0, the metadata's `shared` (or TTGIR's `ttg.shared`)
holds it. A Triton workgroup is num_warps waves of threads-per-warp lanes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from rocanalyze.errors import UserError
from rocanalyze.occupancy.arches import normalize_arch
from rocanalyze.occupancy.resources import KernelResources, model_for

_MODULE = re.compile(r"^\s*module\s+attributes\s*\{(.*?)\}\s*\{", re.M)
_ATTR = re.compile(r'"?(?:ttg|triton_gpu)\.([\w-]+)"?\s*=\s*"?([\w:.-]+)"?')
ASM_SUFFIXES = (".amdgcn", ".amdgcn.gz", ".s", ".isa", ".asm")
CODE_SUFFIXES = (".hsaco", ".co")
TTGIR_SUFFIXES = (".ttgir", ".ttgir.gz")


def is_metadata(obj: Any) -> bool:
    """True for a Triton kernel metadata dict (the JSON Triton's cache keeps beside each kernel)."""
    return isinstance(obj, dict) and "num_warps" in obj and ("target" in obj or "arch" in obj)


def sniff_ttgir(text: str) -> bool:
    return "num-warps" in text and ("ttg." in text or "triton_gpu." in text)


def parse_ttgir(text: str) -> tuple[dict[str, str], str]:
    """Attributes and body of the last module in a TTGIR file or MLIR_ENABLE_DUMP log (the last counts)."""
    modules = list(_MODULE.finditer(text))
    if not modules:
        raise UserError("TTGIR without a 'module attributes {...}' line")
    last = modules[-1]
    attrs = dict(_ATTR.findall(last[1]))
    return attrs, text[last.start():]


def stem(path: Path) -> str:
    """'matmul.amdgcn.gz' -> 'matmul'."""
    name = path.name
    for suffix in sorted(ASM_SUFFIXES + CODE_SUFFIXES + TTGIR_SUFFIXES + (".json",), key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def siblings(path: Path) -> dict[str, Path]:
    """The files of one Triton kernel beside `path`: kinds 'json', 'asm', 'code', 'ttgir'."""
    base, found = stem(path), {}
    for kind, suffixes in (("json", (".json",)), ("asm", ASM_SUFFIXES), ("code", CODE_SUFFIXES),
                           ("ttgir", TTGIR_SUFFIXES)):
        for suffix in suffixes:
            candidate = path.with_name(base + suffix)
            if candidate.is_file():
                found[kind] = candidate
                break
    if "json" in found and not _json_is_metadata(found["json"]):
        del found["json"]
    return found


def _json_is_metadata(path: Path) -> bool:
    try:
        return is_metadata(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, OSError, UnicodeDecodeError):
        return False


def apply_metadata(kernel: KernelResources, meta: dict[str, Any]) -> KernelResources:
    """The kernel with Triton's workgroup, dynamic LDS, waves_per_eu and compiler version filled in."""
    target = meta.get("target") or {}
    warp = int(target.get("warp_size") or meta.get("warp_size") or kernel.wave_size)
    version = str(meta.get("triton_version", ""))
    wpe = int(meta.get("waves_per_eu") or 0) or None
    return dataclasses.replace(
        kernel, workgroup_size=int(meta["num_warps"]) * warp, wave_size=warp,
        dynamic_lds_bytes=max(int(meta.get("shared") or 0) - kernel.static_lds_bytes, 0),
        waves_per_eu=wpe, compiler=f"triton {version}" if version else kernel.compiler,
        model=model_for(triton_version=version) if version else kernel.model)


def apply_ttgir(kernel: KernelResources, text: str) -> KernelResources:
    """The kernel with a TTGIR's workgroup and LDS (when the metadata JSON did not give them) and text."""
    attrs, body = parse_ttgir(text)
    changes: dict[str, Any] = {"ttgir_text": body}
    if kernel.workgroup_size is None and "num-warps" in attrs:
        warp = int(attrs.get("threads-per-warp", kernel.wave_size))
        changes["workgroup_size"] = int(attrs["num-warps"]) * warp
        if "shared" in attrs:
            changes["dynamic_lds_bytes"] = max(int(attrs["shared"]) - kernel.static_lds_bytes, 0)
    return dataclasses.replace(kernel, **changes)


def kernel_from_ttgir(text: str, source: str) -> KernelResources:
    """A kernel known only from TTGIR: workgroup and LDS, registers unknown (vgpr=0 flags that)."""
    attrs, body = parse_ttgir(text)
    if "num-warps" not in attrs:
        raise UserError("TTGIR module without ttg.num-warps", source)
    target = attrs.get("target", "")
    warp = int(attrs.get("threads-per-warp", 64))
    name = re.search(r"tt\.func\s+(?:public\s+)?@([\w$.]+)", body)
    return KernelResources(
        name=name[1] if name else Path(source).stem, source=source, arch=normalize_arch(target),
        wave_size=warp, vgpr=0, workgroup_size=int(attrs["num-warps"]) * warp,
        dynamic_lds_bytes=int(attrs.get("shared", 0)), ttgir_text=body,
        notes=("registers unknown: TTGIR has none; pass the .amdgcn or .hsaco for register limits",))
