"""Which GPU a trace ran on, and its roofline ceilings: `select_gpu` -> `GpuSpec`.

Facts come from rocanalyze/data/gpus.toml (a source per figure). The choice is made, in order, from
`--gpu NAME`, the device name the trace records, or its architecture (DeviceInfo.arch, or
computeMajor/Minor as torch records them on ROCm) narrowed by CU count and memory size. When a choice
is a guess it says so: `GpuSpec.assumed` is True and `GpuSpec.notes` names the alternatives. A peaks
file written by `rocanalyze ceilings` replaces datasheet peaks with measured ones.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from rocanalyze.errors import UserError
from rocanalyze.paths import load_data_toml
from rocanalyze.traces.schema import DeviceInfo

PEAK_DTYPES = ("fp64", "fp32", "fp32_matrix", "tf32", "fp16", "bf16", "fp8", "int8")
PEAKS_FORMAT = "rocanalyze-peaks"


@dataclass
class GpuSpec:
    """One GPU's ceilings: peaks in TFLOP/s (TOP/s for int8), bandwidth in GB/s, sizes in KiB/MiB."""

    name: str
    key: str = ""
    arch: str | None = None
    vendor: str | None = None
    compute_units: int | None = None
    clock_mhz: float | None = None
    peak_tflops: dict[str, float] = field(default_factory=dict)
    memory_bw_gbps: float | None = None
    memory_gib: float | None = None
    lds_kib: float | None = None
    l2_mib: float | None = None
    wave_size: int | None = None
    grid_min_workgroups: int | None = None
    source: str = ""
    sources: dict[str, str] = field(default_factory=dict)
    assumed: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict the reports draw the roofline ceilings from."""
        return dataclasses.asdict(self)

    @property
    def known(self) -> bool:
        return bool(self.peak_tflops) or self.memory_bw_gbps is not None

    def grid_threshold(self) -> int | None:
        """Fewest workgroups a GEMM grid should have on this part (seed 001), or None when unknown."""
        return self.grid_min_workgroups or self.compute_units


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return load_data_toml("gpus.toml")


def gpu_entries() -> list[dict[str, Any]]:
    """Every [[gpu]] record of gpus.toml, as written."""
    return list(_table()["gpu"])


def known_names() -> list[str]:
    return [entry["key"] for entry in gpu_entries()]


def source_of(entry: dict[str, Any], figure: str) -> str | None:
    """The [sources] id that backs `figure` ("clock_mhz", "peak_tflops.fp16") of a table entry."""
    sources = entry.get("sources", {})
    if figure in sources:
        return sources[figure]
    head = figure.split(".", 1)[0]
    return sources.get(head)


def spec_from_entry(entry: dict[str, Any]) -> GpuSpec:
    """A GpuSpec built from one gpus.toml record, with the title/URL of each figure's source."""
    table_sources = _table()["sources"]
    figures = ["arch", "compute_units", "clock_mhz", "memory_gib", "memory_bw_gbps", "lds_kib", "l2_mib",
               "wave_size", "grid_min_workgroups"]
    figures += [f"peak_tflops.{d}" for d in entry.get("peak_tflops", {})]
    cited: dict[str, str] = {}
    for fig in figures:
        value = entry.get(fig) if "." not in fig else entry["peak_tflops"].get(fig.split(".", 1)[1])
        sid = source_of(entry, fig)
        if value is not None and sid:
            src = table_sources[sid]
            cited[fig] = f"{src['title']} <{src['url']}>"
    main = source_of(entry, "peak_tflops") or source_of(entry, "compute_units") or ""
    main_src = table_sources.get(main, {})
    return GpuSpec(
        name=entry["name"], key=entry["key"], arch=entry.get("arch"), vendor=entry.get("vendor"),
        compute_units=entry.get("compute_units"), clock_mhz=entry.get("clock_mhz"),
        peak_tflops={d: float(v) for d, v in entry.get("peak_tflops", {}).items()},
        memory_bw_gbps=entry.get("memory_bw_gbps"), memory_gib=entry.get("memory_gib"),
        lds_kib=entry.get("lds_kib"), l2_mib=entry.get("l2_mib"), wave_size=entry.get("wave_size"),
        grid_min_workgroups=entry.get("grid_min_workgroups"),
        source=f"gpus.toml '{entry['key']}': {main_src.get('title', '')} <{main_src.get('url', '')}>",
        sources=cited, notes=list(entry.get("notes", [])))


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def find_by_name(name: str) -> dict[str, Any] | None:
    """The table entry whose key or longest `match` pattern occurs in `name` (case, spaces ignored)."""
    want = _norm(name)
    best: tuple[int, dict[str, Any]] | None = None
    for entry in gpu_entries():
        if want == _norm(entry["key"]) or want == _norm(entry["name"]):
            return entry
        for pattern in entry.get("match", []):
            if _norm(pattern) in want and (best is None or len(_norm(pattern)) > best[0]):
                best = (len(_norm(pattern)), entry)
    return best[1] if best else None


def _vendor(dev: DeviceInfo) -> str | None:
    if dev.vendor:
        return dev.vendor.lower()
    name = (dev.name or "").lower()
    if "nvidia" in name:
        return "nvidia"
    if "amd" in name or "radeon" in name or "instinct" in name or (dev.arch or "").startswith("gfx"):
        return "amd"
    if (dev.arch or "").startswith("sm_"):
        return "nvidia"
    if dev.wave_size == 64:
        return "amd"  # only AMD CDNA/GCN parts run 64-wide waves
    return None


def _candidates(dev: DeviceInfo) -> list[dict[str, Any]]:
    """Table entries that match the device's arch, or its compute capability (and vendor when known)."""
    vendor = _vendor(dev)
    out = []
    for entry in gpu_entries():
        if vendor and entry["vendor"] != vendor:
            continue
        if dev.arch:
            if entry.get("arch") == dev.arch.split(":", 1)[0]:
                out.append(entry)
        elif dev.compute_major is not None and entry.get("compute_capability") == [dev.compute_major,
                                                                                 dev.compute_minor or 0]:
            out.append(entry)
    return out


def _narrow(dev: DeviceInfo, cands: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Candidates left after CU count, memory size and wave size, and which facts decided."""
    used = []
    if dev.compute_units:
        same = [c for c in cands if c.get("compute_units") == dev.compute_units]
        if same:
            cands, used = same, used + [f"{dev.compute_units} CUs"]
    if len(cands) > 1 and dev.memory_bytes:
        gib = dev.memory_bytes / 2**30
        near = [c for c in cands
                if c.get("memory_gib") and abs(gib - c["memory_gib"]) / c["memory_gib"] < 0.08]
        if near:
            cands, used = near, used + [f"{gib:.0f} GiB memory"]
    if len(cands) > 1 and dev.clock_khz:
        mhz = dev.clock_khz / 1e3
        near = [c for c in cands if c.get("clock_mhz") and abs(mhz - c["clock_mhz"]) / c["clock_mhz"] < 0.03]
        if near:
            cands, used = near, used + [f"{mhz:.0f} MHz max clock"]
    if len(cands) > 1 and dev.wave_size:
        same = [c for c in cands if c.get("wave_size") == dev.wave_size]
        if same:
            cands, used = same, used + [f"wave size {dev.wave_size}"]
    return cands, ", ".join(used)


def _describe(dev: DeviceInfo) -> str:
    facts = [f"name {dev.name!r}" if dev.name else "", f"arch {dev.arch}" if dev.arch else "",
             f"compute capability {dev.compute_major}.{dev.compute_minor}" if dev.compute_major is not None
             else "", f"{dev.compute_units} CUs" if dev.compute_units else "",
             f"wave size {dev.wave_size}" if dev.wave_size else "",
             f"{dev.clock_khz / 1e3:.0f} MHz" if dev.clock_khz else ""]
    return ", ".join(f for f in facts if f) or "nothing"


def _from_device(dev: DeviceInfo) -> GpuSpec:
    """The spec for one traced device, with notes on how it was chosen."""
    if dev.name and (entry := find_by_name(dev.name)):
        spec = spec_from_entry(entry)
        spec.notes.insert(0, f"GPU chosen by the device name the trace records ({dev.name!r}).")
        return _check_partition(spec, dev)
    cands = _candidates(dev)
    if not cands:
        return _unknown(f"the trace's device ({_describe(dev)}) matches no GPU in the table; pass --gpu NAME "
                        f"(one of: {', '.join(known_names())}) for roofline efficiencies")
    narrowed, used = _narrow(dev, cands)
    if len(narrowed) == 1:
        spec = spec_from_entry(narrowed[0])
        spec.notes.insert(0, f"GPU chosen from the trace's {_describe(dev)}" + (f" ({used} decided)." if used
                                                                                else "."))
        return _check_partition(spec, dev)
    default = next((c for c in narrowed if c.get("default_for_arch")), narrowed[0])
    spec = spec_from_entry(default)
    spec.assumed = True
    fits = ", ".join(c["name"] for c in narrowed)
    spec.notes.insert(0, f"The trace gives {_describe(dev)}: that fits {fits}; "
                         f"assumed {default['name']}. Pass --gpu NAME if that is wrong.")
    return _check_partition(spec, dev)


def _check_partition(spec: GpuSpec, dev: DeviceInfo) -> GpuSpec:
    """Scale compute peaks when the device reports fewer CUs than the part has (a compute partition)."""
    if dev.compute_units and spec.compute_units and dev.compute_units < spec.compute_units:
        ratio = dev.compute_units / spec.compute_units
        spec.peak_tflops = {d: round(v * ratio, 1) for d, v in spec.peak_tflops.items()}
        spec.notes.append(f"The device reports {dev.compute_units} of {spec.name}'s {spec.compute_units} CUs "
                          f"(a compute partition or a cut-down part): compute peaks scaled by {ratio:.3f}; "
                          "memory bandwidth left at the whole part's figure.")
        spec.compute_units = dev.compute_units
        spec.assumed = True
    return spec


def _unknown(why: str) -> GpuSpec:
    return GpuSpec(name="unknown GPU", assumed=True, notes=[why], source="none")


def select_gpu(devices: list[DeviceInfo], override: str | None = None,
               peaks_file: str | Path | None = None) -> GpuSpec:
    """GpuSpec for a trace: `--gpu` override, else the trace's first device; measured peaks on top."""
    if override:
        entry = find_by_name(override)
        if entry is None:
            raise UserError(f"unknown GPU '{override}' for --gpu: use one of {', '.join(known_names())}")
        spec = spec_from_entry(entry)
        spec.notes.insert(0, f"GPU set by --gpu {override}.")
    elif devices:
        spec = _from_device(devices[0])
        others = {d.name or _describe(d) for d in devices[1:]} - {devices[0].name or _describe(devices[0])}
        if others:
            spec.notes.append(f"The trace lists other GPUs too ({', '.join(sorted(others))}); "
                              f"ceilings are those of device {devices[0].index}.")
    else:
        spec = _unknown("the trace records no GPU properties; pass --gpu NAME "
                        f"(one of: {', '.join(known_names())}) for roofline efficiencies")
    if peaks_file is not None:
        spec = apply_peaks(spec, read_peaks(peaks_file), str(peaks_file))
    return spec


def read_peaks(path: str | Path) -> dict[str, Any]:
    """A peaks JSON as `rocanalyze ceilings` writes it, checked; UserError naming the file when it is not."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError("peaks file not found: run 'rocanalyze ceilings -o FILE' on the GPU first",
                        path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"not a peaks JSON ({err}): expected the file 'rocanalyze ceilings' writes",
                        path) from None
    if not isinstance(data, dict) or data.get("format") != PEAKS_FORMAT:
        raise UserError(f"not a peaks JSON: expected \"format\": \"{PEAKS_FORMAT}\" "
                        "(the file 'rocanalyze ceilings' writes)", path)
    peaks = data.get("peak_tflops", {})
    bad = [k for k, v in peaks.items() if k not in PEAK_DTYPES or not isinstance(v, (int, float)) or v <= 0]
    if bad or not isinstance(peaks, dict):
        raise UserError(f"peak_tflops has unknown dtypes or non-positive values: {bad}; "
                        f"dtypes are {', '.join(PEAK_DTYPES)}", path)
    bw = data.get("memory_bw_gbps")
    if bw is not None and (not isinstance(bw, (int, float)) or bw <= 0):
        raise UserError("memory_bw_gbps must be a positive number (GB/s)", path)
    return data


def apply_peaks(spec: GpuSpec, peaks: dict[str, Any], origin: str) -> GpuSpec:
    """`spec` with the measured peaks and bandwidth of a peaks JSON in place of the datasheet's."""
    if not spec.known and (name := (peaks.get("device") or {}).get("name")) and (entry := find_by_name(name)):
        notes = spec.notes
        spec = spec_from_entry(entry)
        spec.notes = notes + [f"GPU taken from the peaks file's device name ({name!r})."]
    measured_on = (peaks.get("device") or {}).get("name")
    other = find_by_name(measured_on) if measured_on else None
    if spec.known and other is not None and other["key"] != spec.key:
        spec.notes.append(f"The peaks file was measured on {measured_on!r}, not on this trace's {spec.name}: "
                          "its ceilings may not fit this run.")
    replaced = []
    for dtype, value in peaks.get("peak_tflops", {}).items():
        old = spec.peak_tflops.get(dtype)
        spec.peak_tflops[dtype] = float(value)
        spec.sources[f"peak_tflops.{dtype}"] = f"measured: {origin}"
        replaced.append(f"{dtype} {value:.1f}" + (f" (datasheet {old:.1f})" if old else ""))
    if peaks.get("memory_bw_gbps"):
        old = spec.memory_bw_gbps
        spec.memory_bw_gbps = float(peaks["memory_bw_gbps"])
        spec.sources["memory_bw_gbps"] = f"measured: {origin}"
        replaced.append(f"memory {spec.memory_bw_gbps:.0f} GB/s" + (f" (datasheet {old:.0f})" if old else ""))
    spec.source = f"{spec.source}; measured peaks from {origin}"
    spec.notes.append(f"Measured ceilings from {origin}: " + ", ".join(replaced) + ".")
    return spec
