"""Every real trace, damaged the ways copies and crashes damage files, is analyzed or refused in one line.

A cut (a copy that stopped, a profiler killed mid-write) and flipped bytes (a bad disk or transfer) must
end in a report or a UserError (exit 2), never another exception (exit 1, a traceback). Seeded: the
same damage every run. Before this test, flipped bytes found two tracebacks (invalid UTF-8 inside a JSON
string; inside an SQLite schema).
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from rocanalyze.analysis.build import analyze_table
from rocanalyze.errors import UserError
from rocanalyze.traces import detect, read
from tests.conftest import REALDATA, REALDATA_ABSENT, realdata_path

pytestmark = pytest.mark.realdata

MAX_BYTES = 30_000_000  # the two largest traces would only repeat the JSON reader's cases, slowly


def _trace_files() -> list:
    if not REALDATA.is_dir():
        return [pytest.param("", marks=pytest.mark.skip(reason=REALDATA_ABSENT))]
    return [str(p.relative_to(REALDATA)) for p in sorted(REALDATA.rglob("*"))
            if p.is_file() and p.stat().st_size < MAX_BYTES and detect(p) is not None]


def _damaged(data: bytes, seed: str) -> dict[str, bytes]:
    rng = random.Random(seed)
    flipped = bytearray(data)
    for _ in range(20):
        flipped[rng.randrange(len(flipped))] = rng.randrange(256)
    out = {"cut": data[: len(data) // 3], "flipped": bytes(flipped)}
    if data[:2] == b"\x1f\x8b":  # a gzip whose content was cut before it was compressed: a valid stream
        text = gzip.decompress(data)
        out["cut_inside"] = gzip.compress(text[: len(text) * 3 // 5], compresslevel=1)
    return out


@pytest.mark.parametrize("rel", _trace_files())
def test_damaged_trace_is_analyzed_or_refused_in_one_line(rel: str, tmp_path: Path) -> None:
    source = realdata_path(*rel.split("/"))
    for kind, blob in _damaged(source.read_bytes(), rel).items():
        path = tmp_path / kind / source.name
        path.parent.mkdir()
        path.write_bytes(blob)
        try:
            analyze_table(read(path), allow_empty=True)
        except UserError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(path)), (kind, str(exc))
