"""Itanium C++ demangling through the C++ runtime already loaded on the machine (no new dependency).

Profilers show kernel names demangled (`void at::native::reduce_kernel<...>(...)`), but code-object
symbol tables, some rocprof modes and assembly dumps give the mangled symbol (`_ZN2at6native...`).
The classification rules are written against the demangled form, so a mangled name is demangled
the way c++filt would before the rules see it. `__cxa_demangle` is the function c++filt itself
uses; it lives in libstdc++ (Linux) or libc++abi (macOS), which every CPython wheel with C++ in it
already pulls in. Where neither can be loaded, `demangle` returns None and callers fall back.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
from functools import lru_cache


@lru_cache(maxsize=1)
def _runtime() -> tuple[ctypes._CFuncPtr, ctypes._CFuncPtr] | None:
    """(__cxa_demangle, free), or None when no C++ runtime with a demangler can be loaded."""
    for lib_name in ("stdc++", "c++abi", "c++"):
        path = ctypes.util.find_library(lib_name)
        candidates = [path] if path else []
        candidates += {"stdc++": ["libstdc++.so.6"], "c++abi": ["libc++abi.dylib"], "c++": ["libc++.so.1"]}[lib_name]
        for candidate in candidates:
            try:
                lib = ctypes.CDLL(candidate)
                demangler = lib.__cxa_demangle
            except (OSError, AttributeError):
                continue
            demangler.restype = ctypes.c_void_p  # a malloc'd buffer we must free ourselves
            demangler.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
            libc.free.argtypes = [ctypes.c_void_p]
            libc.free.restype = None
            return demangler, libc.free
    return None


def available() -> bool:
    """True when a C++ runtime demangler could be loaded."""
    return _runtime() is not None


# Builtin types newer than some C++ runtimes (libstdc++ 12 does not know std::bfloat16_t, which aiter's
# and CK's kernels take), spelled as vendor-extended types (`u <length> <name>`), which every
# demangler prints as the name itself: the text comes out as a current c++filt prints it.
_NEW_BUILTINS = re.compile(r"DF16b|D([BU])(\d+)_")


def _vendor_spelling(match: re.Match[str]) -> str:
    if match.group(0) == "DF16b":
        text = "std::bfloat16_t"
    else:
        text = ("unsigned " if match.group(1) == "U" else "") + f"_BitInt({match.group(2)})"
    return f"u{len(text)}{text}"


# nvcc gives a `static __global__` kernel (internal linkage) a file-unique prefix in front of its mangled
# name, and nvprof/ncu print it that way (`__nv_static_59__46_tmpxft_..._cpp1_ii_a54055bf__ZN6Kokkos...`):
# the prefix names the translation unit, not the kernel, so it is dropped before demangling.
_NVCC_STATIC_PREFIX = re.compile(r"^__nv_static_\w*?_cpp1_ii_[0-9a-f]+_(?=_Z)")


@lru_cache(maxsize=65536)
def demangle(symbol: str) -> str | None:
    """The demangled form of an Itanium-mangled symbol (`_Z...`), as c++filt prints it.

    None when the symbol is not mangled, is invalid or cut short (a profiler truncated it), or no
    demangler is available. An nvcc static-kernel prefix is dropped first (c++filt leaves such a
    name as it is).
    """
    symbol = _NVCC_STATIC_PREFIX.sub("", symbol)
    if not symbol.startswith("_Z"):
        return None
    text = _demangle(symbol)
    if text is None and _NEW_BUILTINS.search(symbol):
        text = _demangle(_NEW_BUILTINS.sub(_vendor_spelling, symbol))
    return text


def _demangle(symbol: str) -> str | None:
    runtime = _runtime()
    if runtime is None:
        return None
    demangler, free = runtime
    status = ctypes.c_int(0)
    buffer = demangler(symbol.encode("utf-8", "replace"), None, None, ctypes.byref(status))
    if not buffer:
        return None
    try:
        text = ctypes.string_at(buffer).decode("utf-8", "replace")
    finally:
        free(buffer)
    return text if status.value == 0 else None
