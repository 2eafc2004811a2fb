"""A refused input names its kind and the command that reads it; each hint is checked by following it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rocanalyze.cli import main
from rocanalyze.errors import UserError
from rocanalyze.occupancy import read_paths
from rocanalyze.occupancy.read import read_kernels
from rocanalyze.traces import read
from tests.conftest import ROOT, data_path, realdata_path

EXAMPLE_TRACE = ROOT / "examples" / "traces" / "train_step.json.gz"
TRITON_IR = ("triton_ir", "aiter_gemm_afp4wfp4_gfx950")


def _trace_error(path: Path) -> str:
    with pytest.raises(UserError) as err:
        read(path)
    return str(err.value)


def _kernel_error(path: Path) -> str:
    with pytest.raises(UserError) as err:
        read_kernels(path)
    return str(err.value)


@pytest.mark.parametrize(("parts", "kind"), [
    (("amdgcn", "batched_gemm", "bmm_asm.s"), "AMDGCN assembly"),
    (TRITON_IR + ("_gemm_afp4_wfp4_kernel_preshuffled_scales.ttgir",), "a Triton TTGIR dump"),
    (TRITON_IR + ("_gemm_afp4_wfp4_kernel_preshuffled_scales.json",), "Triton kernel metadata"),
])
def test_kernel_file_given_to_analyze_points_to_occupancy(parts, kind):
    path = realdata_path(*parts)
    assert _trace_error(path) == (f"{path}: not a trace: it is {kind}, a kernel file: "
                                  f"`rocanalyze occupancy {path}` reads it")
    assert read_kernels(path)  # and the hint is right: occupancy reads it


def test_code_object_given_to_analyze(tmp_path):
    # the code object Triton wrote for gfx942, under a name that says nothing
    code = tmp_path / "kernel.bin"
    shutil.copy(data_path("occupancy", "triton39", "gfx942", "matmul_128x128x64_w4_s2_wpe2.hsaco"), code)
    assert _trace_error(code) == (f"{code}: not a trace: it is an AMDGPU code object, a kernel file: "
                                  f"`rocanalyze occupancy {code}` reads it")
    assert read_kernels(code)


def test_rocprof_compute_side_file_points_to_its_workload_folder():
    path = realdata_path("rocprof_compute", "batched_gemm_bmm1_mi300x", "pmc_kernel_top.csv")
    assert _trace_error(path) == (f"{path}: not a trace: it is one file of a rocprof-compute workload: "
                                  f"give its folder {path.parent}")
    folder = read(path.parent)
    assert (folder.source_format, len(folder.gpu)) == ("rocprof-compute", 301)


def test_rocminfo_dump_points_to_its_folder():
    path = realdata_path("rocprof_v1", "batched_gemm_mi300x", "results.sysinfo.txt")
    assert _trace_error(path) == (f"{path}: not a trace: it is rocminfo output (the machine, no events): "
                                  f"give the trace beside it, or the whole folder {path.parent}")
    assert read(path.parent).devices[0].name == "AMD Instinct MI300X"  # the folder reads, machine included


@pytest.mark.parametrize("parts", [
    ("rocprofv3", "batched_gemm_mi300x_att", "stats_ui_output_agent_5600_dispatch_1.csv"),
    ("rocprofv3", "batched_gemm_mi300x_att", "ui_output_agent_5600_dispatch_1", "code.json"),
    ("rocprofv3", "aiter_skinny_gemm_gfx950_att", "ui_output_agent_40600_dispatch_20", "att_output.csv"),
])
def test_thread_trace_output_is_named(parts):
    assert "it is rocprofv3 thread-trace (ATT) output: instruction samples of single dispatches, no kernel " \
           "timeline" in _trace_error(realdata_path(*parts))


def test_unknown_file_still_lists_the_formats(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    assert _trace_error(path).startswith(f"{path}: not a trace format rocanalyze reads (it reads: ")
    assert _kernel_error(path) == (f"{path}: not a kernel file; expected AMDGCN assembly with its "
                                   ".amdgpu_metadata, an AMDGPU code object or offload bundle, Triton metadata "
                                   "JSON, TTGIR, or a Triton cache directory")


def test_trace_given_to_occupancy_points_to_analyze():
    assert _kernel_error(EXAMPLE_TRACE) == (
        f"{EXAMPLE_TRACE}: not a kernel file: it is a trace (torch.profiler/Kineto JSON): "
        f"`rocanalyze analyze {EXAMPLE_TRACE}` reads it, and gives each kernel's occupancy where the trace "
        "recorded its registers")
    csv = realdata_path("rocprofv3", "rocprofiler_sdk_docs", "kernel_trace.v2025.csv")
    assert f"{csv}: not a kernel file: it is a trace (rocprof v1/v2/v3 CSV): " in _kernel_error(csv)
    db = realdata_path("rocprof_v1", "batched_gemm_mi300x", "results.db")  # binary: SQLite
    assert f"{db}: not a kernel file: it is a trace (rocprofv3 rocpd SQLite, legacy rocprof results.db)" \
        in _kernel_error(db)


def test_folder_without_kernel_files_is_an_error_not_silence(tmp_path, capsys):
    folder = realdata_path("rocprofv3", "rocprofiler_sdk_docs")
    kernels, errors = read_paths([folder])
    assert kernels == [] and errors == [f"{folder}: no kernel files in this folder; expected AMDGCN assembly "
                                        "with its .amdgpu_metadata, an AMDGPU code object or offload bundle, "
                                        "Triton metadata JSON, TTGIR, or a Triton cache directory"]
    assert main(["occupancy", str(tmp_path)]) == 2  # an empty folder: exit 2, one line
    err = capsys.readouterr().err
    assert err == f"rocanalyze: error: {tmp_path}: no kernel files in this folder; expected AMDGCN assembly " \
                  "with its .amdgpu_metadata, an AMDGPU code object or offload bundle, Triton metadata JSON, " \
                  "TTGIR, or a Triton cache directory\n"
