"""Trace readers: any supported file or run folder -> one EventTable.

    from rocanalyze.traces import read
    table = read("run/trace.json.gz")          # or a folder: one run, all its traces joined

Formats are detected by content: each module in FORMATS has `sniff(head: bytes) -> bool` and
`read(path, *, progress) -> EventTable`; the first whose sniff accepts the file's first 64 KiB
(decompressed) reads it. Folders are handled in `folder.py`.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from rocanalyze.errors import UserError
from rocanalyze.traces import (
    kineto,
    rocpd,
    rocprof_compute,
    rocprof_csv,
    rocprof_json,
    rocprofv2_log,
    rocprofv3_json,
    tracelens_csv,
)
from rocanalyze.traces.schema import DeviceInfo, EventTable
from rocanalyze.traces.source import read_head

# order matters only where two sniffs could both accept: the more specific first
FORMATS: tuple[ModuleType, ...] = (rocprofv3_json, rocprof_json, kineto, rocpd, rocprof_compute, rocprof_csv,
                                   tracelens_csv, rocprofv2_log)

__all__ = ["FORMATS", "DeviceInfo", "EventTable", "detect", "read"]


def detect(path: Path) -> ModuleType | None:
    """The reader module whose sniff accepts this file, or None."""
    head = read_head(path)
    for module in FORMATS:
        if module.sniff(head):
            return module
    return None


def format_names() -> str:
    return ", ".join(m.DESCRIPTION for m in FORMATS)


def read(path: str | Path, *, progress: bool = False) -> EventTable:
    """Read a trace file or a run folder into one EventTable (times in integer ns)."""
    path = Path(path)
    if path.is_dir():
        from rocanalyze.traces.folder import read_folder

        return read_folder(path, progress=progress)
    if not path.exists():
        raise UserError("no such file or folder", path)
    if path.stat().st_size == 0:
        raise UserError("empty file: not a trace", path)
    module = detect(path)
    if module is None:
        from rocanalyze.filekind import why_not_a_trace

        why = why_not_a_trace(path, read_head(path))
        if why:
            raise UserError(f"not a trace: {why}", path)
        raise UserError(f"not a trace format rocanalyze reads (it reads: {format_names()})", path)
    table = module.read(path, progress=progress)
    if table.source_format == "kineto":
        from rocanalyze.traces.folder import use_run_record

        use_run_record(table)   # a trace.json.gz read alone, inside its run folder
    if table.metadata.get("not_a_trace"):
        raise UserError(f"{table.source_format} describes the machine but holds no events: "
                        "give the trace file or the whole output folder", path)
    return table
