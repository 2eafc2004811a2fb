"""`rocanalyze profile` through the real CLI boundary on CPU-only torch: success, crash, exit codes, Ctrl-C."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rocanalyze.cli import main

pytest.importorskip("torch")

TRAIN = textwrap.dedent("""
    import argparse, os, signal, sys
    import torch
    import rocanalyze
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--end", default="ok")
    args = p.parse_args()
    model = torch.nn.Linear(32, 32)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 32)
    for i in range(args.steps):
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
        if i == 1 and args.end == "crash":
            raise RuntimeError("CUDA out of memory (simulated)")
        if i == 1 and args.end == "ctrl-c":
            os.kill(os.getpid(), signal.SIGINT)
        if i == 1 and args.end == "os-exit":
            os._exit(7)
        if i == 1 and args.end in ("sigterm", "own-handler"):
            os.kill(os.getpid(), signal.SIGTERM)
        if i == 0 and args.end == "own-handler":
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(9))
    if args.end == "exit3":
        sys.exit(3)
    if args.end == "hard":  # dies without Python's shutdown, as a native crash does
        import ctypes
        ctypes.string_at(0)
    if args.end == "os-exit-0":   # skips a slow teardown: a normal end
        import multiprocessing
        child = multiprocessing.get_context("fork").Process(target=print, args=("child",))
        child.start()          # a forked child ends with os._exit too: that is not the script's end
        child.join()
        print("trained", args.steps, flush=True)
        os._exit(0)
    print("trained", args.steps)
""")


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    return path


def _run_json(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


def _trace_names(run: Path) -> set[str]:
    return {e.get("name", "") for e in json.loads(gzip.decompress((run / "trace.json.gz").read_bytes()))["traceEvents"]}


def test_cpu_only_run_completes_with_zero_gpu_activity(tmp_path: Path, script: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["profile", "--no-report", "-o", str(run), str(script), "--steps", "4"]) == 0
    out = capsys.readouterr().out
    assert "trained 4" in out
    assert f"rocanalyze: the script completed; run folder {run}\n" in out
    assert ("rocanalyze: no GPU visible to torch (CPU-only build or no device): the trace holds no GPU activity"
            in out)
    assert "rocanalyze: 4 steps, from optimizer.step() calls\n" in out
    assert out.rstrip().endswith(f"next: rocanalyze analyze {run}")
    info = _run_json(run)
    assert info["command"] == ["python", str(script), "--steps", "4"]
    assert (info["exit_code"], info["failed"], info["partial"], info["status"]) == (0, False, False, "completed")
    assert info["torch"].pop("children_cpu_s") < 0.5          # no child process did the work
    assert info["torch"] == {"gpu_activity": False, "step_source": "optimizer", "steps": 4,
                             "trace": "trace.json.gz"}
    assert sorted(p.name for p in run.iterdir()) == ["env.json", "run.json", "trace.json.gz"]
    assert {f"ProfilerStep#{i}" for i in range(4)} <= _trace_names(run)
    assert json.loads((run / "env.json").read_text())["torch"]["gpus"] == []


def test_crash_keeps_the_trace_and_returns_1(tmp_path: Path, script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["profile", "--no-report", "-o", str(run), str(script), "--steps", "5", "--end", "crash"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f'Traceback (most recent call last):\n  File "{script}", line 17, in <module>\n')
    assert err.endswith("RuntimeError: CUDA out of memory (simulated)\n")
    info = _run_json(run)
    assert (info["exit_code"], info["failed"], info["partial"], info["status"]) == (1, True, True, "failed")
    assert info["error"] == "RuntimeError: CUDA out of memory (simulated)"
    assert {"ProfilerStep#0", "ProfilerStep#1"} <= _trace_names(run)      # the trace up to the crash


def test_long_run_records_the_first_steps_and_says_so(tmp_path: Path, script: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["profile", "-o", str(run), str(script), "--steps", "45"]) == 0
    out = capsys.readouterr().out
    note = ("recorded steps 1-20 of the 45 the script ran (the default); --steps all records every step, "
            "--steps WAIT,WARMUP,ACTIVE others")
    assert "trained 45" in out and f"rocanalyze: {note}\n" in out
    assert _run_json(run)["torch"]["schedule"] == {"first_steps": 20}
    steps = {n for n in _trace_names(run) if n.startswith("ProfilerStep#")}
    assert steps == {f"ProfilerStep#{i}" for i in range(20)}
    analysis = json.loads((run / "analysis.json").read_text())
    assert f"run.json: {note}" in analysis["notes"]                  # the report says it too
    assert f"run.json: {note}" in (run / "report.html").read_text()
    # --steps all: every step and the tail after the last one
    every = tmp_path / "every"
    assert main(["profile", "--no-report", "--steps", "all", "-o", str(every), str(script), "--steps", "45"]) == 0
    assert {n for n in _trace_names(every) if n.startswith("ProfilerStep#")} == {f"ProfilerStep#{i}" for i in range(46)}
    assert _run_json(every)["profile_command"][:4] == ["rocanalyze", "profile", "--steps", "all"]


def test_hard_death_after_the_window_keeps_the_trace_and_says_where(tmp_path: Path, script: Path) -> None:
    """A process that dies without Python's shutdown (a segfault, SIGKILL) takes rocanalyze with it:
    the trace of steps 1-20, saved when the window closed, and the line saying where it is, are what is left;
    analyzing that folder says the run never finished its record."""
    from rocanalyze.analysis.build import analyze

    run = tmp_path / "run"
    proc = _profile_in_child(run, script, "--steps", "25", "--end", "hard")
    assert proc.returncode == -11        # SIGSEGV
    assert (f"rocanalyze: steps 1-20 recorded, trace saved to {run / 'trace.json.gz'}; the script runs on "
            "unrecorded\n") in proc.stderr
    assert "rocanalyze: the script" not in proc.stdout + proc.stderr  # nothing after the death
    assert _run_json(run)["status"] == "running"
    assert {n for n in _trace_names(run) if n.startswith("ProfilerStep#")} == {f"ProfilerStep#{i}" for i in range(20)}
    assert any(n.startswith("run.json: the run never finished its record") for n in analyze(run).notes)


def _profile_in_child(run: Path, script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocanalyze", "profile", "-o", str(run), str(script), *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})


def test_os_exit_inside_the_window_saves_the_run_and_its_report(tmp_path: Path, script: Path) -> None:
    """os._exit skips every `finally`: rocanalyze saves the trace, the records and the report first."""
    run = tmp_path / "run"
    proc = _profile_in_child(run, script, "--steps", "5", "--end", "os-exit")
    assert proc.returncode == 7
    assert f"rocanalyze: the script ended with os._exit(7); saving what was recorded in {run}\n" in proc.stderr
    assert f"rocanalyze: the script failed (exit code 7); run folder {run}\n" in proc.stdout
    info = _run_json(run)
    assert (info["status"], info["exit_code"], info["partial"], info["error"]) == (
        "failed", 7, True, "the script ended with os._exit(7)")
    assert {n for n in _trace_names(run) if n.startswith("ProfilerStep#")} == {f"ProfilerStep#{i}" for i in range(3)}
    assert {"analysis.json", "report.html", "summary.md", "env.json"} <= {p.name for p in run.iterdir()}
    assert "the profiled script failed; this covers what ran before it stopped" in (run / "summary.md").read_text()


def test_os_exit_0_after_a_forked_child_is_a_normal_end(tmp_path: Path, script: Path) -> None:
    run = tmp_path / "run"
    proc = _profile_in_child(run, script, "--end", "os-exit-0")
    assert proc.returncode == 0
    assert proc.stdout.count("child\n") == 1 and proc.stderr.count("os._exit") == 1   # the script's, not the child's
    info = _run_json(run)
    assert (info["status"], info["exit_code"], info["partial"], info["error"]) == ("completed", 0, False, None)
    assert "Warning" not in (run / "summary.md").read_text()


def test_sigterm_saves_the_trace_then_dies_of_it(tmp_path: Path, script: Path) -> None:
    """`timeout`, a scheduler's time limit: the trace and run.json are saved, the report is left for later."""
    run = tmp_path / "run"
    proc = _profile_in_child(run, script, "--steps", "5", "--end", "sigterm")
    assert proc.returncode == -15
    assert "rocanalyze: the script was terminated (SIGTERM)" in proc.stdout
    assert f"next: rocanalyze analyze {run}\n" in proc.stdout
    info = _run_json(run)
    assert (info["status"], info["exit_code"], info["error"]) == ("failed", 143, "the script ended with SIGTERM")
    assert {n for n in _trace_names(run) if n.startswith("ProfilerStep#")} == {f"ProfilerStep#{i}" for i in range(3)}
    assert not (run / "analysis.json").exists()


def test_a_script_handling_sigterm_keeps_its_handler(tmp_path: Path, script: Path) -> None:
    run = tmp_path / "run"
    proc = _profile_in_child(run, script, "--end", "own-handler")
    assert proc.returncode == 9                       # its handler's sys.exit(9), through the normal end
    assert "ended with SIGTERM" not in proc.stderr
    assert (_run_json(run)["exit_code"], (run / "trace.json.gz").is_file()) == (9, True)


def test_sys_exit_code_is_returned(tmp_path: Path, script: Path) -> None:
    run = tmp_path / "run"
    assert main(["profile", "--no-report", "-o", str(run), str(script), "--end", "exit3"]) == 3
    info = _run_json(run)
    assert (info["exit_code"], info["failed"], info["partial"]) == (3, True, False)


def test_ctrl_c_saves_the_trace_and_returns_130(tmp_path: Path, script: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["profile", "--no-report", "-o", str(run), str(script), "--steps", "5", "--end", "ctrl-c"]) == 130
    assert capsys.readouterr().err.endswith("KeyboardInterrupt\n")
    info = _run_json(run)
    assert (info["exit_code"], info["interrupted"], info["partial"]) == (130, True, True)
    assert (run / "trace.json.gz").is_file()


def test_existing_output_folder_is_never_overwritten(tmp_path: Path, script: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "analysis.json").write_text("{}")
    assert main(["profile", "-o", str(run), str(script)]) == 2
    assert capsys.readouterr().err == (f"rocanalyze: error: {run}: output folder already exists; "
                                       "choose another -o or remove it\n")
    assert [p.name for p in run.iterdir()] == ["analysis.json"]


@pytest.mark.parametrize(("args", "line"), [
    ([], "nothing to profile: give a script (rocanalyze profile train.py) or -m MODULE"),
    (["--steps", "2,x", "t.py"], "--steps '2,x': expected ACTIVE or WAIT,WARMUP,ACTIVE (non-negative integers, "
                                 "ACTIVE >= 1), e.g. --steps 5 or --steps 2,1,5, or all"),
    (["--collector", "nsys", "SCRIPT"], "--collector 'nsys': expected one of torch, rocprof, both"),
    (["missing.py"], "missing.py: script not found"),
    (["sub"], "sub: a folder with no __main__.py: give the script to run"),
    (["--", "./app"], "'./app' is not a Python script; a program after `--` needs --collector rocprof"),
    (["--rules", "nope.toml", "SCRIPT"], "nope.toml: rules file not found"),  # before the script runs
])
def test_user_errors_are_one_line(tmp_path: Path, script: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch, args: list[str], line: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "sub").mkdir()
    args = [str(script) if a == "SCRIPT" else a for a in args]
    assert main(["profile", *args]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {line}\n"
    assert not any(p.name.startswith("rocanalyze-") for p in tmp_path.iterdir())


def test_module_with_schedule_and_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    monkeypatch.chdir(tmp_path)
    assert main(["profile", "--no-report", "--steps", "1,1,2", "--memory", "--with-stack", "-m", "pkg.train",
                 "--steps", "6"]) == 0
    [run] = [p for p in tmp_path.iterdir() if p.name.startswith("rocanalyze-pkg.train-")]
    info = _run_json(run)
    assert info["command"] == ["python", "-m", "pkg.train", "--steps", "6"]
    assert info["profile_command"] == ["rocanalyze", "profile", "--steps", "1,1,2", "--with-stack", "--memory",
                                       "-m", "pkg.train", "--steps", "6"]
    assert info["torch"]["schedule"] == {"wait": 1, "warmup": 1, "active": 2}
    assert info["torch"]["memory"] == "memory.json"
    assert json.loads((run / "memory.json").read_text())["note"] == "no GPU: device memory not recorded"
    assert {n for n in _trace_names(run) if n.startswith("ProfilerStep#")} == {"ProfilerStep#2", "ProfilerStep#3"}
    events = json.loads(gzip.decompress((run / "trace.json.gz").read_bytes()))["traceEvents"]
    frames = {e["name"] for e in events if e.get("cat") == "python_function"}      # --with-stack
    assert "pkg/train.py(14): <module>" in frames          # the script's loop line, path as Kineto shortens it


def test_torch_missing_is_one_line(tmp_path: Path, script: Path) -> None:
    shim = tmp_path / "shim" / "torch"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text('raise ImportError("No module named \'torch\'")\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim.parent), str(Path(__file__).parents[2])])}
    proc = subprocess.run([sys.executable, "-m", "rocanalyze", "profile", "-o", str(tmp_path / "run"), str(script)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == ("rocanalyze: error: PyTorch is not importable (No module named 'torch'); install the "
                           "ROCm or CUDA build of torch for your GPU, or use --collector rocprof\n")
    assert not (tmp_path / "run").exists()


def test_full_run_writes_the_analysis_and_reports(tmp_path: Path, script: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["profile", "-o", str(run), str(script)]) == 0
    out = capsys.readouterr().out
    assert {"analysis.json", "report.html", "summary.md", "trace.pftrace"} <= {p.name for p in run.iterdir()}
    analysis = json.loads((run / "analysis.json").read_text())
    assert analysis["run"]["command"] == ["python", str(script)] and analysis["run"]["exit_code"] == 0
    assert "no GPU activity was recorded (CPU-only run or no GPU work)" in analysis["notes"]
    assert analysis["kernels"] == []
    assert "  (no GPU kernels recorded)\n" in out
    assert f"report: {run / 'report.html'}\n" in out
    assert out.rstrip().endswith(f"next: open {run / 'report.html'}; after a change, profile again and "
                                 f"rocanalyze compare {run} NEW_RUN")


def test_a_script_that_changes_directory_keeps_a_relative_run_folder(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`-o run` is relative to where rocanalyze started, not where the script ends: a script that called
    os.chdir made the after-run writes fail ('run/env.json: cannot write')."""
    script = tmp_path / "wander.py"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script.write_text(TRAIN.replace("args = p.parse_args()", f"args = p.parse_args(); os.chdir({str(elsewhere)!r})"))
    monkeypatch.chdir(tmp_path)
    assert main(["profile", "-o", "run", str(script)]) == 0
    assert {"run.json", "env.json", "trace.json.gz", "analysis.json", "report.html"} <= {
        p.name for p in (tmp_path / "run").iterdir()}
    assert not (elsewhere / "run").exists() and _run_json(tmp_path / "run")["status"] == "completed"


OWN_PROFILER = textwrap.dedent("""
    import sys, torch
    from torch.profiler import profile, ProfilerActivity
    model = torch.nn.Linear(32, 32)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    def step():
        model(torch.randn(8, 32)).square().mean().backward(); opt.step(); opt.zero_grad()
    for _ in range(int(sys.argv[1])):
        step()
    with profile(activities=[ProfilerActivity.CPU]) as own:
        for _ in range(3):
            step()
    print("own profiler events", len(own.events()) > 0)
""")


@pytest.mark.parametrize(("before", "cut_at"), [(5, 5), (25, None)])
def test_a_script_with_its_own_profiler_keeps_it_and_ours_steps_aside(tmp_path: Path, before: int,
                                                                      cut_at: int | None) -> None:
    """A script running its own torch.profiler inside our recording window ended our session, and torch
    then segfaulted exporting ours (exit 139, no report). Ours now stops first, keeping what it recorded;
    the script's profiler works; after our window closed nothing changes."""
    script = tmp_path / "own.py"
    script.write_text(OWN_PROFILER)
    run = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "rocanalyze", "profile", "-o", str(run), str(script), str(before)],
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "own profiler events True" in proc.stdout
    facts = _run_json(run)["torch"]
    steps = {n for n in _trace_names(run) if n.startswith("ProfilerStep#")}
    if cut_at is None:
        assert "stepped_aside_at" not in facts and steps == {f"ProfilerStep#{i}" for i in range(20)}
        return
    assert facts["stepped_aside_at"] == cut_at and "own torch.profiler at step 5" in facts["schedule_note"]
    assert "rocanalyze: the script starts its own torch.profiler at step 5" in proc.stderr
    assert steps == {f"ProfilerStep#{i}" for i in range(cut_at + 1)}  # the last one cut where ours stopped
    assert (run / "report.html").is_file()


THREADED = textwrap.dedent("""
    import sys, threading, torch
    model = torch.nn.Linear(32, 32)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    def train():
        for _ in range(30):
            model(torch.randn(8, 32)).square().mean().backward(); opt.step(); opt.zero_grad()
    worker = threading.Thread(target=train)
    worker.start()
    if sys.argv[1] == "join":
        worker.join()
    print("main thread done")
""")


@pytest.mark.parametrize("main_thread", ["join", "return"])
def test_training_in_a_worker_thread(tmp_path: Path, main_thread: str) -> None:
    """Optimizer steps from a worker thread stepped torch.profiler there, and torch segfaulted exporting
    (exit 139). Now they are counted, not used to step it. A script whose main thread returns while a
    non-daemon thread trains is waited for, as the interpreter waits at exit: its 30 steps are seen."""
    script = tmp_path / "threaded.py"
    script.write_text(THREADED)
    run = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "rocanalyze", "profile", "-o", str(run), str(script), main_thread],
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert proc.returncode == 0, proc.stderr[-2000:]
    facts = _run_json(run)["torch"]
    assert (facts["steps"], facts["steps_from_other_threads"]) == (30, 30)
    assert facts["schedule_note"].startswith("30 of the 30 steps were marked from a thread other than the main one")
    assert (run / "report.html").is_file()


def test_the_child_processes_cpu_time_is_recorded(tmp_path: Path) -> None:
    """A launcher that runs the real work in a child process: run.json says how much CPU the children used,
    which is what tells a run with no GPU work of its own that the work ran elsewhere."""
    script = tmp_path / "launcher.py"
    script.write_text("import subprocess, sys\n"
                      "subprocess.run([sys.executable, '-c', 'import time\\nt = time.process_time()\\n"
                      "while time.process_time() - t < 0.8: pass'], check=True)\n")
    run = tmp_path / "run"
    assert main(["profile", "--no-report", "-o", str(run), str(script)]) == 0
    assert 0.8 <= _run_json(run)["torch"]["children_cpu_s"] < 5
