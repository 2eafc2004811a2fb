"""Joining GPU rows to their host runtime call by correlation id, for formats that store them apart."""

from __future__ import annotations

import numpy as np

from rocanalyze.traces.keys import join_key, lookup
from rocanalyze.traces.schema import EventTable

_GRAPH_LAUNCH = ("GraphLaunch",)


def link_runtime(table: EventTable, zero_is_unknown: bool = True) -> None:
    """Fill gpu.launch_index (and graph) from (rank, correlation) where it is still -1, in place.

    rocprof writes correlation 0 for work it could not attribute; that is not a real id.
    """
    gpu, runtime = table.gpu, table.runtime
    if not len(gpu) or not len(runtime):
        return
    floor = 1 if zero_is_unknown else 0
    g_corr = gpu["correlation"].to_numpy()
    r_corr = runtime["correlation"].to_numpy()
    g_key = join_key(gpu["rank"].to_numpy(), np.where(g_corr >= floor, g_corr, -1))
    r_key = join_key(runtime["rank"].to_numpy(), np.where(r_corr >= floor, r_corr, -1))
    found = lookup(g_key, r_key)
    current = gpu["launch_index"].to_numpy()
    launch = np.where(current >= 0, current, found)
    gpu["launch_index"] = launch
    names = runtime["name"].astype(str).to_numpy()
    is_graph = np.array([any(k in n for k in _GRAPH_LAUNCH) for n in names], bool)
    linked = launch >= 0
    graph = gpu["graph"].to_numpy().copy()
    graph[linked] |= is_graph[launch[linked]]
    gpu["graph"] = graph
