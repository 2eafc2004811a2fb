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
    assert "within noise): no change beyond noise." in out
    assert md.read_text() in out


def test_regression_exits_3_after_writing_its_outputs(tmp_path: Path, capsys) -> None:
    from rocanalyze.analysis.build import analyze

    # Derived: the big-GEMM capture's analysis.json, and a copy with every step 1.5x longer.
    a = analyze(trace("big_gemm"))
    (tmp_path / "base").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "base" / "analysis.json").write_text(a.to_json())
    slow = a.replace(steps=[dict(s, dur_us=s["dur_us"] * 1.5) for s in a.steps])
    (tmp_path / "new" / "analysis.json").write_text(slow.to_json())
    js, md = tmp_path / "delta.json", tmp_path / "delta.md"
    argv = ["compare", str(tmp_path / "base"), str(tmp_path / "new"), "--json", str(js), "-o", str(md),
            "--fail-on-regression", "5"]
    assert main(argv) == 3
    captured = capsys.readouterr()
    assert "(+50.0%, significant)" in captured.out
    assert captured.err == "rocanalyze: regression: step time +50.0% (over 5%, significant)\n"
    assert json.loads(js.read_text())["step"]["significant"] is True
    assert "| step time |" in md.read_text() and "| +50.0% | **significant** |" in md.read_text()
    assert main(argv[:-2] + ["--force", "--fail-on-regression", "60"]) == 0


def test_bad_arguments_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["compare", trace("compiled"), str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"rocanalyze: error: {tmp_path / 'nope'}: no such file or folder\n"
    assert main(["compare", trace("compiled"), trace("compiled"), "--fail-on-regression", "-1"]) == 2
    assert capsys.readouterr().err == "rocanalyze: error: --fail-on-regression must be >= 0, got -1.0\n"


def test_analyses_made_with_other_rules(tmp_path: Path, capsys) -> None:
    """A saved analysis.json carries the digest of the rules that classified it. One made with other rules
    (an older rocanalyze, another --rules file) is analyzed again when its trace is beside it; an analysis.json
    alone is compared as it is, under a caveat that category changes may come from the rules."""
    import dataclasses
    import shutil

    from rocanalyze.analysis.build import analyze
    from rocanalyze.analysis.classify import rules_digest

    current = analyze(data_path(*H100, "train_step.json.gz"))
    assert current.run.rules_digest == rules_digest() and len(rules_digest()) == 12
    old = dataclasses.replace(current, run=dataclasses.replace(current.run, rules_digest="0123456789ab"))
    alone, run = tmp_path / "alone", tmp_path / "run"
    alone.mkdir()
    run.mkdir()
    for folder in (alone, run):
        (folder / "analysis.json").write_text(old.to_json())
    shutil.copy(trace("train_step"), run / "trace.json.gz")

    assert main(["compare", str(alone / "analysis.json"), trace("train_step"), "--json", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert f"*The two analyses were classified with different rules (0123456789ab, {rules_digest()})" in out
    assert json.loads((tmp_path / "a.json").read_text())["rules_differ"] is True

    assert main(["compare", str(run), trace("train_step")]) == 0
    captured = capsys.readouterr()
    assert (f"rocanalyze: {run / 'analysis.json'} was made with other rules (0123456789ab); analyzed {run} again "
            f"with the current ones ({rules_digest()})\n") in captured.err
    assert "different rules" not in captured.out
