"""Sudden ends of the script: `os._exit(n)` and SIGTERM skip every `finally`, ours included.

Left alone, either loses the recording (the trace is only written when the profiler stops) and leaves
run.json saying "running". While the script runs, `os._exit(n)` called in this process (not in a forked
child: DataLoader and multiprocessing workers end with os._exit too) and a SIGTERM the script has not
claimed with its own handler first call `save`, the finishing a normal end runs, and then end the process
as they would have: exit code n, or death by SIGTERM. A SIGKILL or a native crash cannot be caught.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

# what `save` is told: how the script ended ("os._exit(3)", "SIGTERM") and the exit code it leaves
SaveFn = Callable[[str, int], None]


@contextlib.contextmanager
def saving_on_sudden_end(save: SaveFn) -> Iterator[None]:
    """Within the block, os._exit and an unclaimed SIGTERM run `save` once before the process ends."""
    pid = os.getpid()
    real_exit = os._exit
    fired = threading.Lock()

    def save_once(how: str, code: int) -> None:
        if os.getpid() != pid or not fired.acquire(blocking=False):
            return                        # a forked child's own exit, or a second sudden end
        try:
            save(how, code)
        except BaseException:             # the exit must still happen: say what failed, as a bug
            traceback.print_exc()

    def exit_now(code: Any) -> None:
        save_once(f"os._exit({code!r})", code if isinstance(code, int) else 1)
        real_exit(code)

    def on_sigterm(signum: int, frame: Any) -> None:
        save_once("SIGTERM", 128 + signum)
        signal.signal(signum, signal.SIG_DFL)   # then die of it, as the process would have
        os.kill(os.getpid(), signum)

    os._exit = exit_now
    ours = (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    if ours:
        signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        if os._exit is exit_now:
            os._exit = real_exit
        if ours and signal.getsignal(signal.SIGTERM) is on_sigterm:   # unless the script set its own
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def say(line: str) -> None:
    """One line on stderr, flushed: the process may end right after it."""
    print(f"rocanalyze: {line}", file=sys.stderr, flush=True)
