"""Sudden ends of the script: `os._exit(n)` and SIGTERM skip every `finally`, ours included.

Left alone, either loses the recording (the trace is only written when the profiler stops) and leaves
run.json saying "running". While the script runs, `os._exit(n)` called in this process (not in a forked
child: DataLoader and multiprocessing workers end with os._exit too) and a SIGTERM the script has not
claimed with its own handler first call `save`, the finishing a normal end runs, and then end the process
as they would have: exit code n, or death by SIGTERM. A SIGKILL or a native crash cannot be caught.

A Python signal handler runs only when the main thread is back in the interpreter. A script stuck in
native code (a hung collective, a GPU sync that never returns) would then outlive the SIGTERM that the
default action ends at once, so a watchdog thread, woken by the signal itself (`signal.set_wakeup_fd`), ends
the process when the handler has not started within STUCK_GRACE_S. A second SIGTERM while saving ends it at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from rocanalyze.errors import UserError, say

# what `save` is told: how the script ended ("os._exit(3)", "SIGTERM") and the exit code it leaves
SaveFn = Callable[[str, int], None]
STUCK_GRACE_S = 10.0   # how long a SIGTERM waits for the main thread before the process ends unsaved


@contextlib.contextmanager
def saving_on_sudden_end(save: SaveFn, stuck_grace_s: float = STUCK_GRACE_S) -> Iterator[None]:
    """Within the block, os._exit and an unclaimed SIGTERM run `save` once before the process ends."""
    pid = os.getpid()
    real_exit = os._exit
    fired = threading.Lock()
    handler_started = threading.Event()

    def save_once(how: str, code: int) -> None:
        if os.getpid() != pid or not fired.acquire(blocking=False):
            return                        # a forked child's own exit, or a second sudden end
        try:
            save(how, code)
        except UserError as err:          # e.g. the disk filled: one line, and the exit still happens
            say(f"error: {err}")
        except BaseException:             # a bug: its traceback, and the exit still happens
            traceback.print_exc()

    def exit_now(code: Any) -> None:
        save_once(f"os._exit({code!r})", code if isinstance(code, int) else 1)
        real_exit(code)

    def on_sigterm(signum: int, frame: Any) -> None:
        handler_started.set()
        signal.signal(signum, signal.SIG_DFL)   # a second SIGTERM ends the process at once
        save_once("SIGTERM", 128 + signum)
        os.kill(os.getpid(), signum)            # then die of it, as the process would have

    os._exit = exit_now
    ours = (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    watchdog = _StuckWatchdog(handler_started, stuck_grace_s, real_exit) if ours else None
    if ours:
        signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        if os._exit is exit_now:
            os._exit = real_exit
        if ours and signal.getsignal(signal.SIGTERM) is on_sigterm:   # unless the script set its own
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if watchdog is not None:
            watchdog.close()


class _StuckWatchdog:
    """Ends the process when a SIGTERM arrived but the main thread never ran the Python handler."""

    def __init__(self, handler_started: threading.Event, grace_s: float, real_exit: Callable[[int], Any]) -> None:
        self._started, self._grace_s, self._exit = handler_started, grace_s, real_exit
        self._read, self._write = socket.socketpair()
        self._write.setblocking(False)
        try:
            previous = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        except ValueError:              # not the main thread of the main interpreter
            previous = None
        if previous != -1:              # someone (asyncio, the script) already listens: leave theirs be
            if previous is not None:
                signal.set_wakeup_fd(previous)
            self._close_sockets()
            self._thread = None
            return
        self._thread = threading.Thread(target=self._watch, name="rocanalyze-sigterm-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            try:
                data = self._read.recv(64)
            except OSError:
                return
            if not data:
                return                  # closed: the script ended
            if signal.SIGTERM in data and not self._started.wait(self._grace_s):
                say(f"SIGTERM, and the script has been stuck outside Python for {self._grace_s:g} s: "
                    "ending now, without saving the recording")
                self._exit(128 + signal.SIGTERM)

    def close(self) -> None:
        if self._thread is None:
            return
        previous = signal.set_wakeup_fd(-1)
        if previous not in (-1, self._write.fileno()):   # the script set its own since: keep it
            signal.set_wakeup_fd(previous)
        with contextlib.suppress(OSError):
            self._write.shutdown(socket.SHUT_RDWR)
        self._close_sockets()

    def _close_sockets(self) -> None:
        for sock in (self._read, self._write):
            with contextlib.suppress(OSError):
                sock.close()
