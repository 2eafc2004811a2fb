"""Kernel classification: every GPU activity gets exactly one of 13 categories.

The rules are data (rocanalyze/data/kernel_rules.toml): an ordered list of (category, regexes on the
kernel name and/or on the launching CPU op, real example names); the first rule that matches wins.
Names arrive demangled (`void at::native::reduce_kernel<...>(...)`), mangled (`_ZN2at6native...`),
truncated (`reduce_kernel`) or with rocprof's `.kd` suffix; `normalize_name` brings them to one
searchable form. `classify_table` classifies each unique (name, op) pair of a trace once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from rocanalyze.paths import load_data_toml

if TYPE_CHECKING:  # only the type: `classify_kernel` must not import every trace reader
    from rocanalyze.traces.schema import EventTable

CATEGORIES: tuple[str, ...] = (
    "gemm", "attention", "conv", "elementwise", "reduction", "norm", "softmax", "index", "sort",
    "communication", "memcpy", "memset", "other",
)
RULES_FILE = "kernel_rules.toml"
DTYPE_CHANGE = " (dtype change)"  # appended to a copy op whose input and output dtypes differ
_COPY_OPS = frozenset({"aten::copy_", "aten::_to_copy", "aten::to"})

_KD_SUFFIX = re.compile(r"(\s*\[clone \.kd\]|\s*\(\.kd\)|\.kd)\s*$")
_MANGLED_ID = re.compile(r"(\d+)")


@dataclass(frozen=True)
class Rule:
    """One row of kernel_rules.toml, compiled."""

    index: int
    category: str
    family: str
    name: tuple[re.Pattern[str], ...]
    op: tuple[re.Pattern[str], ...]
    examples: tuple[tuple[str, str | None], ...]
    source: str

    def matches(self, name: str, op: str | None) -> bool:
        """True when every pattern group the rule has (name, op) matches."""
        if self.op and (op is None or not any(p.search(op) for p in self.op)):
            return False
        return not self.name or any(p.search(name) for p in self.name)


def _compile(patterns: list[str], where: str) -> tuple[re.Pattern[str], ...]:
    try:
        return tuple(re.compile(p, re.IGNORECASE) for p in patterns)
    except re.error as exc:
        raise ValueError(f"{RULES_FILE}: bad regex in {where}: {exc}") from exc


def _parse_rules(data: dict) -> tuple[Rule, ...]:
    rules = []
    for i, raw in enumerate(data.get("rule", [])):
        category = raw.get("category")
        if category not in CATEGORIES:
            raise ValueError(f"{RULES_FILE}: rule {i} has unknown category {category!r}")
        if not raw.get("name") and not raw.get("op"):
            raise ValueError(f"{RULES_FILE}: rule {i} ({raw.get('family')}) has neither name nor op patterns")
        examples = tuple((e, None) if isinstance(e, str) else (e["name"], e.get("op"))
                         for e in raw.get("examples", []))
        rules.append(Rule(i, category, raw.get("family", ""), _compile(raw.get("name", []), f"rule {i}"),
                          _compile(raw.get("op", []), f"rule {i}"), examples, raw.get("source", "")))
    return tuple(rules)


@lru_cache(maxsize=1)
def load_rules() -> tuple[Rule, ...]:
    """The ordered rules from rocanalyze/data/kernel_rules.toml."""
    return _parse_rules(load_data_toml(RULES_FILE))


@lru_cache(maxsize=1)
def thresholds() -> dict[str, float]:
    """Pattern-detection thresholds kept in kernel_rules.toml [thresholds]."""
    return dict(load_data_toml(RULES_FILE).get("thresholds", {}))


def demangle_lite(name: str) -> str:
    """Identifiers of a mangled name joined by spaces: `_ZN2at6native9foo_kernelE...` -> `at native foo_kernel`.

    Not a demangler: it only recovers the <length><identifier> source names, which is what the
    rules search for. Non-mangled names come back unchanged.
    """
    if not name.startswith("_Z"):
        return name
    out: list[str] = []
    i, n = 2, len(name)
    while i < n:
        ch = name[i]
        if ch == "L" and i + 2 < n and name[i + 1].islower() and (name[i + 2].isdigit() or name[i + 2] == "n"):
            end = name.find("E", i)  # template literal such as Li256E, Lb1E, Lin2E: a value, not a name
            i = n if end < 0 else end + 1
        elif name.startswith(("DF", "Dv"), i) or (ch in "ST" and i + 1 < n and name[i + 1].isdigit()):
            i += 1 if ch in "ST" else 2  # DF16_ / Dv4_ types and S1_ / T0_ substitutions carry digits
            while i < n and name[i].isdigit():
                i += 1
            i += 1
        elif ch.isdigit():
            j = i
            while j < n and name[j].isdigit():
                j += 1
            length = int(name[i:j])
            ident = name[j:j + length]
            if length and len(ident) == length and (ident[0].isalpha() or ident[0] == "_"):
                out.append(ident)
                i = j + length
            else:
                i = j
        else:
            i += 1
    return " ".join(out) if out else name


def normalize_name(name: str) -> str:
    """The searchable form of a kernel name: rocprof `.kd` suffixes dropped, mangled names reduced."""
    name = _KD_SUFFIX.sub("", name.strip())
    return demangle_lite(name)


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


@lru_cache(maxsize=65536)
def match_rule(name: str, op: str | None = None) -> Rule | None:
    """The first rule matching (name, op), or None when no rule does.

    The name without its parameter list is tried first; only when no rule matches it is the
    full name searched (some libraries say what they are only in argument types, e.g. cuBLAS's
    `epilogue::impl::globalKernel<...>(..., cublasLtEpilogue_t, ...)`).
    """
    text = normalize_name(name)
    op = op or None
    head = strip_arguments(text)
    for candidate in (head, text) if head != text else (text,):
        for rule in load_rules():
            if rule.matches(candidate, op):
                return rule
    return None


@lru_cache(maxsize=65536)
def classify_kernel(name: str, op: str | None = None) -> str:
    """Category of one GPU kernel from its name and (optionally) the launching CPU op; 'other' if no rule matches."""
    rule = match_rule(name, op)
    return rule.category if rule is not None else "other"


def _op_keys(table: EventTable) -> np.ndarray:
    """Per-GPU-row op key: the launching op's name, with DTYPE_CHANGE for casting copies; '' if none."""
    ops = table.ops
    n_ops = len(ops)
    idx = table.gpu["op_index"].to_numpy()
    if n_ops == 0:
        return np.full(len(idx), "", dtype=object)
    names = ops["name"].astype(str).to_numpy(dtype=object).copy()
    if "dtypes" in ops:
        for row in np.flatnonzero(np.isin(names, list(_COPY_OPS))):
            dt = ops["dtypes"].iat[row]
            if isinstance(dt, (list, tuple)) and len(dt) >= 2 and dt[0] and dt[1] and dt[0] != dt[1]:
                names[row] = names[row] + DTYPE_CHANGE
    keys = np.full(len(idx), "", dtype=object)
    ok = (idx >= 0) & (idx < n_ops)
    keys[ok] = names[idx[ok]]
    return keys


def classify_table(table: EventTable) -> None:
    """Fill `table.gpu["category"]` (categorical) in place; each unique (name, op) is classified once.

    Rows of kind memcpy/memset (copy engines) take that kind as their category.
    """
    gpu = table.gpu
    if len(gpu) == 0:
        gpu["category"] = pd.Categorical([], categories=CATEGORIES)
        return
    names = gpu["name"]
    if not isinstance(names.dtype, pd.CategoricalDtype):
        names = names.astype("category")
    name_codes = names.cat.codes.to_numpy().astype(np.int64)
    name_cats = names.cat.categories.astype(str).to_numpy(dtype=object)
    op_codes, op_uniques = pd.factorize(pd.Series(_op_keys(table), dtype=object))
    pair = name_codes * (len(op_uniques) + 1) + op_codes
    uniq, inverse = np.unique(pair, return_inverse=True)
    cat_index = {c: i for i, c in enumerate(CATEGORIES)}
    per_pair = np.empty(len(uniq), dtype=np.int8)
    for k, p in enumerate(uniq):
        n_code, o_code = divmod(int(p), len(op_uniques) + 1)
        name = name_cats[n_code] if n_code >= 0 else ""
        op = op_uniques[o_code] or None
        per_pair[k] = cat_index[classify_kernel(name, op)]
    codes = per_pair[inverse.reshape(-1)]
    kind = gpu["kind"].astype(str).to_numpy()
    codes[kind == "memcpy"] = cat_index["memcpy"]
    codes[kind == "memset"] = cat_index["memset"]
    gpu["category"] = pd.Categorical.from_codes(codes, categories=list(CATEGORIES))
