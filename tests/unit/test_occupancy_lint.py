"""ISA and TTGIR lint on real compiler output and on seed 001's IR example."""

from __future__ import annotations

import gzip

from rocanalyze.occupancy import analyze_kernel, read_kernels
from rocanalyze.occupancy.lint import lint_isa, lint_ttgir
from tests.conftest import data_path, realdata_path

CORPUS = data_path("occupancy", "triton39")


def _by_id(findings):
    return {f["id"]: f for f in findings}


def test_isa_lint_counts_on_a_gfx942_gemm():
    (kernel,) = read_kernels(CORPUS / "gfx942" / "matmul_128x128x64_w4_s2_wpe2.amdgcn.gz")
    found = _by_id(analyze_kernel(kernel).lint)
    assert found["scratch"]["counts"]["vgpr_spill"] == 74 and found["scratch"]["severity"] == "warn"
    assert sum(found["global_loads"]["counts"].values()) > 0
    assert all(k.startswith("v_mfma") for k in found["matrix_ops"]["counts"])
    assert found["s_waitcnt"]["counts"]["total"] >= found["s_waitcnt"]["counts"]["to_zero"] > 0


def test_isa_lint_reads_widths_and_shapes():
    text = "\n".join([
        "\tglobal_load_dwordx4 v[0:3], v[4:5], off", "\tglobal_load_dword v6, v[4:5], off",
        "\tbuffer_load_dwordx2 v[8:9], v1, s[0:3], 0 offen", "\tds_read_b128 v[0:3], v2",
        "\tds_write_b64 v2, v[0:1]", "\tds_read2_b64 v[0:3], v2 offset1:8",
        "\tv_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]",
        "\tv_mfma_f32_16x16x16_f16 v[0:3], v[0:1], v[2:3], v[0:3]", "\ts_waitcnt vmcnt(0)",
        "\ts_waitcnt lgkmcnt(1)"])
    found = _by_id(lint_isa(text))
    assert found["global_loads"]["counts"] == {"buffer_64": 1, "global_128": 1, "global_32": 1}
    assert found["lds_access"]["counts"] == {"read_128": 2, "write_64": 1}
    assert found["matrix_ops"]["counts"] == {"v_mfma_16x16x16": 1, "v_mfma_32x32x8": 1}
    assert found["s_waitcnt"]["counts"] == {"total": 2, "to_zero": 1}
    assert "scratch" not in found


def test_rdna_wmma_kernel_is_linted():
    (kernel,) = read_kernels(CORPUS / "gfx1100" / "matmul_64x64x32_w4_s2.amdgcn.gz")
    found = _by_id(analyze_kernel(kernel).lint)
    assert all(k.startswith("v_wmma") for k in found["matrix_ops"]["counts"])


def test_seed_001_lds_round_trip_is_found():
    text = data_path("occupancy", "ttgir", "seed001_lds_twice.ttgir").read_text()
    found = _by_id(lint_ttgir(text))
    assert found["lds_round_trips"]["counts"]["max_trips"] == 2
    assert "%300" in found["lds_round_trips"]["message"]
    assert found["layout_conversions"]["counts"]["convert_layout"] == 4


def test_single_pass_gemm_ttgir_has_no_round_trip():
    text = gzip.decompress((CORPUS / "gfx942" / "matmul_128x128x64_w8_s2.ttgir.gz").read_bytes()).decode()
    assert "lds_round_trips" not in _by_id(lint_ttgir(text))
    real = realdata_path("triton_ir", "aiter_gemm_afp4wfp4_gfx950",
                         "_gemm_afp4_wfp4_kernel_preshuffled_scales.ttgir").read_text()
    assert "lds_round_trips" not in _by_id(lint_ttgir(real))
