"""trace.pftrace parsed back with the protobuf classes the perfetto package ships; run-folder writing."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

from rocanalyze.analysis.build import analyze_with_table
from rocanalyze.analysis.demangle import available as demangle_available
from rocanalyze.errors import UserError
from rocanalyze.reports import RENDERERS, format_for, perfetto, write_report, write_run_reports
from tests.conftest import data_path, realdata_path


@functools.cache
def loaded(name: str):  # noqa: ANN201 - (Analysis, EventTable)
    return analyze_with_table(data_path("torch_profiler", "h100_captures", f"{name}.json.gz"))


def parse(raw: bytes) -> Trace:
    trace = Trace()
    trace.ParseFromString(raw)
    return trace


def test_gpu_slices_tracks_and_markers() -> None:
    a, table = loaded("launch_bound")
    trace = parse(perfetto.render(a, table))
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet if p.HasField("track_descriptor")}
    names = {t.name for t in tracks.values()}
    assert "rank 0 GPU 0" in names and any(n.startswith("stream ") for n in names)
    assert {"gemm", "elementwise", "norm"} <= names  # category counter tracks
    assert {"steps", "recommendations"} <= names
    begins = [p for p in trace.packet if p.track_event.type == TrackEvent.TYPE_SLICE_BEGIN]
    ends = [p for p in trace.packet if p.track_event.type == TrackEvent.TYPE_SLICE_END]
    assert len(begins) == len(ends) == len(table.gpu) + len(a.steps)
    interned = {e.iid: e.name for p in trace.packet for e in p.interned_data.event_names}
    assert set(table.gpu["name"].astype(str)) <= set(interned.values())
    assert {p.timestamp for p in begins} >= {int(s) for s in table.gpu["start_ns"]}
    marks = [p for p in trace.packet if p.track_event.type == TrackEvent.TYPE_INSTANT]
    assert len(marks) == len(a.recommendations)
    assert interned[marks[0].track_event.name_iid].startswith("[Level 2: torch.compile and graphs] The GPU waits")
    assert {d.name for d in marks[0].track_event.debug_annotations} >= {"evidence", "action", "saving_us"}


@pytest.mark.skipif(not demangle_available(), reason="no C++ runtime demangler (libstdc++ / libc++abi) could be loaded")
def test_kernels_recorded_mangled_read_demangled() -> None:
    a, table = analyze_with_table(realdata_path("torch_traces", "tracelens", "mi300x_sglang_qwen3-8b_decode.json.gz"))
    interned = {e.name for p in parse(perfetto.render(a, table)).packet for e in p.interned_data.event_names}
    shown = {k["display"] for k in a.kernels if k["display"]}
    assert len(shown) >= 3 and shown <= interned
    assert not any(n.startswith("_ZN5aiter") for n in interned)


def test_without_table_only_analysis_tracks() -> None:
    a, _ = loaded("big_gemm")
    trace = parse(perfetto.render(a, None))
    assert not [p for p in trace.packet if p.track_event.categories and p.track_event.categories[0] == "gemm"
                and p.track_event.type == TrackEvent.TYPE_SLICE_BEGIN]
    counters = [p for p in trace.packet if p.track_event.type == TrackEvent.TYPE_COUNTER]
    assert counters and max(p.track_event.double_counter_value for p in counters) > 50.0  # GEMM-bound bins


def test_format_from_extension() -> None:
    assert [format_for(f"x{ext}") for _, ext in RENDERERS.values()] == list(RENDERERS)
    with pytest.raises(UserError, match="cannot tell the report format from '.pdf'"):
        format_for("x.pdf")
    with pytest.raises(UserError, match="unknown report format 'svg'"):
        format_for("x.html", "svg")


def test_write_run_reports_atomic_and_never_overwrites(tmp_path: Path) -> None:
    a, table = loaded("big_gemm")
    written = write_run_reports(a, table, tmp_path)
    assert [p.name for p in written] == ["report.html", "summary.md", "trace.pftrace"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left
    before = (tmp_path / "summary.md").read_text()
    with pytest.raises(UserError, match="already exists: .*report.html.*--force"):
        write_run_reports(a, table, tmp_path)
    assert (tmp_path / "summary.md").read_text() == before
    write_run_reports(a, table, tmp_path, force=True)
    with pytest.raises(UserError, match="already exists: pass --force"):
        write_report(a, table, tmp_path / "summary.md")
    out = write_report(a, table, tmp_path / "x.txt")
    assert "GPU time by category" in out.read_text()
