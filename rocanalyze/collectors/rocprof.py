"""The rocprofv3 collector: its own pass, in a child process, writing into RUN/rocprof/.

rocprofv3 and Kineto's tracer in one process have produced empty Kineto traces, and two tracers
perturb each other, so rocprofv3 wraps a child python (`python -m rocanalyze.collectors.child`)
that runs the script with no other profiler; a non-Python program after `--` runs as it is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rocanalyze.collectors.runner import Target
from rocanalyze.errors import UserError

FORMATS = ("csv", "rocpd")
OUTPUT_NAME = "rocprof"     # rocprofv3 -o: files are <name>_kernel_trace.csv, <name>_results.db, ...
CHILD_STATUS = "child.json"
NOT_FOUND = ("rocprofv3 not found: install ROCm's rocprofiler-sdk (it puts rocprofv3 in /opt/rocm/bin; "
             "add that folder to PATH) or use --collector torch")

# Output files by what follows "<name>_" in rocprofv3's file names.
OUTPUT_KINDS = {
    "kernel_trace.csv": "kernel_trace", "memory_copy_trace.csv": "memory_copy_trace",
    "kernel_stats.csv": "kernel_stats", "memory_copy_stats.csv": "memory_copy_stats",
    "domain_stats.csv": "domain_stats", "agent_info.csv": "agent_info", "results.db": "rocpd",
}


def find_rocprofv3(path: str | None = None) -> str:
    """Path of the rocprofv3 executable on PATH; UserError with how to get it when missing."""
    exe = shutil.which("rocprofv3", path=path)
    if exe is None:
        raise UserError(NOT_FOUND)
    return exe


def program_for(target: Target, python: str = sys.executable) -> list[str]:
    """The command rocprofv3 runs: a child python running the script/module, or the program itself."""
    if target.kind == "program":
        if shutil.which(target.name) is None and not Path(target.name).is_file():
            raise UserError("program not found", target.name)
        return target.argv
    return [python, "-m", "rocanalyze.collectors.child", *target.argv]


def rocprof_command(exe: str, out_dir: Path, program: list[str], fmt: str = "csv",
                    name: str = OUTPUT_NAME) -> list[str]:
    """The exact rocprofv3 command line: kernel and copy traces plus --stats into out_dir."""
    if fmt not in FORMATS:
        raise UserError(f"--rocprof-format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return [exe, "--kernel-trace", "--memory-copy-trace", "--stats", "--output-format", fmt,
            "-d", str(out_dir), "-o", name, "--", *program]


def run_rocprof(command: list[str], out_dir: Path, env: dict[str, str] | None = None) -> int:
    """Run rocprofv3 (inheriting stdio); return its exit code, 130 after Ctrl-C (the child gets it too)."""
    child_env = dict(os.environ if env is None else env)
    child_env["ROCANALYZE_CHILD_STATUS"] = str(out_dir / CHILD_STATUS)
    child_env["ROCANALYZE_CHILD"] = "1"
    proc = subprocess.Popen(command, env=child_env)
    with _forwarding_sigterm(proc):
        try:
            return _exit_code(proc.wait())
        except KeyboardInterrupt:
            # The terminal sent SIGINT to the whole process group; let the child save its outputs.
            try:
                return _exit_code(proc.wait(timeout=30)) or 130
            except (subprocess.TimeoutExpired, KeyboardInterrupt):
                proc.send_signal(signal.SIGTERM)
                proc.wait()
                return 130


@contextlib.contextmanager
def _forwarding_sigterm(proc: subprocess.Popen) -> Iterator[None]:
    """A SIGTERM to rocanalyze (`timeout`, a scheduler) goes on to the profiled program instead of leaving it
    running orphaned; rocanalyze then records how it ended, as for any other end."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: proc.send_signal(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_code(rc: int) -> int:
    """A child killed by signal N reports -N; the shell's code for it is 128 + N."""
    return 128 - rc if rc < 0 else rc


def discover_outputs(out_dir: Path) -> dict[str, list[str]]:
    """rocprofv3's files under out_dir (it may add <host>/<pid>/ folders): kind -> relative paths."""
    found: dict[str, list[str]] = {}
    for path in sorted(out_dir.rglob("*")):
        if not path.is_file():
            continue
        for tail, kind in OUTPUT_KINDS.items():
            if path.name.endswith("_" + tail) or path.name == tail:
                found.setdefault(kind, []).append(str(path.relative_to(out_dir)))
    return found


def pass_facts(command: list[str], rc: int, out_dir: Path, status: dict[str, Any] | None) -> dict[str, Any]:
    """run.json's `rocprof` entry: command, rocprofv3's exit code, the files it wrote, the child's status."""
    outputs = discover_outputs(out_dir)
    facts: dict[str, Any] = {"command": command, "exit_code": rc, "outputs": outputs}
    if status is not None:
        facts["child"] = status
    if not outputs:
        facts["note"] = "rocprofv3 wrote no trace files"
    return facts
