"""`rocanalyze report` end to end through cli.main: formats, run folders, errors (exit 2, one line)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

from rocanalyze.cli import main
from tests.conftest import data_path, realdata_path

H100 = ("torch_profiler", "h100_captures")


def test_html_from_trace(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(data_path(*H100, "launch_bound.json.gz")), "-o", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert f"wrote {out} (" in stdout and "open it in a browser (it works offline)" in stdout
    assert stdout.rstrip().endswith("next: compare two runs with `rocanalyze compare BASE NEW`")
    page = out.read_text()
    assert 4_800_000 < len(page.encode()) <= 6_500_000
    assert "The GPU waits on kernel launches for " in page and 'id="rec-launch-bound"' in page


def test_every_format_by_extension_and_flag(tmp_path: Path) -> None:
    trace = str(data_path(*H100, "h2d_copy.json.gz"))
    assert main(["report", trace, "-o", str(tmp_path / "s.md")]) == 0
    assert "idle: h2d_copy" in (tmp_path / "s.md").read_text()
    assert main(["report", trace, "-o", str(tmp_path / "t.pftrace")]) == 0
    parsed = Trace()
    parsed.ParseFromString((tmp_path / "t.pftrace").read_bytes())
    assert len(parsed.packet) > 24  # 12 kernels/copies as begin+end, tracks, counters
    assert main(["report", trace, "-o", str(tmp_path / "plain.out"), "--format", "txt"]) == 0
    assert "GPU time by category" in (tmp_path / "plain.out").read_text()


def test_amd_realdata_reports(tmp_path: Path) -> None:
    trace = realdata_path("torch_traces", "tracelens", "mi300x_resnet_act_checkpoint_train.json.gz")
    out = tmp_path / "amd.html"
    assert main(["report", str(trace), "-o", str(out)]) == 0
    page = out.read_text()
    assert "AMD Instinct MI300X" in page and "NCCL_MIN_NCHANNELS=112" in page


def test_run_folder_gets_three_reports_and_reuses_analysis_json(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(data_path(*H100, "big_gemm.json.gz"), run / "trace.json.gz")
    (run / "env.json").write_text(json.dumps({"variables": {"CUDA_VISIBLE_DEVICES": "0"},
                                              "torch": {"version": "2.11.0+cu130", "cuda": "13.0"}}))
    assert main(["report", str(run)]) == 0
    assert sorted(p.name for p in run.iterdir()) == ["env.json", "report.html", "summary.md", "trace.json.gz",
                                                      "trace.pftrace"]
    assert "torch 2.11.0+cu130 · CUDA 13.0" in (run / "summary.md").read_text()
    capsys.readouterr()
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rocanalyze: error: already exists: ") and err.endswith("pass --force to overwrite")
    assert main(["report", str(run), "--force"]) == 0
    assert main(["report", str(run), "--format", "txt"]) == 0
    assert "GPU time by category" in (run / "report.txt").read_text()


def test_default_output_is_named_for_the_trace(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(data_path(*H100, "big_gemm.json.gz")), "--format", "md"]) == 0
    assert (tmp_path / "big_gemm.md").read_text().startswith("## rocanalyze: big_gemm.json.gz")
    assert main(["report", str(data_path(*H100, "big_gemm.json.gz"))]) == 0
    assert (tmp_path / "big_gemm.html").stat().st_size > 4_800_000


def test_analysis_json_is_rerendered_identically(tmp_path: Path) -> None:
    from rocanalyze.analysis.build import analyze

    a = analyze(data_path(*H100, "item_sync.json.gz"))
    (tmp_path / "analysis.json").write_text(a.to_json())
    assert main(["report", str(tmp_path / "analysis.json"), "-o", str(tmp_path / "a.md")]) == 0
    assert main(["report", str(data_path(*H100, "item_sync.json.gz")), "-o", str(tmp_path / "b.md")]) == 0
    strip = lambda s: s.replace("analysis.json", "").replace("item_sync.json.gz", "")  # noqa: E731
    assert strip((tmp_path / "a.md").read_text()) == strip((tmp_path / "b.md").read_text())


def test_errors_are_one_line(tmp_path: Path, capsys) -> None:
    trace = str(data_path(*H100, "big_gemm.json.gz"))
    assert main(["report", str(tmp_path / "missing.json"), "-o", str(tmp_path / "x.html")]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {tmp_path / 'missing.json'}: no such file or folder\n"
    assert main(["report", trace, "-o", str(tmp_path / "x.pdf")]) == 2
    assert capsys.readouterr().err == (f"rocanalyze: error: {tmp_path / 'x.pdf'}: cannot tell the report format "
                                       "from '.pdf': name the file .html, .md, .pftrace, .txt or pass --format\n")
    (tmp_path / "exists.html").write_text("keep me")
    assert main(["report", trace, "-o", str(tmp_path / "exists.html")]) == 2
    assert capsys.readouterr().err == (f"rocanalyze: error: {tmp_path / 'exists.html'}: already exists: pass "
                                       "--force to overwrite it\n")
    assert (tmp_path / "exists.html").read_text() == "keep me"
    assert main(["report", trace, "-o", str(tmp_path / "no" / "dir.html")]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {tmp_path / 'no'}: the output folder does not exist\n"
    assert main(["report", trace, "-o", str(tmp_path / "y.html"), "--format", "svg"]) == 2
    assert capsys.readouterr().err == ("rocanalyze: error: unknown report format 'svg': use one of html, md, "
                                       "pftrace, txt\n")


def test_analyze_piped_reads_at_80_columns() -> None:
    """`rocanalyze analyze T | cat`: rich falls back to 80 columns; no number may collapse to '…'."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    out = subprocess.run([sys.executable, "-m", "rocanalyze", "analyze", str(ROOT / "examples" / "traces" /
                          "train_step.json.gz")], capture_output=True, text=True, env=env, check=True).stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    rows = [line for line in out.split("Top kernels", 1)[1].splitlines() if line.startswith("│")]
    assert len(rows) == 10  # one line per kernel
    for row in rows:
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert all(c and "…" not in c for c in cells[1:]), row  # calls, total, share in full
        assert cells[2].endswith(("ms", "µs", " s")) and cells[3].endswith("%")
