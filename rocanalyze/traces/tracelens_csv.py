"""TraceLens perf-report kernel summaries (kernel_summary.csv): per-kernel totals, no timeline.

    Parent op category,Parent cpu_op,Kernel name,Kernel stream,Kernel duration (µs)_sum,
    Kernel duration (µs)_count,...,Percent of kernels time (%),Percent of total time (%)

One row per (launching op, kernel, stream). The rows become aggregates, one per kernel and launching
op, so the classifier gets the op as well as the name. TraceLens' own "Parent op category" is not
used: rocanalyze classifies with its own rules. "Percent of total time" gives the trace's total time,
which a note reports.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rocanalyze.errors import UserError
from rocanalyze.traces import quality
from rocanalyze.traces.rocprof_csv import header, load
from rocanalyze.traces.schema import AGGREGATE_COLUMNS, EventTable, make_frame

DESCRIPTION = "TraceLens kernel summary CSV (kernel_summary.csv)"
_NAME, _OP = "Kernel name", "Parent cpu_op"
_SUM, _COUNT = "Kernel duration (µs)_sum", "Kernel duration (µs)_count"
_SHARE_OF_TOTAL = "Percent of total time (%)"


def sniff(head: bytes) -> bool:
    cols = set(header(head))
    return {_NAME, _SUM, _COUNT} <= cols


def read(path: Path, *, progress: bool = False) -> EventTable:
    raw = load(path)
    raw.columns = [str(c).strip() for c in raw.columns]
    missing = {_NAME, _SUM, _COUNT} - set(raw.columns)
    if missing:
        raise UserError(f"TraceLens kernel summary without the column(s) {', '.join(sorted(missing))}", path)
    sums = pd.to_numeric(raw[_SUM], errors="coerce")
    counts = pd.to_numeric(raw[_COUNT], errors="coerce")
    if sums.isna().any() or counts.isna().any():
        raise UserError(f"TraceLens kernel summary with non-numeric durations or counts "
                        f"(row {int((sums.isna() | counts.isna()).to_numpy().argmax()) + 2})", path)
    rows = pd.DataFrame({"name": raw[_NAME].astype(str),
                         "op": raw[_OP].astype(str) if _OP in raw.columns else "",
                         "total_us": sums.astype(float), "calls": counts.astype(np.int64)})
    per_kernel = rows.groupby(["name", "op"], sort=False, as_index=False)[["total_us", "calls"]].sum()
    aggregates = make_frame(AGGREGATE_COLUMNS, {
        "kind": np.full(len(per_kernel), "kernel", dtype=object), "name": per_kernel["name"].to_numpy(),
        "op": per_kernel["op"].to_numpy(), "calls": per_kernel["calls"].to_numpy(np.int64),
        "total_ns": np.rint(per_kernel["total_us"].to_numpy() * 1e3).astype(np.int64)})
    notes = []
    total_us = _total_time_us(sums, raw.get(_SHARE_OF_TOTAL))
    if total_us:
        notes.append(f"TraceLens measured {total_us:,.1f} µs of total time (from its 'Percent of total time'); "
                     f"its kernels sum to {sums.sum():,.1f} µs")
    table = EventTable.build(source_format="tracelens-kernel-summary", paths=[str(path)], aggregates=aggregates,
                             notes=notes)
    table.quality = quality.assess(table)
    return table


def _total_time_us(sums: pd.Series, shares: pd.Series | None) -> float | None:
    """The trace's total time, as each row's sum divided by its share of it (the median over rows)."""
    if shares is None:
        return None
    share = pd.to_numeric(shares, errors="coerce").to_numpy(float)
    ok = share > 0
    if not ok.any():
        return None
    return float(np.median(sums.to_numpy(float)[ok] / share[ok] * 100))
