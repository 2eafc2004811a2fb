"""The `compare` result as a GitHub-flavoured Markdown before/after table, ready for a PR."""

from __future__ import annotations

from typing import Any

from rocanalyze.reports.markdown import code, escape
from rocanalyze.reports.text import steps_word

TOP_DETAIL = 15


def render_markdown(result: dict[str, Any]) -> str:
    """Markdown (str): summary line, step and category table, top kernel (or op) changes."""
    b, n = result["base"], result["new"]
    out = ["## rocanalyze compare", "", f"**{escape(result['summary'], False)}**", "",
           f"BASE: `{code(str(b['source']))}` ({escape(str(b['device']))}, {steps_word(b['steps'])}) · "
           f"NEW: `{code(str(n['source']))}` ({escape(str(n['device']))}, {steps_word(n['steps'])})", ""]
    if result["cross_vendor"]:
        out += ["*Different vendors: kernel names differ, so kernels are compared by category and op.*", ""]
    if result.get("rules_differ"):
        out += [f"*The two analyses were classified with different rules ({b['rules_digest']}, {n['rules_digest']}): "
                "category changes and rules that fire or no longer fire may come from the rules, not the run. "
                "Compare the traces instead: both are then classified with the same rules.*", ""]
    out += [f"Noise: mean ± std over n steps; *significant* = beyond ±{result['margin_pct']:g}% and Welch's "
            "t-test at 95% (see docs/compare.md).", ""]
    out += _table("per step", [result["step"], *result["categories"]])
    if result["detail"]:
        out += _table(f"top {result['detail_kind']} changes (per step)", result["detail"][:TOP_DETAIL],
                      names_as_code=True)
    for key, label in (("recommendations_gone", "No longer fires"), ("recommendations_new", "Now fires")):
        if result[key]:
            out.append(f"- {label}: " + ", ".join(f"`{r}`" for r in result[key]))
    return "\n".join(out) + "\n"


def _table(title: str, rows: list[dict[str, Any]], names_as_code: bool = False) -> list[str]:
    out = [f"| {title} | BASE | NEW | delta | verdict |", "|---|---:|---:|---:|---|"]
    for r in rows:
        name = f"`{code(r['name'])}`" if names_as_code else escape(r["name"])
        delta = "new" if r["delta_pct"] is None else f"{r['delta_pct']:+.1f}%"
        verdict = f"**{r['verdict']}**" if r["significant"] else r["verdict"]
        out.append(f"| {name} | {_cell(r['base'])} | {_cell(r['new'])} | {delta} | {verdict} |")
    return out + [""]


def _cell(s: dict[str, Any]) -> str:
    mean, std, n = s["mean"], s["std"], s["n"]
    return f"{_us(mean)} ± {_us(std)} (n={n})" if n > 1 else _us(mean)


def _us(us: float) -> str:
    return f"{us / 1e3:.3f} ms" if abs(us) >= 1000 else f"{us:.1f} µs"
