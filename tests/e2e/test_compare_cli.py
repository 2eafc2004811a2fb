"""`rocanalyze compare` end to end: noise verdicts, the Markdown table, --fail-on-regression (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

from rocanalyze.cli import main
from tests.conftest import data_path

H100 = ("torch_profiler", "h100_captures")


def trace(name: str) -> str:
    return str(data_path(*H100, f"{name}.json.gz"))


def test_same_workload_is_within_noise(tmp_path: Path, capsys) -> None:
    md = tmp_path / "delta.md"
    assert main(["compare", trace("launch_bound"), trace("launch_bound_rerun"), "-o", str(md),
                 "--fail-on-regression", "1"]) == 0
    out = capsys.readouterr().out
    assert "(-2.8%, within noise): no change beyond noise." in out
    assert md.read_text() in out


def test_regression_exits_3_after_writing_its_outputs(tmp_path: Path, capsys) -> None:
    js, md = tmp_path / "delta.json", tmp_path / "delta.md"
    argv = ["compare", trace("compiled"), trace("launch_bound"), "--json", str(js), "-o", str(md),
            "--fail-on-regression", "5"]
    assert main(argv) == 3
    captured = capsys.readouterr()
    assert "(+44.1%, significant): idle +44.2%, elementwise +139.8%, norm +82.2%" in captured.out
    assert captured.err == "rocanalyze: regression: step time +44.1% (over 5%, significant)\n"
    result = json.loads(js.read_text())
    assert result["step"]["significant"] is True and result["detail_kind"] == "kernel"
    assert "| step time | 15.699 ms ± 426.7 µs (n=3) | 22.622 ms ± 537.6 µs (n=3) | +44.1% | **significant** |" \
        in md.read_text()


def test_bad_arguments_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["compare", trace("compiled"), str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {tmp_path / 'nope'}: no such file or folder\n"
    assert main(["compare", trace("compiled"), trace("compiled"), "--fail-on-regression", "-1"]) == 2
    assert capsys.readouterr().err == "rocanalyze: error: --fail-on-regression must be >= 0, got -1.0\n"
