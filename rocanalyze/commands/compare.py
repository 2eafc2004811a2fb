"""`rocanalyze compare BASE NEW`: what changed between two runs, and whether it is beyond noise."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rocanalyze.analysis.compare import DEFAULT_MARGIN_PCT, compare, regression
from rocanalyze.commands._rules import rules_option, use_rules
from rocanalyze.commands.report import load_analysis
from rocanalyze.errors import RegressionFound, UserError
from rocanalyze.runfolder import check_writable, json_destination, write_atomic


def command(
    base: Path = typer.Argument(..., help="The baseline: trace file, run folder or analysis.json."),
    new: Path = typer.Argument(..., help="The run to compare against it."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the Markdown table to this file."),
    json_out: Path | None = typer.Option(None, "--json", help="Write the comparison as JSON to this file ('-': "
                                         "to stdout, the table then goes to stderr)."),
    margin: float = typer.Option(DEFAULT_MARGIN_PCT, "--noise-margin",
                                 help="Changes within this many percent are noise (seed 000: 2%)."),
    fail_on_regression: float | None = typer.Option(
        None, "--fail-on-regression", metavar="PCT",
        help="Exit 3 when the step time got significantly slower by more than PCT percent."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    rules: list[Path] = rules_option(),
) -> None:
    """Compare two runs per step, category and kernel (or op, across vendors), with the noise of each.

    \b
    Examples:
      rocanalyze compare before/ after/                         # two run folders
      rocanalyze compare base.json.gz new.json.gz -o delta.md   # Markdown table for the PR
      rocanalyze compare main/ pr/ --fail-on-regression 5       # CI: exit 3 on a >5% slowdown
    """
    if margin < 0:
        raise UserError(f"--noise-margin must be >= 0, got {margin}")
    if fail_on_regression is not None and fail_on_regression < 0:
        raise UserError(f"--fail-on-regression must be >= 0, got {fail_on_regression}")
    to_stdout, json_out = json_destination(json_out)
    for out in (output, json_out):
        if out is not None and out.exists() and not force:
            raise UserError("already exists: pass --force to overwrite it", out)
        if out is not None:
            check_writable(out)  # before two analyses, not after
    use_rules(rules)  # applies to traces analyzed here; an analysis.json keeps the categories it was written with
    base_a, _ = load_analysis(base)
    new_a, _ = load_analysis(new)
    result = compare(base_a, new_a, margin_pct=margin)
    from rocanalyze.reports.comparison import render_markdown

    md = render_markdown(result)
    as_json = json.dumps(result, indent=1, sort_keys=True, default=str) + "\n"
    typer.echo(md, err=to_stdout)  # with --json -, stdout stays clean JSON for a pipe
    if to_stdout:
        sys.stdout.write(as_json)
    if output is not None:
        write_atomic(output, md)
        typer.echo(f"wrote {output}", err=to_stdout)
    if json_out is not None:
        write_atomic(json_out, as_json)
        typer.echo(f"wrote {json_out}")
    if fail_on_regression is not None and (row := regression(result, fail_on_regression)) is not None:
        raise RegressionFound(f"regression: step time {row['delta_pct']:+.1f}% (over {fail_on_regression:g}%, "
                              f"{row['verdict']})")
