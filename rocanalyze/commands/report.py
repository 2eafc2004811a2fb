"""`rocanalyze report`: the HTML page, the PR summary or the Perfetto trace of a trace or run folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from rocanalyze.analysis.result import Analysis
from rocanalyze.commands._rules import rules_option, use_rules
from rocanalyze.errors import UserError, say

if TYPE_CHECKING:
    from rocanalyze.traces.schema import EventTable
# rocanalyze.reports (plotly, perfetto, pandas) is imported where it is used: every command module is
# imported when the CLI starts, and `profile` should not pay for it before the user's script runs.

ANALYSIS_FILE = "analysis.json"
NEXT = {".html": "open it in a browser (it works offline)", ".md": "paste it into a PR comment",
        ".pftrace": "open it at https://ui.perfetto.dev"}


def command(
    path: Path = typer.Argument(..., help="Trace file, run folder, or a run folder's analysis.json."),
    output: Path | None = typer.Option(None, "-o", "--output",
                                       help="File to write (.html, .md, .pftrace, .txt). Default: the three "
                                            "run reports into the run folder (or the one --format names), or "
                                            "<trace name>.html here."),
    fmt: str | None = typer.Option(None, "--format", help="html, md, pftrace or txt (default: from -o)."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing report files."),
    steps: str | None = typer.Option(None, "--steps", help="Analyze steps A:B only."),
    rank: int | None = typer.Option(None, "--rank", help="Analyze this rank of a multi-rank trace."),
    gpu: str | None = typer.Option(None, "--gpu", help="GPU to assume (e.g. MI300X, H100) for the roofs."),
    rules: list[Path] = rules_option(),
) -> None:
    """Write the report of a trace or run folder: HTML page, Markdown summary or Perfetto trace.

    \b
    Examples:
      rocanalyze report examples/traces/train_step.json.gz -o report.html
      rocanalyze report RUN -o summary.md          # the PR summary of a profiled run
      rocanalyze report RUN                         # report.html, summary.md, trace.pftrace into RUN
    """
    from rocanalyze.reports import format_for, write_report, write_run_reports

    use_rules(rules)
    if output is None and path.is_dir() and fmt is None:
        analysis, table = load_analysis(path, need_table=True, steps=steps, rank=rank, gpu=gpu)
        written = write_run_reports(analysis, table, path, force=force)
    else:
        target = output if output is not None else default_output(path, fmt)
        name = format_for(target, fmt)
        if target.exists() and not force:  # cheap checks before the analysis
            raise UserError("already exists: pass --force to overwrite it", target)
        if not target.parent.is_dir():
            raise UserError("the output folder does not exist", target.parent)
        analysis, table = load_analysis(path, need_table=name == "pftrace", steps=steps, rank=rank, gpu=gpu)
        written = [write_report(analysis, table, target, name, force=force)]
    for p in written:
        size = p.stat().st_size
        typer.echo(f"wrote {p} ({size / 1e6:.2f} MB)" if size >= 100_000 else f"wrote {p} ({size / 1e3:.1f} KB)")
        if p.suffix in NEXT:
            typer.echo(f"  {NEXT[p.suffix]}")
    typer.echo("next: compare two runs with `rocanalyze compare BASE NEW`")


def load_analysis(path: Path, *, need_table: bool = False, steps: str | None = None, rank: int | None = None,
                  gpu: str | None = None) -> tuple[Analysis, EventTable | None]:
    """The Analysis of `path` (re-read from analysis.json when it is there and nothing changes it)."""
    if not path.exists():
        raise UserError("no such file or folder", path)
    saved = path if path.name == ANALYSIS_FILE else path / ANALYSIS_FILE
    if saved.is_file() and not need_table and steps is None and rank is None and gpu is None:
        try:
            analysis = Analysis.from_json(saved.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise UserError(f"not UTF-8 text (byte {exc.start}): analyze the run again", saved) from None
        except UserError as exc:  # it names no file: say which
            raise UserError(str(exc), saved) from None
        return _current(analysis, saved), None
    if path.name == ANALYSIS_FILE:
        raise UserError("an analysis.json holds no event table: pass the run folder or trace instead", path)
    from rocanalyze.analysis.build import analyze_with_table

    return analyze_with_table(path, steps=steps, rank=rank, gpu=gpu)


def _current(analysis: Analysis, saved: Path) -> Analysis:
    """A saved analysis made with other classification or recommendation rules (an older rocanalyze, another
    --rules file) is a stale cache: its run folder is analyzed again when it still holds the trace."""
    from rocanalyze.analysis.classify import rules_digest

    if not analysis.run.rules_digest or analysis.run.rules_digest == rules_digest():
        return analysis
    from rocanalyze.analysis.build import analyze

    try:
        fresh = analyze(saved.parent)
    except UserError:       # no trace beside it: the saved analysis is all there is (compare says so)
        return analysis
    say(f"{saved} was made with other rules ({analysis.run.rules_digest}); analyzed {saved.parent} again with the "
        f"current ones ({fresh.run.rules_digest})")
    return fresh


def default_output(path: Path, fmt: str | None) -> Path:
    """Where a report goes without -o: the run folder's own file name, else <trace name><ext> here."""
    from rocanalyze.reports import RENDERERS, RUN_FILES, format_for

    name = format_for("", fmt) if fmt is not None else "html"
    if path.is_dir():
        return path / dict(RUN_FILES).get(name, f"report{RENDERERS[name][1]}")
    return Path(_stem(path) + RENDERERS[name][1])


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".json", ".csv", ".db"):
        name = name.removesuffix(suffix)
    return name or "report"

