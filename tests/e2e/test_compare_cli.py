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


def test_compiled_change_is_named_and_json_written(tmp_path: Path, capsys) -> None:
    js = tmp_path / "delta.json"
    assert main(["compare", trace("launch_bound"), trace("compiled"), "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "(-30.6%, significant): idle -30.6%, elementwise -58.3%, norm -45.1%." in out
    result = json.loads(js.read_text())
    assert result["step"]["significant"] is True and result["detail_kind"] == "kernel"


def test_fail_on_regression_exits_3(capsys) -> None:
    assert main(["compare", trace("compiled"), trace("launch_bound"), "--fail-on-regression", "5"]) == 3
    err = capsys.readouterr().err
    assert err == "rocanalyze: regression: step time +44.1% (over 5%, significant)\n"


def test_bad_arguments_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["compare", trace("compiled"), str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {tmp_path / 'nope'}: no such file or folder\n"
    assert main(["compare", trace("compiled"), trace("compiled"), "--fail-on-regression", "-1"]) == 2
    assert capsys.readouterr().err == "rocanalyze: error: --fail-on-regression must be >= 0, got -1.0\n"
