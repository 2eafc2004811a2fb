"""os._exit and SIGTERM during the script: `save` runs once in this process, then the process ends as it would have.

Each case runs in a child interpreter, since the point is how that process ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).parents[2]

HEAD = textwrap.dedent("""
    import ctypes, os, signal, sys, threading, time
    from rocanalyze.collectors.sudden_end import saving_on_sudden_end
    def save(how, code):
        with open(sys.argv[1], "a") as fh:
            fh.write(f"{how} {code} {os.getpid()}\\n")
""")


def _child(tmp_path: Path, body: str) -> tuple[subprocess.CompletedProcess[str], list[str], float]:
    log = tmp_path / "saved.txt"
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", HEAD + textwrap.dedent(body), str(log)], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return proc, (log.read_text().splitlines() if log.exists() else []), time.monotonic() - t0


def test_os_exit_saves_once_then_exits_with_its_code(tmp_path: Path) -> None:
    proc, saved, _ = _child(tmp_path, """
        with saving_on_sudden_end(save):
            pid = os.fork()
            if pid == 0:
                os._exit(5)                 # a forked child's exit: not the script's end
            os.waitpid(pid, 0)
            os._exit(3)
    """)
    assert proc.returncode == 3
    assert [line.rsplit(" ", 1)[0] for line in saved] == ["os._exit(3) 3"]


def test_sigterm_saves_then_dies_of_it(tmp_path: Path) -> None:
    proc, saved, _ = _child(tmp_path, """
        with saving_on_sudden_end(save):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    """)
    assert proc.returncode == -signal.SIGTERM
    assert [line.rsplit(" ", 1)[0] for line in saved] == ["SIGTERM 143"]


def test_outside_the_block_nothing_is_changed(tmp_path: Path) -> None:
    proc, saved, _ = _child(tmp_path, """
        real = os._exit
        with saving_on_sudden_end(save):
            pass
        assert os._exit is real and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        assert signal.set_wakeup_fd(-1) == -1
        os._exit(4)
    """)
    assert (proc.returncode, saved, proc.stderr) == (4, [], "")


def test_a_script_that_claims_sigterm_keeps_it(tmp_path: Path) -> None:
    proc, saved, _ = _child(tmp_path, """
        with saving_on_sudden_end(save):
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(9))
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    """)
    assert (proc.returncode, saved) == (9, [])


def test_a_main_thread_stuck_in_native_code_does_not_outlive_sigterm(tmp_path: Path) -> None:
    """The Python handler cannot run while the main thread sleeps in C: the watchdog ends the process."""
    proc, saved, wall = _child(tmp_path, """
        with saving_on_sudden_end(save, stuck_grace_s=1.0):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})   # delivered to another thread
            threading.Thread(target=lambda: (time.sleep(0.3), os.kill(os.getpid(), signal.SIGTERM))).start()
            ctypes.CDLL(None).sleep(30)
    """)
    assert proc.returncode == 128 + signal.SIGTERM and saved == [] and wall < 20
    assert proc.stderr == ("rocanalyze: SIGTERM, and the script has been stuck outside Python for 1 s: ending now, "
                           "without saving the recording\n")


def test_an_event_loop_wakeup_fd_is_left_alone(tmp_path: Path) -> None:
    proc, saved, _ = _child(tmp_path, """
        import socket
        a, b = socket.socketpair(); b.setblocking(False)
        signal.set_wakeup_fd(b.fileno())
        with saving_on_sudden_end(save):
            assert signal.set_wakeup_fd(b.fileno()) == b.fileno()   # still the loop's
        assert signal.set_wakeup_fd(-1) == b.fileno()
    """)
    assert (proc.returncode, saved, proc.stderr) == (0, [], "")


def test_sigterm_reaches_the_program_under_rocprof(tmp_path: Path) -> None:
    """--collector rocprof runs the program as a child: a SIGTERM to rocanalyze goes on to it instead of leaving
    it running orphaned, and its code comes back as a shell gives it (128 + 15)."""
    proc, saved, wall = _child(tmp_path, """
        from pathlib import Path
        from rocanalyze.collectors.rocprof import run_rocprof
        threading.Thread(target=lambda: (time.sleep(1.0), os.kill(os.getpid(), signal.SIGTERM))).start()
        child = [sys.executable, "-c", "import time\\nfor _ in range(300): time.sleep(0.1)"]
        rc = run_rocprof(child, Path(sys.argv[1]).parent)
        print("rocprof pass ended", rc, signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    """)
    assert proc.returncode == 0 and wall < 20
    assert proc.stdout == "rocprof pass ended 143 True\n"
