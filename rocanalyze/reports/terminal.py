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
    console.print(Text(f"window {h['window']} ({h['how']}) · GPU busy {h['busy_pct']} · dominant "
                       f"{h['dominant']} ({h['dominant_pct']}) · {h['device']}"))
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
    console.print(cats)
    kern = Table(title="Top kernels", title_justify="left")
    for col, just in (("kernel", "left"), ("category", "left"), ("calls", "right"), ("total", "right"),
                      ("share", "right")):
        kern.add_column(col, justify=just, overflow="ellipsis", no_wrap=col == "kernel",  # type: ignore[arg-type]
                        max_width=60 if col == "kernel" else None)
    for k in a.top_kernels[:TOP_KERNELS]:
        kern.add_row(Text(str(k.get("name", ""))), Text(str(k.get("category", ""))), str(k.get("calls", "")),
                     text.fmt_us(k.get("total_us")), text.fmt_pct(k.get("share")))
    console.print(kern)
    if not a.recommendations:
        console.print("No recommendation: no rule fired on this run.")
    for i, r in enumerate(a.recommendations[:TOP_RECS], 1):
        console.print(Text(f"{i}. [{text.level_name(r['level'])}] {r['title']} "
                           f"(could save {text.fmt_us(r.get('saving_us'))})", style="bold"))
        console.print(Text(f"   {r['action']}"))
