"""After the passes: analyze the run folder, write analysis.json and the reports, wait for ranks."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocanalyze import runfolder
from rocanalyze.collectors.session import RunResult
from rocanalyze.errors import UserError
from rocanalyze.traces.folder import run_record_notes


@dataclass
class Finished:
    """What the post-run step did: the analysis (None when skipped), files written, why not analyzed."""

    analysis: Any = None
    written: list[Path] = field(default_factory=list)
    skipped: str | None = None           # why no analysis was made (other rank, --no-report, ...)
    error: str | None = None             # the analysis' UserError line


def finish_run(result: RunResult, *, report: bool, wait_ranks_s: float) -> Finished:
    """Analyze and report the run when this process should (one process, or rank 0 once all are done)."""
    if not report:
        return Finished(skipped="--no-report")
    job = result.job
    if job.world_size > 1:
        if job.rank != 0:
            return Finished(skipped=f"rank {job.rank}: rank 0 analyzes the job")
        missing = runfolder.wait_for_ranks(result.folder, job.world_size, wait_ranks_s)
        if missing:
            return Finished(skipped=f"ranks {', '.join(map(str, missing))} had not finished after "
                                    f"{wait_ranks_s:g} s")
    if _has_nothing(result):
        return Finished(skipped="no trace was saved (the script stopped before the profiled steps)")
    try:
        return analyze_folder(result.folder)
    except UserError as err:
        return Finished(error=str(err))


def finish_sudden_end(result: RunResult, *, report: bool, wait_ranks_s: float) -> None:
    """The script ended with os._exit or SIGTERM; its records are saved. os._exit is the script's own way
    to end, so it gets its report; a terminated run is left to analyze later (a kill may follow)."""
    if result.outcome.terminated:
        done = Finished(skipped="terminated (SIGTERM) before the report was written")
    else:
        done = finish_run(result, report=report, wait_ranks_s=wait_ranks_s)
    print_summary(result, done)
    sys.stdout.flush()   # os._exit and the re-raised signal end the process without flushing it


def _has_nothing(result: RunResult) -> bool:
    info = result.run_info
    torch_trace = (info.get("torch") or {}).get("trace")
    rocprof_files = (info.get("rocprof") or {}).get("outputs")
    return result.job.world_size <= 1 and not torch_trace and not rocprof_files


def analyze_folder(folder: Path) -> Finished:
    """Run the analysis on a run folder; write analysis.json, report.html, summary.md, trace.pftrace."""
    from rocanalyze.analysis.build import analyze_with_table
    from rocanalyze.reports import write_run_reports

    analysis, table = analyze_with_table(folder)
    written = [runfolder.write_atomic(folder / "analysis.json", analysis.to_json() + "\n")]
    written += write_run_reports(analysis, table, folder)
    return Finished(analysis=analysis, written=written)


def print_summary(result: RunResult, done: Finished, out: Any = None) -> None:
    """The short post-run summary: categories, first recommendations, the report, the next command."""
    out = out or sys.stdout
    folder = result.folder
    lines: list[str] = []
    outcome = result.outcome
    state = ("was interrupted" if outcome.interrupted else "was terminated (SIGTERM)" if outcome.terminated
             else f"failed (exit code {outcome.exit_code})" if outcome.exit_code else "completed")
    lines.append(f"rocanalyze: the script {state}; run folder {folder}")
    if result.run_info.get("torch", {}).get("gpu_activity") is False:
        lines.append("rocanalyze: no GPU visible to torch (CPU-only build or no device): "
                     "the trace holds no GPU activity")
    torch_facts = result.run_info.get("torch") or {}
    if "steps" in torch_facts:
        lines.append(step_line(torch_facts["steps"], torch_facts.get("step_source")))
    kernels = None if done.analysis is None else len(done.analysis.kernels)
    lines += [f"rocanalyze: {note}" for note in run_record_notes(torch_facts, gpu_rows=kernels)]
    if done.analysis is not None:
        lines += summary_lines(done.analysis)
        report = next((p for p in done.written if p.name == "report.html"), None)
        if report is not None:
            lines.append(f"report: {report}")
        lines.append(f"next: open {report or folder}; after a change, profile again and "
                     f"rocanalyze compare {folder} NEW_RUN")
    else:
        why = done.error or done.skipped
        if why:
            lines.append(f"rocanalyze: not analyzed: {why}")
        if result.job.rank == 0 or result.job.world_size <= 1:
            lines.append(f"next: rocanalyze analyze {folder}")
    print("\n".join(lines), file=out)


def step_line(steps: int, source: str | None) -> str:
    """How the steps were found, or how to mark them."""
    if not steps:
        return ("rocanalyze: no steps seen (no rocanalyze.step() call, no optimizer step): the analysis "
                "picks its own window; mark steps with rocanalyze.step()")
    how = "rocanalyze.step() markers" if source == "marker" else "optimizer.step() calls"
    return f"rocanalyze: {steps} steps, from {how}"


def summary_lines(analysis: Any, top_recommendations: int = 3) -> list[str]:
    """Category table (µs and share of the window) and the first recommendations, as text lines."""
    from rocanalyze.reports.text import fmt_pct, fmt_us

    if not analysis.kernels:
        lines = ["  (no GPU kernels recorded)"]
    else:
        window = analysis.window_us or 0.0
        how = analysis.window.get("how", "") if analysis.window else ""
        lines = [f"window: {fmt_us(analysis.window_us)} ({how}), GPU busy {fmt_us(analysis.busy_us)}"]
        rows = sorted(analysis.categories_us.items(), key=lambda kv: -kv[1])
        if analysis.idle_us is not None:
            rows.append(("idle", analysis.idle_us))
        width = max([len(name) for name, _ in rows] + [8])
        for name, us in rows:
            lines.append(f"  {name:<{width}}  {fmt_us(us):>10}  {fmt_pct(us / window if window else None):>6}")
    for rec in analysis.recommendations[:top_recommendations]:
        saving = rec.get("saving_us")
        extra = f" (up to {fmt_us(saving)} per window)" if saving else ""
        lines.append(f"- [{rec.get('level')}] {rec.get('title')}{extra}")
    return lines
