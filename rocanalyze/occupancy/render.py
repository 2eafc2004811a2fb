"""Occupancy results as a terminal table (rich), Markdown for a PR, or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from rocanalyze.analysis.demangle import short_name
from rocanalyze.occupancy.compute import Occupancy

_COLUMNS = ("kernel", "arch", "LLVM w/SIMD", "WG/CU", "waves/SIMD", "occ %", "limiter", "VGPR (alloc)",
            "AGPR", "SGPR", "LDS B", "scratch B", "next level")


def _kib(n: int) -> str:
    return f"{n / 1024:.1f}K" if n >= 1024 else str(n)


def what_if_text(occ: Occupancy) -> str:
    """'-8 VGPRs (176->168): 3 WG/CU, waves_per_eu=3' or '' when no single change buys a level."""
    w = occ.what_if
    if not w:
        return ""
    gain = f"{w['next_workgroups_per_cu']} WG/CU ({w['next_waves_per_simd']} w/SIMD)"
    if w["resource"] == "waves_per_eu":
        return f"raise waves_per_eu to {w['waves_per_eu_hint']}: {gain}"
    unit = {"vgpr": "VGPRs", "agpr": "AGPRs", "sgpr": "SGPRs", "lds": "LDS bytes"}[w["resource"]]
    hint = f", waves_per_eu={w['waves_per_eu_hint']}" if w["resource"] in ("vgpr", "agpr") else ""
    return f"-{w['fewer']} {unit} ({w['now']}->{w['most']}): {gain}{hint}"


def _row(o: Occupancy) -> list[str]:
    comp = "?" if o.compiler_waves_per_simd is None else str(o.compiler_waves_per_simd)
    return [short_name(o.kernel), o.arch, comp, str(o.workgroups_per_cu), f"{o.waves_per_simd:g}",
            f"{o.occupancy_pct:g}", o.limiter, f"{o.vgpr} ({o.vgpr_allocated})", str(o.agpr),
            "-" if o.sgpr is None else str(o.sgpr), _kib(o.lds_bytes), str(o.scratch_bytes), what_if_text(o)]


def _findings(o: Occupancy) -> list[str]:
    lines = [f"[{f['severity']}] {f['message']}" for f in o.lint if f["severity"] == "warn"]
    return lines + [f"[note] {n}" for n in o.notes]


def _models(results: Sequence[Occupancy]) -> str:
    return "LLVM occupancy model: " + ", ".join(sorted({o.model for o in results})) + " (see docs/occupancy.md)"


def render_table(results: Sequence[Occupancy], console: Console) -> None:
    """Print the table, then each kernel's warnings and notes."""
    table = Table(title="Occupancy (per SIMD; workgroups per CU, or WGP on RDNA)", show_lines=False,
                  caption=_models(results))
    for col in _COLUMNS:
        table.add_column(col, overflow="fold", no_wrap=col not in ("kernel", "next level"))
    for o in results:
        table.add_row(*_row(o))
    console.print(table)
    for o in results:
        lines = _findings(o)
        if lines:
            console.print(f"{short_name(o.kernel)} ({o.source}):", markup=False, highlight=False)
            for line in lines:
                console.print(f"  {line}", markup=False, highlight=False)


def render_markdown(results: Sequence[Occupancy]) -> str:
    """A Markdown table plus the warnings, for a PR comment."""
    esc = [[cell.replace("|", "\\|") for cell in _row(o)] for o in results]
    lines = ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in esc]
    lines += ["", _models(results)]
    for o in results:
        found = _findings(o)
        if found:
            lines += ["", f"**{short_name(o.kernel)}** (`{o.source}`)", *[f"- {line}" for line in found]]
    return "\n".join(lines) + "\n"


def render_json(results: Sequence[Occupancy]) -> str:
    return json.dumps([o.to_json() for o in results], indent=1, sort_keys=True) + "\n"
