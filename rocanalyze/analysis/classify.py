"""Kernel classification: every GPU activity gets exactly one of 13 categories.

The rules are data (rocanalyze/data/kernel_rules.toml): an ordered list of (category, regexes on the
kernel name and/or on the launching CPU op, real example names); the first rule that matches wins.
Names arrive demangled (`void at::native::reduce_kernel<...>(...)`), mangled (`_ZN2at6native...`),
truncated (`reduce_kernel`) or with rocprof's `.kd` suffix; `normalize_name` brings them to one
searchable form (mangled names are demangled as c++filt would). `classify_table` classifies each unique
(name, op) pair of a trace once.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import tomllib

from rocanalyze.analysis.demangle import demangle, strip_arguments
from rocanalyze.paths import load_data_toml, read_data_text

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
# tables cut long names and mark the cut (`reduce_kernel<...`, `_fwd_kernel…`); the rules read the name up to it
_CUT_MARK = re.compile(r"(?:\s*(?:\.{2,}|…))+\s*$")
# Triton before 3.0 appended the arguments' specialisation to a kernel's name (`_0d1d2de`: argument 0
# divisible by 16, ...); the rules are written against the name without it
_TRITON_SPECIALIZATION = re.compile(r"_0(?:de|d|c)1(?:de|d|c)?(?:\d+(?:de|d|c)?)*$")
_ESCAPE_OR_UPPER = re.compile(r"(\\.)|([A-Z])")  # lower-case a pattern but keep \W, \S, \D


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
    where: str = RULES_FILE  # the file it came from: kernel_rules.toml or a user's --rules file
    number: int = 0          # its position in that file, from 1

    def matches(self, name: str, op: str | None) -> bool:
        """True when every pattern group the rule has (name, op) matches."""
        if self.op and (op is None or not any(p.search(op) for p in self.op)):
            return False
        return not self.name or any(p.search(name) for p in self.name)


def _compile(patterns: list[str], where: str) -> tuple[re.Pattern[str], ...]:
    """Patterns as few regexes as possible: one alternation, plus any pattern with a backreference.

    Matching is case-insensitive: patterns and searched texts are lower-cased (faster than
    re.IGNORECASE on long demangled names).
    """
    patterns = [_ESCAPE_OR_UPPER.sub(lambda m: m.group(1) or m.group(2).lower(), p) for p in patterns]
    try:
        plain = [p for p in patterns if not re.search(r"\\[1-9]", p)]
        kept = [re.compile(p) for p in patterns if p not in plain]
        for p in plain:
            re.compile(p)  # report the faulty pattern itself
        joined = [re.compile("|".join(f"(?:{p})" for p in plain))] if plain else []
        return tuple(joined + kept)
    except re.error as exc:
        raise ValueError(f"{where}: bad regex: {exc}") from exc


def _parse_rules(data: dict, where: str = RULES_FILE, first_index: int = 0) -> tuple[Rule, ...]:
    rules = []
    for i, raw in enumerate(data.get("rule", []), start=first_index):
        category = raw.get("category")
        if category not in CATEGORIES:
            raise ValueError(f"{where}: rule {i} has unknown category {category!r} (one of {', '.join(CATEGORIES)})")
        if not raw.get("name") and not raw.get("op"):
            raise ValueError(f"{where}: rule {i} ({raw.get('family')}) has neither name nor op patterns")
        examples = tuple((e, None) if isinstance(e, str) else (e["name"], e.get("op"))
                         for e in raw.get("examples", []))
        rules.append(Rule(i, category, raw.get("family", ""), _compile(raw.get("name", []), f"{where} rule {i}"),
                          _compile(raw.get("op", []), f"{where} rule {i}"), examples, raw.get("source", ""),
                          where, i - first_index + 1))
    return tuple(rules)


# Rules from the user's own files (`--rules FILE`), tried before the built-in ones: a team's own
# kernel families without editing the installed package.
_user_rules_data: list[tuple[str, dict]] = []


@lru_cache(maxsize=1)
def builtin_rules_data() -> dict:
    """kernel_rules.toml parsed once per process: its rules, `[names]` and `[patterns]` (read-only)."""
    return load_data_toml(RULES_FILE)


@lru_cache(maxsize=1)
def load_rules() -> tuple[Rule, ...]:
    """The ordered rules: the user's rules files first (in the order given), then kernel_rules.toml."""
    rules: list[Rule] = []
    for where, data in _user_rules_data:
        rules += _parse_rules(data, where, first_index=len(rules))
    return tuple(rules) + _parse_rules(builtin_rules_data(), first_index=len(rules))


def use_rules_file(path: str | Path) -> int:
    """Add a rules file in kernel_rules.toml's format, tried before the built-in rules; returns its rule count.

    Each example in the file must be matched by its own rule (as the built-in examples are, in the
    tests), so a rule that can never fire is caught when it is loaded. Bad files are a UserError.
    """
    from rocanalyze.errors import UserError

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError("rules file not found", path) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"not a readable TOML rules file ({exc})", path) from None
    if not data.get("rule"):
        raise UserError("no [[rule]] tables (see docs/classification.md, 'Your own rules')", path)
    try:
        own = _parse_rules(data, str(path))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    for rule in own:
        for name, op in rule.examples:
            op_text = op.lower() if op else None
            if not any(rule.matches(text, op_text) for text in _forms(name)):  # the forms match_rule tries
                raise UserError(f"rule {rule.index} ({rule.family or rule.category}): its example {name!r} "
                                "does not match its own patterns", path)
    _user_rules_data.append((str(path), data))
    _clear_caches()
    return len(own)


def clear_user_rules() -> None:
    """Back to the built-in rules only."""
    if _user_rules_data:
        _user_rules_data.clear()
        _clear_caches()


def rules_digest() -> str:
    """A short digest of the rules that classified this run: kernel_rules.toml, the recommendation rules and any
    --rules files. `compare` warns when two analyses carry different digests: their categories (and the rules
    that fire) may differ because the rules did, not the run."""
    return _digest(tuple(json.dumps(data, sort_keys=True) for _, data in _user_rules_data))


@lru_cache(maxsize=4)
def _digest(user_rules: tuple[str, ...]) -> str:
    text = "\0".join([read_data_text(RULES_FILE), read_data_text("recommendations.toml"), *user_rules])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _clear_caches() -> None:
    for cached in (load_rules, _first_by_name, _forms, match_rule, classify_kernel):
        cached.cache_clear()


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
            elif length and ident and len(ident) < length and (ident[0].isalpha() or ident[0] == "_"):
                out.append(ident.rstrip(".…"))  # the profiler cut the name inside this identifier
                i = n
            else:
                i = j
        else:
            i += 1
    return " ".join(out) if out else name


def normalize_name(name: str) -> str:
    """The searchable form of a kernel name: a table's cut mark (`...`), rocprof `.kd` suffixes and old Triton
    specialisation suffixes dropped, mangled names demangled.

    A mangled name is demangled as c++filt would (the rules are written against that form); one
    the C++ runtime cannot demangle (cut short by a profiler, or no runtime) is reduced to its
    identifiers by `demangle_lite`.
    """
    name = _TRITON_SPECIALIZATION.sub("", _KD_SUFFIX.sub("", _CUT_MARK.sub("", name.strip())))
    return demangle(name) or demangle_lite(name)


@lru_cache(maxsize=65536)
def _first_by_name(text: str) -> int:
    """Index of the first rule without op patterns whose name patterns match `text`; -1 if none."""
    for rule in load_rules():
        if not rule.op and rule.matches(text, None):
            return rule.index
    return -1


@lru_cache(maxsize=1)
def _type_noise() -> re.Pattern[str] | None:
    """Type words that carry a category word but say nothing of the work (`[names].type_noise`)."""
    words = builtin_rules_data().get("names", {}).get("type_noise", [])
    return re.compile("|".join(f"(?:{w})" for w in words)) if words else None


@lru_cache(maxsize=65536)
def _forms(name: str) -> tuple[str, ...]:
    text = normalize_name(name).lower()
    noise = _type_noise()
    if noise is not None:
        text = noise.sub("", text)
    head = strip_arguments(text)
    return (head, text) if head != text else (text,)


@lru_cache(maxsize=65536)
def match_rule(name: str, op: str | None = None) -> Rule | None:
    """The first rule matching (name, op), or None when no rule does.

    The name without its parameter list is tried first, then the full name (some libraries say
    what they are only in argument types, e.g. cuBLAS's `epilogue::impl::globalKernel<...>(...,
    cublasLtEpilogue_t, ...)`); rules on the op alone come last, for names no rule knows.
    """
    rules = load_rules()
    op = op or None
    with_op = [r for r in rules if r.op] if op else []
    op = op.lower() if op else None
    for text in _forms(name):
        first = _first_by_name(text)
        for rule in with_op:  # few, and they need the op to match first
            if rule.name and (first < 0 or rule.index < first) and rule.matches(text, op):
                return rule
        if first >= 0:
            return rules[first]
    for rule in with_op:
        if not rule.name and rule.matches("", op.lower()):
            return rule
    return None


@lru_cache(maxsize=65536)
def classify_kernel(name: str, op: str | None = None) -> str:
    """Category of one GPU kernel from its name and (optionally) the launching CPU op; 'other' if no rule matches."""
    rule = match_rule(name, op)
    return rule.category if rule is not None else "other"


def _op_keys(table: EventTable) -> tuple[np.ndarray, list[str]]:
    """Per-GPU-row code into a list of op keys (launching op name, + DTYPE_CHANGE for casting copies); -1 none."""
    ops = table.ops
    idx = table.gpu["op_index"].to_numpy()
    if len(ops) == 0:
        return np.full(len(idx), -1, dtype=np.int64), []
    names = ops["name"].astype(str).to_numpy(dtype=object).copy()
    if "dtypes" in ops:
        for row in np.flatnonzero(np.isin(names, list(_COPY_OPS))):
            dt = ops["dtypes"].iat[row]
            if isinstance(dt, (list, tuple)) and len(dt) >= 2 and dt[0] and dt[1] and dt[0] != dt[1]:
                names[row] = names[row] + DTYPE_CHANGE
    op_codes, keys = pd.factorize(names)
    codes = np.full(len(idx), -1, dtype=np.int64)
    ok = (idx >= 0) & (idx < len(ops))
    codes[ok] = op_codes[idx[ok]]
    return codes, [str(k) for k in keys]


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
    op_codes, op_keys = _op_keys(table)
    width = len(op_keys) + 1
    pair = name_codes * width + (op_codes + 1)
    inverse, uniq = pd.factorize(pair)
    cat_index = {c: i for i, c in enumerate(CATEGORIES)}
    per_pair = np.empty(len(uniq), dtype=np.int8)
    for k, p in enumerate(uniq):
        n_code, o_code = divmod(int(p), width)
        name = name_cats[n_code] if n_code >= 0 else ""
        per_pair[k] = cat_index[classify_kernel(name, op_keys[o_code - 1] if o_code else None)]
    codes = per_pair[inverse]
    kind = gpu["kind"].astype(str).to_numpy()
    codes[kind == "memcpy"] = cat_index["memcpy"]
    codes[kind == "memset"] = cat_index["memset"]
    gpu["category"] = pd.Categorical.from_codes(codes, categories=list(CATEGORIES))
