"""One `profile` run: checks, run folder, the collector passes, Triton capture, env, run.json.

The analysis is not done here (commands/profile.py calls it once the folder is complete). Every
pass saves what it has in a `finally`, so a crash or Ctrl-C leaves a run folder marked failed/partial.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rocanalyze import runfolder
from rocanalyze.collectors import environment, rocprof, triton_cache
from rocanalyze.collectors.distributed import JobInfo, job_info
from rocanalyze.collectors.runner import Outcome, Target, run_target, validate_target
from rocanalyze.collectors.sudden_end import saving_on_sudden_end
from rocanalyze.collectors.torch_profiler import FirstSteps, Schedule, TorchCollector, TorchSettings, import_torch
from rocanalyze.errors import UserError, say

COLLECTORS = ("torch", "rocprof", "both")
COLLECTOR_ALIASES = {"rocprofv3": "rocprof"}  # the tool's own name, which users type


def collector_name(text: str) -> str:
    """The collector `--collector TEXT` means (aliases resolved; an unknown name is left for check())."""
    return COLLECTOR_ALIASES.get(text.strip().lower(), text.strip().lower())


@dataclass(frozen=True)
class ProfileOptions:
    target: Target
    output: Path | None = None
    collector: str = "torch"
    schedule: Schedule | FirstSteps = FirstSteps()
    with_stack: bool = False
    memory: bool = False
    rocprof_format: str = "csv"


@dataclass
class RunResult:
    """What a run left: the folder to analyze, this process's folder, how the script ended."""

    folder: Path                       # the run folder (the job folder under torchrun)
    rank_folder: Path                  # where this process wrote (== folder for one process)
    outcome: Outcome
    job: JobInfo
    run_info: dict[str, Any] = field(default_factory=dict)


def check(opts: ProfileOptions) -> tuple[Any, str | None]:
    """Cheap checks before any work: collector, target, torch, rocprofv3. Returns (torch, rocprofv3)."""
    if opts.collector not in COLLECTORS:
        raise UserError(f"--collector {opts.collector!r}: expected one of {', '.join(COLLECTORS)}")
    if opts.target.kind == "program" and opts.collector != "rocprof":
        raise UserError(f"{opts.target.name!r} is not a Python script; a program after `--` needs "
                        "--collector rocprof")
    if opts.target.kind != "program":
        validate_target(opts.target)
    torch = import_torch() if opts.collector in ("torch", "both") else None
    exe = rocprof.find_rocprofv3() if opts.collector in ("rocprof", "both") else None
    if exe is not None:
        rocprof.rocprof_command(exe, Path("."), [], opts.rocprof_format)  # validates the format
    return torch, exe


def profile(opts: ProfileOptions, environ: dict[str, str] | None = None,
            after_sudden_end: Callable[[RunResult], None] | None = None) -> RunResult:
    """Run the target under the chosen collectors into a new run folder; never raises for the script.

    Should the script end with os._exit or be terminated (SIGTERM) during the torch pass, the trace and
    the run's records are saved first, then `after_sudden_end` gets the result, then the process ends.
    """
    env = dict(os.environ if environ is None else environ)
    torch, exe = check(opts)
    job = job_info(env)
    folder, rank_folder = _make_folders(opts, job)
    started = _now()
    info: dict[str, Any] = {"command": _python_command(opts.target), "profile_command": profile_command(opts),
                            "collector": opts.collector,
                            "started": started, "cwd": os.getcwd(), "rank": job.rank,
                            "world_size": job.world_size, "job_id": job.job_id,
                            "status": "running", "failed": False, "partial": True, "exit_code": None}
    runfolder.write_json(rank_folder / "run.json", info)
    outcome = Outcome(exit_code=1, failed=True, raised=True, error="rocanalyze stopped before the script ended")

    def close(outcome: Outcome) -> RunResult:   # the run's record, also when rocanalyze itself fails
        info.update(exit_code=outcome.exit_code, failed=outcome.failed, interrupted=outcome.interrupted,
                    partial=outcome.raised, error=outcome.error, ended=_now(),
                    status="failed" if outcome.failed else "completed")
        _finish(rank_folder, info, env, torch)
        if job.world_size > 1:
            runfolder.mark_done(rank_folder, outcome.exit_code)
        return RunResult(folder=folder, rank_folder=rank_folder, outcome=outcome, job=job, run_info=info)

    def sudden_end(outcome: Outcome) -> None:
        result = close(outcome)
        if after_sudden_end is not None:
            after_sudden_end(result)

    try:
        if opts.collector in ("torch", "both"):
            outcome = _torch_pass(opts, rank_folder, info, sudden_end)
        if opts.collector == "both" and outcome.failed:
            info["rocprof"] = {"note": "rocprof pass skipped: the script failed in the torch pass"}
        elif opts.collector in ("rocprof", "both"):
            rc = _rocprof_pass(opts, exe or "", rank_folder, info)
            if opts.collector == "rocprof":
                outcome = _outcome_from_child(rc, info["rocprof"].get("child"))
            else:
                _join(rank_folder, info)
    finally:
        result = close(outcome)
    return result


def _make_folders(opts: ProfileOptions, job: JobInfo) -> tuple[Path, Path]:
    """The run folder (and this rank's), as absolute paths: the script may change the working directory."""
    stem = opts.target.name
    if job.world_size <= 1:
        folder = runfolder.create_run_folder(runfolder.choose_run_folder(stem, opts.output).absolute())
        return folder, folder
    folder = (opts.output or Path(f"{runfolder.default_run_name(stem, job.started)}-{job.short_id}")).absolute()
    rank_folder = runfolder.claim_job_folder(folder, job.job_id, job.world_size, job.rank,
                                             {"command": _python_command(opts.target)})
    return folder, rank_folder


def _torch_pass(opts: ProfileOptions, folder: Path, info: dict[str, Any],
                sudden_end: Callable[[Outcome], None]) -> Outcome:
    settings = TorchSettings(schedule=opts.schedule, with_stack=opts.with_stack, memory=opts.memory)
    collector = TorchCollector(folder, settings)
    outcome = Outcome(exit_code=1, failed=True, error="profiler did not start")
    t0, before = time.perf_counter(), os.times()
    stopped = False

    def stop() -> None:   # once: at the script's end, or at its sudden end
        nonlocal stopped
        if stopped:
            return
        stopped = True
        info["script_s"] = round(time.perf_counter() - t0, 3)
        facts = collector.stop()
        memory = facts.pop("memory", None)
        if memory is not None:
            runfolder.write_json(folder / "memory.json", memory)
            facts["memory"] = "memory.json"
        after = os.times()   # CPU time of the child processes the script started and waited for
        facts["children_cpu_s"] = round(after.children_user + after.children_system
                                        - before.children_user - before.children_system, 3)
        info["torch"] = facts
        trace = folder / facts["trace"] if facts.get("trace") else None
        _capture_triton(folder, info, triton_cache.loaded_kernels(), trace)

    def save(how: str, code: int) -> None:
        say(f"the script ended with {how}; saving what was recorded in {folder}")
        stop()
        # os._exit(0) is a script's way to skip a slow teardown: its trace is whole; other ends cut it
        sudden_end(Outcome(exit_code=code, failed=code != 0, raised=code != 0, terminated=how == "SIGTERM",
                           error=None if code == 0 else f"the script ended with {how}"))

    try:
        collector.start()
        with saving_on_sudden_end(save):
            outcome = run_target(opts.target)
    finally:
        stop()
    return outcome


def _rocprof_pass(opts: ProfileOptions, exe: str, folder: Path, info: dict[str, Any]) -> int:
    out_dir = folder / "rocprof"
    out_dir.mkdir()
    command = rocprof.rocprof_command(exe, out_dir.resolve(), rocprof.program_for(opts.target),
                                      opts.rocprof_format)
    rc = rocprof.run_rocprof(command, out_dir)
    status_path = out_dir / rocprof.CHILD_STATUS
    status = json.loads(status_path.read_text()) if status_path.is_file() else None
    info["rocprof"] = rocprof.pass_facts(command, rc, out_dir, status)
    if "triton" not in info and status is not None:
        kernels = [triton_cache.TritonKernel(**k) for k in status.pop("triton_kernels", [])]
        traces = info["rocprof"]["outputs"].get("kernel_trace", [])
        _capture_triton(folder, info, kernels, out_dir / traces[0] if traces else None)
    return rc


def _join(folder: Path, info: dict[str, Any]) -> None:
    """--collector both: rocprof/join.json matching the two passes' kernels; a note when impossible."""
    from rocanalyze.collectors.join import write_join

    outputs = info["rocprof"]["outputs"]
    found = (outputs.get("kernel_trace") or outputs.get("rocpd") or [None])[0]
    trace = (info.get("torch") or {}).get("trace")
    if not found or not trace:
        info["rocprof"]["join"] = "not joined: a pass left no kernel trace"
        return
    try:
        write_join(folder, folder / trace, folder / "rocprof" / found)
        info["rocprof"]["join"] = "rocprof/join.json"
    except UserError as err:
        info["rocprof"]["join"] = f"not joined: {err}"


def _outcome_from_child(rc: int, status: dict[str, Any] | None) -> Outcome:
    """The script's outcome in the rocprof pass: the child's own record, else rocprofv3's exit code."""
    if status is not None:
        return Outcome(exit_code=int(status["exit_code"]), failed=bool(status["failed"]),
                       interrupted=bool(status["interrupted"]), raised=bool(status.get("raised")),
                       error=status.get("error"))
    return Outcome(exit_code=rc, failed=rc != 0, interrupted=rc == 130, raised=rc == 130,
                   error=None if rc == 0 else f"rocprofv3 exited with {rc}")


def _capture_triton(folder: Path, info: dict[str, Any], loaded: list[triton_cache.TritonKernel],
                    trace: Path | None) -> None:
    """Copy the Triton kernels that ran into folder/triton and write occupancy.json for them."""
    from rocanalyze.collectors.triton_occupancy import write_occupancy

    if not loaded and "triton" not in sys.modules:   # no Triton in this run: skip re-reading the trace
        return
    ran_names: set[str] | None = None
    if trace is not None and trace.is_file():
        ran_names = (triton_cache.kernel_names_in_csv(trace) if trace.suffix == ".csv"
                     else triton_cache.kernel_names_in_trace(trace))
    kernels = triton_cache.select_ran(loaded, ran_names)
    triton_cache.attach_cache_files(kernels, triton_cache.cache_dir())
    if ran_names:
        missing = ran_names - {k.name for k in loaded}   # compiled elsewhere: match the cache by name
        kernels += triton_cache.find_in_cache(missing, triton_cache.cache_dir())
    if not kernels:
        return
    folders = triton_cache.copy_artifacts(kernels, folder / "triton")
    info["triton"] = {"kernels": len(kernels), "cache_dir": str(triton_cache.cache_dir()),
                      "folders": sorted(folders.values())}
    write_occupancy(folder, kernels, folders)


def _finish(folder: Path, info: dict[str, Any], env: dict[str, str], torch: Any) -> None:
    """env.json and the final run.json (written last but for the done marker)."""
    if torch is None and "torch" in sys.modules:
        torch = sys.modules["torch"]
    runfolder.write_json(folder / "env.json", environment.capture_environment(env, torch))
    runfolder.write_json(folder / "run.json", info)


def profile_command(opts: ProfileOptions) -> list[str]:
    """The `rocanalyze profile` command line that reproduces this run (output folder left out)."""
    cmd = ["rocanalyze", "profile"]
    if opts.collector != "torch":
        cmd += ["--collector", opts.collector]
    s = opts.schedule
    if isinstance(s, Schedule):
        cmd += ["--steps", f"{s.wait},{s.warmup},{s.active}"]
    elif s.count is None:
        cmd += ["--steps", "all"]
    cmd += [flag for flag, on in (("--with-stack", opts.with_stack), ("--memory", opts.memory)) if on]
    if opts.collector != "torch" and opts.rocprof_format != "csv":
        cmd += ["--rocprof-format", opts.rocprof_format]
    if opts.target.kind == "program":
        return [*cmd, "--", *opts.target.argv]
    return [*cmd, *opts.target.argv]


def _python_command(target: Target) -> list[str]:
    return target.argv if target.kind == "program" else ["python", *target.argv]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
