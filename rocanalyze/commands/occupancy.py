"""`rocanalyze occupancy` (being built: see the open issue)."""

from __future__ import annotations

from rocanalyze.errors import UserError


def command() -> None:
    """Not yet available in this build."""
    raise UserError("'occupancy' is not available in this build yet")
