"""Pick the reader by content (not extension), walk directories, keep a Triton kernel's files together."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from rocanalyze.errors import UserError
from rocanalyze.occupancy import asm, codeobject, triton
from rocanalyze.occupancy.resources import KernelResources

FORMATS = ("AMDGCN assembly with its .amdgpu_metadata, an AMDGPU code object or offload bundle, "
           "Triton metadata JSON, TTGIR, or a Triton cache directory")
_KERNEL_SUFFIXES = triton.ASM_SUFFIXES + triton.CODE_SUFFIXES + triton.TTGIR_SUFFIXES + (
    ".json", ".mlir", ".log", ".txt", ".bundle", ".o", ".hipfb", ".out")


def _load(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UserError(f"cannot read ({err.strerror})", path) from err
    if not data:
        raise UserError("empty file", path)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise UserError(f"corrupt gzip file ({err})", path) from err
    return data


def _text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UserError(_not_a_kernel_file(f"not a kernel file (binary data at byte {err.start})", path),
                        path) from err


def _with_triton_files(kernels: list[KernelResources], path: Path) -> list[KernelResources]:
    """Kernels read from `path` with the Triton metadata JSON and TTGIR beside it applied."""
    files = triton.siblings(path)
    if "json" not in files and "ttgir" not in files:
        return kernels
    meta = json.loads(files["json"].read_text(encoding="utf-8")) if "json" in files else None
    ttgir = _text(_load(files["ttgir"]), files["ttgir"]) if "ttgir" in files else None
    out = []
    for kernel in kernels:
        if meta is not None:
            kernel = triton.apply_metadata(kernel, meta)
        if ttgir is not None:
            kernel = triton.apply_ttgir(kernel, ttgir)
        out.append(kernel)
    return out


def _read_triton_json(text: str, path: Path) -> list[KernelResources]:
    meta = json.loads(text)
    backend = (meta.get("target") or {}).get("backend", "hip")
    if backend != "hip":
        raise UserError(f"Triton kernel for '{backend}', not AMD: this reader needs the hip backend", path)
    files = triton.siblings(path)
    if "asm" in files:
        return read_kernels(files["asm"])
    if "code" in files:
        return read_kernels(files["code"])
    raise UserError("Triton metadata JSON without its .amdgcn or .hsaco beside it (registers unknown)", path)


def read_kernels(path: str | Path) -> list[KernelResources]:
    """Every kernel in a file or directory (walked), read by content; UserError for a bad file."""
    path = Path(path)
    if path.is_dir():
        kernels: list[KernelResources] = []
        for primary in _primaries(path):
            kernels.extend(read_kernels(primary))
        return kernels
    if not path.exists():
        raise UserError("no such file or directory", path)
    data = _load(path)
    source = str(path)
    if codeobject.sniff(data):
        return _with_triton_files(codeobject.read_code_object(data, source), path)
    text = _text(data, path)
    if text.lstrip().startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError as err:
            raise UserError(f"invalid JSON ({err})", path) from err
        if not triton.is_metadata(obj):
            raise UserError(_not_a_kernel_file("JSON that is not Triton kernel metadata", path), path)
        return _read_triton_json(text, path)
    if asm.sniff(text):
        return _with_triton_files(asm.read_asm_text(text, source), path)
    if triton.sniff_ttgir(text):
        files = triton.siblings(path)
        if "asm" in files or "code" in files:
            return read_kernels(files.get("asm") or files["code"])
        return [triton.kernel_from_ttgir(text, source)]
    raise UserError(_not_a_kernel_file("not a kernel file", path), path)


def _not_a_kernel_file(what: str, path: Path) -> str:
    """The error for a file no kernel reader takes: what it is when known (a trace), else what is read."""
    from rocanalyze.filekind import why_not_a_kernel_file

    why = why_not_a_kernel_file(path)
    return f"not a kernel file: {why}" if why else f"{what}; expected {FORMATS}"


def _primaries(folder: Path) -> list[Path]:
    """One file per kernel in a directory tree: Triton metadata JSON > assembly > code object > TTGIR."""
    groups: dict[tuple[Path, str], list[Path]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.name.startswith("__grp__") or not _looks_like_kernel(path):
            continue
        groups.setdefault((path.parent, triton.stem(path)), []).append(path)
    rank = {"json": 0, "asm": 1, "code": 2, "ttgir": 3}
    out = []
    for paths in groups.values():
        kinds = triton.siblings(paths[0])
        best = min(kinds.items(), key=lambda kv: rank[kv[0]])[1] if kinds else paths[0]
        out.append(best)
    return out


def _looks_like_kernel(path: Path) -> bool:
    name = path.name
    if name.endswith((".json",)) and not triton.siblings(path).get("json"):
        return False  # other JSON in a cache dir (grouping files, autotune results)
    if name.endswith(_KERNEL_SUFFIXES) and not name.endswith(triton.CODE_SUFFIXES):
        return True
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if head.startswith(codeobject.ELF_MAGIC):  # a directory may hold NVIDIA cubins: only AMDGPU ELF counts
        return len(head) > 20 and int.from_bytes(head[18:20], "little") == codeobject.EM_AMDGPU
    return codeobject.sniff(head) or asm.sniff(head.decode("utf-8", "ignore"))


def read_paths(paths: list[str | Path]) -> tuple[list[KernelResources], list[str]]:
    """Kernels of every path, and one error line per path that could not be read (others still read)."""
    kernels: list[KernelResources] = []
    errors: list[str] = []
    seen: set[tuple[str, str]] = set()
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        found = _primaries(path) if path.is_dir() else [path]
        if not found:
            errors.append(str(UserError(f"no kernel files in this folder; expected {FORMATS}", path)))
        files.extend(found)
    for path in files:
        key = (str(path.parent.resolve()), triton.stem(path)) if path.is_file() else (str(path), "")
        if path.is_file() and key in seen and triton.siblings(path):
            continue  # another file of a Triton kernel already read
        seen.add(key)
        try:
            kernels.extend(read_kernels(path))
        except UserError as err:
            errors.append(str(err))
    return kernels, errors
