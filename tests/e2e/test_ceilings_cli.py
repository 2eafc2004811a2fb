"""`rocanalyze ceilings` through the real CLI boundary: one-line errors without torch or a GPU, output checks.

The measurement itself needs a GPU; it was run once on an H100 and its output is the committed fixture
tests/data/ceilings/h100_peaks.json (provenance beside it), which test_gpu_spec reads back as --peaks.
"""

from __future__ import annotations

import json
import sys

import pytest

from rocanalyze.cli import main
from tests.conftest import data_path


def test_without_torch_is_one_line_exit_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert main(["ceilings", "-o", str(tmp_path / "peaks.json")]) == 2
    err = capsys.readouterr().err
    assert err == ("rocanalyze: error: torch is not installed: 'ceilings' measures with torch; install your "
                   "ROCm or CUDA build of PyTorch\n")
    assert not (tmp_path / "peaks.json").exists()


def test_torch_without_gpu_is_one_line_exit_2(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the no-GPU path cannot be exercised")
    assert main(["ceilings", "-o", str(tmp_path / "peaks.json")]) == 2
    assert capsys.readouterr().err == ("rocanalyze: error: torch sees no GPU (torch.cuda.is_available() is "
                                       "False): run 'ceilings' on the GPU machine\n")


def test_existing_output_needs_force(tmp_path, capsys):
    out = tmp_path / "peaks.json"
    out.write_text("{}")
    assert main(["ceilings", "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {out}: already exists: pass --force to overwrite it\n"
    assert out.read_text() == "{}"


def test_missing_output_folder(tmp_path, capsys):
    out = tmp_path / "no" / "peaks.json"
    assert main(["ceilings", "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {out.parent}: output folder does not exist\n"


def test_help_names_the_output_and_the_next_step(capsys):
    assert main(["ceilings", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--output" in out and "--device" in out and "rocanalyze analyze trace.json.gz --peaks" in out


def test_committed_h100_output_has_the_documented_shape():
    peaks = json.loads(data_path("ceilings", "h100_peaks.json").read_text())
    assert peaks["format"] == "rocanalyze-peaks" and peaks["version"] == 1
    assert peaks["device"]["name"] == "NVIDIA H100 80GB HBM3" and peaks["device"]["compute_units"] == 132
    assert set(peaks["peak_tflops"]) == {"bf16", "fp16", "fp32"}
    gemm = {m["dtype"]: m for m in peaks["measurements"] if m["what"] == "gemm"}
    assert peaks["peak_tflops"]["bf16"] == round(gemm["bf16"]["tflops_median"], 1) == 775.2
    copy = next(m for m in peaks["measurements"] if m["what"] == "copy")
    assert copy["counted_bytes"] == 2 * copy["bytes"] == 2**31
    assert peaks["memory_bw_gbps"] == round(copy["gbps_median"], 1)
