"""Every registered renderer on a timeline trace, a stats-only input and a run with no GPU work."""

from __future__ import annotations

import functools

import pytest

from rocanalyze.analysis.build import analyze
from rocanalyze.analysis.result import Analysis, RunInfo
from rocanalyze.reports import RENDERERS, render
from tests.conftest import data_path, realdata_path


@functools.cache
def inputs() -> dict[str, Analysis]:
    timeline = analyze(data_path("torch_profiler", "h100_captures", "h2d_copy.json.gz"))
    stats = analyze(realdata_path("rocprof_v1", "saltfish_pytorch_mi300x", "results.stats.csv"))
    # Derived: the h2d capture's run as `profile` records a failed script that launched nothing.
    empty = Analysis(run=RunInfo(source=timeline.run.source, failed=True, exit_code=1), device=timeline.device,
                     window_us=0.0, busy_us=0.0, idle_us=0.0, notes=["no GPU activity was recorded"])
    return {"timeline": timeline, "stats": stats, "empty": empty}


@pytest.mark.parametrize("fmt", list(RENDERERS))
@pytest.mark.parametrize("case", ["timeline", "stats", "empty"])
def test_renderer(fmt: str, case: str) -> None:
    a = inputs()[case]
    out = render(a, fmt)
    assert isinstance(out, bytes if fmt == "pftrace" else str) and len(out) > 0
    if fmt == "html":
        assert len(out.encode()) <= 6_500_000 and out.count("<section id=") == 8
    if fmt == "md":
        assert len(out.encode()) < 60_000
    if case == "stats" and fmt in ("md", "txt"):
        assert a.window_us is None and a.top_kernels
        assert a.top_kernels[0]["name"][:40] in out  # the largest kernel by total time is listed
    if case == "empty" and fmt in ("md", "html"):
        assert "failed" in out
