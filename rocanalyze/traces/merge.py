"""Concatenating EventTables (ranks of one run, or the files of one rocprof output folder).

Row references are shifted as the tables are stacked: gpu.op_index by the ops rows before it,
gpu.launch_index by the runtime rows before it, ops.parent by the ops rows before it, and the
counters' gpu_row by the gpu rows before it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocanalyze.traces.schema import EventTable


def _stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate keeping categoricals categorical (union of categories)."""
    frames = [f for f in frames if len(f)] or frames[:1]
    if len(frames) == 1:
        return frames[0].reset_index(drop=True)
    out = pd.concat(frames, ignore_index=True)
    for col in frames[0].columns:
        if isinstance(frames[0][col].dtype, pd.CategoricalDtype) and not isinstance(out[col].dtype,
                                                                                     pd.CategoricalDtype):
            out[col] = pd.Categorical(out[col].astype(object).where(out[col].notna(), ""))
    return out


def _shift(values: pd.Series, by: int) -> np.ndarray:
    arr = values.to_numpy()
    return np.where(arr >= 0, arr + by, arr)


def concat(tables: list[EventTable], source_format: str | None = None) -> EventTable:
    """One EventTable holding all rows of `tables`, references kept valid."""
    if len(tables) == 1:
        return tables[0]
    gpus, runtimes, opss, counters = [], [], [], []
    n_gpu = n_rt = n_ops = 0
    for t in tables:
        gpu = t.gpu.copy()
        gpu["op_index"] = _shift(gpu["op_index"], n_ops)
        gpu["launch_index"] = _shift(gpu["launch_index"], n_rt)
        ops = t.ops.copy()
        ops["parent"] = _shift(ops["parent"], n_ops)
        frame = t.metadata.get("counters")
        if isinstance(frame, pd.DataFrame) and len(frame):
            frame = frame.copy()
            frame["gpu_row"] = _shift(frame["gpu_row"], n_gpu)
            counters.append(frame)
        gpus.append(gpu)
        runtimes.append(t.runtime)
        opss.append(ops)
        n_gpu, n_rt, n_ops = n_gpu + len(gpu), n_rt + len(t.runtime), n_ops + len(ops)
    metadata: dict[str, Any] = {"sources": [{"path": p, "format": t.source_format} for t in tables
                                            for p in t.paths]}
    for t in tables:
        for key, value in t.metadata.items():
            if key != "counters":
                metadata.setdefault(key, value)
    if counters:
        metadata["counters"] = pd.concat(counters, ignore_index=True)
    formats = sorted({t.source_format for t in tables})
    return EventTable(
        gpu=_stack(gpus), runtime=_stack(runtimes), ops=_stack(opss),
        annotations=_stack([t.annotations for t in tables]),
        aggregates=_stack([t.aggregates for t in tables]),
        devices=next((t.devices for t in tables if t.devices), []),
        source_format=source_format or "+".join(formats),
        paths=[p for t in tables for p in t.paths], metadata=metadata,
        quality={}, notes=[n for t in tables for n in t.notes])
