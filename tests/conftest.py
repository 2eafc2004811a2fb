"""Shared fixtures: real data by path, never copied into the project."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
REALDATA = ROOT.parent / "shared" / "realdata"
REALDATA_ABSENT = f"../shared/realdata is absent ({REALDATA}); CI always has it"  # the one skip reason


def data_path(*parts: str) -> Path:
    """A committed fixture under tests/data; fails loudly when it is missing."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"test fixture missing: {path}")
    return path


def realdata_path(*parts: str) -> Path:
    """A file in ../shared/realdata; skips (with the reason) where that folder is absent."""
    if not REALDATA.is_dir():
        pytest.skip(REALDATA_ABSENT)
    path = REALDATA.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"realdata file missing: {path}")
    return path
