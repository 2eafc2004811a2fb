"""Readers: AMDGCN assembly, code objects and offload bundles, Triton JSON/TTGIR, real hipcc output."""

from __future__ import annotations

import struct

import pytest
import zstandard

from rocanalyze.errors import UserError
from rocanalyze.occupancy import analyze_kernel, read_kernels, read_paths
from rocanalyze.occupancy.codeobject import read_code_object
from rocanalyze.occupancy.triton import parse_ttgir
from tests.conftest import data_path, realdata_path

HSACO = data_path("occupancy", "triton39", "gfx942", "matmul_128x128x64_w4_s2_wpe2.hsaco")


def test_hipcc_assembly_fields():
    path = realdata_path("amdgcn", "batched_gemm", "batched_gemm-hip-amdgcn-amd-amdhsa-gfx942.s")
    naive, mfma = read_kernels(path)
    assert (mfma.arch, mfma.vgpr, mfma.agpr, mfma.sgpr, mfma.static_lds_bytes) == ("gfx942", 32, 16, 32, 2048)
    assert mfma.max_flat_workgroup_size == 256 and mfma.model == "llvm-legacy"
    assert naive.vgpr == 12 and naive.max_flat_workgroup_size == 1024
    assert "v_mfma" in mfma.isa_text and "v_mfma" not in naive.isa_text


def test_padded_allocation_from_directives():
    # bmm_asm.s: TotalNumVgprs 104 but .amdhsa_next_free_vgpr 129 (a waves-per-EU request): 3 waves
    (kernel,) = read_kernels(realdata_path("amdgcn", "batched_gemm", "bmm_asm.s"))
    occ = analyze_kernel(kernel)
    assert kernel.vgpr_alloc == 129 and occ.compiler_waves_per_simd == 3 and occ.limiter == "waves_per_eu"


@pytest.mark.parametrize("folder", ["amdgcn", "triton_ir"])
def test_all_realdata_reads_without_error(folder):
    kernels, errors = read_paths([realdata_path(folder)])
    assert errors == [] and len(kernels) >= 2
    for kernel in kernels:
        assert analyze_kernel(kernel).workgroups_per_cu >= 1


def test_triton33_gfx950_json_brings_dynamic_lds():
    path = realdata_path("triton_ir", "aiter_gemm_afp4wfp4_gfx950", "_gemm_afp4_wfp4_kernel_preshuffled_scales.json")
    (kernel,) = read_kernels(path)
    assert (kernel.arch, kernel.lds_bytes, kernel.workgroup_size, kernel.model) == (
        "gfx950", 156672, 256, "llvm-legacy")
    assert kernel.ttgir_text  # the .ttgir beside it is read for the TTGIR lint


def test_code_object_metadata_and_descriptor():
    (kernel,) = read_kernels(HSACO)
    assert (kernel.name, kernel.arch, kernel.vgpr, kernel.sgpr, kernel.vgpr_alloc) == (
        "matmul_kernel", "gfx942", 256, 80, 256)
    assert kernel.scratch_bytes == 236 and kernel.vgpr_spill == 74


def _bundle(code: bytes) -> bytes:
    """A clang offload bundle (format of clang's OffloadBundler) holding a host stub and `code`."""
    triples = [b"host-x86_64-unknown-linux-gnu-", b"hipv4-amdgcn-amd-amdhsa--gfx942"]
    header = 24 + 8 + sum(24 + len(t) for t in triples)
    body, entries, offset = b"", b"", header
    for triple, payload in zip(triples, [b"", code], strict=True):
        entries += struct.pack("<QQQ", offset, len(payload), len(triple)) + triple
        body += payload
        offset += len(payload)
    return b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 2) + entries + body


@pytest.mark.parametrize("version", [2, 3])
def test_offload_bundles_plain_and_ccob(version):
    code = HSACO.read_bytes()
    bundle = _bundle(code)
    (plain,) = read_code_object(bundle, "b")
    packed = zstandard.ZstdCompressor().compress(bundle)
    fmt = "<4sHHII" if version == 2 else "<4sHHQQ"
    head = struct.pack(fmt, b"CCOB", version, 1, 0, len(bundle)) + struct.pack("<Q", 0)
    (compressed,) = read_code_object(head + packed, "c")
    assert plain.vgpr == compressed.vgpr == 256 and compressed.source == "c[gfx942]"


def test_ttgir_both_spellings_and_last_module_counts():
    new = ('module attributes {"ttg.num-warps" = 4 : i32, ttg.shared = 1024 : i32, '
           '"ttg.threads-per-warp" = 64 : i32} {\n}\n')
    old = ('module attributes {"triton_gpu.num-warps" = 8 : i32, triton_gpu.shared = 65536 : i32, '
           '"triton_gpu.threads-per-warp" = 64 : i32} {\n}\n')
    assert parse_ttgir(new)[0]["num-warps"] == "4"
    attrs, _ = parse_ttgir(new + "// -----// IR Dump //----- //\n" + old)
    assert (attrs["num-warps"], attrs["shared"]) == ("8", "65536")


@pytest.mark.parametrize("content,message", [
    (b"", "empty file"),
    (b"\x00\x01garbage\xff\xfe" * 10, "not a kernel file (binary data at byte 9)"),
    (b"\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n\ts_endpgm\n", "without an .amdgpu_metadata block"),
    (b'{"hello": 1}', "JSON that is not Triton kernel metadata"),
])
def test_bad_files_are_one_line_user_errors(tmp_path, content, message):
    path = tmp_path / "k.s"
    path.write_bytes(content)
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_kernels(path)


def test_unknown_arch_in_file(tmp_path):
    text = realdata_path("amdgcn", "batched_gemm", "batched_gemm-hip-amdgcn-amd-amdhsa-gfx942.s").read_text()
    path = tmp_path / "k.s"
    path.write_text(text.replace("gfx942", "gfx9999"))
    with pytest.raises(UserError, match="unknown AMD GPU arch"):
        read_kernels(path)


def test_occupancy_formula_and_dump_log_of_several_modules(tmp_path):
    # AMDGCN_ENABLE_DUMP prints every module compiled; LLVM prints '; Occupancy:' as a formula when
    # callees have unknown resources. Neither may break the reader, which never reads that line.
    import gzip

    corpus = data_path("occupancy", "triton39", "gfx90a")
    texts = [gzip.decompress((corpus / f"{name}.amdgcn.gz").read_bytes()).decode()
             for name in ("add_b1024_w4", "softmax_b1024_w4")]
    log = "\n".join(texts).replace("; Occupancy: 8", "; Occupancy: occupancy(8, 4, 256, 8, 8, max(s, 1))")
    path = tmp_path / "dump.log"
    path.write_text(log)
    kernels = read_kernels(path)
    assert [k.name for k in kernels] == ["add_kernel", "softmax_kernel"]
    assert [analyze_kernel(k).compiler_waves_per_simd for k in kernels] == [8, 8]
