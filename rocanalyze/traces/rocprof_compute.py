"""rocprof-compute (Omniperf) workload folders: sysinfo.csv describes the GPU.

The dispatches with their counters are in pmc_perf.csv, read by rocprof_csv (its header is a
rocprof dispatch header); this module reads sysinfo.csv, which is not a trace on its own and
gives the folder its DeviceInfo (gpu_arch, CUs, wave size).
"""

from __future__ import annotations

from pathlib import Path

from rocanalyze.errors import UserError
from rocanalyze.traces.rocprof_csv import header, load
from rocanalyze.traces.schema import DeviceInfo, EventTable

DESCRIPTION = "rocprof-compute workload (pmc_perf.csv + sysinfo.csv)"
_SYSINFO = {"workload_name", "gpu_arch", "cu_per_gpu"}


def sniff(head: bytes) -> bool:
    """rocprof-compute's sysinfo.csv header."""
    return _SYSINFO <= set(header(head))


def _int(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def read(path: Path, *, progress: bool = False) -> EventTable:
    """DeviceInfo from sysinfo.csv (an EventTable with no events, marked not_a_trace)."""
    rows = load(path)
    if not len(rows):
        raise UserError("sysinfo.csv without its row (cut short?): re-copy the workload folder", path)
    row = rows.iloc[0].to_dict()
    device = DeviceInfo(index=0, name=str(row.get("gpu_model") or "") or None,
                        arch=str(row.get("gpu_arch") or "") or None, vendor="amd",
                        compute_units=_int(row.get("cu_per_gpu")), wave_size=_int(row.get("wave_size")),
                        l2_bytes=(_int(row.get("gpu_l2")) or 0) * 1024 or None,
                        clock_khz=(_int(row.get("max_sclk")) or 0) * 1000 or None,
                        extra={k: row.get(k) for k in ("gpu_series", "rocm_version", "num_xcd",
                                                       "compute_partition", "memory_partition")})
    return EventTable.build(source_format="rocprof-compute-sysinfo", paths=[str(path)], devices=[device],
                            metadata={"not_a_trace": True, "workload": row.get("workload_name"),
                                      "command": row.get("command")})
