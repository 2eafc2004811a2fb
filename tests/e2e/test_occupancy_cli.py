"""`rocanalyze occupancy` end to end through the real CLI boundary (rocanalyze.cli.main)."""

from __future__ import annotations

import json

import pytest

from rocanalyze.analysis.demangle import available as demangle_available
from rocanalyze.cli import main
from tests.conftest import ROOT, data_path, realdata_path

EXAMPLE = ROOT / "examples" / "occupancy" / "matmul_gfx942.amdgcn"
CORPUS = data_path("occupancy", "triton39")


def test_shipped_example_table(capsys):
    assert main(["occupancy", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "matmul_kernel" in out and "gfx942" in out and "-6 VGPRs (78->72)" in out


def test_json_has_the_issue_fields(capsys):
    assert main(["occupancy", "--json", str(EXAMPLE)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    for key in ("kernel", "source", "arch", "compiler_waves_per_simd", "waves_per_simd", "workgroups_per_cu",
                "occupancy_pct", "limiter", "vgpr", "agpr", "sgpr", "lds_bytes", "scratch_bytes", "lint"):
        assert key in row
    assert (row["arch"], row["compiler_waves_per_simd"], row["workgroups_per_cu"], row["limiter"]) == (
        "gfx942", 6, 6, "vgpr")
    assert row["lds_bytes"] == 4096 and row["occupancy_pct"] == 75.0 and row["source"] == str(EXAMPLE)


def test_markdown_for_a_pr(capsys):
    assert main(["occupancy", "--markdown", str(CORPUS / "gfx950")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| kernel | arch |") and out.count("| gfx950 |") == 22


def test_what_if_flags_without_a_file(capsys):
    assert main(["occupancy", "--json", "--arch", "gfx942", "--vgpr", "170", "--num-warps", "4"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["waves_per_simd"] == 2.0 and row["what_if"]["waves_per_eu_hint"] == 3


def test_what_if_on_a_file_overrides_its_value(capsys):
    assert main(["occupancy", "--json", "--vgpr", "72", str(EXAMPLE)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["waves_per_simd"] == 7.0 and any(n.startswith("what-if: vgpr=72") for n in row["notes"])


def test_bad_files_one_line_each_exit_2_others_still_reported(tmp_path, capsys):
    empty = tmp_path / "empty.s"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\xff" * 64)
    bare = tmp_path / "bare.s"
    bare.write_text('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n\ts_endpgm\n')
    code = main(["occupancy", "--json", str(empty), str(EXAMPLE), str(garbage), str(bare)])
    captured = capsys.readouterr()
    assert code == 2
    assert [row["kernel"] for row in json.loads(captured.out)] == ["matmul_kernel"]
    lines = captured.err.splitlines()
    assert lines[0] == f"rocanalyze: error: {empty}: empty file"
    assert lines[1].startswith(f"rocanalyze: error: {garbage}: not a kernel file (binary data at byte 1)")
    assert lines[2].startswith(f"rocanalyze: error: {bare}: AMDGCN assembly without an .amdgpu_metadata block")
    assert len(lines) == 3 and "Traceback" not in captured.err


def test_unknown_arch_flag_is_one_line(capsys):
    assert main(["occupancy", "--arch", "gfx9999", "--vgpr", "10", "--block-size", "64"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rocanalyze: error: unknown AMD GPU arch 'gfx9999' (known: gfx1030,")
    assert len(err.splitlines()) == 1


def test_triton_cache_dir_and_ttgir_only(capsys):
    cache = data_path("occupancy", "triton_cache_gfx942")
    ttgir = data_path("occupancy", "ttgir", "seed001_lds_twice.ttgir")
    assert main(["occupancy", "--json", str(ttgir)]) == 2  # old TTGIR names no target
    assert capsys.readouterr().err == (
        f"rocanalyze: error: {ttgir}: kernel attn_decode_int4: the file names no target arch (gfx...); "
        "pass --arch\n")
    assert main(["occupancy", "--json", "--arch", "gfx942", str(cache), str(ttgir)]) == 0
    cached, seed = json.loads(capsys.readouterr().out)
    assert (cached["compiler_waves_per_simd"], cached["waves_per_eu"], cached["lds_bytes"]) == (2, 2, 16384)
    assert {f["id"] for f in cached["lint"]} >= {"scratch", "global_loads", "lds_access"}
    assert seed["compiler_waves_per_simd"] is None and seed["lds_bytes"] == 16384
    assert any(f["id"] == "lds_round_trips" for f in seed["lint"])


def test_realdata_never_tracebacks(capsys):
    folders = [str(realdata_path("amdgcn")), str(realdata_path("triton_ir"))]
    assert main(["occupancy", "--json", *folders]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 17
    stencil = [r for r in rows if "xyz_lds_window" in r["kernel"]][0]
    assert (stencil["compiler_waves_per_simd"], stencil["model"]) == (2, "llvm-legacy")


def test_num_warps_uses_the_kernels_wave_size(capsys):
    wave32 = CORPUS / "gfx1100" / "softmax_b1024_w4.amdgcn.gz"
    assert main(["occupancy", "--json", "--num-warps", "8", str(wave32)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["wave_size"], row["workgroup_size"], row["waves_per_workgroup"]) == (32, 256, 8)


@pytest.mark.skipif(not demangle_available(), reason="no C++ runtime demangler (libstdc++ / libc++abi) could be loaded")
def test_hipcc_kernels_are_shown_by_their_demangled_names(capsys):
    """hipcc's code object names kernels by their mangled symbols; the table and the Markdown show them as a
    person reads them (no `void`, no parameter list), the JSON keeps the symbol."""
    folder = realdata_path("amdgcn", "hpctraining_seismic_stencils")
    assert main(["occupancy", "--markdown", str(folder)]) == 0
    md = capsys.readouterr().out
    assert "| compute_fd_x_kernel<4> | gfx90a |" in md and "| max_absval_gpu_kernel | gfx90a |" in md
    assert "_Z19compute_fd_x_kernel" not in md
    assert main(["occupancy", "--json", str(folder)]) == 0
    kernels = {row["kernel"] for row in json.loads(capsys.readouterr().out)}
    assert "_Z19compute_fd_x_kernelILi4EEvPfPKfS2_iiiiiiii" in kernels


GFX942_W4 = ["--arch", "gfx942", "--num-warps", "4"]


@pytest.mark.parametrize(("argv", "message"), [
    ([*GFX942_W4, "--vgpr", "600"], "gfx942 addresses at most 256 arch VGPRs per lane, not 600"),
    ([*GFX942_W4, "--vgpr", "64", "--agpr", "300"], "gfx942 addresses at most 256 AGPRs per lane, not 300"),
    (["--arch", "gfx1100", "--vgpr", "64", "--agpr", "8", "--num-warps", "4"],
     "gfx1100 has no AGPRs (accumulation registers are CDNA's); --agpr 8"),
    (["--arch", "gfx942", "--vgpr", "64", "--block-size", "2048"],
     "a workgroup holds at most 1024 work-items on gfx942, not 2048"),
    (["--vgpr", "600", str(EXAMPLE)],
     f"{EXAMPLE}: kernel matmul_kernel: gfx942 addresses at most 256 arch VGPRs per lane, not 600"),
])
def test_impossible_what_if_values_are_refused(argv, message, capsys):
    """A typed what-if no kernel can have (600 VGPRs, AGPRs on RDNA, a 2048-item workgroup) was turned into an
    occupancy; now one line, exit 2. The largest legal values still compute."""
    assert main(["occupancy", *argv]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {message}\n"


def test_largest_legal_what_if_still_computes(capsys):
    argv = ["occupancy", "--json", "--arch", "gfx942", "--vgpr", "256", "--agpr", "256", "--block-size", "1024"]
    assert main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["waves_per_simd"], row["limiter"]) == (0.0, "vgpr")  # 16 waves need 4 per SIMD; 512 registers allow 1
