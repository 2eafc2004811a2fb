"""Reports: each renderer turns a finished Analysis into one file; they read it, never recompute it.

`RENDERERS` maps a format name to (render function, file extension). Every renderer takes
`(analysis, table=None)`; only the Perfetto writer uses the EventTable (the GPU activity itself).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rocanalyze.analysis.result import Analysis
from rocanalyze.errors import UserError
from rocanalyze.reports import html, markdown, perfetto, terminal
from rocanalyze.runfolder import make_folder, write_atomic

if TYPE_CHECKING:
    from rocanalyze.traces.schema import EventTable

Renderer = Callable[..., "str | bytes"]

RENDERERS: dict[str, tuple[Renderer, str]] = {
    "html": (html.render, ".html"),
    "md": (markdown.render, ".md"),
    "pftrace": (perfetto.render, ".pftrace"),
    "txt": (terminal.render, ".txt"),
}
# What `rocanalyze profile` and `write_run_reports` put into a run folder.
RUN_FILES: tuple[tuple[str, str], ...] = (("html", "report.html"), ("md", "summary.md"),
                                          ("pftrace", "trace.pftrace"))


def format_for(path: str | Path, fmt: str | None = None) -> str:
    """The renderer name for `path` (from `fmt` or the file extension); UserError when unknown."""
    if fmt is not None:
        if fmt not in RENDERERS:
            raise UserError(f"unknown report format '{fmt}': use one of {', '.join(RENDERERS)}")
        return fmt
    suffix = Path(path).suffix.lower()
    for name, (_, ext) in RENDERERS.items():
        if suffix == ext or (name == "md" and suffix == ".markdown"):
            return name
    exts = ", ".join(ext for _, ext in RENDERERS.values())
    raise UserError(f"cannot tell the report format from '{suffix or 'no extension'}': name the file "
                    f"{exts} or pass --format", path)


def render(analysis: Analysis, fmt: str, table: EventTable | None = None) -> str | bytes:
    """The report in format `fmt`, as text or bytes."""
    return RENDERERS[format_for("", fmt)][0](analysis, table)


def write_report(analysis: Analysis, table: EventTable | None, path: str | Path, fmt: str | None = None,
                 *, force: bool = False) -> Path:
    """Render and write one report atomically; returns the path. Never overwrites without `force`."""
    path = Path(path)
    name = format_for(path, fmt)
    if path.exists() and not force:
        raise UserError("already exists: pass --force to overwrite it", path)
    if not path.parent.is_dir():
        raise UserError("the output folder does not exist", path.parent)
    write_atomic(path, render(analysis, name, table))
    return path


def write_run_reports(analysis: Analysis, table: EventTable | None, folder: str | Path, *,
                      force: bool = False) -> list[Path]:
    """Write report.html, summary.md and trace.pftrace into `folder`; returns the paths written."""
    folder = make_folder(Path(folder))
    targets = [(fmt, folder / name) for fmt, name in RUN_FILES]
    existing = [str(p) for _, p in targets if p.exists()]
    if existing and not force:  # check all first: never leave a half-updated folder
        raise UserError(f"already exists: {', '.join(existing)}; pass --force to overwrite")
    rendered = [(p, render(analysis, fmt, table)) for fmt, p in targets]
    for p, content in rendered:
        write_atomic(p, content)
    return [p for p, _ in rendered]
