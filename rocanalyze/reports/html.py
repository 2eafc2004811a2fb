"""The HTML report: one self-contained page (jinja2 templates + plotly.js inlined), offline, capped.

The page's own data goes in once, as JSON (sorted keys), and is capped at PAGE_DATA_LIMIT bytes
whatever the trace size: lists are cut to their largest entries and the page says so.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import jinja2
import markupsafe

from rocanalyze.analysis.kernels import clip_name
from rocanalyze.analysis.result import Analysis
from rocanalyze.paths import read_template
from rocanalyze.reports import text

if TYPE_CHECKING:
    from rocanalyze.traces.schema import EventTable

PAGE_DATA_LIMIT = 1_400_000  # bytes of JSON; the cap is 1.5 MB
# (field, first cap): lists the page shows, cut to their first N entries (largest first).
CAPS: tuple[tuple[str, int], ...] = (("kernels", 500), ("ops", 2000), ("steps", 2000), ("occupancy", 500),
                                     ("lanes", 48), ("ranks", 512), ("name_chars", 2000))
SECTIONS: tuple[tuple[str, str], ...] = (
    ("headline", "Headline"), ("categories", "GPU time by category"), ("timeline", "Timeline"),
    ("kernels", "Top kernels"), ("roofline", "Roofline"), ("occupancy", "Occupancy"),
    ("environment", "Environment"), ("recommendations", "Recommendations"))


def render(analysis: Analysis, table: EventTable | None = None) -> str:
    """The HTML page (str) for `analysis`; the event table is not used."""
    data, cut = page_data(analysis)
    return _template().render(
        title=text.title(analysis), data=data, cut=cut, sections=SECTIONS, plotly_js=_plotly_js(),
        report_js=read_template("report.js"), report_css=read_template("report.css"),
        headline=text.headline(analysis), recs=analysis.recommendations, level_names=text.LEVEL_NAMES,
        env_rows=text.environment_rows(analysis), notes=analysis.notes, run=analysis.run)


def page_data(analysis: Analysis) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON the page's scripts draw from, and what was cut to fit PAGE_DATA_LIMIT."""
    caps = dict(CAPS)
    while True:
        data, cut = _collect(analysis, caps)
        size = len(json.dumps(data, sort_keys=True, default=str))
        if size <= PAGE_DATA_LIMIT or caps["kernels"] <= 10:
            return data, cut
        caps = {k: max(10, v // 2) for k, v in caps.items()}


def _collect(a: Analysis, caps: dict[str, int]) -> tuple[dict[str, Any], dict[str, str]]:
    cut: dict[str, str] = {}

    def first(name: str, items: list[Any], cap_key: str | None = None) -> list[Any]:
        cap = caps[cap_key or name]
        if len(items) > cap:
            cut[name] = f"showing the first {cap} of {len(items)}"
        return items[:cap]

    n = caps["name_chars"]
    kernels = [{**k, "name": clip_name(str(k.get("name", "")), n), "per_step_us": None,
                "display": clip_name(str(k["display"]), n) if k.get("display") else None}
               for k in first("kernels", a.kernels)]
    timeline = dict(a.timeline)
    if timeline.get("lanes"):
        lanes = sorted(timeline["lanes"], key=_lane_busy, reverse=True)
        timeline["lanes"] = first("timeline lanes", lanes, "lanes")
    ops = sorted(a.ops, key=lambda o: -float(o.get("time_us") or 0.0))
    return {
        "window": a.window, "window_us": a.window_us, "busy_us": a.busy_us, "idle_us": a.idle_us,
        "startup_us": a.startup_us, "categories_us": a.categories_us,
        "idle_breakdown_us": a.idle_breakdown_us,
        "launch": a.launch, "overlap": a.overlap, "kernels": kernels, "ops": first("ops", ops),
        "steps": first("steps", [{k: v for k, v in s.items()} for s in a.steps]), "timeline": timeline,
        "occupancy": first("occupancy", a.occupancy), "device": a.device, "ranks": first("ranks", a.ranks),
        "memory": {k: v for k, v in a.memory.items() if k != "timeline"},
        "ceilings": text.ceilings(a), "category_order": text.category_order(a), "idle_causes": text.IDLE_CAUSES,
    }, cut


def _lane_busy(lane: dict[str, Any]) -> float:
    return sum(sum(v) for v in (lane.get("busy_us_by_category") or {}).values())


def codespans(value: str) -> markupsafe.Markup:
    """Escape `value`, then show its `backtick` spans as <code> (actions quote commands that way)."""
    parts = str(value).split("`")
    out = [markupsafe.escape(p) if i % 2 == 0 else markupsafe.Markup("<code>%s</code>") % p
           for i, p in enumerate(parts)]
    if len(parts) % 2 == 0:  # an unpaired backtick: keep it as text
        out[-1] = markupsafe.escape("`" + parts[-1])
    return markupsafe.Markup("").join(out)


@lru_cache(maxsize=1)
def _plotly_js() -> str:
    """plotly.js from the installed plotly package (never a CDN: the page opens offline)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FunctionLoader(read_template), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "allow_nan": False, "default": str}
    env.filters["us"] = text.fmt_us
    env.filters["pct"] = text.fmt_pct
    env.filters["codespans"] = codespans
    return env.get_template("report.html.j2")
