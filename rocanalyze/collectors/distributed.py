"""Which torchrun job and rank this process is: RANK/LOCAL_RANK/WORLD_SIZE and a job id.

The job id is TORCHELASTIC_RUN_ID when torchrun was given a real one (its default is "none"), else
the launcher's identity: host, parent pid and the parent's start time (so a reused pid is a new
job). All ranks of one node share the parent, so they agree on it without talking to each other.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class JobInfo:
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    job_id: str = ""
    started: float = 0.0             # launcher start (epoch s): the same on every rank of a node

    @property
    def short_id(self) -> str:
        return hashlib.sha1(self.job_id.encode()).hexdigest()[:8]


def job_info(environ: Mapping[str, str], ppid: int | None = None) -> JobInfo:
    """This process's rank and job, from torchrun's environment (one process: rank 0 of 1)."""
    try:
        world = int(environ.get("WORLD_SIZE", "1"))
        rank = int(environ.get("RANK", "0"))
        local = int(environ.get("LOCAL_RANK", str(rank)))
    except ValueError:
        world, rank, local = 1, 0, 0
    ppid = os.getppid() if ppid is None else ppid
    started = _process_start(ppid)
    run_id = environ.get("TORCHELASTIC_RUN_ID", "")
    if run_id and run_id != "none":
        job_id = f"torchelastic:{run_id}"
    else:
        job_id = f"{socket.gethostname()}:{ppid}:{started:.2f}"
    return JobInfo(rank=rank, local_rank=local, world_size=max(world, 1), job_id=job_id, started=started)


def _process_start(pid: int) -> float:
    """Start time of `pid` in epoch seconds (Linux /proc), or now when it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])          # field 22, starttime, in clock ticks since boot
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime"))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return time.time()
