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
# and CK's kernels take, nor _Float16, which FlashMLA's ROCm port takes), spelled as vendor-extended
# types (`u <length> <name>`), which every demangler prints as the name itself: the text comes out as a
# current c++filt prints it.
_NEW_BUILTINS = re.compile(r"DF16b|DF(\d+)_|D([BU])(\d+)_")


def _vendor_spelling(match: re.Match[str]) -> str:
    if match.group(0) == "DF16b":
        text = "std::bfloat16_t"
    elif match.group(1):
        text = f"_Float{match.group(1)}"
    else:
        text = ("unsigned " if match.group(2) == "U" else "") + f"_BitInt({match.group(3)})"
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


_LENGTH = re.compile(r"\d+")
_SUBSTITUTION = re.compile(r"S([0-9A-Z]*)_")
_MEMBER_QUALIFIERS = "rVKRO"  # cv- and ref-qualifiers that open a member function's nested name


def outline(symbol: str) -> str | None:
    """`ns::kernel<first::argument<…>…>`: the qualified name at the head of a mangled symbol, with the
    head of its first template argument (CUTLASS's `Kernel<...>` says what it runs only there).

    For the symbols no runtime demangler takes: CK and CUTLASS kernels nest templates deeper than the
    demangler's recursion limit (c++filt prints them only with --no-recurse-limit), and newer manglings
    (`Tn` template parameters) are unknown to older runtimes. A person still reads which kernel it is.
    None when the symbol is not mangled or its head cannot be read.
    """
    symbol = _NVCC_STATIC_PREFIX.sub("", symbol.strip())
    if not symbol.startswith("_Z"):
        return None
    prefixes: list[str] = []  # the head's prefixes, in order: what S_, S0_, S1_ ... refer to
    head, at = _qualified_name(symbol, 2, prefixes)
    if head is None:
        return None
    if not symbol.startswith("I", at):
        return head
    argument, end = _qualified_name(symbol, at + 1, prefixes)
    if argument is None:
        return f"{head}<…>"
    return f"{head}<{argument}{'<…>' if symbol.startswith('I', end) else ''}…>"


def _qualified_name(symbol: str, at: int, prefixes: list[str]) -> tuple[str | None, int]:
    """The `a::b::c` name mangled at `at` (a <source-name> or an N...E nested name; a leading
    substitution S_/S<n>_ refers to `prefixes`) and where it ends: at its template arguments, if any."""
    nested = symbol.startswith("N", at)
    if nested:
        at += 1
        while at < len(symbol) and symbol[at] in _MEMBER_QUALIFIERS:
            at += 1
    parts: list[str] = []
    while at < len(symbol):
        substitution = _SUBSTITUTION.match(symbol, at) if not parts else None
        if symbol.startswith("St", at) and not parts:
            parts.append("std")
            at += 2
            continue
        if substitution is not None and substitution.group(1) != "t":
            index = 0 if not substitution.group(1) else int(substitution.group(1), 36) + 1
            if index >= len(prefixes):
                return None, at
            parts.append(prefixes[index])
            at = substitution.end()
            continue
        length = _LENGTH.match(symbol, at)
        if length is None:
            break  # template arguments, end of the name, or a form (operator, local name) not read here
        at = length.end()
        ident = symbol[at:at + int(length.group())]
        if len(ident) < int(length.group()):
            return None, at  # cut short
        at += len(ident)
        parts.append("(anonymous namespace)" if ident.startswith("_GLOBAL__N") else ident)
        prefixes.append("::".join(parts))
        if not nested:
            break
    if not parts:
        return None, at
    return "::".join(parts), at


def strip_arguments(name: str) -> str:
    """The kernel name without its trailing parameter list: `f<int>(float*, int)` -> `f<int>`.

    Argument types repeat the template arguments and add library types that mislead a search
    (`flashinfer::QuantizationSFLayout` in a quantize kernel, `vllm::_typeConvert` in a norm).
    """
    text = name.rstrip()
    if text.endswith(" const"):
        text = text[:-6].rstrip()
    if not text.endswith(")"):
        return name
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                head = text[:i].rstrip()
                return head if head else name
    return name


def short_name(symbol: str) -> str:
    """A kernel symbol as a table shows it: demangled without `void` and the parameter list
    (`compute_fd_x_kernel<4>`), else its outline, else as recorded."""
    text = demangle(symbol.strip())
    if text is None:
        return outline(symbol) or symbol
    return strip_arguments(text.removeprefix("void "))
