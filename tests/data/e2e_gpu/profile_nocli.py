"""Fallback for the GPU e2e when the device's typer cannot run rocanalyze's CLI: the same library calls
`rocanalyze profile` makes (session.profile, finish_run, print_summary), without the typer front end.

    python tests/data/e2e_gpu/profile_nocli.py [--memory] [--steps S] [--no-report] -o RUN script.py [args]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rocanalyze.collectors.finish import finish_run, print_summary
from rocanalyze.collectors.runner import Target
from rocanalyze.collectors.session import ProfileOptions, profile
from rocanalyze.collectors.torch_profiler import FirstSteps, parse_steps

parser = argparse.ArgumentParser()
parser.add_argument("-o", "--output", type=Path, required=True)
parser.add_argument("--memory", action="store_true")
parser.add_argument("--steps", default=None)
parser.add_argument("--no-report", action="store_true")
parser.add_argument("script")
opts, rest = parser.parse_known_args()
result = profile(ProfileOptions(Target("script", opts.script, rest), output=opts.output, memory=opts.memory,
                                schedule=parse_steps(opts.steps) if opts.steps else FirstSteps()))
print_summary(result, finish_run(result, report=not opts.no_report, wait_ranks_s=0))
sys.exit(result.outcome.exit_code)
