"""compare on real captures: a rerun is within noise, torch.compile is a named, significant change."""

from __future__ import annotations

import functools

import pytest

from rocanalyze.analysis import compare as cmp
from rocanalyze.analysis.build import analyze
from rocanalyze.analysis.demangle import available as demangle_available
from rocanalyze.analysis.demangle import demangle
from rocanalyze.analysis.result import Analysis
from rocanalyze.reports.comparison import render_markdown
from tests.conftest import data_path, realdata_path


@functools.cache
def h100(name: str) -> Analysis:
    return analyze(data_path("torch_profiler", "h100_captures", f"{name}.json.gz"))


def slower(a: Analysis, factor: float) -> Analysis:
    """Derived: the same analysis with every step `factor` times longer (a synthetic regression)."""
    return a.replace(steps=[dict(s, dur_us=s["dur_us"] * factor) for s in a.steps])


def test_rerun_of_the_same_workload_is_within_noise() -> None:
    base, new = h100("launch_bound"), h100("launch_bound_rerun")
    r = cmp.compare(base, new)
    assert r["step"]["verdict"] == "within noise"
    assert r["step"]["base"]["n"] == r["step"]["new"]["n"] == len(base.steps) == 3
    assert r["step"]["base"]["mean"] == pytest.approx(sum(s["dur_us"] for s in base.steps) / 3)
    assert not any(row["significant"] for row in r["categories"] if row["name"] != "idle")
    assert r["summary"].endswith("no change beyond noise.")
    assert cmp.regression(r, 1.0) is None


def test_compiled_version_is_named_as_the_change() -> None:
    r = cmp.compare(h100("launch_bound"), h100("compiled"))
    cats = {row["name"]: row for row in r["categories"]}
    assert cats["elementwise"]["significant"] and cats["elementwise"]["delta_pct"] < -40
    assert cats["norm"]["significant"] and cats["norm"]["delta_pct"] < -30
    assert r["step"]["delta_pct"] < 0
    assert any(n.startswith("triton_") for n in r["only_new"])
    assert any("layer_norm" in n for n in r["only_base"])
    assert f"elementwise {cats['elementwise']['delta_pct']:+.1f}%" in r["summary"]
    md = render_markdown(r)
    assert "| elementwise |" in md and "**significant** |" in md
    assert any(f"`{n}`" in md for n in r["only_new"] if n.startswith("triton_poi_fused"))


def test_regression_threshold() -> None:
    base = h100("big_gemm")
    r = cmp.compare(base, slower(base, 1.5))
    assert r["step"]["significant"] and r["step"]["delta_pct"] == pytest.approx(50.0)
    assert cmp.regression(r, 5.0)["delta_pct"] == pytest.approx(50.0)
    assert cmp.regression(r, 60.0) is None
    assert cmp.regression(cmp.compare(base, slower(base, 1.01)), 0.5) is None  # 1%: within the 2% margin


def test_welch_against_scipy_free_reference() -> None:
    t, df = cmp.welch([10.0, 11.0, 12.0], [20.0, 21.0, 23.0])
    # scipy.stats.ttest_ind([20, 21, 23], [10, 11, 12], equal_var=False): t = 9.80306, df = 3.44828
    assert t == pytest.approx(9.80306, abs=1e-4) and df == pytest.approx(3.44828, abs=1e-4)
    assert cmp.t_critical(df) == 3.182 and cmp.t_critical(100) == 1.96
    assert cmp.welch([1.0], [2.0, 3.0]) == (None, None)


def test_margin_alone_without_steps() -> None:
    row = cmp.delta_row("x", [100.0], [101.0], 2.0)
    assert row["verdict"] == "within noise (margin only)"
    assert cmp.delta_row("x", [100.0], [107.0], 2.0)["verdict"] == "significant (margin only)"


def test_cross_vendor_compares_by_category_and_op() -> None:
    amd = analyze(realdata_path("torch_traces", "tracelens", "mi300x_torch_compile_triton.json.gz"))
    r = cmp.compare(amd, h100("big_gemm"))
    assert r["cross_vendor"] and r["detail_kind"] == "op"
    assert r["only_base"] == [] and r["only_new"] == []
    names = [row["name"] for row in r["detail"]]
    assert any(n.startswith("aten::mm [[8192, 8192], [8192, 8192]]") for n in names)  # the H100 side
    assert any(n.startswith("aten::mm [[32768, 2048], [2048, 8192]") for n in names)  # the MI300X side
    md = render_markdown(r)
    assert "Different vendors" in md
    assert "(AMD Instinct MI300X, no step markers) · NEW: " in md and "(NVIDIA H100 SXM5, 3 steps)" in md


@pytest.mark.skipif(not demangle_available(), reason="no C++ runtime demangler (libstdc++ / libc++abi) could be loaded")
def test_mangled_and_demangled_records_of_one_kernel_match() -> None:
    """Derived: the SGLang MI300X trace (aiter kernels recorded mangled) against the same analysis with
    every name recorded demangled, as rocprofv3 prints them by default: no kernel is only on one side."""
    base = analyze(realdata_path("torch_traces", "tracelens", "mi300x_sglang_qwen3-8b_decode.json.gz"))
    demangled = [dict(k, name=demangle(k["name"]) or k["name"], display=None) for k in base.kernels]
    assert sum(k["name"] != d["name"] for k, d in zip(base.kernels, demangled, strict=True)) >= 3
    r = cmp.compare(base, base.replace(kernels=demangled, top_kernels=demangled[:15]))
    assert r["only_base"] == [] and r["only_new"] == []
    assert all(row["delta_us"] == 0 for row in r["detail"])


def test_kernels_shown_by_one_outline_stay_apart() -> None:
    """Five CK kernels of the MI300X ResNet trace are too deep for the demangler; the reports show them by
    an outline that three of them share, but compare keeps matching them by their full names."""
    a = analyze(realdata_path("torch_traces", "tracelens", "mi300x_resnet_act_checkpoint_train.json.gz"))
    deep = [k for k in a.kernels if k["name"].startswith("_ZN2ck")]
    assert (len(deep), len({k["display"] for k in deep})) == (5, 3)
    assert len(cmp._kernels_by_key(a)) == len(a.kernels)
    r = cmp.compare(a, a)
    assert r["only_base"] == [] and r["only_new"] == []


def test_inputs_without_gpu_times_are_refused_and_totals_are_named() -> None:
    """Counter files without timestamps crashed compare (TypeError on a kernel's null total); now one line.
    Stats-only inputs compare by summed kernel time, and the row says so instead of 'step time 0.000 ms'."""
    from rocanalyze.errors import UserError

    counters = analyze(realdata_path("rocprofv3", "rocprofiler_sdk_docs", "counter_collection.csv"))
    with pytest.raises(UserError, match=r"^BASE \(.*counter_collection.csv\) holds no GPU times"):
        cmp.compare(counters, counters)
    base = analyze(realdata_path("rocprof_v1", "batched_gemm_mi300x", "results.stats.csv"))
    new = analyze(realdata_path("rocprof_v1", "aiter_gemm_tuning_gfx950", "results.stats.csv"))
    r = cmp.compare(base, new)
    assert r["step"]["name"] == "kernel time (no timeline)"
    assert r["step"]["base"]["mean"] == pytest.approx(base.busy_us) and base.busy_us == pytest.approx(331634184.678)
    assert r["summary"].startswith("kernel time (no timeline) 331634.185 ms → ")
