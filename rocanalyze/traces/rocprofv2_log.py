"""rocprofv2 --kernel-trace text output: `Dispatch_ID(1), GPU_ID(2), ..., Kernel_Name("..."), ...`
lines, as printed to stdout (often interleaved with the application's own prints, which are skipped).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from rocanalyze.errors import UserError
from rocanalyze.traces import dispatch, quality
from rocanalyze.traces.schema import GPU_COLUMNS, EventTable, make_frame
from rocanalyze.traces.source import open_stream

DESCRIPTION = "rocprofv2 kernel-trace text log"
_LINE = re.compile(rb"^Dispatch_ID\(\d+\), GPU_ID\(", re.M)
_FIELD = re.compile(r'(\w+)\(("(?:[^"\\]|\\.)*"|[^()]*)\)')


def sniff(head: bytes) -> bool:
    """Text with at least one rocprofv2 `Dispatch_ID(n), GPU_ID(m), ...` line."""
    return _LINE.search(head) is not None and not head.lstrip().startswith((b"{", b"["))


def read(path: Path, *, progress: bool = False) -> EventTable:
    """Dispatch lines of a rocprofv2 log -> kernels (Begin/End_Timestamp in ns)."""
    rows = []
    with open_stream(path, progress) as stream:
        for raw in stream.read().decode("utf-8", "replace").splitlines():
            if raw.startswith("Dispatch_ID("):
                rows.append({k: v.strip('"') for k, v in _FIELD.findall(raw)})
    if not rows:
        raise UserError("no rocprofv2 dispatch lines found", path)
    raw_frame = pd.DataFrame(rows).rename(columns={"Begin_Timestamp": "Start_Timestamp"})
    table = EventTable.build(source_format="rocprofv2-log", paths=[str(path)],
                             gpu=make_frame(GPU_COLUMNS, dispatch.dispatch_columns(raw_frame)))
    table.quality = quality.assess(table)
    return table
