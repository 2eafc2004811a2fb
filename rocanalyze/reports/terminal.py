"""The terminal report: rich tables of categories, top kernels and recommendations, as plain text."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rocanalyze.analysis.result import Analysis
from rocanalyze.reports import text

if TYPE_CHECKING:
    from rocanalyze.traces.schema import EventTable

TOP_KERNELS = 10
# notes printed under the tables (the rest stay in the HTML page and analysis.json)
NOTES_SHOWN = ("no GPU activity", "without timestamps", "aggregate statistics only", "start-up",
               "barrier packet", "pass --gpu", "match no classification rule",
               "left out: ",  # a run record (run.json, env.json) that is damaged
               "never finished its record", "the work ran there")   # GPU work in child processes
TOP_RECS = 5


def render(analysis: Analysis, table: EventTable | None = None, *, width: int = 120,
           color: bool = False) -> str:
    """The report as text (ANSI colours only with `color`), `width` columns wide."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None,
                      highlight=False)
    print_report(console, analysis)
    return buf.getvalue()


def print_report(console: Console, a: Analysis) -> None:
    """Print the report on a rich console (the CLI passes its own)."""
    h = text.headline(a)
    console.print(Text(text.title(a), style="bold"))
    console.print(Text(" · ".join(text.headline_parts(h))))
    window = a.window_us or 0.0
    cats = Table(title="GPU time by category", title_justify="left")
    for col, just in (("category", "left"), ("time", "right"), ("share", "right")):
        cats.add_column(col, justify=just)  # type: ignore[arg-type]
    for c in text.category_order(a):
        cats.add_row(Text(c), text.fmt_us(a.categories_us[c]),
                     text.fmt_pct(a.categories_us[c] / window) if window else "n/a")
    for cause, us in sorted(a.idle_breakdown_us.items()):
        if us:
            share = text.fmt_pct(us / window) if window else "n/a"
            cats.add_row(Text(f"idle: {cause}"), text.fmt_us(us), share)
    if a.categories_us or a.idle_breakdown_us:
        console.print(cats)
    if a.kernels:
        console.print(kernels_table(a, console.width))
    if a.host_api:
        api = Table(title="Host API calls (no GPU activity captured)", title_justify="left")
        for col, just in (("call", "left"), ("calls", "right"), ("total", "right"), ("mean", "right")):
            api.add_column(col, justify=just, no_wrap=just == "right")  # type: ignore[arg-type]
        for h in a.host_api[:TOP_KERNELS]:
            api.add_row(h["name"], f"{h['calls']:,}", text.fmt_us(h["total_us"]), text.fmt_us(h["mean_us"]))
        console.print(api)
    for note in a.notes:  # caveats a reader must see: no timeline, no GPU activity, start-up left out, unknown kernels
        if any(key in note for key in NOTES_SHOWN):
            console.print(Text(f"note: {note}", style="dim"))
    if not a.recommendations:
        console.print(Text(text.no_rule_summary(a)))
    for i, r in enumerate(a.recommendations[:TOP_RECS], 1):
        saving = f"could save {text.fmt_us(r['saving_us'])}" if r.get("saving_us") else "saving not estimated"
        console.print(Text(f"{i}. [{text.level_name(r['level'])}] {r['title']} ({saving})", style="bold"))
        console.print(Text(f"   {r['action']}"))


# Top-kernel columns: (header, justify, shown from this console width). The kernel name takes what
# the others leave; numbers are never cut (no_wrap, width of their widest cell).
KERNEL_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("category", "left", 100), ("calls", "right", 0), ("total", "right", 0), ("mean", "right", 100),
    ("share", "right", 0))
NAME_MIN = 16


def kernels_table(a: Analysis, width: int) -> Table:
    """The top kernels, one line each at any width from 80 columns: the name is truncated with an
    ellipsis, the numbers never; category and mean are dropped below 100 columns."""
    cols = [(h, j) for h, j, shown_from in KERNEL_COLUMNS if width >= shown_from]
    rows = []
    for k in a.top_kernels[:TOP_KERNELS]:
        values = {"category": str(k.get("category", "")), "calls": str(k.get("calls", "")),
                  "total": text.fmt_us(k.get("total_us")), "mean": text.fmt_us(k.get("mean_us")),
                  "share": text.fmt_pct(k.get("share"))}
        rows.append((text.kernel_label(k), [values[h] for h, _ in cols]))
    widths = [max([len(h)] + [len(r[1][i]) for r in rows]) for i, (h, _) in enumerate(cols)]
    # 1 + 3 per column: the borders and one space of padding each side (rich's default box)
    name_width = max(NAME_MIN, width - sum(widths) - 3 * (len(cols) + 1) - 1)
    longest = max([len("kernel")] + [len(r[0]) for r in rows])
    table = Table(title="Top kernels", title_justify="left", caption="share: of GPU busy time",
                  caption_justify="left")
    table.add_column("kernel", justify="left", no_wrap=True, overflow="ellipsis", width=min(name_width, longest))
    for (h, j), w in zip(cols, widths, strict=True):
        table.add_column(h, justify=j, no_wrap=True, min_width=w)  # type: ignore[arg-type]
    for name, values in rows:
        table.add_row(Text(name, no_wrap=True, overflow="ellipsis"), *values)
    return table
