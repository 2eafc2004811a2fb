"""`rocanalyze profile`: run a script under the profiler, analyze it, write a run folder."""

from __future__ import annotations

from pathlib import Path

import typer

from rocanalyze.collectors.finish import finish_run, finish_sudden_end, print_summary
from rocanalyze.collectors.runner import Target, runnable_archive
from rocanalyze.collectors.session import ProfileOptions, collector_name, profile
from rocanalyze.collectors.torch_profiler import FirstSteps, parse_steps
from rocanalyze.commands._rules import rules_option, use_rules
from rocanalyze.errors import ScriptExit, UserError


def command(
    target: list[str] = typer.Argument(None, metavar="SCRIPT [ARGS]...",
                                       help="The script (or, with -m, the module) and its arguments."),
    module: bool = typer.Option(False, "-m", help="SCRIPT is a module: run it as `python -m MODULE ARGS`."),
    output: Path = typer.Option(None, "-o", "--output", help="Run folder to create (must not exist). "
                                "Default: ./rocanalyze-<script>-<time>."),
    collector: str = typer.Option("torch", "--collector", help="torch | rocprof (or rocprofv3) | both."),
    steps: str = typer.Option(None, "--steps", metavar="[WAIT,WARMUP,]ACTIVE|all",
                              help="Record only these steps: ACTIVE (after skipping 1 and warming up 1) "
                                   "or WAIT,WARMUP,ACTIVE; `all` records every step. Default: steps 1-20 "
                                   "(start-up included), then the script runs on unrecorded."),
    with_stack: bool = typer.Option(False, "--with-stack", help="Record Python stacks of ops."),
    memory: bool = typer.Option(False, "--memory", help="Record device memory: peak and per-step timeline."),
    no_report: bool = typer.Option(False, "--no-report", help="Only collect; analyze later."),
    rocprof_format: str = typer.Option("csv", "--rocprof-format", help="rocprofv3 output: csv | rocpd."),
    wait_ranks: float = typer.Option(300.0, "--wait-ranks", metavar="SECONDS",
                                     help="Under torchrun, how long rank 0 waits for the others."),
    rules: list[Path] = rules_option(),
) -> None:
    """Run a Python script (or module) under the profiler, then analyze it and write a run folder.

    The script runs in this process as `python script.py args` would. Steps come from
    rocanalyze.step() calls or, failing those, from optimizer.step(). The run folder holds
    trace.json.gz, env.json, run.json, analysis.json, report.html, summary.md, trace.pftrace and,
    when used, triton/ and rocprof/. The exit code is the script's own.

    Examples:

    \b
      rocanalyze profile train.py --epochs 1
      rocanalyze profile --steps 2,1,5 -o runs/base train.py
      rocanalyze profile -m mypkg.bench --batch 1
      rocanalyze profile --collector rocprof -- ./my_hip_app --size 4096
      torchrun --nproc-per-node 8 -m rocanalyze profile -o runs/ddp train.py
    """
    use_rules(rules)  # a bad rules file stops here, before the script runs
    collector = collector_name(collector)
    opts = ProfileOptions(target=_target(module, list(target or []), collector), output=output,
                          collector=collector, schedule=parse_steps(steps) if steps else FirstSteps(),
                          with_stack=with_stack, memory=memory, rocprof_format=rocprof_format)
    result = profile(opts, after_sudden_end=lambda ended: finish_sudden_end(
        ended, report=not no_report, wait_ranks_s=wait_ranks))
    done = finish_run(result, report=not no_report, wait_ranks_s=wait_ranks)
    print_summary(result, done)
    if result.outcome.exit_code:   # the script's code, also when the analysis could not be made
        raise ScriptExit(result.outcome.exit_code)


def _target(module: bool, args: list[str], collector: str) -> Target:
    """Script, module or (rocprof only) program, from -m and the positional arguments.

    -m is a flag, not an option with a value, so that everything after the module name belongs to
    the module, as with `python -m`: `rocanalyze profile -m pkg.train --steps 6` passes --steps on.
    """
    if not args:
        raise UserError("nothing to profile: give a script (rocanalyze profile train.py) or -m MODULE")
    name, rest = args[0], args[1:]
    if module:
        return Target("module", name, rest)
    path = Path(name)
    if not _is_python(path) and (collector == "rocprof" or path.is_file()):
        return Target("program", name, rest)   # only rocprof runs programs; session.check says so
    return Target("script", name, rest)


def _is_python(path: Path) -> bool:
    """A .py file, a file whose shebang names python, or a folder or zip with a __main__.py."""
    if path.suffix in (".py", ".pyw") or runnable_archive(path):
        return True
    try:
        with path.open("rb") as fh:
            first = fh.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first
