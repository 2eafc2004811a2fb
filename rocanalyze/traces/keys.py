"""Vectorised joins on integer ids (correlation, External id, Python id)."""

from __future__ import annotations

import numpy as np


def lookup(keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Row in `table` of each key (the first such row), -1 where absent or key < 0."""
    if not len(table) or not len(keys):
        return np.full(len(keys), -1, np.int64)
    order = np.argsort(table, kind="stable")
    sorted_keys = table[order]
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    found = (sorted_keys[pos] == keys) & (keys >= 0)
    return np.where(found, order[pos], -1)


def join_key(rank: np.ndarray, ident: np.ndarray) -> np.ndarray:
    """One int64 join key per (rank, id); -1 where the id is unknown (< 0)."""
    return np.where(ident >= 0, rank.astype(np.int64) * (1 << 44) + ident, -1)


def last_at_or_before(group: np.ndarray, time: np.ndarray, q_group: np.ndarray,
                      q_time: np.ndarray) -> np.ndarray:
    """For rows sorted by (group, time): row of the last one in q's group with time <= q_time; -1 none."""
    out = np.full(len(q_time), -1, np.int64)
    if not len(time):
        return out
    bounds = np.flatnonzero(np.diff(group)) + 1
    starts = np.concatenate(([0], bounds))
    stops = np.concatenate((bounds, [len(group)]))
    for lo, hi in zip(starts.tolist(), stops.tolist(), strict=False):
        sel = np.flatnonzero(q_group == group[lo])
        if len(sel):
            pos = np.searchsorted(time[lo:hi], q_time[sel], side="right") - 1
            out[sel] = np.where(pos >= 0, lo + pos, -1)
    return out
