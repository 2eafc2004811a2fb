"""rocprofv3 pass: the exact command line, the missing-tool line, output discovery on real outputs."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from rocanalyze.collectors import rocprof
from rocanalyze.collectors.runner import Target
from rocanalyze.errors import UserError
from tests.conftest import realdata_path


def test_missing_rocprofv3_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError) as err:
        rocprof.find_rocprofv3(path=str(tmp_path))
    assert str(err.value) == ("rocprofv3 not found: install ROCm's rocprofiler-sdk (it puts rocprofv3 in "
                              "/opt/rocm/bin; add that folder to PATH) or use --collector torch")


def test_found_on_path(tmp_path: Path) -> None:
    exe = tmp_path / "rocprofv3"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert rocprof.find_rocprofv3(path=str(tmp_path)) == str(exe)


def test_command_line_wraps_a_child_python() -> None:
    program = rocprof.program_for(Target("script", "train.py", ["--lr", "3"]), python="/py")
    assert rocprof.rocprof_command("/opt/rocm/bin/rocprofv3", Path("/r/rocprof"), program, "rocpd") == [
        "/opt/rocm/bin/rocprofv3", "--kernel-trace", "--memory-copy-trace", "--stats", "--output-format",
        "rocpd", "-d", "/r/rocprof", "-o", "rocprof", "--",
        "/py", "-m", "rocanalyze.collectors.child", "train.py", "--lr", "3"]
    assert rocprof.program_for(Target("module", "pkg.mod", ["x"]), python="/py") == [
        "/py", "-m", "rocanalyze.collectors.child", "-m", "pkg.mod", "x"]


def test_programs_run_as_they_are(tmp_path: Path) -> None:
    assert rocprof.program_for(Target("program", "sh", ["-c", "exit 4"])) == ["sh", "-c", "exit 4"]
    with pytest.raises(UserError) as err:
        rocprof.program_for(Target("program", str(tmp_path / "app"), []))
    assert str(err.value) == f"{tmp_path / 'app'}: program not found"


def test_unknown_output_format() -> None:
    with pytest.raises(UserError) as err:
        rocprof.rocprof_command("rocprofv3", Path("/r"), ["x"], "json")
    assert str(err.value) == "--rocprof-format 'json': expected one of csv, rocpd"


@pytest.mark.realdata
def test_discovers_real_outputs_in_host_pid_folders(tmp_path: Path) -> None:
    nested = tmp_path / "node01" / "4242"
    nested.mkdir(parents=True)
    docs = realdata_path("rocprofv3", "rocprofiler_sdk_docs")
    shutil.copy(docs / "kernel_trace.v2025.csv", nested / "rocprof_kernel_trace.csv")
    shutil.copy(docs / "memory_copy_trace.v2025.csv", nested / "rocprof_memory_copy_trace.csv")
    shutil.copy(realdata_path("rocprofv3", "batched_gemm_mi300x_att", "28_results.db"), tmp_path / "28_results.db")
    (tmp_path / "child.json").write_text("{}")
    assert rocprof.discover_outputs(tmp_path) == {
        "kernel_trace": ["node01/4242/rocprof_kernel_trace.csv"],
        "memory_copy_trace": ["node01/4242/rocprof_memory_copy_trace.csv"],
        "rocpd": ["28_results.db"]}
    facts = rocprof.pass_facts(["rocprofv3"], 0, tmp_path, None)
    assert facts["exit_code"] == 0 and "note" not in facts
    assert rocprof.pass_facts(["rocprofv3"], 1, tmp_path / "node01" / "none", None)["note"] == \
        "rocprofv3 wrote no trace files"


def test_child_program_is_this_python() -> None:
    assert rocprof.program_for(Target("script", "t.py"))[:3] == [sys.executable, "-m", "rocanalyze.collectors.child"]
