"""After the run: analysis.json and the reports in the run folder, and the printed summary (H100 capture)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from rocanalyze.collectors.distributed import JobInfo
from rocanalyze.collectors.finish import Finished, analyze_folder, print_summary, summary_lines
from rocanalyze.collectors.runner import Outcome
from rocanalyze.collectors.session import RunResult
from tests.conftest import data_path


def _run_folder(tmp_path: Path) -> Path:
    """A run folder as profile leaves it, around the launch-bound workload captured on an H100."""
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(data_path("torch_profiler", "h100_captures", "launch_bound.json.gz"), run / "trace.json.gz")
    (run / "run.json").write_text(json.dumps({"command": ["python", "launch_bound.py"], "exit_code": 0,
                                              "failed": False, "partial": False, "collector": "torch"}))
    return run


def test_analysis_and_reports_land_in_the_run_folder(tmp_path: Path) -> None:
    run = _run_folder(tmp_path)
    done = analyze_folder(run)
    assert [p.name for p in done.written] == ["analysis.json", "report.html", "summary.md", "trace.pftrace"]
    saved = json.loads((run / "analysis.json").read_text())
    assert saved["run"]["command"] == ["python", "launch_bound.py"]
    lines = summary_lines(done.analysis)
    a = done.analysis
    assert lines[0].startswith(f"window: {a.window_us / 1e3:.2f} ms ({a.window['how']}), GPU busy ")
    # the known bottleneck of this workload: the GPU idles waiting on launches
    idle = lines[len(a.categories_us) + 1]
    assert idle.split()[0] == "idle" and float(idle.split()[-1].rstrip("%")) > 80
    first = a.recommendations[0]
    assert lines[len(a.categories_us) + 2].startswith(f"- [{first['level']}] {first['title']}")


def test_printed_summary_ends_with_the_next_command(tmp_path: Path) -> None:
    run = _run_folder(tmp_path)
    done = analyze_folder(run)
    result = RunResult(folder=run, rank_folder=run, outcome=Outcome(), job=JobInfo(),
                       run_info={"torch": {"gpu_activity": True, "steps": 10, "step_source": "marker"}})
    out = io.StringIO()
    print_summary(result, done, out)
    text = out.getvalue().splitlines()
    assert text[:2] == [f"rocanalyze: the script completed; run folder {run}",
                        "rocanalyze: 10 steps, from rocanalyze.step() markers"]
    assert text[-2:] == [f"report: {run / 'report.html'}",
                         f"next: open {run / 'report.html'}; after a change, profile again and "
                         f"rocanalyze compare {run} NEW_RUN"]
    out = io.StringIO()
    print_summary(RunResult(folder=run, rank_folder=run, outcome=Outcome(exit_code=3, failed=True), job=JobInfo()),
                  Finished(skipped="--no-report"), out)
    assert out.getvalue().splitlines() == [f"rocanalyze: the script failed (exit code 3); run folder {run}",
                                           "rocanalyze: not analyzed: --no-report", f"next: rocanalyze analyze {run}"]


def test_work_in_child_processes_is_named_when_this_process_recorded_none() -> None:
    from rocanalyze.traces.folder import child_process_note

    facts = {"gpu_activity": True, "children_cpu_s": 8.23}       # mp.spawn of two workers (measured on the CPU)
    note = child_process_note(facts, gpu_rows=0)
    assert note is not None and note.startswith("this process recorded no GPU work, but the child processes the "
                                                "script started used 8.2 s of CPU")
    assert child_process_note(facts, gpu_rows=12) is None                       # it recorded its own GPU work
    assert child_process_note({**facts, "children_cpu_s": 0.2}, gpu_rows=0) is None   # DataLoader-sized helpers
    assert child_process_note({**facts, "gpu_activity": False}, gpu_rows=0) is None   # no GPU here at all
    assert child_process_note({"gpu_activity": True, "children_cpu_s": "x"}, gpu_rows=0) is None  # damaged run.json
