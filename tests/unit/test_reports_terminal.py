"""The terminal report at the widths a user gets: 80 columns when piped, wider in a terminal."""

from __future__ import annotations

import functools
import re

import pytest

from rocanalyze.analysis.build import analyze
from rocanalyze.analysis.result import Analysis
from rocanalyze.reports import terminal
from rocanalyze.reports.text import fmt_pct, fmt_us
from tests.conftest import data_path, realdata_path


@functools.cache
def h100(name: str) -> Analysis:
    return analyze(data_path("torch_profiler", "h100_captures", f"{name}.json.gz"))


def kernel_rows(out: str) -> list[str]:
    """The body rows of the Top kernels table (one line per kernel)."""
    block = out.split("Top kernels", 1)[1]
    return [line for line in block.splitlines() if line.startswith("│")]


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_top_kernels_numbers_never_elided(width: int) -> None:
    a = h100("train_step")  # names of 100+ characters
    out = terminal.render(a, width=width)
    assert max(len(line) for line in out.splitlines()) <= width
    rows = kernel_rows(out)
    assert len(rows) == min(terminal.TOP_KERNELS, len(a.top_kernels))  # one line each: names never wrap
    for k, row in zip(a.top_kernels[: len(rows)], rows, strict=True):
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert fmt_us(k["total_us"]) in cells and fmt_pct(k["share"]) in cells and str(k["calls"]) in cells
        assert not any(c == "…" or re.fullmatch(r"[\d.]+…", c) for c in cells[1:])
        name = cells[0]
        assert name == k["name"] or (name.endswith("…") and k["name"].startswith(name[:-1]))
    header = out.split("Top kernels", 1)[1].splitlines()[2]
    assert "kernel" in header and "total" in header and "share" in header and "calls" in header


def test_wide_terminal_shows_category_and_mean() -> None:
    a = h100("train_step")
    out = terminal.render(a, width=160)
    header = out.split("Top kernels", 1)[1].splitlines()[2]
    assert "category" in header and "mean" in header
    assert fmt_us(a.top_kernels[0]["mean_us"]) in out


def test_stats_only_input_at_80_columns() -> None:
    a = analyze(realdata_path("rocprof_v1", "saltfish_pytorch_mi300x", "results.stats.csv"))
    out = terminal.render(a, width=80)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert fmt_us(a.top_kernels[0]["total_us"]) in out


def test_no_rule_fired_says_what_was_measured() -> None:
    a = h100("big_gemm")
    assert not a.recommendations
    out = terminal.render(a, width=100)
    assert "No rule fired" in out
    assert f"busy {fmt_pct(a.busy_us / a.window_us)} of the window" in out
    assert "% of the bf16 roof" in out
