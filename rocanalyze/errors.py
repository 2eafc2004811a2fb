"""The error hierarchy: every failure the user can fix is a UserError (exit 2, one line); and `say`, the
notes rocanalyze writes on stderr in the same voice."""

from __future__ import annotations

import sys


class RocanalyzeError(Exception):
    """Root of rocanalyze's own errors."""


class UserError(RocanalyzeError):
    """Bad or truncated input, unknown arch, missing tool: one line saying what, where, what to do.

    Raised where the fact is known (the reader knows the file and line); only cli.py catches it.
    """

    exit_code = 2

    def __init__(self, message: str, path: object | None = None) -> None:
        self.path = None if path is None else str(path)
        super().__init__(f"{self.path}: {message}" if self.path else message)


class RegressionFound(RocanalyzeError):
    """`compare --fail-on-regression` found a regression beyond the threshold (exit 3)."""

    exit_code = 3


class ScriptExit(RocanalyzeError):
    """The profiled script ended with this exit code; `profile` returns it unchanged."""

    def __init__(self, code: int) -> None:
        self.code = code
        super().__init__(f"script exited with {code}")


def say(line: str) -> None:
    """One `rocanalyze: ` line on stderr, flushed: the process may end (or die) right after it."""
    print(f"rocanalyze: {line}", file=sys.stderr, flush=True)
