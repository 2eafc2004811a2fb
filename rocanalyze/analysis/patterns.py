"""Patterns that span kernels: hand-written attention, separate Q/K/V projections, eager elementwise
chains and host syncs inside the loop. Each kernel keeps its own category; these are reported on top.

`find_patterns(table)` takes an EventTable already cut to the analyzed window and returns a list of
dicts, each with at least `kind` and `time_us` (GPU µs the pattern accounts for, or GPU idle µs for
`host_sync`), plus evidence (counts, example kernels and ops, shapes, source lines). Thresholds and
the op/API names they match live in rocanalyze/data/kernel_rules.toml [patterns].
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rocanalyze.analysis.classify import builtin_rules_data, classify_table
from rocanalyze.analysis.timeaccount import sync_calls

if TYPE_CHECKING:
    from rocanalyze.traces.schema import EventTable

BACKWARD_PREFIX = "autograd::engine::evaluate_function"  # Kineto's op for one autograd node


@lru_cache(maxsize=1)
def settings() -> dict[str, Any]:
    """The [patterns] table of kernel_rules.toml (thresholds, op and runtime-call names)."""
    return dict(builtin_rules_data()["patterns"])


def find_patterns(table: EventTable) -> list[dict[str, Any]]:
    """Cross-kernel patterns found in the (already windowed) table, largest `time_us` first."""
    if len(table.gpu) and (table.gpu["category"].astype(str) == "").any():
        classify_table(table)
    ctx = _Context(table)
    found = [*_unfused_attention(ctx), *_unfused_qkv(ctx), *_eager_chains(ctx), *_host_syncs(ctx)]
    return sorted(found, key=lambda p: -p["time_us"])


class _Context:
    """Per-op GPU time and op ordering shared by the detectors."""

    def __init__(self, table: EventTable) -> None:
        self.table = table
        self.cfg = settings()
        ops, gpu = table.ops, table.gpu
        n = len(ops)
        self.names = ops["name"].astype(str).to_numpy(dtype=object) if n else np.zeros(0, dtype=object)
        self.parent = ops["parent"].to_numpy() if n else np.zeros(0, np.int64)
        own_ns = np.zeros(n, dtype=np.float64)
        launches = np.zeros(n, dtype=np.int64)
        if n and len(gpu):
            idx = gpu["op_index"].to_numpy()
            ok = (idx >= 0) & (idx < n)
            np.add.at(own_ns, idx[ok], gpu["dur_ns"].to_numpy()[ok])
            np.add.at(launches, idx[ok], 1)
        self.gpu_ns = _inclusive(own_ns, self.parent)
        self.launches = _inclusive(launches.astype(np.float64), self.parent)
        self.backward = _under(np.array([n.startswith(BACKWARD_PREFIX) for n in self.names], dtype=bool), self.parent)
        self.order = (np.lexsort((ops["start_ns"].to_numpy(), ops["tid"].to_numpy(), ops["pid"].to_numpy()))
                      if n else np.zeros(0, np.int64))
        self.order_pos = np.empty(n, dtype=np.int64)
        self.order_pos[self.order] = np.arange(n)

    def outermost(self, names: frozenset[str]) -> np.ndarray:
        """Mask of ops named in `names` whose enclosing op is not itself in `names`."""
        hit = np.isin(self.names, list(names))
        par = self.parent
        has_par = par >= 0
        par_hit = np.zeros(len(hit), dtype=bool)
        par_hit[has_par] = hit[par[has_par]]
        return hit & ~par_hit

    def evidence(self, rows: list[int]) -> dict[str, Any]:
        """Example ops, modules and source lines for a set of op rows."""
        ops = self.table.ops
        out: dict[str, Any] = {"example_ops": sorted({self.names[r] for r in rows})}
        for col, key in (("module", "modules"), ("stack", "source")):
            vals = [str(ops[col].iat[r]) for r in rows if str(ops[col].iat[r])]
            if vals:
                out[key] = [v for v, _ in Counter(vals).most_common(3)]
        return out


def _under(flag: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Ops that are flagged or have a flagged ancestor."""
    out = flag.copy()
    cur = parent.copy()
    for _ in range(64):
        live = cur >= 0
        if not live.any():
            break
        out[live] |= flag[cur[live]]
        nxt = np.full_like(cur, -1)
        nxt[live] = parent[cur[live]]
        cur = nxt
    return out


def _inclusive(own: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Per-op totals including all descendants (parent = row of enclosing op, -1 at top level)."""
    total = own.copy()
    cur = parent.copy()
    carry = own.copy()
    for _ in range(64):  # op nesting depth; real traces stay well below
        live = cur >= 0
        if not live.any():
            break
        np.add.at(total, cur[live], carry[live])
        nxt = np.full_like(cur, -1)
        nxt[live] = parent[cur[live]]
        cur = nxt
    return total


def _dims(shapes: Any, i: int) -> tuple[int, ...] | None:
    if isinstance(shapes, (list, tuple)) and len(shapes) > i and isinstance(shapes[i], (list, tuple)):
        dims = shapes[i]
        if dims and all(isinstance(d, (int, np.integer)) for d in dims):
            return tuple(int(d) for d in dims)
    return None


def _matmul_out(name: str, shapes: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """(A, B, A@B) shapes of a matmul-family op, or None when shapes are missing or not batched."""
    first = 1 if name == "aten::baddbmm" else 0
    a, b = _dims(shapes, first), _dims(shapes, first + 1)
    if a is None or b is None or len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        return None
    return a, b, a[:-1] + b[-1:]


def _unfused_attention(ctx: _Context) -> list[dict[str, Any]]:
    """matmul -> softmax -> matmul on one set of tensors ([.., S, D] x [.., D, S'] -> [.., S, S'] -> x [.., S', D])."""
    cfg = ctx.cfg
    mm_names, sm_names = frozenset(cfg["matmul_ops"]), frozenset(cfg["softmax_ops"])
    mm, sm = ctx.outermost(mm_names), ctx.outermost(sm_names)
    ops = ctx.table.ops
    shapes = ops["shapes"].to_numpy(dtype=object) if len(ops) else []
    tid = ops["tid"].to_numpy() if len(ops) else []
    seq = [int(r) for r in ctx.order if mm[r] or sm[r]]
    pos = np.empty(len(ctx.order), dtype=np.int64)
    pos[ctx.order] = np.arange(len(ctx.order))
    window = int(cfg["attention_max_ops_between"])
    groups: dict[tuple, dict[str, Any]] = {}
    for k in range(len(seq) - 2):
        r1, r2, r3 = seq[k], seq[k + 1], seq[k + 2]
        if not (mm[r1] and sm[r2] and mm[r3]) or not (tid[r1] == tid[r2] == tid[r3]):
            continue
        first, second = _matmul_out(ctx.names[r1], shapes[r1]), _matmul_out(ctx.names[r3], shapes[r3])
        scores = _dims(shapes[r2], 0)
        if first is None or second is None or scores is None or len(scores) < 3:
            continue
        if scores != first[2] or second[0] != scores:
            continue
        span = [int(r) for r in ctx.order[pos[r1]:pos[r3] + 1] if tid[r] == tid[r1]]
        inside = set(span)
        outer = [r for r in span if ctx.parent[r] not in inside]  # outermost ops of the span
        extra = [r for r in outer if r not in (r1, r2, r3) and ctx.launches[r] > 0]
        if len(extra) > window:
            continue
        ns = float(sum(ctx.gpu_ns[r] for r in outer))
        if ns <= 0:
            continue  # outside the analyzed window (no GPU rows left)
        key = (first[0], first[1], second[1])
        g = groups.setdefault(key, {"rows": [], "ns": 0.0, "count": 0})
        g["count"] += 1
        g["rows"] += [r1, r2, r3]
        g["ns"] += ns
    out = []
    for (q, kt, v), g in groups.items():
        out.append({"kind": "unfused_attention", "time_us": g["ns"] / 1e3, "count": g["count"],
                    "shapes": {"q": list(q), "k_t": list(kt), "scores": list(q[:-1] + kt[-1:]), "v": list(v)},
                    **ctx.evidence(g["rows"]),
                    "action": "use torch.nn.functional.scaled_dot_product_attention (flash / efficient kernels)"})
    return out


def _projection(name: str, shapes: Any) -> tuple[tuple[int, ...], int] | None:
    """(input shape, out features) of a linear-family op whose weight is a 2-D matrix, else None."""
    if name == "aten::linear":
        x, w = _dims(shapes, 0), _dims(shapes, 1)           # x [.., K], weight [N, K]
        ok = x is not None and w is not None and len(w) == 2 and x[-1] == w[1]
        return (x, w[0]) if ok else None
    x, w = (_dims(shapes, 1), _dims(shapes, 2)) if name == "aten::addmm" else (_dims(shapes, 0), _dims(shapes, 1))
    ok = x is not None and w is not None and len(w) == 2 and x[-1] == w[0]  # x [.., K], weight [K, N]
    return (x, w[1]) if ok else None


def _unfused_qkv(ctx: _Context) -> list[dict[str, Any]]:
    """Three consecutive forward projections of one input shape (same K), K and V equally wide, no GPU work between."""
    cfg = ctx.cfg
    ops = ctx.table.ops
    if not len(ops):
        return []
    lin = ctx.outermost(frozenset(cfg["linear_ops"])) & ~ctx.backward
    shapes = ops["shapes"].to_numpy(dtype=object)
    tid, start = ops["tid"].to_numpy(), ops["start_ns"].to_numpy()
    end = start + ops["dur_ns"].to_numpy()
    launches = _launch_times(ctx.table)
    max_gap = int(cfg["qkv_max_gap_ops"])
    groups: dict[tuple, dict[str, Any]] = {}
    run: list[tuple[int, tuple[int, ...], int]] = []
    for r in [int(r) for r in np.flatnonzero(lin)[np.argsort(ctx.order_pos[lin], kind="stable")]] + [-1]:
        proj = _projection(ctx.names[r], shapes[r]) if r >= 0 else None
        if proj is not None and run:
            prev = run[-1][0]
            th = launches.get(int(tid[r]), np.zeros(0))
            between = np.searchsorted(th, start[r]) - np.searchsorted(th, end[prev], side="right")
            if proj[0] == run[0][1] and tid[r] == tid[prev] and between <= max_gap:
                run.append((r, *proj))
                continue
        _close_qkv(ctx, run, groups)
        run = [(r, *proj)] if proj is not None else []
    out = []
    for (x, n), g in groups.items():
        out.append({"kind": "unfused_qkv", "time_us": g["ns"] / 1e3, "count": g["count"], "input_shape": list(x),
                    "k": x[-1], "out_features": list(n), **ctx.evidence(g["rows"]),
                    "action": "fuse the Q, K and V projections into one linear (concatenated weights), "
                              "or let torch.compile do it"})
    return out


def _launch_times(table: EventTable) -> dict[int, np.ndarray]:
    """Sorted start ns of the runtime calls that launched GPU work, per host thread."""
    rt, gpu = table.runtime, table.gpu
    if not len(rt) or not len(gpu):
        return {}
    li = gpu["launch_index"].to_numpy()
    li = np.unique(li[(li >= 0) & (li < len(rt))])
    starts, tids = rt["start_ns"].to_numpy()[li], rt["tid"].to_numpy()[li]
    return {int(t): np.sort(starts[tids == t]) for t in np.unique(tids)}


def _close_qkv(ctx: _Context, run: list[tuple[int, tuple[int, ...], int]], groups: dict) -> None:
    """Record the last three of a finished run of same-input projections as one Q/K/V triple.

    Two (an MLP's gate and up) are not Q/K/V; with four or more, the earlier ones are the previous
    block's output projection, which sees the same shape when no kernel separates the blocks.
    """
    if not 3 <= len(run) <= 4:
        return  # five and more back-to-back equal GEMMs are a loop of one computation, not Q/K/V
    (rq, x, nq), (rk, _, nk), (rv, _, nv) = run[-3:]
    ns = float(ctx.gpu_ns[rq] + ctx.gpu_ns[rk] + ctx.gpu_ns[rv])
    if nk != nv or nq < nk or ns <= 0:
        return
    g = groups.setdefault((x, (nq, nk, nv)), {"rows": [], "ns": 0.0, "count": 0})
    g["count"] += 1
    g["rows"] += [rq, rk, rv]
    g["ns"] += ns


def _eager_chains(ctx: _Context) -> list[dict[str, Any]]:
    """Runs of >= N back-to-back elementwise kernels on one stream, each one op (not replayed from a graph).

    A run ends at any other kernel (a reduction, a GEMM), a gap longer than `eager_chain_max_gap_us`
    or a kernel longer than `eager_chain_max_kernel_us`; Triton kernels are already fused.
    """
    cfg = ctx.cfg
    gpu = ctx.table.gpu
    if not len(gpu):
        return []
    small_ns, gap_ns = cfg["eager_chain_max_kernel_us"] * 1e3, cfg["eager_chain_max_gap_us"] * 1e3
    min_len = int(cfg["eager_chain_min_kernels"])
    fused = re.compile(cfg["eager_chain_exclude_names"])
    df = gpu[["rank", "device", "stream", "start_ns", "dur_ns", "name", "category", "graph", "op_index"]]
    df = df.sort_values(["rank", "device", "stream", "start_ns"], kind="stable")
    names = df["name"].astype(str).to_numpy()
    codes, uniques = pd.factorize(names)  # the regex runs once per distinct name, not per kernel
    unfused = np.array([not fused.search(u) for u in uniques], dtype=bool)[codes] if len(names) else \
        np.zeros(0, dtype=bool)
    ok = ((df["category"].astype(str).to_numpy() == "elementwise") & (df["dur_ns"].to_numpy() <= small_ns)
          & ~df["graph"].to_numpy() & unfused)
    start, end = df["start_ns"].to_numpy(), (df["start_ns"] + df["dur_ns"]).to_numpy()
    lane = df[["rank", "device", "stream"]].to_numpy()
    new_lane = np.r_[True, (lane[1:] != lane[:-1]).any(axis=1)]
    gap = np.r_[np.inf, start[1:] - end[:-1]]
    links = ok & np.r_[False, ok[:-1]] & ~new_lane & (gap <= gap_ns)
    run_id = np.cumsum(~links)
    sites: dict[tuple, dict[str, Any]] = {}
    op_idx = df["op_index"].to_numpy()
    # rows of each run, in one pass: run ids of the ok rows are non-decreasing
    ok_rows = np.flatnonzero(ok)
    ok_runs = run_id[ok_rows]
    cuts = np.flatnonzero(np.diff(ok_runs)) + 1
    for rows in np.split(ok_rows, cuts) if len(ok_rows) else []:
        if len(rows) < min_len:
            continue
        ops_in = [int(i) for i in op_idx[rows] if i >= 0]
        key = tuple(sorted({ctx.names[i] for i in ops_in})) or tuple(sorted(set(names[rows]))[:3])
        s = sites.setdefault(key, {"ns": 0.0, "gaps": 0.0, "count": 0, "kernels": 0, "longest": 0,
                                   "names": Counter(), "ops": [], "example": {}})
        s["count"] += 1
        s["kernels"] += len(rows)
        if len(rows) > s["longest"]:
            s["longest"] = len(rows)
            s["example"] = {"rank": int(lane[rows[0]][0]), "device": int(lane[rows[0]][1]),
                            "stream": int(lane[rows[0]][2]), "start_ns": int(start[rows[0]]), "kernels": len(rows)}
        s["ns"] += float((end[rows] - start[rows]).sum())
        s["gaps"] += float(np.clip(start[rows][1:] - end[rows][:-1], 0, None).sum())
        s["names"].update(names[rows])
        s["ops"] += ops_in[:16]
    out = []
    top = sorted(sites.items(), key=lambda kv: -kv[1]["ns"])[: int(cfg["eager_chain_max_sites"])]
    for _key, s in top:
        ev = ctx.evidence(s["ops"]) if s["ops"] else {}
        out.append({"kind": "eager_elementwise_chain", "time_us": s["ns"] / 1e3, "count": s["count"],
                    "kernels": s["kernels"], "longest_chain": s["longest"], "gaps_us": s["gaps"] / 1e3,
                    "example_chain": s["example"],
                    "example_kernels": [n[:160] for n, _ in s["names"].most_common(3)], **ev,
                    "action": "fuse the chain: torch.compile, or a fused op for the expression"})
    return out


def _host_syncs(ctx: _Context) -> list[dict[str, Any]]:
    """Blocking runtime calls (stream/device/event syncs, synchronous copies) and .item() inside steps.

    A sync costs GPU time when the host was already blocked in it as the GPU ran out of work: the
    queue drained and the GPU waits for the host to launch again. That idle gap (up to
    `host_sync_idle_cap_us`; beyond it the host was doing something else) is the pattern's time.
    """
    cfg = ctx.cfg
    rt, ann = ctx.table.runtime, ctx.table.annotations
    if not len(rt):
        return []
    sync = rt[sync_calls(rt, ctx.table.gpu)]
    if len(ctx.table.gpu):  # the ranks whose GPU rows the caller kept
        sync = sync[np.isin(sync["rank"].to_numpy(), ctx.table.gpu["rank"].unique())]
    window = ctx.table.metadata.get("window_ns")
    if window:  # the caller's analyzed window, when it cut only the GPU rows
        t = sync["start_ns"].to_numpy()
        sync = sync[(t >= window[0]) & (t < window[1])]
    steps = ann[ann["kind"].astype(str) == "step"] if len(ann) else ann
    if len(steps):
        sync = sync[_inside(sync, steps)]
    idle, per_step = np.zeros(len(sync)), []
    for rank in np.unique(sync["rank"].to_numpy()):
        mine = (sync["rank"] == rank).to_numpy()
        gpu = ctx.table.gpu[ctx.table.gpu["rank"] == rank]
        idle[mine] = _idle_caused(gpu, sync[mine], cfg["host_sync_idle_cap_us"] * 1e3)
    if not len(steps):  # without step markers, a sync with no GPU work after it ends the run
        keep = idle >= 0
        sync, idle = sync[keep], idle[keep]
    idle = np.clip(idle, 0, None)
    if len(sync) < int(cfg["host_sync_min_count"]):
        return []
    if len(steps):
        a, b = steps["start_ns"].to_numpy(), (steps["start_ns"] + steps["dur_ns"]).to_numpy()
        t, rk = sync["start_ns"].to_numpy(), sync["rank"].to_numpy()
        per_step = [int(((t >= x) & (t < y) & (rk == r)).sum())
                    for x, y, r in zip(a, b, steps["rank"].to_numpy(), strict=True)]
    items = _items_that_synced(ctx, sync)
    out = {"kind": "host_sync", "time_us": float(idle.sum()) / 1e3, "count": int(len(sync)),
           "calls": dict(Counter(sync["name"].astype(str)).most_common()), "item_calls": len(items),
           "per_step": per_step, "gpu_idle_us_max": float(idle.max(initial=0)) / 1e3,
           "action": "keep values on the GPU inside the loop (no .item(), .cpu(), printing tensors); "
                     "sync once per step or per log interval"}
    if items:
        out.update(ctx.evidence(items))
    return [out]


def _inside(rows: pd.DataFrame, steps: pd.DataFrame) -> np.ndarray:
    """Mask of rows starting inside a step annotation of their rank."""
    t, rk = rows["start_ns"].to_numpy(), rows["rank"].to_numpy()
    mask = np.zeros(len(rows), dtype=bool)
    for x, d, r in zip(steps["start_ns"].to_numpy(), steps["dur_ns"].to_numpy(), steps["rank"].to_numpy(),
                       strict=True):
        mask |= (t >= x) & (t < x + d) & (rk == r)
    return mask


def _items_that_synced(ctx: _Context, sync: pd.DataFrame) -> list[int]:
    """Rows of .item()-like ops (outermost) that contain one of the sync calls on their thread."""
    ops = ctx.table.ops
    rows = np.flatnonzero(ctx.outermost(frozenset(ctx.cfg["sync_ops"])))
    t, tid = sync["start_ns"].to_numpy(), sync["tid"].to_numpy()
    out = []
    for r in rows:
        a, d, th = ops["start_ns"].iat[r], ops["dur_ns"].iat[r], ops["tid"].iat[r]
        if ((t >= a) & (t < a + d) & (tid == th)).any():
            out.append(int(r))
    return out


def _idle_caused(gpu: pd.DataFrame, sync: pd.DataFrame, cap_ns: float) -> np.ndarray:
    """Per sync call: GPU idle ns it caused (0 when the GPU still had work), -1 when nothing follows it.

    The idle gap after the last GPU activity ending before the call returns is charged to the call
    when the call had started by then (the host sat blocked while the queue drained); each gap is
    charged once, to its first sync.
    """
    s_start = sync["start_ns"].to_numpy()
    s_end = s_start + sync["dur_ns"].to_numpy()
    if not len(gpu):
        return np.full(len(sync), -1.0)
    start = gpu["start_ns"].to_numpy()
    order = np.argsort(start, kind="stable")
    start = start[order]
    busy_end = np.maximum.accumulate((gpu["start_ns"] + gpu["dur_ns"]).to_numpy()[order])
    nxt = np.searchsorted(start, s_end, side="right")  # first GPU activity starting after the return
    out = np.full(len(sync), -1.0)
    seen: set[int] = set()
    for k in np.argsort(s_end, kind="stable"):
        n = int(nxt[k])
        if n >= len(start):
            continue  # trailing sync
        drained = busy_end[n - 1] if n > 0 else -np.inf
        out[k] = 0.0
        if n > 0 and s_start[k] <= drained <= s_end[k] + 1 and n not in seen:
            out[k] = min(float(start[n] - drained), cap_ns)
            seen.add(n)
    return out
