"""`rocanalyze analyze PATH`: where the GPU time of a captured trace or run folder goes, and why."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from rocanalyze.commands._rules import rules_option, use_rules


def command(
    path: Path = typer.Argument(..., help="Trace file (torch.profiler/Kineto, rocprofv3, rocprof, rocpd, "
                                          "rocprof-compute) or run folder."),
    steps: str = typer.Option(None, "--steps", help="Steps to analyze, A:B inclusive (step numbers as "
                                                    "named in the trace, e.g. ProfilerStep#3)."),
    rank: int = typer.Option(None, "--rank", help="Rank to analyze in a multi-rank run (default: lowest)."),
    gpu: str = typer.Option(None, "--gpu", help="GPU whose peaks to use, e.g. MI300X, H100 (default: "
                                                "from the trace)."),
    peaks: Path = typer.Option(None, "--peaks", help="Measured peaks JSON (from `rocanalyze ceilings`)."),
    json_out: Path = typer.Option(None, "--json", help="Write the Analysis as JSON to this file ('-': to "
                                                       "stdout, the report then goes to stderr)."),
    output: Path = typer.Option(None, "-o", "--output", help="Write analysis.json, report.html, summary.md "
                                                              "and trace.pftrace into this folder."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    rules: list[Path] = rules_option(),
) -> None:
    """Analyze a trace or run folder: GPU time by category, idle by cause, top kernels, patterns and
    recommendations.

    \b
    Examples:
      rocanalyze analyze examples/traces/train_step.json.gz
      rocanalyze analyze results.db --json analysis.json
      rocanalyze analyze trace.json.gz --json - | jq .categories_us
      rocanalyze analyze trace.json.gz -o my-report/     # + report.html, summary.md, trace.pftrace
    """
    from rich.console import Console

    from rocanalyze.analysis.build import analyze_with_table
    from rocanalyze.errors import UserError
    from rocanalyze.reports import terminal, write_run_reports
    from rocanalyze.runfolder import check_writable, json_destination, make_folder, write_atomic

    use_rules(rules)
    to_stdout, json_file = json_destination(json_out)
    for target in (json_file, output / "analysis.json" if output else None):
        if target is not None and target.exists() and not force:
            raise UserError("already exists: pass --force to overwrite it", target)
    for target in (json_file, output):
        if target is not None:
            check_writable(target)
    analysis, table = analyze_with_table(path, steps=steps, rank=rank, gpu=gpu, peaks=peaks,
                                         progress=sys.stderr.isatty())
    terminal.print_report(Console(stderr=to_stdout), analysis)  # stdout stays clean JSON for a pipe
    written = []
    as_json = analysis.to_json() if to_stdout or json_file or output else ""  # serialised once for every target
    if to_stdout:
        sys.stdout.write(as_json + "\n")
    if json_file is not None:
        written.append(write_atomic(json_file, as_json))
    if output is not None:
        make_folder(output)
        written += write_run_reports(analysis, table, output, force=force)
        written.append(write_atomic(output / "analysis.json", as_json))
    say = sys.stderr if to_stdout else sys.stdout
    for p in written:
        print(f"wrote {p}", file=say)
    if output is not None:
        print(f"next: open {output / 'report.html'}, or paste {output / 'summary.md'} into your PR", file=say)
