"""The downsampled timeline: per stream lane, busy µs per category in at most N bins over the window.

Never one point per event: a 2-million-event trace gives the same few hundred bins per lane.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocanalyze.analysis import intervals as iv
from rocanalyze.analysis.window import Window

NS_PER_US = 1000.0
MAX_LANES = 16


def timeline(gpu: pd.DataFrame, window: Window, max_bins: int) -> dict:
    """{"start_us", "bin_us", "n_bins", "lanes": [{rank, device, stream, busy_us_by_category}]}."""
    if not len(gpu) or window.dur_ns <= 0:
        return {"start_us": window.start_ns / NS_PER_US, "bin_us": 0.0, "n_bins": 0, "lanes": []}
    n_bins = int(max(1, min(max_bins, window.dur_ns // 1000)))
    edges = np.linspace(window.start_ns, window.end_ns, n_bins + 1).astype(np.int64)
    starts = gpu["start_ns"].to_numpy(np.int64)
    ends = starts + gpu["dur_ns"].to_numpy(np.int64)
    lanes_key = gpu["stream"].to_numpy(np.int64)
    cats = gpu["category"].astype(str).to_numpy()
    busy_by_lane = pd.Series(gpu["dur_ns"].to_numpy(np.int64)).groupby(lanes_key).sum().sort_values(ascending=False)
    lanes = []
    for stream in busy_by_lane.index[:MAX_LANES]:
        in_lane = lanes_key == stream
        by_cat = {}
        for cat in np.unique(cats[in_lane]):
            m = in_lane & (cats == cat)
            cover = iv.coverage(iv.clip(iv.merge(starts[m], ends[m]), window.start_ns, window.end_ns), edges)
            by_cat[str(cat)] = (np.diff(cover) / NS_PER_US).round(3).tolist()
        lanes.append({"rank": int(gpu["rank"].iloc[0]), "device": int(gpu["device"].iloc[0]),
                      "stream": int(stream), "busy_us_by_category": by_cat})
    out = {"start_us": window.start_ns / NS_PER_US, "bin_us": (edges[1] - edges[0]) / NS_PER_US,
           "n_bins": n_bins, "lanes": lanes}
    if len(busy_by_lane) > MAX_LANES:
        out["lanes_dropped"] = int(len(busy_by_lane) - MAX_LANES)
    return out
