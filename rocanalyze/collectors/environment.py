"""env.json: the version context of a run (torch, HIP/CUDA, ROCm, Triton, driver, GPUs) and its knobs.

Only allowlisted variables are recorded (rocanalyze/data/environment.toml), and values that look
like secrets are redacted: env.json is meant to be pasted into PRs.
"""

from __future__ import annotations

import fnmatch
import platform
import re
import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from rocanalyze._version import __version__
from rocanalyze.paths import load_data_toml

REDACTED = "<redacted>"


@lru_cache(maxsize=1)
def _rules() -> dict[str, Any]:
    return load_data_toml("environment.toml")


def allowed_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The allowlisted variables of `environ`, secrets redacted, sorted by name."""
    patterns = [entry["pattern"] for entry in _rules()["variables"]["allow"]]
    return {name: redact(name, environ[name]) for name in sorted(environ)
            if any(fnmatch.fnmatchcase(name, p) for p in patterns)}


def redact(name: str, value: str) -> str:
    """`value` as it may be published: REDACTED for secret-looking names or values, URL passwords cut."""
    rules = _rules()["redact"]
    upper = name.upper()
    if any(word in upper for word in rules["name_contains"]):
        return REDACTED
    value = re.sub(rules["url_credentials"], lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", value)
    if any(re.search(p, value) for p in rules["value_patterns"]):
        return REDACTED
    return value


def read_sysctls(root: Path = Path("/proc/sys")) -> dict[str, str | None]:
    """The kernel settings named in environment.toml; None where unreadable (not Linux, no access)."""
    out: dict[str, str | None] = {}
    for key in _rules()["sysctl"]:
        try:
            out[key.replace("/", ".")] = (root / key).read_text().strip()
        except OSError:
            out[key.replace("/", ".")] = None
    return out


def rocm_version(roots: tuple[str, ...] = ("/opt/rocm",)) -> str | None:
    """ROCm version from <root>/.info/version (e.g. '6.4.1-83'), or None."""
    for root in roots:
        try:
            return Path(root, ".info", "version").read_text().strip()
        except OSError:
            continue
    return None


def driver_version() -> dict[str, str]:
    """Kernel driver versions: amdgpu module and/or the NVIDIA driver, where the files exist."""
    out: dict[str, str] = {}
    for key, path in (("amdgpu", "/sys/module/amdgpu/version"), ("nvidia", "/proc/driver/nvidia/version")):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        out[key] = nvidia_driver_version(text) if key == "nvidia" else text.splitlines()[0]
    return out


def nvidia_driver_version(banner: str) -> str:
    """The version in /proc/driver/nvidia/version: the first dotted number after 'Kernel Module'.

    The proprietary module writes 'Kernel Module  570.86.15', the open one 'Open Kernel Module for
    x86_64  580.159.04': the word after 'Module' is not always the version.
    """
    match = re.search(r"Kernel Module\b.*?\s(\d+\.\d+(?:\.\d+)*)\b", banner)
    return match.group(1) if match else banner.splitlines()[0]


def torch_facts(torch: Any) -> dict[str, Any]:
    """torch build, backend versions, math flags and one record per visible GPU."""
    cuda = torch.cuda
    facts: dict[str, Any] = {
        "version": torch.__version__,
        "hip": getattr(torch.version, "hip", None),
        "cuda": getattr(torch.version, "cuda", None),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
        "gpu_available": bool(cuda.is_available()),
        "gpus": [],
    }
    if facts["gpu_available"]:
        facts["gpus"] = [_gpu_record(cuda.get_device_properties(i), i) for i in range(cuda.device_count())]
    return facts


def _gpu_record(props: Any, index: int) -> dict[str, Any]:
    arch = getattr(props, "gcnArchName", None) or f"sm_{props.major}{props.minor}"
    return {"index": index, "name": props.name, "arch": arch.split(":")[0], "arch_full": arch,
            "compute_units": props.multi_processor_count, "memory_bytes": int(props.total_memory),
            "compute_capability": f"{props.major}.{props.minor}",
            "l2_bytes": getattr(props, "L2_cache_size", None),
            "warp_size": getattr(props, "warp_size", None)}


def module_version(name: str, distributions: tuple[str, ...] = ()) -> str | None:
    """`name.__version__` when imported, else the installed distribution's version (never imported here)."""
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__version__", None):
        return str(module.__version__)
    from importlib import metadata

    for dist in distributions or (name,):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def capture_environment(environ: Mapping[str, str], torch: Any | None = None) -> dict[str, Any]:
    """env.json content: versions, GPUs, allowlisted variables (redacted), sysctls."""
    return {
        "rocanalyze": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch_facts(torch) if torch is not None else None,
        # ROCm wheels ship Triton as pytorch-triton-rocm, CUDA ones as triton (or pytorch-triton)
        "triton": module_version("triton", ("triton", "pytorch-triton-rocm", "pytorch-triton")),
        "rocm": rocm_version(),
        "driver": driver_version(),
        "sysctl": read_sysctls(),
        "variables": allowed_variables(environ),
    }
