"""The analyzer table: every entry resolves to a real function, and docs/analyze.md names each one."""

from __future__ import annotations

import importlib

import pytest

from rocanalyze.analysis import ANALYZERS
from tests.conftest import ROOT


@pytest.mark.parametrize("entry", ANALYZERS, ids=lambda a: a.name)
def test_entry_resolves_and_is_documented(entry):
    module, func = entry.function.split(":")
    assert callable(getattr(importlib.import_module(module), func))
    assert entry.name in (ROOT / "docs" / "analyze.md").read_text()
