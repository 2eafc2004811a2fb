"""Which stretch of the trace is analyzed: the selected steps, else the steady state after start-up.

Start-up (first-call library initialisation, compilation, allocation) is cut off and reported as
`startup_us`, so it never shows up as launch overhead or idle time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rocanalyze.errors import UserError
from rocanalyze.paths import load_data_toml

_STEP_NUMBER = re.compile(r"(\d+)\s*$")


@dataclass(frozen=True)
class Step:
    name: str
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class Window:
    start_ns: int
    end_ns: int
    how: str                          # "steps 2-4", "steady state", "whole trace"
    steps: list[Step] = field(default_factory=list)
    startup_ns: int = 0               # excluded start-up before start_ns
    notes: list[str] = field(default_factory=list)

    @property
    def dur_ns(self) -> int:
        return self.end_ns - self.start_ns


def parse_steps(spec: str | None) -> tuple[int, int] | None:
    """`--steps A:B` (inclusive step numbers as named in the trace), `A` alone, or None."""
    if not spec:
        return None
    m = re.fullmatch(r"\s*(\d*)\s*(?::\s*(\d*))?\s*", spec)
    if not m:
        raise UserError(f"--steps {spec!r}: expected A:B, A: , :B or A (step numbers)")
    lo = int(m.group(1)) if m.group(1) else 0
    hi_text = m.group(2) if m.group(2) is not None else m.group(1)
    hi = int(hi_text) if hi_text else 1 << 62
    if hi < lo:
        raise UserError(f"--steps {spec!r}: the end comes before the start")
    return lo, hi


def choose_window(gpu: pd.DataFrame, annotations: pd.DataFrame, runtime: pd.DataFrame,
                  steps: str | None = None) -> Window:
    """The analyzed window of one rank's GPU activity (frames already cut to that rank)."""
    cfg = load_data_toml("analysis.toml")["window"]
    step_rows = annotations[annotations["kind"] == "step"].sort_values("start_ns")
    if len(step_rows):
        return _window_from_steps(gpu, step_rows, runtime, parse_steps(steps), cfg)
    if steps:
        raise UserError(f"--steps {steps}: this trace has no step markers (ProfilerStep#N or rocanalyze.step())")
    return _steady_state(gpu, cfg)


def _window_from_steps(gpu: pd.DataFrame, rows: pd.DataFrame, runtime: pd.DataFrame,
                       selection: tuple[int, int] | None, cfg: dict) -> Window:
    names = rows["name"].astype(str).tolist()
    host_starts = rows["start_ns"].to_numpy(np.int64)
    host_ends = np.maximum(host_starts + rows["dur_ns"].to_numpy(np.int64), np.append(host_starts[1:], 0))
    numbers = [int(m.group(1)) if (m := _STEP_NUMBER.search(n)) else i for i, n in enumerate(names)]
    # The host runs ahead of the GPU: a step's GPU work starts and ends later than its host range, so
    # steps are measured on the GPU, from the first activity each host step launched.
    first_start, last_end = _gpu_step_work(gpu, runtime, host_starts, host_ends)
    notes: list[str] = []
    keep = np.ones(len(names), dtype=bool)
    if selection is not None:
        keep = np.array([selection[0] <= n <= selection[1] for n in numbers])
        if not keep.any():
            raise UserError(f"--steps {selection[0]}:{selection[1]} selects none of the recorded steps "
                            f"{numbers[0]}..{numbers[-1]}")
    worked = first_start >= 0
    if worked.any():  # a step range that launched no GPU work (a trailing marker, say) is no step
        empty = keep & ~worked
        if empty.any():
            notes.append(f"left out {int(empty.sum())} step range(s) that launched no GPU work: "
                         + ", ".join(names[i] for i in np.flatnonzero(empty)[:5]))
        keep &= worked
        if not keep.any():
            raise UserError("the selected steps launched no GPU work")
        starts = np.where(worked, first_start, -1)
    else:  # no launch links (kernel-only traces): host ranges it is
        starts, last_end = host_starts.copy(), host_ends.copy()
    idx = np.flatnonzero(keep)
    # a step ends where the next step's work starts (the last: where its own work ends)
    ends = np.array([starts[idx[k + 1]] if k + 1 < len(idx) else max(last_end[idx[k]], starts[idx[k]])
                     for k in range(len(idx))], dtype=np.int64)
    durs = ends - starts[idx]
    startup_ns = 0
    if selection is None and len(idx) >= 3:
        ratio = cfg["startup_step_ratio"]
        median = np.median(durs)
        drop = []
        if durs[0] > ratio * np.median(durs[1:]):
            startup_ns = int(durs[0])
            notes.append(f"{names[idx[0]]} took {durs[0] / 1e6:.1f} ms, over {ratio:g}x the median step: treated "
                         f"as start-up and left out of the window")
            drop.append(0)
        for k in (0, len(idx) - 1):  # a step cut by the start or end of profiling holds part of its work
            if k not in drop and durs[k] * ratio < median:
                notes.append(f"{names[idx[k]]} took {durs[k] / 1e6:.2f} ms, under 1/{ratio:g} of the median "
                             f"step: a partial step, left out of the window")
                drop.append(k)
        kept = [k for k in range(len(idx)) if k not in drop]
        idx, ends = idx[kept], ends[kept]
    steps = [Step(names[i], int(starts[i]), int(e)) for i, e in zip(idx, ends, strict=True)]
    first, last = numbers[idx[0]], numbers[idx[-1]]
    how = f"step {first}" if first == last else f"steps {first}-{last}"
    return Window(steps[0].start_ns, steps[-1].end_ns, how, steps, startup_ns, notes)


def _gpu_step_work(gpu: pd.DataFrame, runtime: pd.DataFrame, host_starts: np.ndarray,
                   host_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per host step: start of the first and end of the last GPU activity it launched (-1: none)."""
    n = len(host_starts)
    first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int64)
    if len(gpu) and len(runtime):
        li = gpu["launch_index"].to_numpy(np.int64)
        has = li >= 0
        launched = runtime["start_ns"].to_numpy(np.int64)[li[has]]
        g_start = gpu["start_ns"].to_numpy(np.int64)[has]
        g_end = g_start + gpu["dur_ns"].to_numpy(np.int64)[has]
        step_of = np.searchsorted(host_starts, launched, side="right") - 1
        inside = (step_of >= 0) & (launched < host_ends[np.maximum(step_of, 0)])
        np.minimum.at(first, step_of[inside], g_start[inside])
        np.maximum.at(last, step_of[inside], g_end[inside])
    first[last < 0] = -1
    return first, last


def _steady_state(gpu: pd.DataFrame, cfg: dict) -> Window:
    if not len(gpu):
        return Window(0, 0, "whole trace")
    order = np.argsort(gpu["start_ns"].to_numpy(np.int64), kind="stable")
    starts = gpu["start_ns"].to_numpy(np.int64)[order]
    ends = starts + gpu["dur_ns"].to_numpy(np.int64)[order]
    codes = gpu["name"].cat.codes.to_numpy()[order] if hasattr(gpu["name"], "cat") else \
        pd.factorize(gpu["name"].to_numpy()[order])[0]
    lo, hi = int(starts[0]), int(ends.max())
    begin = _periodic_start(codes, starts, cfg)
    if begin is not None and begin > 0:
        cut = int(starts[begin])
        return Window(cut, hi, "steady state", startup_ns=cut - lo,
                      notes=[f"no step markers: the repeating kernel sequence starts at +{(cut - lo) / 1e6:.2f} ms;"
                             f" what comes before is start-up"])
    gaps = starts[1:] - np.maximum.accumulate(ends)[:-1]
    big = np.flatnonzero(gaps[: max(1, len(gaps) // 2)] >= cfg["startup_gap_ns"])
    if len(big):
        cut = int(starts[big[-1] + 1])
        return Window(cut, hi, "steady state", startup_ns=cut - lo,
                      notes=[f"no step markers: start-up ends after a {gaps[big[-1]] / 1e6:.1f} ms idle gap"])
    return Window(lo, hi, "whole trace")


def _periodic_start(codes: np.ndarray, starts: np.ndarray, cfg: dict) -> int | None:
    """Index of the first kernel of the first steady period, or None when no period is found."""
    n = len(codes)
    m = min(int(cfg["period_signature"]), n // 3)
    if m < 4:
        return None
    tail = codes[n - m:]
    candidates = np.flatnonzero(codes[: n - m] == tail[0])[::-1][:4000]
    period = next((n - m - int(i) for i in candidates if np.array_equal(codes[i:i + m], tail)), None)
    if period is None or period * 2 > n:
        return None
    same = codes[:-period] == codes[period:]
    mismatch = np.flatnonzero(~same)
    first = int(mismatch[-1]) + 1 if len(mismatch) else 0
    # align to whole periods and drop leading periods much slower than the median one
    bounds = np.arange(first, n - period + 1, period)
    if len(bounds) < 2:
        return first
    durations = np.diff(starts[bounds])
    median = np.median(durations)
    slow = 0
    while slow < len(durations) - 1 and durations[slow] > cfg["startup_period_ratio"] * median:
        slow += 1
    return int(bounds[slow])
