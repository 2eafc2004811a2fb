"""`--collector rocprof|both` through the CLI with a stand-in rocprofv3 that replays real outputs."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from rocanalyze.cli import main
from tests.conftest import ROOT, realdata_path

STANDIN = ROOT / "tests" / "data" / "rocprofv3_standin"

SCRIPT = textwrap.dedent("""
    import os, signal, sys
    print("child argv", sys.argv[1:], "main", __name__)
    if "--fail" in sys.argv:
        raise KeyError("missing weight")
    if "--ctrl-c" in sys.argv:
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0)
""")


@pytest.fixture()
def standin_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    realdata_path("rocprofv3")                       # skips where ../shared/realdata is absent
    monkeypatch.setenv("PATH", f"{STANDIN}:{Path(sys.executable).parent}:/usr/bin:/bin")


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    path = tmp_path / "app.py"
    path.write_text(SCRIPT)
    return path


def _run_json(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


@pytest.mark.realdata
def test_csv_pass_runs_the_child_and_keeps_its_exit_code(tmp_path: Path, script: Path, standin_on_path: None,
                                                        capfd: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["profile", "--collector", "rocprof", "--no-report", "-o", str(run), str(script), "3"]) == 3
    assert "child argv ['3'] main __main__" in capfd.readouterr().out
    info = _run_json(run)
    assert info["rocprof"]["command"] == [
        str(STANDIN / "rocprofv3"), "--kernel-trace", "--memory-copy-trace", "--stats", "--output-format", "csv",
        "-d", str((run / "rocprof").resolve()), "-o", "rocprof", "--",
        sys.executable, "-m", "rocanalyze.collectors.child", str(script), "3"]
    assert info["rocprof"]["outputs"] == {"agent_info": ["rocprof_agent_info.csv"],
                                          "kernel_trace": ["rocprof_kernel_trace.csv"],
                                          "memory_copy_trace": ["rocprof_memory_copy_trace.csv"]}
    assert (info["exit_code"], info["failed"], info["partial"]) == (3, True, False)
    assert info["rocprof"]["child"]["exit_code"] == 3
    replayed = (run / "rocprof" / "rocprof_kernel_trace.csv").read_bytes()
    assert replayed == realdata_path("rocprofv3", "rocprofiler_sdk_docs", "kernel_trace.v2025.csv").read_bytes()


@pytest.mark.realdata
def test_rocpd_pass_and_a_crashing_child(tmp_path: Path, script: Path, standin_on_path: None,
                                         capfd: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    args = ["profile", "--collector", "rocprof", "--rocprof-format", "rocpd", "--no-report", "-o", str(run)]
    assert main([*args, str(script), "--fail"]) == 1
    err = capfd.readouterr().err
    assert err.startswith(f'Traceback (most recent call last):\n  File "{script}", line 5, in <module>\n')
    info = _run_json(run)
    assert info["rocprof"]["outputs"] == {"rocpd": ["rocprof_results.db"]}
    assert (info["exit_code"], info["partial"], info["error"]) == (1, True, "KeyError: 'missing weight'")


@pytest.mark.realdata
def test_non_python_program_after_double_dash(tmp_path: Path, standin_on_path: None) -> None:
    run = tmp_path / "run"
    # the tool's own name works as the collector's (what users type)
    assert main(["profile", "--collector", "rocprofv3", "--no-report", "-o", str(run), "--", "sh", "-c", "exit 4"]) == 4
    info = _run_json(run)
    assert info["command"] == ["sh", "-c", "exit 4"]
    # the command to run it again, spelled canonically
    assert info["profile_command"] == ["rocanalyze", "profile", "--collector", "rocprof", "--", "sh", "-c", "exit 4"]
    assert info["rocprof"]["command"][-4:] == ["--", "sh", "-c", "exit 4"]
    assert (info["exit_code"], info["error"]) == (4, "rocprofv3 exited with 4")


def test_missing_rocprofv3_is_one_line(tmp_path: Path, script: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["profile", "--collector", "rocprof", "-o", str(tmp_path / "run"), str(script)]) == 2
    assert capsys.readouterr().err == (
        "rocanalyze: error: rocprofv3 not found: install ROCm's rocprofiler-sdk (it puts rocprofv3 in "
        "/opt/rocm/bin; add that folder to PATH) or use --collector torch\n")
    assert not (tmp_path / "run").exists()


@pytest.mark.realdata
def test_both_runs_two_passes(tmp_path: Path, script: Path, standin_on_path: None) -> None:
    pytest.importorskip("torch")
    run = tmp_path / "run"
    assert main(["profile", "--collector", "both", "--no-report", "-o", str(run), str(script)]) == 0
    info = _run_json(run)
    assert info["collector"] == "both" and info["torch"]["trace"] == "trace.json.gz"
    assert info["rocprof"]["child"]["exit_code"] == 0
    assert sorted(p.name for p in run.iterdir()) == ["env.json", "rocprof", "run.json", "trace.json.gz"]
    assert info["rocprof"]["join"] == "rocprof/join.json"
    joined = json.loads((run / "rocprof" / "join.json").read_text())
    # CPU torch pass: no kernels, so each of the replayed rocprof dispatches is unmatched
    assert joined["unmatched_dispatches"] == sum(e["rocprof_calls"] for e in joined["kernels"]) > 0
    divide = next(e for e in joined["kernels"] if e["name"].startswith("divide_kernel"))
    assert (divide["torch_calls"], divide["matched"], divide["vgpr"], divide["agpr"]) == (0, 0, 12, 4)


@pytest.mark.realdata
def test_both_skips_the_second_pass_after_a_failure(tmp_path: Path, script: Path, standin_on_path: None) -> None:
    pytest.importorskip("torch")
    run = tmp_path / "run"
    assert main(["profile", "--collector", "both", "--no-report", "-o", str(run), str(script), "--fail"]) == 1
    info = _run_json(run)
    assert info["rocprof"] == {"note": "rocprof pass skipped: the script failed in the torch pass"}
    assert not (run / "rocprof").exists() and info["error"] == "KeyError: 'missing weight'"


@pytest.mark.realdata
def test_ctrl_c_in_the_child_returns_130(tmp_path: Path, script: Path, standin_on_path: None) -> None:
    run = tmp_path / "run"
    assert main(["profile", "--collector", "rocprof", "--no-report", "-o", str(run), str(script), "--ctrl-c"]) == 130
    info = _run_json(run)
    assert (info["exit_code"], info["interrupted"], info["partial"]) == (130, True, True)
    assert info["rocprof"]["exit_code"] == 130 and info["rocprof"]["outputs"]["kernel_trace"]
