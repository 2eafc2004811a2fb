"""The run folder: names from the script, no overwrite, atomic writes, one torchrun job per folder."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rocanalyze import runfolder
from rocanalyze.errors import UserError


def test_default_name_is_derived_from_the_script() -> None:
    when = time.mktime((2026, 11, 21, 22, 5, 9, 0, 0, -1))
    assert runfolder.default_run_name("examples/workloads/train_step.py", when) == \
        "rocanalyze-train_step-20261121-220509"
    assert runfolder.default_run_name("./my app!.py", when) == "rocanalyze-my_app-20261121-220509"
    assert runfolder.default_run_name("mypkg.bench", when) == "rocanalyze-mypkg.bench-20261121-220509"


def test_existing_output_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    with pytest.raises(UserError) as err:
        runfolder.choose_run_folder("train.py", tmp_path / "run")
    assert str(err.value) == f"{tmp_path / 'run'}: output folder already exists; choose another -o or remove it"
    with pytest.raises(UserError):
        runfolder.create_run_folder(tmp_path / "run")


def test_default_folder_never_reuses_an_existing_one(tmp_path: Path) -> None:
    first = runfolder.create_run_folder(runfolder.choose_run_folder("a.py", None, tmp_path))
    second = runfolder.create_run_folder(runfolder.choose_run_folder("a.py", None, tmp_path))
    assert first != second and first.is_dir() and second.is_dir()
    assert second.name in (first.name + "-2", runfolder.default_run_name("a.py"))


def test_write_atomic_replaces_whole_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    runfolder.write_json(target, {"b": 1, "a": [1, 2]})
    assert target.read_text() == '{\n "a": [\n  1,\n  2\n ],\n "b": 1\n}\n'
    runfolder.write_atomic(target, b"x")
    assert target.read_bytes() == b"x"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_ranks_of_one_job_share_the_folder(tmp_path: Path) -> None:
    run = tmp_path / "RUN"
    r1 = runfolder.claim_job_folder(run, "torchelastic:abc", 2, 1, {"command": ["python", "t.py"]})
    r0 = runfolder.claim_job_folder(run, "torchelastic:abc", 2, 0, {})
    assert (r0.name, r1.name) == ("rank0", "rank1")
    job = json.loads((run / "job.json").read_text())
    assert job == {"job_id": "torchelastic:abc", "world_size": 2, "command": ["python", "t.py"]}


def test_a_later_job_never_reuses_the_folder(tmp_path: Path) -> None:
    run = tmp_path / "RUN"
    runfolder.claim_job_folder(run, "host:100:5.00", 2, 0, {})
    with pytest.raises(UserError) as err:
        runfolder.claim_job_folder(run, "host:200:9.00", 2, 0, {})
    assert str(err.value) == (f"{run}: output folder belongs to an earlier job (host:100:5.00); "
                              "choose another -o or remove it")
    other = tmp_path / "plain"
    (other / "x").mkdir(parents=True)
    with pytest.raises(UserError, match="holds no job of this torchrun"):
        runfolder.claim_job_folder(other, "j", 2, 0, {})


def test_the_same_rank_twice_is_refused(tmp_path: Path) -> None:
    runfolder.claim_job_folder(tmp_path / "RUN", "j", 2, 0, {})
    with pytest.raises(UserError, match="already exists"):
        runfolder.claim_job_folder(tmp_path / "RUN", "j", 2, 0, {})


def test_wait_for_ranks_is_bounded(tmp_path: Path) -> None:
    run = tmp_path / "RUN"
    for rank in (0, 1, 2):
        runfolder.claim_job_folder(run, "j", 3, rank, {})
    runfolder.mark_done(run / "rank0", 0)
    runfolder.mark_done(run / "rank2", 3)
    t0 = time.monotonic()
    assert runfolder.wait_for_ranks(run, 3, timeout_s=0.3, poll_s=0.05) == [1]
    assert 0.25 < time.monotonic() - t0 < 2.0
    runfolder.mark_done(run / "rank1", 0)
    assert runfolder.wait_for_ranks(run, 3, timeout_s=5) == []
    assert json.loads((run / "rank2" / "done").read_text())["exit_code"] == 3
