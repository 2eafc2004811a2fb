"""`rocanalyze.step()`: the step marker, and the driver that turns steps into profiler steps.

A step ends at each `rocanalyze.step()` call; scripts that never call it get steps from their
optimizer (a global post-hook on `torch.optim.Optimizer.step`). Once the script calls `step()`
itself, optimizer steps are ignored, and only the first optimizer seen counts, so a GAN's two
optimizers or a scheduler-driven second `step()` do not double the step count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_driver: StepDriver | None = None


def step() -> None:
    """Mark the end of one training or inference step (a no-op when rocanalyze is not profiling)."""
    if _driver is not None:
        _driver.explicit_step()


class StepDriver:
    """Counts steps from explicit markers or optimizer steps and calls `on_step` once per step."""

    def __init__(self, on_step: Callable[[], None]) -> None:
        self.on_step = on_step
        self.steps = 0
        self.source: str | None = None      # "marker" | "optimizer": where the steps came from
        self._optimizer: int | None = None

    def explicit_step(self) -> None:
        self.source = "marker"               # the script marks its own steps: that wins from now on
        self._advance()

    def optimizer_step(self, optimizer: Any) -> None:
        if self.source == "marker":
            return
        if self._optimizer is None:
            self._optimizer = id(optimizer)
        if id(optimizer) != self._optimizer:
            return
        self.source = "optimizer"
        self._advance()

    def _advance(self) -> None:
        self.steps += 1
        self.on_step()


def activate(driver: StepDriver | None) -> None:
    """Route `rocanalyze.step()` to `driver` (None: back to a no-op)."""
    global _driver
    _driver = driver


def active() -> StepDriver | None:
    return _driver
