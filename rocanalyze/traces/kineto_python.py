"""Python frames (with_stack / with_modules) -> each op's innermost user frame and nn.Module.

Only two kinds of python_function events matter: frames of the user's code (not torch, not the
standard library, not site-packages) and `nn.Module: X_0` frames; the reader keeps those (about a
tenth of all frames) and drops the rest while streaming. Kept frames still nest per thread, so
each op's innermost kept frame is the last one starting at or before it, climbed through the
nesting parents (vectorised over all ops) until it encloses the op.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pandas as pd

from rocanalyze.traces.keys import last_at_or_before

_LIBRARY_PREFIXES = ("torch/", "<built-in", "<frozen", "<string>", "<", "functorch/", "triton/")
_LIBRARY_PARTS = ("site-packages/", "dist-packages/", "/lib/python3", "/torch/")
_STDLIB = frozenset(sys.stdlib_module_names)
_MODULE = "nn.Module: "
_MAX_DEPTH = 256


def is_user_frame(name: str) -> bool:
    """True for a frame of the user's code, e.g. 'train.py(82): train_step' (not torch, not stdlib)."""
    if name.startswith(_LIBRARY_PREFIXES) or any(p in name for p in _LIBRARY_PARTS):
        return False
    path = name.split("(", 1)[0]
    top = path.split("/", 1)[0]
    module = top[:-3] if top.endswith(".py") else top
    return module not in _STDLIB


class FrameFilter:
    """Remembers, per python-frame name code, whether the frame is kept (user code or nn.Module)."""

    def __init__(self) -> None:
        self.keep = np.zeros(0, bool)

    def wanted(self, codes: np.ndarray, table: dict[Any, int]) -> np.ndarray:
        if len(table) > len(self.keep):
            names = list(table)[len(self.keep):]
            new = [n.startswith(_MODULE) or is_user_frame(n) for n in names]
            self.keep = np.concatenate([self.keep, np.asarray(new, bool)])
        return self.keep[codes]


def attach_frames(ops: pd.DataFrame, batches: Any, notes: list[str]) -> None:
    """Fill ops['stack'] and ops['module'] in place when the trace recorded Python frames."""
    from rocanalyze.traces.kineto_join import parents

    cols = batches.table(4)
    if not cols or not len(cols["start_ns"]):
        return
    names = batches.names[4].categorical(cols["name"])
    thread = cols["pid"] * (1 << 24) + cols["tid"]
    order = np.lexsort((-cols["dur_ns"], cols["start_ns"], thread))
    thread, start, dur = thread[order], cols["start_ns"][order], cols["dur_ns"][order]
    end, codes = start + dur, names.codes[order]
    parent = parents(thread, start, dur)
    cats = np.asarray(names.categories, dtype=object)
    module = np.array([str(c).startswith(_MODULE) for c in cats], bool)[codes]

    op_thread = ops["pid"].to_numpy() * (1 << 24) + ops["tid"].to_numpy()
    op_start = ops["start_ns"].to_numpy()
    op_end = op_start + ops["dur_ns"].to_numpy()
    frame = _climb(last_at_or_before(thread, start, op_thread, op_start),
                   lambda f, rows: (start[f] <= op_start[rows]) & (end[f] >= op_end[rows]), parent)
    ops["stack"] = _label(_climb(frame, lambda f, rows: ~module[f], parent), cats, codes, "")
    ops["module"] = _label(_climb(frame, lambda f, rows: module[f], parent), cats, codes, _MODULE)
    if (frame < 0).all():
        notes.append("the trace has Python frames, but none of the user's code encloses an op")


def _climb(frame: np.ndarray, done: Any, parent: np.ndarray) -> np.ndarray:
    """From each start frame, follow parents until `done(frame, rows)` holds (or -1)."""
    frame = frame.copy()
    todo = np.flatnonzero(frame >= 0)
    for _ in range(_MAX_DEPTH):
        if not len(todo):
            break
        todo = todo[~done(frame[todo], todo)]
        frame[todo] = parent[frame[todo]]
        todo = todo[frame[todo] >= 0]
    return frame


def _label(frame: np.ndarray, cats: np.ndarray, codes: np.ndarray, strip: str) -> pd.Categorical:
    """Frame names ('' where none), with a prefix such as 'nn.Module: ' removed."""
    labels = np.append(np.array([str(c)[len(strip):] if strip and str(c).startswith(strip) else str(c)
                                 for c in cats], dtype=object), "")
    return pd.Categorical(labels[np.where(frame >= 0, codes[np.maximum(frame, 0)], len(cats))])
