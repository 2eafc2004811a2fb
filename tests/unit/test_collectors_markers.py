"""Step detection: rocanalyze.step() markers win over optimizer steps; one optimizer counts."""

from __future__ import annotations

import rocanalyze
from rocanalyze.collectors import markers


def _driver() -> tuple[markers.StepDriver, list[int]]:
    calls: list[int] = []
    driver = markers.StepDriver(lambda: calls.append(driver.steps))
    return driver, calls


def test_step_is_a_no_op_when_not_profiling() -> None:
    markers.activate(None)
    rocanalyze.step()                      # the lazily exported marker, as scripts call it
    assert markers.active() is None


def test_explicit_steps_drive_the_profiler() -> None:
    driver, calls = _driver()
    markers.activate(driver)
    try:
        for _ in range(3):
            rocanalyze.step()
    finally:
        markers.activate(None)
    assert (calls, driver.source) == ([1, 2, 3], "marker")


def test_only_the_first_optimizer_counts() -> None:
    driver, calls = _driver()
    gen, disc = object(), object()
    for _ in range(2):
        driver.optimizer_step(gen)
        driver.optimizer_step(disc)
    assert (calls, driver.source) == ([1, 2], "optimizer")


def test_markers_win_over_optimizer_steps() -> None:
    driver, calls = _driver()
    opt = object()
    driver.optimizer_step(opt)             # before the script's first marker: counted
    driver.explicit_step()
    driver.optimizer_step(opt)             # ignored from now on: the script marks its own steps
    driver.explicit_step()
    assert (calls, driver.source) == ([1, 2, 3], "marker")
