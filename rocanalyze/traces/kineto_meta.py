"""Trace-level facts of a Kineto trace: devices (deviceProperties), rank, profiler versions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from rocanalyze.errors import UserError
from rocanalyze.traces.jsonstream import JSON_ERRORS
from rocanalyze.traces.schema import DeviceInfo

# keys copied into EventTable.metadata as they are
_KEPT = ("schemaVersion", "roctracer_version", "rocprofiler_version", "hip_runtime_version",
         "hip_driver_version", "cupti_version", "cuda_runtime_version", "cuda_driver_version",
         "record_shapes", "with_stack", "with_modules", "with_flops", "profile_memory", "traceName",
         "displayTimeUnit", "baseTimeNanoseconds", "distributedInfo", "trace_id")
_AMD_KEYS = ("roctracer_version", "rocprofiler_version", "hip_runtime_version", "hip_driver_version")
_NVIDIA_KEYS = ("cupti_version", "cuda_runtime_version", "cuda_driver_version")


def trace_metadata(rest: bytes, path: Path, meta_events: list[Any]) -> dict[str, Any]:
    """The document outside traceEvents, decoded: {'doc': {...}, 'devices': [...], 'rank': int|None}."""
    try:
        doc = msgspec.json.decode(rest) if rest.strip() else {}
    except JSON_ERRORS as exc:
        raise UserError(f"corrupt JSON outside the event array ({exc})", path) from None
    if isinstance(doc, list):
        doc = {}
    if not isinstance(doc, dict):
        raise UserError("not a Chrome/Kineto trace (top level is not an object)", path)
    dist = doc.get("distributedInfo") or {}
    rank = dist.get("rank") if isinstance(dist, dict) else None
    vendor = ("amd" if any(k in doc for k in _AMD_KEYS)
              else "nvidia" if any(k in doc for k in _NVIDIA_KEYS) else None)
    props = doc.get("deviceProperties") or []
    devices = [device_info(p, vendor) for p in props if isinstance(p, dict)]
    processes = {}
    for e in meta_events:
        if e.name == "process_name" and e.args is not None and e.args.name:
            processes[str(e.pid)] = e.args.name
    return {"doc": {k: doc[k] for k in _KEPT if k in doc}, "devices": devices,
            "rank": rank if isinstance(rank, int) else None, "vendor": vendor,
            "world_size": dist.get("world_size") if isinstance(dist, dict) else None,
            "processes": processes}


def device_info(props: dict[str, Any], vendor: str | None) -> DeviceInfo:
    """DeviceInfo from one deviceProperties entry (ROCm: warpSize 64, often no gfx name)."""
    warp = props.get("warpSize")
    if vendor is None:
        vendor = "amd" if warp == 64 else "nvidia" if warp == 32 and "NVIDIA" in str(props.get("name")) \
            else None
    major, minor = props.get("computeMajor"), props.get("computeMinor")
    arch = props.get("gcnArchName") or props.get("arch")
    if arch:
        arch = str(arch).split(":")[0]  # "gfx942:sramecc+:xnack-" -> "gfx942"
    elif vendor == "nvidia" and isinstance(major, int) and isinstance(minor, int):
        arch = f"sm_{major}{minor}"
    # ROCm's major.minor does not name the gfx target (gfx908 and gfx90a are both 9.0): left unknown
    name = props.get("name") or None
    return DeviceInfo(
        index=int(props.get("id", 0) or 0), name=name, arch=arch, vendor=vendor,
        compute_units=props.get("numSms"), wave_size=warp, compute_major=major, compute_minor=minor,
        memory_bytes=props.get("totalGlobalMem"), l2_bytes=props.get("l2CacheSize"),
        clock_khz=props.get("clockRate"),
        extra={k: v for k, v in props.items()
               if k in ("maxThreadsPerBlock", "maxThreadsPerMultiprocessor", "regsPerBlock",
                        "sharedMemPerBlock", "maxSharedMemoryPerMultiProcessor", "sharedMemPerBlockOptin",
                        "sharedMemPerMultiprocessor", "regsPerMultiprocessor")})
