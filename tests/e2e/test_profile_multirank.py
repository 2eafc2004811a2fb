"""Under torchrun: RUN/rank{N}/ per rank, one job per folder, rank 0 waits (bounded) for the others."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest.importorskip("torch")

SCRIPT = textwrap.dedent("""
    import os, torch
    x = torch.randn(16, 16)
    for _ in range(2):
        y = x @ x
        __import__("rocanalyze").step()
    print("rank", os.environ["RANK"], "done")
""")


def _rank(script: Path, run: Path, rank: int, job: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2",
           "TORCHELASTIC_RUN_ID": job, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "rocanalyze", "profile", *extra, "-o", str(run), str(script)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_ranks_write_their_own_folders_of_one_job(tmp_path: Path) -> None:
    script, run = tmp_path / "ddp.py", tmp_path / "RUN"
    script.write_text(SCRIPT)
    procs = [_rank(script, run, r, "job-a", "--no-report") for r in (0, 1)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sorted(p.name for p in run.iterdir()) == ["job.json", "rank0", "rank1"]
    assert json.loads((run / "job.json").read_text())["job_id"] == "torchelastic:job-a"
    for r in (0, 1):
        info = json.loads((run / f"rank{r}" / "run.json").read_text())
        assert (info["rank"], info["world_size"], info["job_id"]) == (r, 2, "torchelastic:job-a")
        assert (run / f"rank{r}" / "trace.json.gz").is_file()
        assert json.loads((run / f"rank{r}" / "done").read_text())["exit_code"] == 0
    assert f"next: rocanalyze analyze {run}" in outs[0][0]
    assert "next:" not in outs[1][0]                    # only rank 0 says what to do next

    later = _rank(script, run, 0, "job-b", "--no-report")
    out, err = later.communicate(timeout=120)
    assert later.returncode == 2
    assert err == (f"rocanalyze: error: {run}: output folder belongs to an earlier job (torchelastic:job-a); "
                   "choose another -o or remove it\n")


def test_rank0_waits_a_bounded_time_for_the_others(tmp_path: Path) -> None:
    script, run = tmp_path / "ddp.py", tmp_path / "RUN"
    script.write_text(SCRIPT)
    proc = _rank(script, run, 0, "job-c", "--wait-ranks", "0.5")     # rank 1 never comes
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "rocanalyze: not analyzed: ranks 1 had not finished after 0.5 s\n" in out
    assert out.rstrip().endswith(f"next: rocanalyze analyze {run}")
