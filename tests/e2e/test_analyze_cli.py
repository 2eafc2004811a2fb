"""`rocanalyze analyze` through the real CLI boundary: outputs, exit codes, one-line errors, and every
profiler output in ../shared/realdata analyzed without a traceback."""

from __future__ import annotations

import fnmatch
import gzip
import json
from pathlib import Path

import pytest

from rocanalyze.cli import main
from tests.conftest import REALDATA, data_path, realdata_path

TRAIN = data_path("torch_profiler", "h100_captures", "train_step.json.gz")


def test_prints_breakdown_and_writes_json(tmp_path, capsys):
    out = tmp_path / "a.json"
    assert main(["analyze", str(TRAIN), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "gemm" in printed and f"wrote {out}" in printed
    data = json.loads(out.read_text())
    assert data["schema_version"] == 1
    for key in ("window_us", "busy_us", "idle_us", "idle_breakdown_us", "startup_us", "categories_us", "kernels",
                "top_kernels", "steps", "timeline", "ops", "patterns", "device", "ranks", "quality", "notes",
                "recommendations"):
        assert key in data, key
    cats = data["categories_us"]  # keys are sorted in the JSON: the top category is the largest value
    assert max(cats, key=cats.get) == "gemm"


def test_output_folder_gets_every_report_and_is_not_overwritten(tmp_path, capsys):
    folder = tmp_path / "rep"
    assert main(["analyze", str(TRAIN), "-o", str(folder)]) == 0
    assert {p.name for p in folder.iterdir()} >= {"analysis.json", "report.html", "summary.md", "trace.pftrace"}
    capsys.readouterr()
    assert main(["analyze", str(TRAIN), "-o", str(folder)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["analyze", str(TRAIN), "-o", str(folder), "--force"]) == 0


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"\x00\x01garbage\xff" * 50, None),
    (b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1', None),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, content, message):
    bad = tmp_path / "trace.json"
    bad.write_bytes(content)
    assert main(["analyze", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rocanalyze: error:") and "Traceback" not in err[0]
    if message:
        assert message in err[0]


def test_missing_file_and_truncated_gzip(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(TRAIN.read_bytes()[:20000])
    assert main(["analyze", str(cut)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_cpu_only_trace_says_no_gpu_activity(tmp_path, capsys):
    with gzip.open(TRAIN) as fh:
        trace = json.load(fh)
    trace["traceEvents"] = [e for e in trace["traceEvents"] if e.get("cat") in ("cpu_op", "python_function")]
    cpu = tmp_path / "cpu.json"
    cpu.write_text(json.dumps(trace))
    assert main(["analyze", str(cpu)]) == 2
    assert "no GPU activity" in capsys.readouterr().err


def test_steps_selection_and_bad_spec(capsys):
    assert main(["analyze", str(TRAIN), "--steps", "3:4"]) == 0
    assert "steps 3-4" in capsys.readouterr().out
    assert main(["analyze", str(TRAIN), "--steps", "9:12"]) == 2
    assert "selects none" in capsys.readouterr().err


def _realdata_inputs() -> list[Path]:
    """Every profiler output folder and every trace file under ../shared/realdata."""
    if not REALDATA.is_dir():
        return []
    folders = sorted({p.parent for p in REALDATA.rglob("*") if p.is_file() and p.name not in (
        "provenance.tsv", "PROVENANCE.md")})
    files = sorted(p for p in REALDATA.rglob("*") if p.is_file() and p.suffix in (".json", ".gz", ".csv", ".db"))
    return folders + files


# What may be refused (exit 2, one line), and why; every other output must be analyzed (exit 0).
REFUSED = {
    "rocprof_v1/hpctraining_*/results.json": "broken fragment",
    "amdgcn*": "compiler output, no trace", "triton_ir*": "compiler output, no trace",
    "tracelens_reports*": "another tool's report", "*ui_output_agent_*": "thread-trace decoder output",
    "*stats_ui_output_*": "thread-trace decoder output", "rocprofv3/aiter_skinny_gemm_gfx950_att": "thread trace only",
    "*agent_info.csv": "machine description", "*sysinfo.csv": "machine description",
    "*rocprofv3-schema.json": "schema", "rocprof_compute/*/pmc_dispatch_info.csv": "part of a workload folder",
    "rocprof_compute/*/pmc_kernel_top.csv": "part of a workload folder",
    "rocprof_compute/*/roofline.csv": "part of a workload folder",
    "*kernel_names.csv": "names only",
    # host-API-only traces and counter files without timestamps are analyzed (exit 0): see test_build.py
}


def _refusal(rel: str) -> str | None:
    return next((why for pattern, why in REFUSED.items() if fnmatch.fnmatch(rel, pattern)), None)


@pytest.mark.realdata
@pytest.mark.parametrize("path", _realdata_inputs() or [None], ids=lambda p: str(p.relative_to(REALDATA))
                         if p else "absent")
def test_every_realdata_output_is_analyzed_or_refused_in_one_line(path, capsys):
    if path is None:
        realdata_path()  # skips with the reason
    code = main(["analyze", str(path)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    why = _refusal(str(path.relative_to(REALDATA)))
    if why is None:
        assert code == 0, captured.err
        # a timeline gives categories; counters or stats give kernels; host-API traces give their calls
        assert any(t in captured.out for t in ("GPU time by category", "Top kernels", "Host API calls"))
    else:
        assert code in (0, 2)
        if code == 2:
            err = captured.err.strip().splitlines()
            assert len(err) == 1 and err[0].startswith("rocanalyze: error:"), (why, err)


SEISMIC = ("rocprof_v1", "hpctraining_seismic_stencils_mi250x", "results.stats.csv")
STENCIL_RULES = """
[[rule]]
category = "elementwise"
family = "our finite-difference stencils (one output point from its neighbours)"
name = ['^compute_fd_\\w*kernel']
examples = ["compute_fd_z_kernel", "compute_fd_xyz_lds_window_kernel"]
source = "the HPC training seismic-stencil code"
"""


def test_unclassified_kernels_are_named_and_a_rules_file_classifies_them(tmp_path, capsys):
    """The seismic-stencil rocprof run is all user kernels no rule knows: the note says so and names
    them; a rules file for their family moves them out of 'other', for this command only."""
    stats = realdata_path(*SEISMIC)
    out = tmp_path / "a.json"
    assert main(["analyze", str(stats), "--json", str(out)]) == 0
    before = json.loads(out.read_text())
    note = next(n for n in before["notes"] if "match no classification rule" in n)
    assert note.startswith("11 kernel names (98.8% of GPU busy time)") and "'compute_fd_z_kernel'" in note
    assert "--rules FILE" in note
    assert "match no classification rule" in capsys.readouterr().out.replace("\n", " ")  # the terminal shows it too
    rules = tmp_path / "stencils.toml"
    rules.write_text(STENCIL_RULES)
    assert main(["analyze", str(stats), "--json", str(out), "--force", "--rules", str(rules)]) == 0
    after = json.loads(out.read_text())
    fd = [k for k in after["kernels"] if k["name"].startswith("compute_fd_")]
    assert fd and all(k["category"] == "elementwise" for k in fd)
    assert after["categories_us"]["elementwise"] == pytest.approx(sum(k["total_us"] for k in fd))
    assert not any("match no classification rule" in n for n in after["notes"])  # 3 helpers left, under 2%
    # the rules held for that command only
    assert main(["analyze", str(stats), "--json", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["categories_us"] == before["categories_us"]


@pytest.mark.parametrize(("text", "message"), [
    ("[[rule]\n", "not a readable TOML rules file"),
    ('[[rule]]\ncategory = "gemmm"\nname = ["x"]\n', "rule 0 has unknown category 'gemmm'"),
    ('[[rule]]\ncategory = "gemm"\nname = ["(x"]\n', "rule 0: bad regex"),
    ('[[rule]]\ncategory = "gemm"\nname = ["^foo$"]\nexamples = ["bar"]\n', "its example 'bar' does not match"),
    ('title = "no rules"\n', "no [[rule]] tables"),
])
def test_bad_rules_file_is_one_line_exit_2(tmp_path, capsys, text, message):
    rules = tmp_path / "r.toml"
    rules.write_text(text)
    assert main(["analyze", str(TRAIN), "--rules", str(rules)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rocanalyze: error: ") and message in err and "\n" not in err
    assert main(["analyze", str(TRAIN), "--rules", str(tmp_path / "missing.toml")]) == 2
    assert "rules file not found" in capsys.readouterr().err


def test_outputs_that_cannot_be_written_are_one_line_before_the_work(tmp_path, capsys):
    """An -o or --json under a file, or in a folder that cannot be made, was a traceback (NotADirectoryError,
    FileNotFoundError) after the whole analysis; now exit 2 naming the path, and for a path under a file
    before anything is read."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    cases = [(["analyze", str(TRAIN), "-o", str(a_file / "report")], f"{a_file / 'report'}: cannot write there: "
              f"{a_file} is not a folder"),
             (["analyze", str(TRAIN), "--json", str(a_file / "a.json")], f"{a_file / 'a.json'}: cannot write there: "
              f"{a_file} is not a folder"),
             (["compare", str(TRAIN), str(TRAIN), "-o", str(a_file / "d.md")], f"{a_file / 'd.md'}: cannot write "
              f"there: {a_file} is not a folder")]

    for argv, message in cases:
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.err == f"rocanalyze: error: {message}\n" and captured.out == ""  # refused before the work
    if Path("/proc/self").is_dir():  # access() says writable to root, yet nothing can be created there
        assert main(["analyze", str(TRAIN), "-o", "/proc/rocanalyze-out"]) == 2
        captured = capsys.readouterr()
        assert captured.err.startswith("rocanalyze: error: /proc/rocanalyze-out: cannot write there: ")
        assert captured.out == ""                                                 # before the analysis
    from rocanalyze.errors import UserError
    from rocanalyze.runfolder import make_folder, write_atomic

    with pytest.raises(UserError, match=r"missing/x.md: cannot write: No such file or directory"):
        write_atomic(tmp_path / "missing" / "x.md", "text")
    with pytest.raises(UserError, match=r"notes.txt/sub: cannot create the output folder: Not a directory"):
        make_folder(a_file / "sub")
    assert not list(tmp_path.glob("**/*.tmp")) and not list(tmp_path.glob("**/.*.tmp"))


def test_json_dash_writes_clean_json_to_stdout(tmp_path, capsys, monkeypatch):
    """`--json -` wrote a file named '-'; now the JSON goes to stdout (for a pipe into jq) and the report,
    or compare's table, to stderr."""
    monkeypatch.chdir(tmp_path)
    assert main(["analyze", str(TRAIN), "--json", "-"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["window_us"] > 0 and doc["kernels"] and "GPU time by category" in captured.err
    assert main(["compare", str(TRAIN), str(TRAIN), "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["step"]["name"] == "step time" and "## rocanalyze compare" in captured.err
    assert not (tmp_path / "-").exists()
