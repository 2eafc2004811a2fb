"""Where shipped data lives: data files and templates are loaded through importlib.resources."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def read_data_text(name: str) -> str:
    """Text of a file in rocanalyze/data (arch table, kernel rules, GPU table, recommendation rules)."""
    return resources.files("rocanalyze.data").joinpath(name).read_text(encoding="utf-8")


def load_data_toml(name: str) -> dict[str, Any]:
    return tomllib.loads(read_data_text(name))


def read_template(name: str) -> str:
    """A template of the HTML report: package data when installed, the top-level templates/ folder when
    rocanalyze runs from a source checkout on PYTHONPATH (the install maps templates/ into the package)."""
    try:
        folder = resources.files("rocanalyze.templates")
    except ModuleNotFoundError:
        folder = Path(__file__).resolve().parent.parent / "templates"
    return folder.joinpath(name).read_text(encoding="utf-8")
