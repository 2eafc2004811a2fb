"""The Triton 3.9 corpus (scripts/make_occupancy_corpus.py): our rules reproduce LLVM on every kernel."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from rocanalyze.occupancy import analyze_kernel, read_kernels
from tests.conftest import data_path

CORPUS = data_path("occupancy", "triton39")
FILES = sorted(CORPUS.glob("*/*.amdgcn.gz"))
_LLVM = re.compile(r"^; Occupancy: (\d+)\s*$", re.M)


def llvm_occupancy(path: Path) -> int:
    """The '; Occupancy:' LLVM printed into the assembly (the expected value, never an input)."""
    (found,) = _LLVM.findall(gzip.decompress(path.read_bytes()).decode())
    return int(found)


def test_corpus_covers_archs_and_kernels():
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    assert manifest["triton_version"] == "3.9.0"
    assert {p.parent.name for p in FILES} == {"gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100"}
    assert len(FILES) == len(manifest["archs"]) * len(manifest["cases"]) >= 100


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name.split('.')[0]}")
def test_compiler_waves_equal_llvm_occupancy_line(path):
    (kernel,) = read_kernels(path)
    occ = analyze_kernel(kernel)
    assert occ.compiler_waves_per_simd == llvm_occupancy(path)
    meta = json.loads(path.with_name(path.name.replace(".amdgcn.gz", ".json")).read_text())
    assert occ.workgroup_size == meta["num_warps"] * meta["warp_size"]
    assert occ.lds_bytes == meta["shared"] and occ.model == "llvm-2026"


def test_sgpr_kernels_pin_the_2026_sgpr_model():
    # 72 SGPRs on gfx908: the pre-2026 table says 10 waves, LLVM 2026 (and its listing) says 8
    path = CORPUS / "gfx908" / "sgpr_args70_w4.amdgcn.gz"
    (kernel,) = read_kernels(path)
    assert kernel.sgpr == 72 and llvm_occupancy(path) == 8
    occ = analyze_kernel(kernel)
    assert occ.compiler_waves_per_simd == 8 and occ.limiter == "sgpr"


def test_dynamic_lds_applied_on_top_of_llvm():
    # gfx942 GEMM 128x128x64, 8 warps: LLVM says 3 waves/SIMD from VGPRs (160), but a workgroup is
    # 8 waves, so 3 x 4 SIMDs fit one workgroup: 2 waves/SIMD on average
    (kernel,) = read_kernels(CORPUS / "gfx942" / "matmul_128x128x64_w8_s2.amdgcn.gz")
    occ = analyze_kernel(kernel)
    assert (occ.compiler_waves_per_simd, occ.workgroups_per_cu, occ.waves_per_simd) == (3, 1, 2.0)
    # gfx950 256x128x64, 3 stages: 144 KiB of Triton LDS -> one workgroup per CU whatever the registers
    (big,) = read_kernels(CORPUS / "gfx950" / "matmul_256x128x64_w8_s3.amdgcn.gz")
    occ = analyze_kernel(big)
    assert big.lds_bytes == 147456 and occ.limits["lds"] == 1 and occ.workgroups_per_cu == 1


def test_same_answer_from_amdgcn_hsaco_and_cache_dir():
    stem = CORPUS / "gfx942" / "matmul_128x128x64_w4_s2_wpe2"
    cache = data_path("occupancy", "triton_cache_gfx942")
    results = [analyze_kernel(k) for p in (Path(f"{stem}.amdgcn.gz"), Path(f"{stem}.hsaco"), cache)
               for k in read_kernels(p)]
    assert len(results) == 3
    keys = ("compiler_waves_per_simd", "waves_per_simd", "workgroups_per_cu", "limiter", "vgpr", "sgpr",
            "lds_bytes", "scratch_bytes", "waves_per_eu")
    answers = {tuple(getattr(r, k) for k in keys) for r in results}
    assert answers == {(2, 2.0, 2, "vgpr", 256, 80, 16384, 236, 2)}
