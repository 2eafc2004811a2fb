"""GPU agents from rocminfo's text, as rocprof v1 saves it beside its results (`results.sysinfo.txt`).

The file is not a trace (the folder reader skips it as one), but in a rocprof folder it is the only
record of which GPU ran: its agents give the gfx target, marketing name, CU count and wave size.
"""

from __future__ import annotations

import re
from pathlib import Path

from rocanalyze.traces.schema import DeviceInfo

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_AGENT = re.compile(r"^\*{5,}\s*$\s*^Agent \d+\s*$", re.M)
_FIELD = re.compile(r"^\s{0,4}([A-Za-z][A-Za-z .()]*?):\s+(.*?)\s*$", re.M)


def devices_from_rocminfo(text: str) -> list[DeviceInfo]:
    """One DeviceInfo per GPU agent in rocminfo output (empty when there is none)."""
    text = _ANSI.sub("", text)
    out: list[DeviceInfo] = []
    for block in _AGENT.split(text)[1:]:
        fields: dict[str, str] = {}
        for key, value in _FIELD.findall(block):
            fields.setdefault(key.strip(), value)  # the agent's own fields come before its ISA list
        if fields.get("Device Type") != "GPU":
            continue
        arch = fields.get("Name", "")
        out.append(DeviceInfo(index=len(out), name=fields.get("Marketing Name") or None,
                              arch=arch if arch.startswith("gfx") else None, vendor="amd",
                              compute_units=_int(fields.get("Compute Unit")),
                              wave_size=_int(fields.get("Wavefront Size")),
                              clock_khz=(_int(fields.get("Max Clock Freq. (MHz)")) or 0) * 1000 or None))
    return out


def devices_from_folder(root: Path) -> list[DeviceInfo]:
    """GPU agents from the first rocminfo dump (`*sysinfo.txt`) under `root`."""
    for path in sorted(root.rglob("*sysinfo.txt")):
        devices = devices_from_rocminfo(path.read_text(errors="replace"))
        if devices:
            return devices
    return []


def _int(value: str | None) -> int | None:
    m = re.match(r"\s*(\d+)", value or "")
    return int(m.group(1)) if m else None
