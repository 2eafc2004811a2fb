"""What a refused input is, and which command reads it: the second half of a "not a trace" error.

`analyze` reads traces and `occupancy` reads kernel files; each is easily handed the other's input.
A profiler's output folder also holds files beside the trace that are no trace themselves (the
machine description, thread-trace samples, the tables of a rocprof-compute workload). Naming the
file's kind and the right command beats listing every format the reader knows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from rocanalyze.errors import UserError

_ROCMINFO = ("HSA System Attributes", "CMD: rocminfo")
_ATT_FILE = re.compile(r"^(att_output\.csv|stats_ui_output_agent_\d+_dispatch_\d+\.csv)$")
_ATT_FOLDER = re.compile(r"^ui_output_agent_\d+_dispatch_\d+$")
_COMPUTE_PERF = ("pmc_perf.csv", "pmc_perf.csv.gz")


def kernel_file_kind(head: bytes) -> str | None:
    """'AMDGCN assembly' and the like when `head` (the file's first bytes) is a kernel file, else None."""
    from rocanalyze.occupancy import asm, codeobject, triton

    if head.startswith(codeobject.ELF_MAGIC):
        machine = int.from_bytes(head[18:20], "little") if len(head) > 20 else 0
        return "an AMDGPU code object" if machine == codeobject.EM_AMDGPU else None
    if codeobject.sniff(head):
        return "a clang offload bundle (AMDGPU code objects)"
    text = head.decode("utf-8", "ignore")
    if asm.sniff(text):
        return "AMDGCN assembly"
    if triton.sniff_ttgir(text):
        return "a Triton TTGIR dump"
    if text.lstrip().startswith("{"):
        try:
            if triton.is_metadata(json.loads(text)):
                return "Triton kernel metadata"
        except ValueError:
            return None  # cut at the head size, or not JSON: not a small metadata file
    return None


def trace_kind(path: Path) -> str | None:
    """The trace reader's description when a trace reader accepts `path`, else None."""
    from rocanalyze.traces import detect

    try:
        module = detect(path)
    except UserError:
        return None
    return re.sub(r"\s*\([^()]*\)", "", module.DESCRIPTION) if module is not None else None  # no file patterns


def beside_trace_kind(path: Path, head: bytes) -> str | None:
    """What a non-trace file from a profiler's output folder is, with where its trace is; else None."""
    text = head.decode("utf-8", "ignore")
    if any(marker in text for marker in _ROCMINFO):
        return ("rocminfo output (the machine, no events): give the trace beside it, "
                f"or the whole folder {path.parent}")
    if any((path.parent / name).is_file() for name in _COMPUTE_PERF) and path.name not in _COMPUTE_PERF:
        return f"one file of a rocprof-compute workload: give its folder {path.parent}"
    if _ATT_FILE.match(path.name) or _ATT_FOLDER.match(path.parent.name):
        return ("rocprofv3 thread-trace (ATT) output: instruction samples of single dispatches, no kernel "
                "timeline; give the kernel trace or results file of the same run")
    return None


def why_not_a_trace(path: Path, head: bytes) -> str | None:
    """For `analyze`: what this non-trace file is and what reads it, or None when it is unknown."""
    kind = kernel_file_kind(head)
    if kind:
        return f"it is {kind}, a kernel file: `rocanalyze occupancy {path}` reads it"
    beside = beside_trace_kind(path, head)
    return f"it is {beside}" if beside else None


def why_not_a_kernel_file(path: Path) -> str | None:
    """For `occupancy`: what this non-kernel file is and what reads it, or None when it is unknown."""
    kind = trace_kind(path)
    if kind is None:
        return None
    return (f"it is a trace ({kind}): `rocanalyze analyze {path}` reads it, and gives each kernel's "
            "occupancy where the trace recorded its registers")
