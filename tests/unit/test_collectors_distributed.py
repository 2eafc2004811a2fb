"""torchrun rank and job identity."""

from __future__ import annotations

import os

from rocanalyze.collectors.distributed import job_info


def test_single_process_is_rank_0_of_1() -> None:
    job = job_info({})
    assert (job.rank, job.local_rank, job.world_size) == (0, 0, 1)


def test_torchelastic_run_id_names_the_job() -> None:
    job = job_info({"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4", "TORCHELASTIC_RUN_ID": "7f3a"})
    assert (job.rank, job.local_rank, job.world_size, job.job_id) == (3, 1, 4, "torchelastic:7f3a")
    assert len(job.short_id) == 8


def test_default_run_id_falls_back_to_the_launcher() -> None:
    # torchrun without --rdzv-id exports TORCHELASTIC_RUN_ID=none: not unique, so use the parent
    env = {"RANK": "0", "WORLD_SIZE": "2", "TORCHELASTIC_RUN_ID": "none"}
    a, b = job_info(env), job_info({**env, "RANK": "1"})
    assert a.job_id == b.job_id and a.job_id.split(":")[1] == str(os.getppid())
    assert job_info(env, ppid=1).job_id != a.job_id
