"""occupancy.json: occupancy of each captured Triton kernel, for Analysis.occupancy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocanalyze import runfolder
from rocanalyze.collectors.triton_cache import TritonKernel


def kernel_record(kernel: TritonKernel, folder: str) -> dict[str, Any]:
    """The facts of one kernel that occupancy needs, and where its artifacts are in the run folder."""
    meta = kernel.metadata
    target = meta.get("target") if isinstance(meta.get("target"), dict) else {}
    return {"kernel": kernel.name, "hash": kernel.hash, "source": "triton", "found_by": kernel.found_by,
            "folder": f"triton/{folder}", "files": sorted(kernel.files),
            "backend": target.get("backend") or meta.get("backend_name"),
            "arch": str(target.get("arch") if target.get("arch") is not None else meta.get("arch", "")),
            "num_warps": meta.get("num_warps"), "warp_size": target.get("warp_size") or meta.get("warp_size"),
            "shared_bytes": meta.get("shared"), "n_regs": kernel.n_regs, "n_spills": kernel.n_spills,
            "launched": kernel.launched}


def write_occupancy(run: Path, kernels: list[TritonKernel], folders: dict[str, str]) -> Path:
    """Write run/occupancy.json: a list of kernel records (occupancy under "occupancy")."""
    records = [kernel_record(k, folders[k.hash or k.name]) for k in kernels]
    return runfolder.write_json(run / "occupancy.json", records)
