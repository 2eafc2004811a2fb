"""`rocanalyze report` (being built: see the open issue)."""

from __future__ import annotations

from rocanalyze.errors import UserError


def command() -> None:
    """Not yet available in this build."""
    raise UserError("'report' is not available in this build yet")
