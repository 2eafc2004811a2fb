"""The torch.profiler collector on CPU-only torch: steps from the optimizer, schedules, saved traces."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rocanalyze.collectors import markers
from rocanalyze.collectors.torch_profiler import (
    ALL_STEPS,
    FIRST_STEPS,
    FirstSteps,
    Schedule,
    TorchCollector,
    TorchSettings,
    parse_steps,
)
from rocanalyze.errors import UserError

torch = pytest.importorskip("torch")


def test_parse_steps() -> None:
    assert parse_steps("5") == Schedule(1, 1, 5)
    assert parse_steps("2, 1, 4") == Schedule(2, 1, 4)
    assert Schedule(2, 1, 4).describe() == "steps 4-7 (wait 2, warmup 1)"
    assert parse_steps("all") == parse_steps(" ALL ") == ALL_STEPS == FirstSteps(None)
    for bad in ("0", "a", "1,2", "1,-1,3", "2,1,0", "al"):
        with pytest.raises(UserError) as err:
            parse_steps(bad)
        assert str(err.value) == (f"--steps {bad!r}: expected ACTIVE or WAIT,WARMUP,ACTIVE (non-negative "
                                  "integers, ACTIVE >= 1), e.g. --steps 5 or --steps 2,1,5, or all")


def _train(n: int) -> None:
    model = torch.nn.Linear(16, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 16)
    for _ in range(n):
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()


def _step_events(path: Path) -> list[str]:
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    return sorted({e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#")})


def test_optimizer_steps_mark_profiler_steps(tmp_path: Path) -> None:
    collector = TorchCollector(tmp_path, TorchSettings())
    collector.start()
    try:
        _train(3)
    finally:
        facts = collector.stop()
    assert markers.active() is None                    # the marker is detached after the run
    assert facts == {"gpu_activity": torch.cuda.is_available(), "steps": 3, "step_source": "optimizer",
                     "trace": "trace.json.gz"}
    # torch opens ProfilerStep#0 at start; #3 is the tail after the last step (as torch.profiler marks it)
    assert _step_events(tmp_path / "trace.json.gz") == [f"ProfilerStep#{i}" for i in range(4)]
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json.gz"]   # no temp file left


def test_schedule_records_only_the_active_steps(tmp_path: Path) -> None:
    collector = TorchCollector(tmp_path, TorchSettings(schedule=Schedule(1, 1, 2)))
    collector.start()
    try:
        _train(6)
    finally:
        facts = collector.stop()
    assert facts["schedule"] == {"wait": 1, "warmup": 1, "active": 2} and "schedule_note" not in facts
    assert _step_events(tmp_path / "trace.json.gz") == ["ProfilerStep#2", "ProfilerStep#3"]


def test_default_records_the_first_steps_then_stops(tmp_path: Path) -> None:
    collector = TorchCollector(tmp_path, TorchSettings())
    assert collector.settings.schedule == FirstSteps(FIRST_STEPS)
    collector.start()
    try:
        _train(FIRST_STEPS + 15)                          # the script runs on after the recorded steps
    finally:
        facts = collector.stop()
    assert facts["steps"] == FIRST_STEPS + 15 and facts["trace"] == "trace.json.gz"
    assert facts["schedule"] == {"first_steps": FIRST_STEPS}
    assert facts["schedule_note"] == (f"recorded steps 1-{FIRST_STEPS} of the {FIRST_STEPS + 15} the script ran "
                                      "(the default); --steps all records every step, --steps WAIT,WARMUP,ACTIVE "
                                      "others")
    # steps 1..20 are ProfilerStep#0..#19; nothing after the last recorded step (no tail range either)
    assert _step_events(tmp_path / "trace.json.gz") == sorted(f"ProfilerStep#{i}" for i in range(FIRST_STEPS))
    events = json.loads(gzip.decompress((tmp_path / "trace.json.gz").read_bytes()))["traceEvents"]
    assert sum(e.get("name") == "Optimizer.step#SGD.step" for e in events) == FIRST_STEPS


def test_all_records_every_step(tmp_path: Path) -> None:
    collector = TorchCollector(tmp_path, TorchSettings(schedule=ALL_STEPS))
    collector.start()
    try:
        _train(FIRST_STEPS + 5)
    finally:
        facts = collector.stop()
    assert "schedule_note" not in facts and "schedule" not in facts
    assert len(_step_events(tmp_path / "trace.json.gz")) == FIRST_STEPS + 6   # + the tail after the last step


def test_too_few_steps_for_the_schedule_is_said(tmp_path: Path) -> None:
    collector = TorchCollector(tmp_path, TorchSettings(schedule=Schedule(1, 1, 5)))
    collector.start()
    try:
        _train(4)                                         # stops inside the active steps: partial trace
    finally:
        facts = collector.stop()
    assert facts["trace"] == "trace.json.gz"
    assert facts["schedule_note"] == "the script ran 4 steps; steps 3-7 (wait 1, warmup 1) needs 7"


def test_memory_on_cpu_says_there_is_no_device_memory(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CPU-only behaviour")
    collector = TorchCollector(tmp_path, TorchSettings(memory=True))
    collector.start()
    facts = collector.stop()
    assert facts["memory"] == {"peak_bytes": None, "timeline": [], "note": "no GPU: device memory not recorded"}


def test_a_long_open_recording_is_announced_before_saving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from rocanalyze.collectors import torch_profiler

    monkeypatch.setattr(torch_profiler, "SAY_SAVING_AFTER_S", 0.0)   # every recording counts as long here
    collector = TorchCollector(tmp_path / "all", TorchSettings(schedule=ALL_STEPS))
    (tmp_path / "all").mkdir()
    collector.start()
    _train(3)
    collector.stop()
    err = capsys.readouterr().err
    assert "rocanalyze: saving the trace of " in err and "s of recording (3 steps)" in err
    # the default already saved steps 1-20 while the script ran: nothing is left to announce at the end
    collector = TorchCollector(tmp_path, TorchSettings())
    collector.start()
    _train(FIRST_STEPS + 2)
    collector.stop()
    assert "saving the trace" not in capsys.readouterr().err
