"""`python -m rocanalyze.collectors.child [-m module | script] [args]`: the program rocprofv3 wraps.

Runs the user's code exactly as the in-process runner does (no other profiler in this process),
then writes its status and the Triton kernels it loaded to $ROCANALYZE_CHILD_STATUS and exits with
the script's code.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from rocanalyze.collectors import triton_cache
from rocanalyze.collectors.runner import Outcome, Target, run_target


def parse_argv(argv: list[str]) -> Target:
    """Target from the child's argv: ['-m', mod, *args] or [script, *args]."""
    if not argv:
        raise SystemExit("usage: python -m rocanalyze.collectors.child [-m module | script] [args]")
    if argv[0] == "-m":
        if len(argv) < 2:
            raise SystemExit("-m needs a module name")
        return Target("module", argv[1], argv[2:])
    return Target("script", argv[0], argv[1:])


def write_status(path: Path, outcome: Outcome) -> None:
    """The child's outcome plus the Triton kernels it loaded (with their cache paths)."""
    kernels = [vars(k) for k in triton_cache.loaded_kernels()]
    record = {"exit_code": outcome.exit_code, "failed": outcome.failed, "interrupted": outcome.interrupted,
              "raised": outcome.raised, "error": outcome.error, "pid": os.getpid(), "triton_kernels": kernels}
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True, default=str))
    tmp.replace(path)


def main(argv: list[str]) -> int:
    target = parse_argv(argv)
    outcome = run_target(target)
    status = os.environ.get("ROCANALYZE_CHILD_STATUS")
    if status:
        write_status(Path(status), outcome)
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
