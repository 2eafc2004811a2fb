"""The per-kernel table: calls, total/mean/min/max time, share, launching op and module, per-step time.

    name            category  calls  total_us  mean_us  share  op         per_step_us
    sm90_xmma_...   gemm      120    5400.0    45.0     0.31   aten::mm   [1800, 1795, 1805]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocanalyze.analysis.demangle import demangle, outline
from rocanalyze.analysis.window import Window

NS_PER_US = 1000.0


def kernel_table(gpu: pd.DataFrame, ops: pd.DataFrame, window: Window, busy_ns: int) -> list[dict]:
    """One dict per GPU activity name in the window, sorted by total time (µs)."""
    if not len(gpu):
        return []
    frame = pd.DataFrame({
        "name": gpu["name"].astype(str).to_numpy(),
        "category": gpu["category"].astype(str).to_numpy(),
        "kind": gpu["kind"].astype(str).to_numpy(),
        "dur": gpu["dur_ns"].to_numpy(np.int64),
        "op": _op_column(gpu, ops, "name"),
        "module": _op_column(gpu, ops, "module"),
    })
    grouped = frame.groupby("name", sort=False)
    stats = grouped["dur"].agg(["count", "sum", "mean", "min", "max"])
    first = grouped[["category", "kind"]].first()
    op = grouped["op"].agg(_most_common)
    module = grouped["module"].agg(_most_common)
    per_step = _per_step(gpu, frame["name"], window)
    rows = []
    for name in stats.sort_values("sum", ascending=False).index:
        s = stats.loc[name]
        rows.append({
            "name": name, "display": display_name(name), "category": first.at[name, "category"],
            "kind": first.at[name, "kind"],
            "calls": int(s["count"]), "total_us": s["sum"] / NS_PER_US, "mean_us": s["mean"] / NS_PER_US,
            "min_us": s["min"] / NS_PER_US, "max_us": s["max"] / NS_PER_US,
            "share": float(s["sum"]) / busy_ns if busy_ns else 0.0,
            "op": op.at[name] or None, "module": module.at[name] or None,
            "per_step_us": per_step.get(name), "tflops": None, "gbps": None, "occupancy": None,
        })
    return rows


def display_name(name: str) -> str | None:
    """The name to show for a kernel recorded mangled (code-object symbols, `rocprofv3 --mangled-kernels`,
    aiter's asm kernels): demangled as c++filt would, else its qualified name with the template arguments
    elided (`ck::...::kernel_grouped_conv_fwd_xdl_cshuffle_v3<…>`); None when the recorded name reads as it is."""
    return demangle(name.strip()) or outline(name)


def unclassified_note(kernels: list[dict], min_share: float) -> str | None:
    """A note when kernels that no classification rule knows take at least `min_share` of GPU busy time.

    Those kernels count as 'other', which hides what they do; the note names the largest so the user
    can add their family with --rules.
    """
    from rocanalyze.analysis.classify import match_rule

    unknown = [k for k in kernels if k.get("category") == "other" and k.get("kind", "kernel") == "kernel"
               and match_rule(str(k["name"]), k.get("op") or None) is None]
    share = sum(float(k.get("share") or 0.0) for k in unknown)
    if not unknown or share < min_share:
        return None
    largest = ", ".join(f"'{clip_name(k.get('display') or k['name'], 60)}'" for k in unknown[:3])
    return (f"{len(unknown)} kernel name{'s' if len(unknown) > 1 else ''} ({100 * share:.1f}% of GPU busy time) "
            f"match{'' if len(unknown) > 1 else 'es'} no classification rule and count as other (largest: {largest}); "
            "to classify them, name their family in a rules file and pass --rules FILE (docs/classification.md)")


def clip_name(name: str, n: int) -> str:
    """A kernel name cut to `n` characters, the cut marked with an ellipsis (reports and notes share it)."""
    return name if len(name) <= n else name[: n - 1] + "…"


def _op_column(gpu: pd.DataFrame, ops: pd.DataFrame, column: str) -> np.ndarray:
    idx = gpu["op_index"].to_numpy(np.int64)
    out = np.full(len(idx), "", dtype=object)
    if len(ops) and (idx >= 0).any():
        values = ops[column].astype(str).to_numpy()
        out[idx >= 0] = values[idx[idx >= 0]]
    return out


def _most_common(values: pd.Series) -> str:
    counts = values[values != ""].value_counts()
    return str(counts.index[0]) if len(counts) else ""


def _per_step(gpu: pd.DataFrame, names: pd.Series, window: Window) -> dict[str, list[float]]:
    """Per-kernel time in each step (µs), by kernel start time; {} without steps."""
    if not window.steps:
        return {}
    edges = np.array([s.start_ns for s in window.steps[1:]], dtype=np.int64)
    step = np.searchsorted(edges, gpu["start_ns"].to_numpy(np.int64), side="right")
    table = pd.DataFrame({"name": names.to_numpy(), "step": step, "dur": gpu["dur_ns"].to_numpy(np.int64)})
    pivot = table.pivot_table(index="name", columns="step", values="dur", aggfunc="sum", fill_value=0)
    pivot = pivot.reindex(columns=range(len(window.steps)), fill_value=0)
    return {name: (row / NS_PER_US).round(3).tolist() for name, row in pivot.iterrows()}
