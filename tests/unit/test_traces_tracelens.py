"""TraceLens kernel summaries: read as per-kernel totals, checked against the trace TraceLens summarised.

../shared/realdata holds both: TraceLens' reference kernel_summary.csv of its MI300X BERT-small test
trace, and that trace itself. Two tools reading one trace must agree on every kernel's time.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rocanalyze import analyze
from rocanalyze.cli import main
from rocanalyze.traces import detect, read, tracelens_csv
from tests.conftest import realdata_path

SUMMARY = ("tracelens_reports", "mi300x_bert-small_kernel_summary.csv")
TRACE = ("torch_traces", "tracelens", "mi300x_bert-small_inference.json.gz")


def test_every_kernel_agrees_with_our_reading_of_the_same_trace() -> None:
    path = realdata_path(*SUMMARY)
    assert detect(path) is tracelens_csv
    agg = read(path).aggregates
    theirs = agg.groupby(agg["name"].astype(str))[["total_ns", "calls"]].sum()
    gpu = read(realdata_path(*TRACE)).gpu
    kernels = gpu[gpu["kind"].astype(str) == "kernel"]
    ours = kernels.groupby(kernels["name"].astype(str))["dur_ns"].agg(["sum", "count"])
    assert len(theirs) == len(ours) == 11
    assert sorted(theirs.index) == sorted(ours.index)
    for name in ours.index:      # µs with three decimals in the CSV: the same ns
        assert theirs.loc[name, "total_ns"] == ours.loc[name, "sum"], name
        assert theirs.loc[name, "calls"] == ours.loc[name, "count"], name
    assert int(agg["total_ns"].sum()) == 388_344


def test_summary_analysis_classifies_with_the_launching_op() -> None:
    a = analyze(realdata_path(*SUMMARY))
    assert a.window_us is None and a.busy_us == pytest.approx(388.344)
    # TraceLens files attn_fwd under "other"; its name and aten::_flash_attention_forward say attention
    attn = next(k for k in a.kernels if k["name"] == "attn_fwd")
    assert (attn["category"], attn["op"], attn["calls"]) == ("attention", "aten::_flash_attention_forward", 4)
    # expected: the CSV's own rows summed under labels given by hand from each row's launching op
    labels = {"aten::_flash_attention_forward": "attention", "aten::addmm": "gemm",
              "aten::native_layer_norm": "norm", "aten::gelu": "elementwise", "aten::add": "elementwise",
              "aten::add_": "elementwise", "aten::eq": "elementwise", "aten::index_select": "index",
              "aten::all": "reduction"}
    expected: dict[str, float] = {}
    with realdata_path(*SUMMARY).open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            category = labels[row["Parent cpu_op"]]
            expected[category] = expected.get(category, 0.0) + float(row["Kernel duration (µs)_sum"])
    assert len(expected) == 6 and a.categories_us == pytest.approx(expected, abs=1e-3)
    # "Percent of total time" gives the trace's total time: the same as the window we measure on the trace
    note = next(n for n in a.notes if n.startswith("TraceLens measured"))
    assert note.startswith("TraceLens measured 3,496.0 µs of total time")
    assert analyze(realdata_path(*TRACE)).window_us == pytest.approx(3495.976, abs=1e-3)


def test_broken_summaries_are_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = realdata_path(*SUMMARY).read_text(encoding="utf-8")
    head, first, *rest = text.splitlines()
    bad = tmp_path / "kernel_summary.csv"
    fields = first.split(",")
    fields[4] = "n/a"                      # Kernel duration (µs)_sum of the first row
    bad.write_text("\n".join([head, ",".join(fields), *rest]) + "\n", encoding="utf-8")
    assert main(["analyze", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("TraceLens kernel summary with non-numeric durations or counts (row 2)")
    assert "\n" not in err
