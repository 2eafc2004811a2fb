"""Run the user's code in this process as `python script.py` / `python -m mod` would.

`sys.argv`, `__main__`, `sys.path[0]` are set as the interpreter sets them; the script's own
traceback is printed as Python prints it (our frames trimmed from the top) and its exit code comes
back: 0, n for sys.exit(n), 1 for an uncaught exception, 130 for Ctrl-C.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import os
import runpy
import sys
import threading
import traceback
import types
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from rocanalyze.errors import UserError

_OUR_DIRS = (str(Path(__file__).resolve().parents[1]), os.path.dirname(runpy.__file__))


@dataclass(frozen=True)
class Target:
    """What to run: a script path, a module (-m) or, for rocprof only, a program."""

    kind: str                      # "script" | "module" | "program"
    name: str                      # path as typed, module name, or program
    args: list[str] = field(default_factory=list)

    @property
    def argv(self) -> list[str]:
        """The command line as the user would type it after `python` (or the program itself)."""
        if self.kind == "module":
            return ["-m", self.name, *self.args]
        return [self.name, *self.args]


@dataclass
class Outcome:
    """How the script ended: exit code, whether it failed, and whether it was interrupted."""

    exit_code: int = 0
    failed: bool = False
    interrupted: bool = False
    raised: bool = False           # ended by an uncaught exception (the trace stops mid-step)
    error: str | None = None       # "ValueError: ..." for a crash
    terminated: bool = False       # ended by SIGTERM (the trace and records were saved first)


def validate_target(target: Target) -> None:
    """Cheap checks before any profiling: the script exists and compiles, the module is found."""
    if target.kind == "script":
        path = Path(target.name)
        if path.is_dir() or _is_zip(path):
            if not runnable_archive(path):  # `python DIR` and `python app.zip` run the __main__.py inside
                kind = "folder" if path.is_dir() else "zip archive"
                raise UserError(f"a {kind} with no __main__.py: give the script to run", target.name)
            return
        if not path.is_file():
            raise UserError("script not found", target.name)
        try:
            compile(path.read_bytes(), target.name, "exec")
        except OSError as err:
            raise UserError(f"cannot read the script: {err.strerror or err}", target.name) from None
        except (SyntaxError, ValueError) as err:  # ValueError: null bytes, before Python 3.12
            where = f" (line {err.lineno})" if getattr(err, "lineno", None) else ""
            raise UserError(f"the script does not parse: {getattr(err, 'msg', None) or err}{where}",
                            target.name) from None
    elif target.kind == "module":
        saved = list(sys.path)
        sys.path.insert(0, os.getcwd())    # where `python -m` looks first
        try:
            spec = importlib.util.find_spec(target.name)
        except (ImportError, ValueError) as err:
            raise UserError(f"cannot find module {target.name!r}: {err}") from None
        finally:
            sys.path[:] = saved
        if spec is None:
            raise UserError(f"no module named {target.name!r} (as `python -m {target.name}` would say)")


def _is_zip(path: Path) -> bool:
    try:
        return path.is_file() and zipfile.is_zipfile(path)
    except OSError:
        return False


def runnable_archive(path: Path) -> bool:
    """True for a folder or zip archive holding the `__main__.py` that `python PATH` would run."""
    if path.is_dir():
        return (path / "__main__.py").is_file()
    if not _is_zip(path):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return "__main__.py" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def run_target(target: Target) -> Outcome:
    """Run the script or module in this process and return how it ended (never raises for its errors).

    As the interpreter does at exit, the script's non-daemon threads are waited for before it counts as
    ended: a script whose main thread only starts the training thread still trains under the profiler.
    """
    saved_argv, saved_path, saved_main = list(sys.argv), list(sys.path), sys.modules.get("__main__")
    before = set(threading.enumerate())
    try:
        outcome = _run_main(target)
        try:
            _join_new_threads(before)
        except KeyboardInterrupt as exc:
            print_user_traceback(exc)
            outcome = Outcome(exit_code=130, failed=True, interrupted=True, raised=True, error="KeyboardInterrupt")
        return outcome
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


def _join_new_threads(before: set[threading.Thread]) -> None:
    for thread in threading.enumerate():
        if thread not in before and not thread.daemon and thread is not threading.current_thread():
            thread.join()


def _run_main(target: Target) -> Outcome:
    try:
        if target.kind == "script":
            sys.argv = [target.name, *target.args]
            if runnable_archive(Path(target.name)):
                sys.path[0] = target.name           # as `python DIR`: the folder itself is imported from
                runpy.run_path(target.name, run_name="__main__")
            else:
                sys.path[0] = str(Path(target.name).resolve().parent)
                _run_script(target.name)
        elif target.kind == "module":
            sys.argv = [target.name, *target.args]   # runpy puts the module's file in argv[0]
            sys.path[0] = os.getcwd()
            runpy.run_module(target.name, run_name="__main__", alter_sys=True)
        else:
            raise ValueError(f"cannot run a {target.kind} in-process")
        return Outcome()
    except SystemExit as exc:
        return _from_system_exit(exc)
    except KeyboardInterrupt as exc:
        print_user_traceback(exc)
        return Outcome(exit_code=130, failed=True, interrupted=True, raised=True, error="KeyboardInterrupt")
    except BaseException as exc:  # the user's exception, whatever it is: report it as Python would
        print_user_traceback(exc)
        return Outcome(exit_code=1, failed=True, raised=True, error=_one_line(exc))


def _run_script(name: str) -> None:
    """Execute a script as a fresh __main__, as the interpreter does: absolute __file__, argv as typed.

    (runpy.run_path would also rewrite sys.argv[0] to the absolute path, which `python x.py` does not.)
    """
    path = os.path.abspath(name)
    with open(path, "rb") as fh:
        code = compile(fh.read(), path, "exec")
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __spec__=None, __package__=None,
                         __loader__=importlib.machinery.SourceFileLoader("__main__", path),
                         __builtins__=builtins)
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def _from_system_exit(exc: SystemExit) -> Outcome:
    """Exit code of sys.exit(code) as the interpreter computes it: None 0, int n, else print and 1."""
    code = exc.code
    if code is None:
        return Outcome()
    if isinstance(code, bool) or not isinstance(code, int):
        print(code, file=sys.stderr)
        return Outcome(exit_code=1, failed=True, error=str(code))
    return Outcome(exit_code=code & 0xFF, failed=code != 0)  # what the OS keeps of exit(n)


def _one_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def user_frames(tb: TracebackType | None) -> TracebackType | None:
    """Drop the leading frames that belong to rocanalyze or runpy, so the user's code is on top."""
    while tb is not None and tb.tb_next is not None and _is_ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def _is_ours(filename: str) -> bool:
    if filename.startswith("<frozen runpy"):
        return True
    real = os.path.realpath(filename)
    return any(real.startswith(d + os.sep) for d in _OUR_DIRS)


def print_user_traceback(exc: BaseException) -> None:
    """Print `exc` as the interpreter would for an uncaught exception, starting at the user's frame."""
    tb = user_frames(exc.__traceback__)
    sys.stderr.write("".join(traceback.format_exception(type(exc), exc, tb)))
    sys.stderr.flush()
