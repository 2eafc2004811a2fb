"""The analysis pipeline on real inputs: multi-rank runs, rank selection, stats-only inputs, JSON round trip."""

from __future__ import annotations

import json
from functools import cache

import pytest

from rocanalyze import analyze
from rocanalyze.analysis.build import analyze_table
from rocanalyze.analysis.result import Analysis
from rocanalyze.errors import UserError
from rocanalyze.traces import read
from tests.conftest import data_path, realdata_path


@cache
def _multirank() -> Analysis:
    return analyze(realdata_path("torch_traces", "hta", "nvidia_multirank"))


def test_multirank_folder_gives_one_row_per_rank_with_the_slowest_marked():
    a = _multirank()
    assert [r["rank"] for r in a.ranks] == [0, 1]
    slowest = [r for r in a.ranks if r["slowest"]]
    assert len(slowest) == 1 and slowest[0]["compute_us"] == max(r["compute_us"] for r in a.ranks)
    for r in a.ranks:
        assert r["busy_us"] + r["idle_us"] == pytest.approx(r["window_us"], abs=1e-3)
        assert r["compute_us"] == pytest.approx(r["busy_us"] - r["exposed_communication_us"], abs=1e-3)
        assert r["imbalance"] == pytest.approx((slowest[0]["compute_us"] - r["compute_us"]) /
                                               (sum(x["compute_us"] for x in a.ranks) / 2), rel=1e-9)
        assert 0 < r["exposed_communication_us"] <= sum(r["categories_us"].values())
    assert a.window["rank"] == 0


def test_rank_selection_analyzes_that_rank():
    path = realdata_path("torch_traces", "hta", "nvidia_multirank")
    one = analyze(path, rank=1)
    row = next(r for r in _multirank().ranks if r["rank"] == 1)
    assert one.window["rank"] == 1
    assert one.busy_us == pytest.approx(row["busy_us"], abs=1e-3)
    with pytest.raises(UserError, match="--rank 7"):
        analyze(path, rank=7)


def test_stats_only_input_has_unknown_window_and_per_kernel_totals():
    path = realdata_path("rocprof_v1", "saltfish_pytorch_mi300x", "results.stats.csv")
    a = analyze(path)
    assert a.window_us is None and a.idle_us is None
    total = sum(k["total_us"] for k in a.kernels)
    assert a.busy_us == pytest.approx(total, rel=1e-9)
    assert sum(a.categories_us.values()) == pytest.approx(total, rel=1e-9)
    # hipBLASLt Tensile kernels and RCCL kernels dominate this distributed training run
    assert {"gemm", "communication"} <= set(a.categories_us)
    assert any("aggregate" in n for n in a.notes)


def test_analysis_json_round_trip_is_identical():
    a = analyze(data_path("torch_profiler", "h100_captures", "manual_attention.json.gz"))
    text = a.to_json()
    again = Analysis.from_json(text)
    assert again.to_json() == text
    assert json.loads(text)["schema_version"] == 1


def test_newer_schema_is_refused_in_one_line():
    with pytest.raises(UserError, match="schema_version 99"):
        Analysis.from_dict({"schema_version": 99})


def test_damaged_analysis_json_is_refused_in_one_line_naming_the_file(tmp_path):
    """`report` and `compare` read a run folder's analysis.json back; cut, or holding the wrong JSON types
    (a hand edit), it was a traceback (JSONDecodeError, TypeError deep in a renderer)."""
    from rocanalyze.commands.report import load_analysis

    text = analyze(data_path("torch_profiler", "h100_captures", "manual_attention.json.gz")).to_json()
    doc = json.loads(text)
    saved = tmp_path / "analysis.json"
    cases = {text[: len(text) // 2]: "not valid JSON (Expecting ",
             "[1, 2]": "a JSON list, not an analysis",
             json.dumps({**doc, "kernels": "x"}): "'kernels' holds a JSON str where rocanalyze writes list[dict",
             json.dumps({**doc, "categories_us": {"gemm": "1"}}): "'categories_us' holds a JSON str where",
             json.dumps({**doc, "busy_us": True}): "'busy_us' holds a JSON bool where rocanalyze writes float | None",
             json.dumps({**doc, "run": {**doc["run"], "command": "python x.py"}}): "'run.command' holds a JSON str",
             json.dumps({**doc, "run": 5}): "'run' holds a JSON int where rocanalyze writes a JSON object"}
    for content, message in cases.items():
        saved.write_text(content)
        with pytest.raises(UserError) as err:
            load_analysis(saved)
        assert str(err.value).startswith(f"{saved}: {message}"), str(err.value)
    saved.write_text(json.dumps({**doc, "window_us": 5, "busy_us": None}))  # an int is a number; None allowed
    assert load_analysis(saved)[0].window_us == 5
    # inside the lists' entries: a key a renderer reads is missing or of the wrong type
    kernel = {k: v for k, v in doc["kernels"][0].items() if k != "name"}
    rec = {**doc["recommendations"][0], "saving_us": "x"}
    for content, message in ((json.dumps({**doc, "kernels": [kernel]}), "'kernels[0]' has no 'name'"),
                             (json.dumps({**doc, "recommendations": [rec]}),
                              "'recommendations[0].saving_us' holds a JSON str where rocanalyze writes num"),
                             (json.dumps({**doc, "steps": [{**doc["steps"][0], "dur_us": []}]}),
                              "'steps[0].dur_us' holds a JSON list where rocanalyze writes num")):
        saved.write_text(content)
        with pytest.raises(UserError) as err:
            load_analysis(saved)
        assert str(err.value) == f"{saved}: {message}: analyze the run again"


def test_cpu_only_table_is_an_empty_analysis_when_allowed():
    table = read(data_path("torch_profiler", "h100_captures", "fp32_gemm.json.gz"))
    table.gpu, table.runtime = table.gpu.iloc[0:0], table.runtime.iloc[0:0]
    with pytest.raises(UserError, match="no GPU activity"):
        analyze_table(table)
    a = analyze_table(table, allow_empty=True)
    assert a.busy_us == 0.0 and any("no GPU activity" in n for n in a.notes)


def test_counter_file_without_timestamps_gives_calls_counters_and_occupancy():
    a = analyze(realdata_path("rocprof_v1", "hpctraining_finite_difference_mi250x", "pmc_data_movement.csv"))
    lap = next(k for k in a.kernels if k["name"] == "laplacian_kernel")
    assert lap["calls"] == 1001 and lap["total_us"] is None
    assert lap["counters"]["FETCH_SIZE"] > 0 and "WRITE_SIZE" in lap["counters"]
    assert a.window_us is None and any("without timestamps" in n for n in a.notes)
    assert {o["kernel"] for o in a.occupancy} >= {"laplacian_kernel"}


def test_host_api_only_trace_summarises_the_calls():
    a = analyze(realdata_path("rocprofv2", "saltfish_pytorch_mi300x"))
    assert a.host_api and a.host_api[0]["total_us"] == max(h["total_us"] for h in a.host_api)
    assert sum(h["calls"] for h in a.host_api) > 100
    assert any(n.startswith("no GPU activity in this trace: it holds") for n in a.notes)
    assert not any("pass --gpu" in n for n in a.notes)  # no GPU work: which GPU it was does not matter


def test_inputs_without_a_timeline_say_what_they_cover_in_the_headline():
    """Before: 'window n/a () · GPU busy n/a · dominant n/a (n/a)'. Now the headline says what the input
    is, in the terminal and the summary, and the small host-API span reads in µs, not '0.0 ms'."""
    from rocanalyze.reports import markdown, terminal

    api = analyze(realdata_path("rocprofv3", "rocprofiler_sdk_docs", "hsa_api_trace.csv"))
    assert terminal.render(api, width=200).splitlines()[1] == (
        "no GPU activity recorded (host API calls only) · unknown GPU")
    assert "**Input** no GPU activity recorded (host API calls only) · **GPU** unknown GPU" in markdown.render(api)
    assert any("10 host API calls over 47.3 µs (most time in hsa_amd_agent_iterate_memory_pools 10.5 µs" in n
               for n in api.notes)
    totals = analyze(realdata_path("tracelens_reports", "mi300x_bert-small_kernel_summary.csv"))
    assert terminal.render(totals, width=200).splitlines()[1] == (
        "no timeline: per-kernel totals · dominant gemm (44.8%) · unknown GPU")
    timed = analyze(realdata_path("torch_traces", "tracelens", "mi300x_bert-small_inference.json.gz"))
    assert terminal.render(timed, width=200).splitlines()[1].startswith(
        "window 3.50 ms (step 6) · GPU busy 11.2% · dominant gemm (5.0%) · AMD Instinct MI300X")


def test_run_folder_records_are_attached_and_not_reported_as_skipped(tmp_path):
    """A profile run folder: Triton occupancy.json and memory.json reach the Analysis (real files from the
    H100 end-to-end runs); the folder's own records are not 'skipped: not a trace' notes."""
    import shutil

    e2e = data_path("e2e_gpu", "h100_20261121")
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(data_path("torch_profiler", "h100_captures", "compiled.json.gz"), run / "trace.json.gz")
    for name in ("occupancy.json", "run.json", "env.json"):
        shutil.copy(e2e / "compiled" / name, run / name)
    shutil.copy(e2e / "train_step" / "memory.json", run / "memory.json")
    a = analyze(run)
    triton = [o for o in a.occupancy if o["source"].startswith("triton")]
    assert len(triton) == 8 and all(o["arch"] == "sm_90" for o in triton)
    assert any(k["occupancy"] for k in a.kernels if k["name"].startswith("triton_"))
    assert a.memory["peak_bytes"] > 0
    assert a.run.command and not any("not a trace" in n for n in a.notes)


def test_written_files_get_the_usual_permissions(tmp_path):
    import os

    from rocanalyze.runfolder import write_atomic

    old = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "x.md", "hi")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_step_ranges_without_gpu_work_are_not_steps():
    """A trailing ProfilerStep range that launched nothing (what a profiler leaves after the last step
    marker) must not enter the window or the step statistics: the real train_step capture with one such
    range appended to its annotations."""
    from rocanalyze.traces.schema import ANNOTATION_COLUMNS, make_frame

    table = read(data_path("torch_profiler", "h100_captures", "train_step.json.gz"))
    ann = table.annotations
    steps = ann[ann["kind"] == "step"]
    last = steps.iloc[-1]
    cols = {c: list(ann[c].astype(object)) for c in ann.columns}
    for col, value in (("rank", 0), ("kind", "step"), ("name", "ProfilerStep#5"),
                       ("start_ns", int(last["start_ns"] + last["dur_ns"] + 1000)), ("dur_ns", 50_000)):
        cols[col].append(value)
    table.annotations = make_frame(ANNOTATION_COLUMNS, cols)
    a = analyze_table(table)
    assert [s["name"] for s in a.steps] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    assert any("launched no GPU work: ProfilerStep#5" in n for n in a.notes)
    durs = [s["dur_us"] for s in a.steps]
    assert max(durs) < 1.1 * min(durs)


def test_torchrun_job_folder_from_the_lent_gpus():
    """A real 2-rank DDP job written by `torchrun ... -m rocanalyze profile` on two H200s."""
    a = analyze(data_path("e2e_gpu", "h200x2_ddp"))
    assert [r["rank"] for r in a.ranks] == [0, 1]
    assert a.run.command == ["python", "examples/workloads/ddp_train.py"]
    assert a.window["how"].startswith("steps") and any("start-up" in n for n in a.notes)
    assert not any("not a trace" in n for n in a.notes)
    # gradients are all-reduced every step; part of it hides under the backward GEMMs
    comm = a.overlap
    assert 0 < comm["exposed_communication_us"] < comm["communication_us"]
    assert a.categories_us["communication"] == pytest.approx(comm["exposed_communication_us"], abs=1e-3)
    assert "exposed-communication" in [r["id"] for r in a.recommendations]
    assert all(r["exposed_communication_us"] > 0 for r in a.ranks)


def test_damaged_run_records_are_left_out_with_a_note_not_a_traceback(tmp_path):
    """A run folder from the H200 whose run.json, env.json and occupancy.json were damaged (cut, or holding
    the wrong types): the trace is still analyzed and rendered; each record, or field, says why it is missing."""
    import json
    import shutil

    from rocanalyze.reports import html, markdown, terminal

    run = tmp_path / "big_gemm"
    shutil.copytree(data_path("e2e_gpu", "h200_20261129", "big_gemm"), run)
    (run / "run.json").write_text(json.dumps({"command": 5, "exit_code": "a", "failed": False}))
    (run / "env.json").write_text(json.dumps({"torch": [1], "python": "3.12.3"}))
    (run / "occupancy.json").write_text('[{"kernel": "k", "waves')  # cut while written
    a = analyze(run)
    assert (a.run.command, a.run.exit_code, a.run.failed, a.run.env) == (None, None, False, {"python": "3.12.3"})
    assert {"run.json: 'command' left out: int '5' is not a list",
            "run.json: 'exit_code' left out: str 'a' is not an int",
            "env.json: 'torch' left out: a list, not a dict"} <= set(a.notes)
    assert any(n.startswith("occupancy.json left out: unreadable (Unterminated string") for n in a.notes)
    assert a.window_us > 0 and html.render(a) and markdown.render(a)
    assert "note: run.json: 'command' left out" in terminal.render(a, width=200)
    (run / "run.json").write_text('{"command": ["python", "big_')
    assert any(n.startswith("run.json left out: unreadable") for n in analyze(run).notes)
