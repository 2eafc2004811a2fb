"""ISA and TTGIR lint: instruction mixes and IR patterns that cost performance, each with its meaning.

A finding is a dict: id, severity ("info" | "warn"), message (one line), counts (numbers behind it).
The checks follow seed 001 ("ISA assembly analysis", "IR analysis"): dwordx4 global loads, _b128 LDS
accesses, s_waitcnt, MFMA shapes, scratch; LDS round trips and layout conversions in TTGIR.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

Finding = dict[str, Any]

_GLOBAL = re.compile(r"^\s*(global|buffer)_load_(lds_)?(dwordx4|dwordx3|dwordx2|dword|b128|b96|b64|b32|"
                     r"ubyte|sbyte|u8|i8|ushort|sshort|u16|i16|short_d16\w*|ubyte_d16\w*|sbyte_d16\w*)\b", re.M)
_WIDTH = {"dwordx4": 128, "b128": 128, "dwordx3": 96, "b96": 96, "dwordx2": 64, "b64": 64, "dword": 32,
          "b32": 32}
_DS = re.compile(r"^\s*ds_(read|write|load|store)(2st64|2)?_(?:[biu])(\d+)", re.M)
_WAIT = re.compile(r"^\s*s_wait(?:cnt\b|_\w*cnt\b)(.*)$", re.M)
_MATRIX = re.compile(r"^\s*(v_mfma|v_smfmac|v_wmma|v_swmmac)_\w*?(\d+x\d+x\d+)\w*", re.M)
_SCRATCH = re.compile(r"^\s*scratch_(load|store)_\w+", re.M)


def _bits(kind: str) -> int:
    return _WIDTH.get(kind, 16 if "16" in kind or "short" in kind else 8)


def _wide_share(finding_id: str, counts: Counter, what: str) -> list[Finding]:
    """One finding on how many of the counted accesses (keys ending in their bit width) are 128-bit:
    a warning when fewer than half are, none when there are no accesses."""
    total = sum(counts.values())
    if not total:
        return []
    wide = sum(n for k, n in counts.items() if k.endswith("_128"))
    return [{"id": finding_id, "severity": "warn" if wide < total / 2 else "info",
             "counts": dict(sorted(counts.items())), "message": f"{wide} of {total} {what}"}]


def lint_isa(text: str, scratch_bytes: int = 0, vgpr_spill: int = 0, sgpr_spill: int = 0) -> list[Finding]:
    """Findings for one kernel's AMDGCN instructions."""
    out: list[Finding] = []
    loads = Counter(f"{m[1]}_{_bits(m[3])}" for m in _GLOBAL.finditer(text))
    out += _wide_share("global_loads", loads,
                       "global/buffer loads are 128-bit (dwordx4); narrower loads "
                       "move fewer bytes per instruction (seed 001: aim for dwordx4 in loops)")
    lds = Counter(f"{'read' if m[1] in ('read', 'load') else 'write'}_{int(m[3]) * (2 if m[2] else 1)}"
                  for m in _DS.finditer(text))
    out += _wide_share("lds_access", lds,
                       "LDS accesses are 128-bit (ds_read/write_b128); "
                       "narrower ones need more LDS instructions for the same data")
    waits = _WAIT.findall(text)
    if waits:
        full = sum(1 for w in waits if re.search(r"(vmcnt|lgkmcnt|loadcnt|dscnt)\(0\)|\s0x0\b|^\s*0\s*$", w))
        out.append({"id": "s_waitcnt", "severity": "info", "counts": {"total": len(waits), "to_zero": full},
                    "message": f"{len(waits)} s_waitcnt, {full} waiting for all outstanding memory "
                               "operations: each one stalls the wave until its loads land"})
    matrix = Counter(f"{m[1]}_{m[2]}" for m in _MATRIX.finditer(text))
    if matrix:
        out.append({"id": "matrix_ops", "severity": "info", "counts": dict(sorted(matrix.items())),
                    "message": f"{sum(matrix.values())} matrix instructions by shape; 32x32 MFMAs do more work "
                               "per instruction, 16x16 ones need fewer registers"})
    scratch_ops = len(_SCRATCH.findall(text))
    if scratch_bytes or vgpr_spill:
        out.append({"id": "scratch", "severity": "warn",
                    "counts": {"scratch_bytes": scratch_bytes, "vgpr_spill": vgpr_spill,
                               "sgpr_spill": sgpr_spill, "scratch_instructions": scratch_ops},
                    "message": f"{scratch_bytes} bytes of scratch per lane ({vgpr_spill} VGPRs spilled): "
                               "spills go to memory; fewer live registers or a smaller tile avoid them"})
    return out


_OP = re.compile(r"^\s*(%[\w]+)(?::\d+)?(?:\s*,\s*%[\w]+)*\s*=\s*\"?([\w.]+)\"?(.*)$")
_OPERAND = re.compile(r"%([\w]+)")
_TO_SHARED_OPS = ("local_alloc", "local_store")
_FROM_SHARED_OPS = ("local_load",)


def _is_shared(type_text: str) -> bool:
    return "memdesc" in type_text or "#shared" in type_text


def _result_type(rest: str) -> str:
    if "->" in rest:
        return rest.rsplit("->", 1)[1]
    return rest.rsplit(" : ", 1)[1] if " : " in rest else ""


def lint_ttgir(text: str) -> list[Finding]:
    """Findings for a TTGIR module: LDS round trips of one value and the number of layout conversions."""
    trips: dict[str, int] = {}
    shared: set[str] = set()
    worst: tuple[int, str] = (0, "")
    conversions = 0
    for line in text.splitlines():
        m = _OP.match(line)
        if not m:
            continue
        result, op, rest = m[1][1:], m[2].split(".")[-1], m[3].split(" loc(")[0]
        operands = [o for o in _OPERAND.findall(rest.split(" : ")[0]) if not o.startswith("cst")]
        base = [o.split("#")[0] for o in operands]
        prior = max((trips.get(o, 0) for o in base), default=0)
        out_shared = _is_shared(_result_type(rest)) or op in _TO_SHARED_OPS
        in_shared = any(o in shared for o in base)
        if op == "convert_layout":
            conversions += 1
        if out_shared:
            shared.add(result)
            trips[result] = prior
        elif in_shared and (op in _FROM_SHARED_OPS or op == "convert_layout"):
            trips[result] = prior + 1
            worst = max(worst, (prior + 1, "%" + result))
        else:
            trips[result] = prior
    out: list[Finding] = []
    if worst[0] >= 2:
        out.append({"id": "lds_round_trips", "severity": "warn", "counts": {"max_trips": worst[0]},
                    "message": f"value {worst[1]} passes through LDS {worst[0]} times (store, load, store "
                               "again): one trip could serve both uses (seed 001, IR analysis)"})
    if conversions:
        out.append({"id": "layout_conversions", "severity": "warn" if conversions > 4 else "info",
                    "counts": {"convert_layout": conversions},
                    "message": f"{conversions} layout conversions (convert_layout); those between "
                               "distributed layouts usually go through LDS"})
    return out
