"""The torch.profiler (Kineto) collector: CPU ops with shapes, GPU kernels and copies, steps, memory.

torch is imported when a collector starts, never at module import. The trace is exported in
`stop()`, which the session calls in a `finally`: a crashing or interrupted script still leaves
the trace of what ran (torch.profiler's stop() fires on_trace_ready for an active cycle).
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocanalyze.collectors import markers
from rocanalyze.errors import UserError, say

TRACE_NAME = "trace.json.gz"


@dataclass(frozen=True)
class Schedule:
    """torch.profiler.schedule(wait, warmup, active, repeat=1), in steps."""

    wait: int
    warmup: int
    active: int

    def describe(self) -> str:
        first = self.wait + self.warmup + 1
        return f"steps {first}-{first + self.active - 1} (wait {self.wait}, warmup {self.warmup})"


# Without --steps: record from the start (start-up included) through this step, then let the script
# run on unrecorded. Recording a whole training run grows the trace without bound: on an H200, 25 s
# of a launch-bound loop (an estimated 3 million events) took torch.profiler over three minutes to save.
FIRST_STEPS = 20


@dataclass(frozen=True)
class FirstSteps:
    """Record steps 1..count, then stop recording; count None: every step of the run."""

    count: int | None = FIRST_STEPS


ALL_STEPS = FirstSteps(None)

# A recording still open after this long is announced before it is saved (Ctrl-C, --steps all).
SAY_SAVING_AFTER_S = 30.0


def parse_steps(text: str) -> Schedule | FirstSteps:
    """`--steps`: 'ACTIVE' (skip 1, warm up 1), 'WAIT,WARMUP,ACTIVE' or 'all'; UserError on anything else."""
    if text.strip().lower() == "all":
        return ALL_STEPS
    parts = [p.strip() for p in text.split(",")]
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) == 1:
        numbers = [1, 1, numbers[0]]
    if len(numbers) != 3 or min(numbers) < 0 or numbers[2] < 1:
        raise UserError(f"--steps {text!r}: expected ACTIVE or WAIT,WARMUP,ACTIVE "
                        "(non-negative integers, ACTIVE >= 1), e.g. --steps 5 or --steps 2,1,5, or all")
    return Schedule(*numbers)


@dataclass(frozen=True)
class TorchSettings:
    schedule: Schedule | FirstSteps = FirstSteps()   # steps are marked whichever is chosen
    with_stack: bool = False
    memory: bool = False
    record_shapes: bool = True          # the per-op model needs input shapes
    with_flops: bool = True


def import_torch() -> Any:
    """torch, or UserError (exit 2) saying how to get it."""
    try:
        import torch
    except ImportError as err:
        raise UserError(f"PyTorch is not importable ({err}); install the ROCm or CUDA build of torch "
                        "for your GPU, or use --collector rocprof") from None
    return torch


def _record_first(count: int | None) -> Any:
    """A torch.profiler schedule: record steps 1..count (step_num 0..count-1), save, then record nothing."""
    from torch.profiler import ProfilerAction

    def action(step_num: int) -> Any:
        if count is None or step_num < count - 1:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE if step_num == count - 1 else ProfilerAction.NONE

    return action


class TorchCollector:
    """Start/step/stop around the user's script; `stop()` returns facts for run.json."""

    def __init__(self, folder: Path, settings: TorchSettings) -> None:
        self.folder = folder
        self.settings = settings
        self.trace_path = folder / TRACE_NAME
        self.driver = markers.StepDriver(self._on_step)
        self.memory_samples: list[dict[str, Any]] = []
        self._prof: Any = None
        self._hook: Any = None
        self._torch: Any = None
        self._gpu = False
        self._exported = False
        self._started = False
        self._stopping = False
        self._own_call = False         # inside our own profiler call (start, step, stop)
        self._stepped_aside_at: int | None = None  # step at which the script's own profiler took over
        self._cut_short = False        # ... before our window had closed
        self._owner: threading.Thread | None = None  # the thread that started the profiler
        self._foreign_steps = 0        # steps marked from other threads (not recorded as steps)
        self._unguard: Any = None

    def start(self) -> None:
        torch = self._torch = import_torch()
        from torch.profiler import ProfilerActivity, profile, schedule

        self._gpu = bool(torch.cuda.is_available())
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self._gpu else [])
        sched = self.settings.schedule
        # A schedule is always passed: only then does torch.profiler mark ProfilerStep#N ranges, which
        # the analysis windows on. Without --steps it records the first FIRST_STEPS steps.
        step_schedule = (schedule(wait=sched.wait, warmup=sched.warmup, active=sched.active, repeat=1)
                         if isinstance(sched, Schedule) else _record_first(sched.count))
        if self.settings.memory and self._gpu:
            torch.cuda.reset_peak_memory_stats()
        self._prof = profile(activities=activities, record_shapes=self.settings.record_shapes,
                             with_stack=self.settings.with_stack, profile_memory=self.settings.memory,
                             with_flops=self.settings.with_flops, schedule=step_schedule,
                             on_trace_ready=self._export)
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self._t0 = time.perf_counter()
        self._guard_other_profilers()
        self._owner = threading.current_thread()
        with self._own():
            self._prof.start()
        self._started = True
        self._hook = register_optimizer_step_post_hook(
            lambda optimizer, args, kwargs: self.driver.optimizer_step(optimizer))
        markers.activate(self.driver)

    def _on_step(self) -> None:
        if threading.current_thread() is not self._owner:
            # torch.profiler can only be stepped (started, stopped) from the thread that started it: from a
            # training thread it crashes (a segfault at export). Steps there are counted, not recorded.
            self._foreign_steps += 1
        elif self._stepped_aside_at is None:
            with self._own():
                self._prof.step()
        if self.settings.memory and self._gpu:
            self._sample_memory()

    @contextlib.contextmanager
    def _own(self) -> Iterator[None]:
        self._own_call = True
        try:
            with warnings.catch_warnings():
                # torch warns that a schedule's next cycle drops the last one's events; ours has one cycle
                warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle")
                yield
        finally:
            self._own_call = False

    def _guard_other_profilers(self) -> None:
        """One profiler records per process: when the script starts its own (torch.profiler or the autograd
        profiler), ours stops first, keeping what it recorded, and stays out of the way. Left alone, the
        script's profiler ends our session, and torch then crashes exporting ours (a segfault)."""
        from torch.autograd import profiler as autograd_profiler

        original = autograd_profiler.profile._prepare_trace
        collector = self

        def prepare_trace(profiler: Any, *args: Any, **kwargs: Any) -> Any:
            if not collector._own_call and collector._stepped_aside_at is None:
                collector._step_aside()
            return original(profiler, *args, **kwargs)

        autograd_profiler.profile._prepare_trace = prepare_trace
        self._unguard = lambda: setattr(autograd_profiler.profile, "_prepare_trace", original)

    def _step_aside(self) -> None:
        self._stepped_aside_at = self.driver.steps
        self._cut_short = not self._exported  # after the window closed and was saved, nothing is lost
        if self._cut_short:
            say(f"the script starts its own torch.profiler at step {self.driver.steps}; one profiler records per "
                "process, so rocanalyze's recording stops here and keeps what it has (the script's own trace can be "
                "analyzed too: rocanalyze analyze TRACE)")
        self._stopping = True          # not the window closing: no "saved, runs on" line
        with self._own():
            self._prof.stop()          # exports what was recorded so far (on_trace_ready)
        self._stopping = False

    def _sample_memory(self) -> None:
        cuda = self._torch.cuda
        self.memory_samples.append({"step": self.driver.steps,
                                    "time_s": round(time.perf_counter() - self._t0, 6),
                                    "allocated_bytes": int(cuda.memory_allocated()),
                                    "reserved_bytes": int(cuda.memory_reserved()),
                                    "peak_bytes": int(cuda.max_memory_allocated())})

    def _export(self, prof: Any) -> None:
        """Write the trace atomically: torch gzips when the name ends in .gz, so the temp name does too."""
        tmp = self.folder / f".partial-{TRACE_NAME}"
        prof.export_chrome_trace(str(tmp))
        tmp.replace(self.trace_path)
        self._exported = True
        if not self._stopping:  # the window closed while the script runs on: should it die hard later
            # (a native crash, a kill, os._exit), this line is all that says where its trace is
            sched = self.settings.schedule
            steps = sched.describe() if isinstance(sched, Schedule) else f"steps 1-{sched.count}"
            say(f"{steps} recorded, trace saved to {self.trace_path}; the script runs on unrecorded")

    def stop(self) -> dict[str, Any]:
        """Stop profiling, save the trace (when any was recorded) and return the facts for run.json."""
        markers.activate(None)
        if self._hook is not None:
            self._hook.remove()
        facts: dict[str, Any] = {"gpu_activity": self._gpu, "steps": self.driver.steps,
                                 "step_source": self.driver.source}
        if not self._started:
            return facts
        if self.settings.memory and self._gpu:
            try:
                self._torch.cuda.synchronize()
                self._sample_memory()
            except RuntimeError as err:      # the script died of a device error: keep the trace anyway
                facts["memory_note"] = f"last memory sample failed: {str(err).splitlines()[0]}"
        if self._unguard is not None:
            self._unguard()
        recorded_s = time.perf_counter() - self._t0
        if self._stepped_aside_at is None and threading.current_thread() is not self._owner:
            # os._exit from a worker thread: stopping torch.profiler off its own thread crashes the process
            facts["stop_note"] = ("the script ended from a thread other than the one that started the profiler, "
                                  "where torch.profiler cannot be stopped: " +
                                  ("the trace saved when the window closed is kept" if self._exported
                                   else "the recording is lost"))
        elif self._stepped_aside_at is None:
            if not self._exported and recorded_s > SAY_SAVING_AFTER_S:   # torch saves silently, for minutes
                say(f"saving the trace of {recorded_s:.0f} s of recording ({self.driver.steps} steps); a long "
                    "recording takes torch.profiler a while")
            self._stopping = True
            with self._own():
                self._prof.stop()         # fires on_trace_ready when steps were being recorded
        sched = self.settings.schedule
        facts["trace"] = TRACE_NAME if self._exported else None
        if isinstance(sched, Schedule):
            facts["schedule"] = {"wait": sched.wait, "warmup": sched.warmup, "active": sched.active}
            needed = sched.wait + sched.warmup + sched.active
            if self.driver.steps < needed:
                facts["schedule_note"] = (f"the script ran {self.driver.steps} steps; {sched.describe()} "
                                          f"needs {needed}")
        elif sched.count is not None and self.driver.steps > sched.count:
            facts["schedule"] = {"first_steps": sched.count}
            facts["schedule_note"] = (f"recorded steps 1-{sched.count} of the {self.driver.steps} the script ran "
                                      "(the default); --steps all records every step, --steps WAIT,WARMUP,ACTIVE "
                                      "others")
        if self._foreign_steps:
            facts["steps_from_other_threads"] = self._foreign_steps
            facts["schedule_note"] = (f"{self._foreign_steps} of the {self.driver.steps} steps were marked from a "
                                      "thread other than the main one, where torch.profiler cannot be stepped: "
                                      "the recording ran to the end of the script without step ranges")
        if self._stepped_aside_at is not None and self._cut_short:
            facts["stepped_aside_at"] = self._stepped_aside_at
            facts["schedule_note"] = (f"the script started its own torch.profiler at step {self._stepped_aside_at}; "
                                      "rocanalyze's recording stopped there (one profiler records per process)")
        if self.settings.memory:
            facts["memory"] = self.memory_report()
        return facts

    def memory_report(self) -> dict[str, Any]:
        """memory.json content: peak bytes (torch.cuda.max_memory_allocated) and one sample per step."""
        if not self._gpu:
            return {"peak_bytes": None, "timeline": [], "note": "no GPU: device memory not recorded"}
        cuda = self._torch.cuda
        return {"peak_bytes": int(cuda.max_memory_allocated()),
                "peak_reserved_bytes": int(cuda.max_memory_reserved()),
                "source": "torch.cuda.max_memory_allocated; timeline sampled at each step end",
                "timeline": self.memory_samples}
