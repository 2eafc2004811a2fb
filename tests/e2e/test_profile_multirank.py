"""Under torchrun: RUN/rank{N}/ per rank, one job per folder, rank 0 waits (bounded) for the others.

Ranks run in-process one after the other with torchrun's environment (RANK, WORLD_SIZE,
TORCHELASTIC_RUN_ID); the concurrent creation of job.json is covered in tests/unit/test_runfolder.py.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from rocanalyze.cli import main

pytest.importorskip("torch")

SCRIPT = textwrap.dedent("""
    import os, torch
    x = torch.randn(16, 16)
    for _ in range(2):
        y = x @ x
        __import__("rocanalyze").step()
    print("rank", os.environ["RANK"], "done")
""")


def _as_rank(monkeypatch: pytest.MonkeyPatch, rank: int, job: str, world: int = 2) -> None:
    for key, value in (("RANK", rank), ("LOCAL_RANK", rank), ("WORLD_SIZE", world), ("TORCHELASTIC_RUN_ID", job)):
        monkeypatch.setenv(key, str(value))


def test_ranks_write_their_own_folders_of_one_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    script, run = tmp_path / "ddp.py", tmp_path / "RUN"
    script.write_text(SCRIPT)
    outs = []
    for rank, extra in ((1, []), (0, ["--wait-ranks", "5"])):      # rank 1 finishes first, then rank 0
        _as_rank(monkeypatch, rank, "job-a")
        assert main(["profile", *extra, "-o", str(run), str(script)]) == 0
        outs.append(capsys.readouterr().out)
    # the job's own files; rank 0 adds the job's reports when it analyzes the whole folder
    assert {"job.json", "rank0", "rank1"} <= {p.name for p in run.iterdir()} <= {
        "job.json", "rank0", "rank1", "analysis.json", "report.html", "summary.md", "trace.pftrace"}
    assert json.loads((run / "job.json").read_text())["job_id"] == "torchelastic:job-a"
    for r in (0, 1):
        info = json.loads((run / f"rank{r}" / "run.json").read_text())
        assert (info["rank"], info["world_size"], info["job_id"]) == (r, 2, "torchelastic:job-a")
        assert (run / f"rank{r}" / "trace.json.gz").is_file()
        assert json.loads((run / f"rank{r}" / "done").read_text())["exit_code"] == 0
    assert "rocanalyze: not analyzed: rank 1: rank 0 analyzes the job\n" in outs[0]
    assert "next:" not in outs[0]                              # rank 1: rank 0 says what to do next
    # rank 0 found every done marker and analyzed the whole job folder (CPU ranks: no GPU activity)
    assert "had not finished" not in outs[1]
    assert (f"report: {run / 'report.html'}\n" in outs[1] or
            f"rocanalyze: not analyzed: {run}: no GPU activity in this trace (CPU-only profile?)\n" in outs[1])

    _as_rank(monkeypatch, 0, "job-b")                          # a later torchrun job, same -o
    assert main(["profile", "--no-report", "-o", str(run), str(script)]) == 2
    assert capsys.readouterr().err == (f"rocanalyze: error: {run}: output folder belongs to an earlier job "
                                       "(torchelastic:job-a); choose another -o or remove it\n")


def test_rank0_waits_a_bounded_time_for_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    script, run = tmp_path / "ddp.py", tmp_path / "RUN"
    script.write_text(SCRIPT)
    _as_rank(monkeypatch, 0, "job-c", world=3)
    assert main(["profile", "--wait-ranks", "0.5", "-o", str(run), str(script)]) == 0   # ranks 1, 2 never come
    out = capsys.readouterr().out
    assert "rocanalyze: not analyzed: ranks 1, 2 had not finished after 0.5 s\n" in out
    assert out.rstrip().endswith(f"next: rocanalyze analyze {run}")
