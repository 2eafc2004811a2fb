"""Interval arithmetic, checked against a brute-force per-nanosecond count on random intervals."""

from __future__ import annotations

import numpy as np
import pytest

from rocanalyze.analysis import intervals as iv


def _brute(starts, ends, lo, hi):
    covered = np.zeros(hi - lo, dtype=bool)
    for s, e in zip(starts, ends, strict=True):
        covered[max(s, lo) - lo: max(min(e, hi) - lo, 0)] = True
    return covered


@pytest.mark.parametrize("seed", range(5))
def test_merge_clip_complement_coverage_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, 5000, 300)
    ends = starts + rng.integers(0, 80, 300)
    lo, hi = 500, 4500
    truth = _brute(starts, ends, lo, hi)
    merged = iv.clip(iv.merge(starts, ends), lo, hi)
    assert merged.total == truth.sum()
    assert (merged.starts[1:] > merged.ends[:-1]).all()  # sorted and disjoint
    gaps = iv.complement(iv.merge(starts, ends), lo, hi)
    assert gaps.total == (~truth).sum()
    points = np.sort(rng.integers(lo, hi, 50))
    expected = np.array([truth[: p - lo].sum() for p in points])
    assert (iv.coverage(merged, points) - iv.coverage(merged, np.array([lo]))[0] == expected).all()


def test_contains_is_closed_at_both_ends():
    a = iv.merge(np.array([10, 30]), np.array([20, 40]))
    assert iv.contains(a, np.array([9, 10, 20, 21, 30, 40, 41])).tolist() == [
        False, True, True, False, True, True, False]


def test_empty_sets():
    assert iv.merge(np.array([]), np.array([])).total == 0
    assert iv.complement(iv.EMPTY, 0, 10).total == 10
    assert iv.coverage(iv.EMPTY, np.array([5])).tolist() == [0]
