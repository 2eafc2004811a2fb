"""summary.md and the terminal report, from real traces."""

from __future__ import annotations

import functools

import pytest

from rocanalyze.analysis.build import analyze
from rocanalyze.analysis.demangle import available as demangle_available
from rocanalyze.analysis.result import Analysis
from rocanalyze.reports import markdown, terminal
from rocanalyze.reports.text import fmt_pct, fmt_us
from tests.conftest import data_path, realdata_path


@functools.cache
def h100(name: str) -> Analysis:
    return analyze(data_path("torch_profiler", "h100_captures", f"{name}.json.gz"))


def test_summary_has_headline_tables_recommendations_and_env_line() -> None:
    a = h100("launch_bound")
    md = markdown.render(a)
    assert len(md.encode()) < 60_000
    assert md.startswith("## rocanalyze: launch_bound.json.gz")
    assert "**GPU busy** " in md and "NVIDIA H100" in md
    assert f"**Idle** {fmt_pct(a.idle_us / a.window_us)}, mostly launch_bound (" in md
    assert "| category | time | share of window |" in md
    lb = a.idle_breakdown_us["launch_bound"]
    assert f"| idle: launch_bound | {fmt_us(lb)} | {fmt_pct(lb / a.window_us)} |" in md
    assert f"### Top {min(15, len(a.top_kernels))} kernels" in md
    assert f"1. **The GPU waits on kernel launches for {100 * lb / a.window_us:.1f}% of the window**" in md
    assert md.rstrip().endswith("</sub>") and "no env.json" in md


def test_summary_escapes_names_and_stays_under_60kb() -> None:
    a = h100("train_step")
    evil = "k<b>|x`y" + "z" * 5000
    kernels = [dict(k, name=f"{evil}{i}") for i, k in enumerate(a.kernels)]
    md = markdown.render(a.replace(top_kernels=kernels[:25], notes=[evil]))
    assert len(md.encode()) < 60_000
    # names stay inside code spans (literal text in GFM): pipe escaped, backtick neutralised
    assert "| `k<b>\\|x'y" in md and "`k<b>|" not in md


def test_environment_line_from_env_json() -> None:
    env = {"torch": {"version": "2.11.0+cu130", "cuda": "13.0"}, "triton": "3.6.0", "python": "3.12.3",
           "variables": {"PYTORCH_TUNABLEOP_ENABLED": "1"}}
    a = h100("big_gemm")
    md = markdown.render(a.replace(run=a.run.__class__(source=a.run.source, env=env)))
    assert "torch 2.11.0+cu130 · CUDA 13.0 · Triton 3.6.0 · Python 3.12.3 · PYTORCH_TUNABLEOP_ENABLED=1" in md


def test_terminal_report_amd() -> None:
    a = analyze(realdata_path("torch_traces", "tracelens", "mi300x_resnet_act_checkpoint_train.json.gz"))
    out = terminal.render(a, width=120)
    assert "AMD Instinct MI300X" in out and "GPU time by category" in out
    assert "Communication not hidden under compute" in out
    assert "\x1b[" not in out


def test_no_rule_fired_headline_says_what_was_measured() -> None:
    a = h100("big_gemm")  # GPU-bound, GEMMs near the roof: no rule fires
    assert not a.recommendations
    md = markdown.render(a)
    head = md.split("### GPU time by category")[0]
    busy = fmt_pct(a.busy_us / a.window_us)
    gemm = [o for o in a.ops if o["category"] == "gemm" and o.get("peak") == "bf16"]
    eff = sum(o["efficiency"] * o["time_us"] for o in gemm) / sum(o["time_us"] for o in gemm)
    assert f"**No rule fired: the GPU is busy {busy} of the window" in head
    assert f"GEMMs run at {fmt_pct(eff)} of the bf16 roof" in head
    # Derived: the same run without a GPU spec has no roof to quote, and says so.
    bare = a.replace(ops=[], device={})
    assert "pass --gpu NAME" in markdown.render(bare).split("### GPU time by category")[0]


@pytest.mark.skipif(not demangle_available(), reason="no C++ runtime demangler (libstdc++ / libc++abi) could be loaded")
def test_kernels_recorded_mangled_are_shown_demangled() -> None:
    """The SGLang MI300X trace records aiter and sgl-kernel kernels by their mangled symbols; the reports
    show them as c++filt would, and analysis.json keeps the recorded name beside the shown one."""
    a = analyze(realdata_path("torch_traces", "tracelens", "mi300x_sglang_qwen3-8b_decode.json.gz"))
    mangled = [k for k in a.top_kernels if k["name"].startswith("_Z")]
    assert len(mangled) >= 3
    norm = next(k for k in mangled if "add_rmsnorm_quant" in k["name"])
    assert norm["display"].startswith("void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, ")
    assert norm["category"] == "norm"
    assert all(k["display"] is None for k in a.kernels if not k["name"].startswith("_Z"))
    md = markdown.render(a)
    assert "`void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t" in md and "`_ZN5aiter" not in md
    out = terminal.render(a, width=200)
    assert "void aiter::add_rmsnorm_quant_kernel<" in out and "_ZN5aiter" not in out
