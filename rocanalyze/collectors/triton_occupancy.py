"""occupancy.json: occupancy of each captured Triton kernel, for Analysis.occupancy.

Format (a JSON list, one entry per kernel that ran): the `rocanalyze occupancy --json` fields of
rocanalyze.occupancy.Occupancy (kernel, arch, waves_per_simd, occupancy_pct, limiter, vgpr, agpr,
sgpr, lds_bytes, lint, what_if, ...) when they could be computed, plus a "triton" object with what
the capture knows (hash, run-folder path of the artifacts, num_warps, shared bytes, the driver's
register and spill counts) and "error" (one line) when occupancy could not be computed.
AMD kernels: the copied .amdgcn + metadata JSON. NVIDIA kernels: registers from the driver
(CompiledKernel.n_regs), else the cubin's EIATTR_REGCOUNT, shared memory and warps from the metadata,
through rocanalyze.occupancy.cuda.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocanalyze import runfolder
from rocanalyze.collectors.triton_cache import TritonKernel
from rocanalyze.errors import UserError

OCCUPANCY_FILE = "occupancy.json"


def kernel_record(kernel: TritonKernel, folder: str) -> dict[str, Any]:
    """The facts of one kernel that occupancy needs, and where its artifacts are in the run folder."""
    meta = kernel.metadata
    target = meta.get("target") if isinstance(meta.get("target"), dict) else {}
    arch = target.get("arch") if target.get("arch") is not None else meta.get("arch", "")
    return {"kernel": kernel.name, "hash": kernel.hash, "source": "triton", "found_by": kernel.found_by,
            "folder": f"triton/{folder}", "files": sorted(kernel.files),
            "backend": target.get("backend") or meta.get("backend_name"),
            "arch": str(arch), "num_warps": meta.get("num_warps"),
            "warp_size": target.get("warp_size") or meta.get("warp_size"),
            "shared_bytes": meta.get("shared"), "n_regs": kernel.n_regs, "n_spills": kernel.n_spills,
            "launched": kernel.launched}


def occupancy_entry(run: Path, kernel: TritonKernel, folder: str) -> dict[str, Any]:
    """One occupancy.json entry: Occupancy fields (or an error line) plus the capture's facts."""
    facts = kernel_record(kernel, folder)
    entry: dict[str, Any] = {"kernel": kernel.name, "triton": facts}
    try:
        if facts["backend"] == "hip":
            entry.update(_amd_occupancy(run / facts["folder"], kernel.name))
        elif facts["backend"] == "cuda":
            entry.update(_cuda_occupancy(facts, run / facts["folder"]))
        else:
            entry["error"] = f"unknown Triton backend {facts['backend']!r}"
    except UserError as err:
        entry["error"] = str(err)
    return entry


def _amd_occupancy(folder: Path, name: str) -> dict[str, Any]:
    """Occupancy from the copied metadata JSON and the .amdgcn (or .hsaco) beside it."""
    from rocanalyze.occupancy import analyze_kernel, read_kernels

    kernels = [k for k in read_kernels(folder / f"{name}.json") if k.name == name] or \
        read_kernels(folder / f"{name}.json")
    occ = analyze_kernel(kernels[0]).to_json()
    occ["source"] = str(Path(folder.name) / Path(occ.get("source", "")).name)   # relative to triton/
    return occ


def _cuda_occupancy(facts: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Occupancy with the CUDA rules: registers from the driver (else the cubin), shared memory and
    warps from the metadata."""
    from rocanalyze.collectors.cubin import cubin_registers
    from rocanalyze.occupancy.cuda import compute_cuda_occupancy

    regs, source = facts["n_regs"], "driver"
    cubin = folder / f"{facts['kernel']}.cubin"
    if regs is None and cubin.is_file():
        regs, source = cubin_registers(cubin, facts["kernel"]), "cubin"
    if regs is None:
        raise UserError("register count unknown: the kernel was never loaded here and no cubin states it")
    arch = str(facts["arch"])
    block = int(facts["num_warps"]) * int(facts["warp_size"] or 32)
    occ = compute_cuda_occupancy(f"sm_{arch}" if arch.isdigit() else arch, regs_per_thread=regs,
                                 shared_bytes=int(facts["shared_bytes"] or 0), block_size=block)
    return {**occ.to_json(), "registers": regs, "registers_from": source,
            "shared_bytes": int(facts["shared_bytes"] or 0), "workgroup_size": block}


def write_occupancy(run: Path, kernels: list[TritonKernel], folders: dict[str, str]) -> Path:
    """Write run/occupancy.json for the captured kernels (entries in kernel-name order)."""
    entries = [occupancy_entry(run, k, folders[k.hash or k.name]) for k in kernels]
    return runfolder.write_json(run / OCCUPANCY_FILE, sorted(entries, key=lambda e: e["kernel"]))
