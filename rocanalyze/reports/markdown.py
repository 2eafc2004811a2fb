"""summary.md: a GitHub-flavoured Markdown summary for a PR comment, always under MAX_BYTES."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocanalyze.analysis.kernels import clip_name
from rocanalyze.analysis.result import Analysis
from rocanalyze.reports import text

if TYPE_CHECKING:
    from rocanalyze.traces.schema import EventTable

MAX_BYTES = 60_000
TOP_KERNELS = 15
TOP_RECS = 5
NAME_CHARS = 90


def render(analysis: Analysis, table: EventTable | None = None) -> str:
    """The Markdown summary (str): headline, categories, top kernels, first recommendations, env line."""
    a = analysis
    h = text.headline(a)
    out = [f"## {escape(text.title(a))}", ""]
    if h["failed"] or h["partial"]:
        out += ["> **Warning:** the profiled script " + ("failed" if h["failed"] else "stopped early")
                + "; this covers what ran before it stopped.", ""]
    if h["scope"]:  # no timeline: say what the input covers instead of a row of n/a
        line = f"**Input** {escape(h['scope'])}"
    else:
        idle = f" · **Idle** {h['idle_pct']}" + (f", {h['idle_cause']}" if h["idle_cause"] else "")
        how = f" ({escape(h['how'])})" if h["how"] else ""
        line = f"**Window** {h['window']}{how} · **GPU busy** {h['busy_pct']}{idle}"
    if h["dominant"] != "n/a":
        line += f" · **Dominant** {escape(h['dominant'])} ({h['dominant_pct']})"
    out += [f"{line} · **GPU** {escape(h['device'])}", ""]
    if h["first"]:
        first = h["first"]
        out += [f"**Next step:** {escape(first['title'], False)}: {escape(first['action'], False)}", ""]
    else:
        out += [f"**{escape(h['no_rule'], False)}**", ""]
    out += categories_table(a) + kernels_table(a) + recommendations(a)
    out += ["", f"<sub>{escape(text.environment_line(a), False)}</sub>", ""]
    md = "\n".join(out)
    if len(md.encode("utf-8")) > MAX_BYTES:  # long kernel names: cut the kernel table until it fits
        md = md.encode("utf-8")[: MAX_BYTES - 200].decode("utf-8", "ignore")
        md += "\n\n*(cut to stay under 60 KB)*\n"
    return md


def categories_table(a: Analysis) -> list[str]:
    window = a.window_us or 0.0
    if not a.categories_us:
        return []
    rows = ["### GPU time by category", "", "| category | time | share of window |", "|---|---:|---:|"]
    for c in text.category_order(a):
        us = a.categories_us[c]
        rows.append(f"| {escape(c)} | {text.fmt_us(us)} | {_share(us, window)} |")
    for cause, us in sorted(a.idle_breakdown_us.items()):
        if us:
            rows.append(f"| idle: {escape(cause)} | {text.fmt_us(us)} | {_share(us, window)} |")
    return rows + [""]


def kernels_table(a: Analysis) -> list[str]:
    if not a.top_kernels:
        return []
    rows = [f"### Top {min(TOP_KERNELS, len(a.top_kernels))} kernels", "",
            "| kernel | category | calls | total | mean | share of GPU busy |", "|---|---|---:|---:|---:|---:|"]
    for k in a.top_kernels[:TOP_KERNELS]:
        rows.append(f"| `{code(text.kernel_label(k))}` | {escape(str(k.get('category', '')))} | "
                    f"{k.get('calls', '')} | {text.fmt_us(k.get('total_us'))} | "
                    f"{text.fmt_us(k.get('mean_us'))} | {text.fmt_pct(k.get('share'))} |")
    return rows + [""]


def recommendations(a: Analysis) -> list[str]:
    if not a.recommendations:
        return ["### Recommendations", "", "No rule fired on this run: nothing in it matched a known bottleneck "
                "pattern (the headline says what was measured).", ""]
    rows = ["### Recommendations", ""]
    for i, r in enumerate(a.recommendations[:TOP_RECS], 1):
        saving = text.fmt_us(r["saving_us"]) if r.get("saving_us") else "not estimated"
        level = text.level_name(r["level"])
        rows.append(f"{i}. **{escape(r['title'], False)}** ({level}; could save {saving})  ")
        rows.append(f"   Evidence: {escape(r.get('evidence', ''), False)}  ")
        rows.append(f"   Action: {escape(r.get('action', ''), False)}")
    if len(a.recommendations) > TOP_RECS:
        rows.append(f"\n*{len(a.recommendations) - TOP_RECS} more in report.html.*")
    return rows + [""]


def _share(us: float, window: float) -> str:
    return text.fmt_pct(us / window) if window else "n/a"


def escape(value: Any, cell: bool = True) -> str:
    """Text safe in a GFM table cell (pipes escaped) or paragraph: no raw HTML, one line."""
    s = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")
    return s.replace("|", "\\|") if cell else s


def code(name: str) -> str:
    """A kernel name for an inline code span (backticks and pipes cannot break out)."""
    s = clip_name(name, NAME_CHARS)
    return s.replace("`", "'").replace("|", "\\|").replace("\n", " ")
