"""The command list: one module per command, each exposing `command` (its docstring is the --help)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rocanalyze.commands import analyze, ceilings, classify, compare, occupancy, profile, report

# (name, function, click context settings). `profile` passes unknown options through to the script.
COMMANDS: list[tuple[str, Callable[..., Any], dict[str, Any]]] = [
    ("profile", profile.command, {"allow_extra_args": True, "ignore_unknown_options": True,
                                  "allow_interspersed_args": False}),
    ("analyze", analyze.command, {}),
    ("report", report.command, {}),
    ("compare", compare.command, {}),
    ("occupancy", occupancy.command, {}),
    ("ceilings", ceilings.command, {}),
    ("classify", classify.command, {}),
]
