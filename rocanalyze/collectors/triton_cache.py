"""Triton capture: which compiled Triton kernels ran, their cache artifacts copied into RUN/triton/.

Triton's cache is left where it is (clearing it would recompile everything and distort the run).
In-process, every `triton.compiler.CompiledKernel` still alive after the script is found through
the garbage collector: its `metadata_group` names the exact cache files, and a loaded module
(`_init_handles` ran) means it was launched, which also gives the driver's register count. The
kernel names in the trace then keep only the kernels that ran in the profiled window. Kernels not
found in-process (another process compiled them) are matched in the cache by name, newest first.
"""

from __future__ import annotations

import csv
import gc
import gzip
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

# Artifacts worth keeping: metadata, IRs, ISA and the code object. Launcher .so/.c are not.
KEEP_SUFFIXES = (".json", ".ttir", ".ttgir", ".llir", ".amdgcn", ".hsaco", ".ptx", ".cubin", ".source")


@dataclass
class TritonKernel:
    """One compiled Triton kernel: its name, cache hash, artifacts and what the driver said."""

    name: str
    hash: str
    files: dict[str, str]                  # artifact file name -> path in the cache
    metadata: dict[str, Any] = field(default_factory=dict)
    n_regs: int | None = None              # driver's register count (NVIDIA: per thread; AMD: VGPRs)
    n_spills: int | None = None
    launched: bool = False                 # its module was loaded on the device
    found_by: str = "process"              # "process" | "cache"


def cache_dir(environ: dict[str, str] | os._Environ[str] | None = None) -> Path:
    """Triton's cache folder: $TRITON_CACHE_DIR, else ~/.triton/cache (Triton's own default)."""
    env = os.environ if environ is None else environ
    return Path(env.get("TRITON_CACHE_DIR") or Path.home() / ".triton" / "cache")


def loaded_kernels() -> list[TritonKernel]:
    """Triton kernels alive in this process (empty when the script never imported triton).

    Two kinds of objects: triton's CompiledKernel (names its cache files), and Inductor's
    StaticallyLaunched*Kernel, which launches the cubin/hsaco itself and holds the driver's
    register count but no file names (attach_cache_files finds them by hash).
    """
    if "triton" not in sys.modules:
        return []
    out: dict[str, TritonKernel] = {}
    static: list[TritonKernel] = []
    for obj in gc.get_objects():
        cls = type(obj)
        if cls.__name__ == "CompiledKernel" and cls.__module__.startswith("triton"):
            kernel = _from_compiled(obj)
            if kernel is not None:
                previous = out.get(kernel.hash)
                if previous is None or (kernel.launched and not previous.launched):
                    out[kernel.hash] = kernel
        elif cls.__name__.startswith("StaticallyLaunched") and cls.__module__.startswith("torch._inductor"):
            kernel = _from_static(obj)
            if kernel is not None:
                static.append(kernel)
    for kernel in static:                    # the driver's counts onto the CompiledKernel of the same hash
        twin = out.get(kernel.hash)
        if twin is None:
            out[kernel.hash] = kernel
        elif kernel.launched:
            twin.n_regs, twin.n_spills, twin.launched = kernel.n_regs, kernel.n_spills, True
    return sorted(out.values(), key=lambda k: (k.name, k.hash))


def _from_static(obj: Any) -> TritonKernel | None:
    """A TritonKernel from Inductor's static launcher (no files; n_regs once the kernel is loaded)."""
    name, khash = getattr(obj, "name", None), getattr(obj, "hash", None)
    if not name or not khash:
        return None
    return TritonKernel(name=str(name), hash=str(khash), files={},
                        metadata={"name": name, "num_warps": getattr(obj, "num_warps", None),
                                  "shared": getattr(obj, "shared", None)},
                        n_regs=_int_or_none(getattr(obj, "n_regs", None)),
                        n_spills=_int_or_none(getattr(obj, "n_spills", None)),
                        launched=getattr(obj, "function", None) is not None, found_by="static-launcher")


def _from_compiled(obj: Any) -> TritonKernel | None:
    """A TritonKernel from a live CompiledKernel: the cache's metadata JSON is the canonical metadata."""
    group = getattr(obj, "metadata_group", None) or {}
    name = getattr(obj, "name", None)
    if not name or not group:
        return None
    files = {Path(p).name: str(p) for p in group.values()}
    try:
        meta = json.loads(Path(files[f"{name}.json"]).read_text())
    except (KeyError, OSError, json.JSONDecodeError):
        meta = {}
    return TritonKernel(name=str(name), hash=str(getattr(obj, "hash", "") or meta.get("hash", "")), files=files,
                        metadata=meta, n_regs=_int_or_none(getattr(obj, "n_regs", None)),
                        n_spills=_int_or_none(getattr(obj, "n_spills", None)),
                        launched=getattr(obj, "module", None) is not None)


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def find_in_cache(names: set[str], root: Path) -> list[TritonKernel]:
    """Cache entries (root/<key>/<name>.json) for the given kernel names, the newest entry per name."""
    out: list[TritonKernel] = []
    for name, paths in sorted(_index_cache(root, names).items()):
        kernel = _cache_entry(name, paths[0])
        if kernel is not None:
            out.append(kernel)
    return out


def attach_cache_files(kernels: list[TritonKernel], root: Path) -> None:
    """Give kernels known without files (static launcher) their cache entry: same hash, else newest."""
    bare = [k for k in kernels if not k.files]
    index = _index_cache(root, {k.name for k in bare}) if bare else {}
    for kernel in bare:
        entries = [e for e in (_cache_entry(kernel.name, p) for p in index.get(kernel.name, [])) if e]
        match = next((e for e in entries if e.hash == kernel.hash), entries[0] if entries else None)
        if match is not None:
            kernel.files = match.files
            kernel.metadata = {**kernel.metadata, **match.metadata}


def _cache_entry(name: str, meta_path: Path) -> TritonKernel | None:
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    files = {p.name: str(p) for p in meta_path.parent.iterdir() if p.suffix in KEEP_SUFFIXES}
    return TritonKernel(name=name, hash=str(meta.get("hash", meta_path.parent.name)), files=files,
                        metadata=meta, found_by="cache")


def _index_cache(root: Path, names: set[str]) -> dict[str, list[Path]]:
    """One pass over the cache: name -> its <key>/<name>.json files, newest first."""
    found: dict[str, list[tuple[float, Path]]] = {}
    if not root.is_dir() or not names:
        return {}
    for entry in os.scandir(root):
        if not entry.is_dir():
            continue
        for child in os.scandir(entry.path):
            stem = child.name.removesuffix(".json")
            if stem != child.name and stem in names:
                found.setdefault(stem, []).append((child.stat().st_mtime, Path(child.path)))
    return {name: [p for _, p in sorted(items, key=lambda t: -t[0])] for name, items in found.items()}


def select_ran(kernels: list[TritonKernel], ran_names: set[str] | None) -> list[TritonKernel]:
    """Kernels that ran: in the trace's kernel names when known, else those whose module was loaded."""
    if ran_names is None:
        return [k for k in kernels if k.launched]
    return [k for k in kernels if k.name in ran_names]


def copy_artifacts(kernels: list[TritonKernel], dest: Path) -> dict[str, str]:
    """Copy each kernel's kept artifacts into dest/<name>-<hash12>/; return kernel hash -> folder name."""
    folders: dict[str, str] = {}
    for kernel in kernels:
        folder = f"{kernel.name}-{kernel.hash[:12]}" if kernel.hash else kernel.name
        target = dest / folder
        target.mkdir(parents=True, exist_ok=True)
        for fname, src in sorted(kernel.files.items()):
            if Path(fname).suffix in KEEP_SUFFIXES and Path(src).is_file():
                shutil.copy2(src, target / fname)
        folders[kernel.hash or kernel.name] = folder
    return folders


class _Event(msgspec.Struct):
    name: str = ""
    cat: str = ""


class _Trace(msgspec.Struct):
    traceEvents: list[_Event] = []  # noqa: N815 (Kineto's field name)


def kernel_names_in_trace(path: Path) -> set[str]:
    """Names of the GPU kernels in a Kineto trace (.json or .json.gz), decoding only name and cat."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    trace = msgspec.json.decode(raw, type=_Trace)
    return {e.name for e in trace.traceEvents if e.cat == "kernel"}


def kernel_names_in_csv(path: Path) -> set[str]:
    """Kernel names in a rocprofv3 kernel_trace.csv (its Kernel_Name column)."""
    with path.open(newline="") as fh:
        return {row["Kernel_Name"] for row in csv.DictReader(fh) if row.get("Kernel_Name")}
