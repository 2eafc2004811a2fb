"""The one result object between analysis and reports: `Analysis`, JSON-able, with a schema version.

Reports only read it (the Perfetto writer also gets the EventTable); `report` re-renders a run
folder's `analysis.json` through `Analysis.from_json`, so everything a report shows must live here.
All times are microseconds (float) unless the field name says otherwise.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RunInfo:
    """Where the analysis came from: the input, the command, versions, the GPU."""

    source: str = ""                         # trace file or run folder analyzed
    source_format: str = ""                  # "kineto", "rocpd", "rocprofv3-csv", ...
    command: list[str] | None = None         # the profiled command line, when rocanalyze ran it
    exit_code: int | None = None             # the script's exit code (profile)
    failed: bool = False                     # the profiled script raised or was interrupted
    partial: bool = False                    # the trace stops early (crash, Ctrl-C)
    rocanalyze_version: str = ""
    rules_digest: str = ""                   # kernel and recommendation rules used (classify.rules_digest)
    created: str = ""                        # ISO-8601 time of analysis
    env: dict[str, Any] = field(default_factory=dict)  # env.json content, when present


@dataclass(frozen=True)
class Analysis:
    """Everything the reports show. Field meanings are documented in docs/analyze.md."""

    run: RunInfo = field(default_factory=RunInfo)
    schema_version: int = SCHEMA_VERSION
    # --- time accounting (on the analyzed window, primary device/rank) ---
    window_us: float | None = None           # None when only aggregates exist
    window: dict[str, Any] = field(default_factory=dict)     # start_us, end_us, how chosen, steps
    busy_us: float | None = None
    idle_us: float | None = None
    idle_breakdown_us: dict[str, float] = field(default_factory=dict)  # launch_bound, sync, h2d_copy, host_other
    startup_us: float = 0.0
    categories_us: dict[str, float] = field(default_factory=dict)      # category -> exclusive busy µs
    overlap: dict[str, Any] = field(default_factory=dict)   # precedence, overlapped µs, exposed comm
    launch: dict[str, Any] = field(default_factory=dict)    # launch statistics
    steps: list[dict[str, Any]] = field(default_factory=list)  # per step: name, dur_us, busy_us
    # --- kernels and ops ---
    kernels: list[dict[str, Any]] = field(default_factory=list)      # per name, sorted by total
    top_kernels: list[dict[str, Any]] = field(default_factory=list)
    ops: list[dict[str, Any]] = field(default_factory=list)          # roofline points
    patterns: list[dict[str, Any]] = field(default_factory=list)
    occupancy: list[dict[str, Any]] = field(default_factory=list)    # captured kernels' occupancy
    timeline: dict[str, Any] = field(default_factory=dict)           # downsampled lanes
    memory: dict[str, Any] = field(default_factory=dict)             # device memory peak/timeline
    host_api: list[dict[str, Any]] = field(default_factory=list)     # per runtime call: calls, total_us
    # --- context ---
    device: dict[str, Any] = field(default_factory=dict)             # GPU spec chosen + how
    ranks: list[dict[str, Any]] = field(default_factory=list)
    quality: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    recommendations: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self, indent: int | None = 1) -> str:
        """Deterministic JSON (sorted keys) of the whole analysis."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True, default=_jsonable, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Analysis:
        """The Analysis an analysis.json holds; UserError when it is not one (damaged or hand-edited)."""
        from rocanalyze.errors import UserError

        if not isinstance(data, dict):
            raise UserError(f"a JSON {type(data).__name__}, not an analysis")
        data = dict(data)
        version = data.get("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise UserError(f"schema_version {version!r}; this rocanalyze reads up to "
                            f"{SCHEMA_VERSION}: upgrade rocanalyze")
        _check_fields(cls, data, "")
        _check_entries(data)
        run = data.pop("run", None) or {}
        _check_fields(RunInfo, run, "run.")
        run_info = RunInfo(**{k: v for k, v in run.items() if k in {f.name for f in dataclasses.fields(RunInfo)}})
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(run=run_info, **{k: v for k, v in data.items() if k in names})

    @classmethod
    def from_json(cls, text: str) -> Analysis:
        from rocanalyze.errors import UserError

        try:
            data = json.loads(text)
        except ValueError as exc:
            raise UserError(f"not valid JSON ({exc}; cut short?): analyze the run again") from None
        return cls.from_dict(data)

    def replace(self, **changes: Any) -> Analysis:
        return dataclasses.replace(self, **changes)


# The JSON types a field's annotation, or an entry schema below, allows (checked when an analysis.json is
# read back); "num" is the entry schemas' name for a float field, "level" a recommendation's ladder level.
_JSON_TYPES: dict[str, tuple[type, ...]] = {"dict": (dict,), "list": (list,), "float": (int, float),
                                            "num": (int, float), "int": (int,), "str": (str,), "bool": (bool,),
                                            "RunInfo": (dict,), "level": (int, str)}


def fits_json_type(value: Any, allowed: tuple[type, ...]) -> bool:
    """isinstance, except that a JSON true/false is not a number (bool is an int in Python)."""
    return isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed)


# What the reports read in each entry of the Analysis' lists: key -> JSON type ("?" allows null); the keys
# marked "!" must be there. Entries are checked when an analysis.json is read back, so a damaged or
# hand-edited file is refused in one line instead of failing inside a renderer.
_KERNEL = {"name": "str!", "category": "str!", "calls": "int", "total_us": "num?", "mean_us": "num?", "min_us": "num?",
           "max_us": "num?", "share": "num?", "display": "str?", "op": "str?", "module": "str?", "kind": "str",
           "tflops": "num?", "gbps": "num?", "per_step_us": "list?", "occupancy": "dict?", "counters": "dict"}
_ENTRIES: dict[str, dict[str, str]] = {
    "kernels": _KERNEL, "top_kernels": _KERNEL,
    "recommendations": {"id": "str!", "level": "level!", "title": "str!", "action": "str!", "evidence": "str!",
                        "saving_us": "num?!", "saving_pct": "num?!", "saving_source": "str!", "seed": "str!",
                        "metrics": "dict"},
    "steps": {"name": "str", "dur_us": "num!", "busy_us": "num?", "start_us": "num", "categories_us": "dict"},
    "ops": {"op": "str!", "category": "str!", "time_us": "num!", "calls": "int", "efficiency": "num?",
            "intensity": "num?", "tflops": "num?", "gbps": "num?", "flops": "num?", "bytes": "num?",
            "roof_tflops": "num?", "peak": "str?", "bound": "str?", "kernels": "list", "shapes": "list?",
            "dtypes": "list?", "module": "str", "notes": "list"},
    "patterns": {"kind": "str!", "time_us": "num!", "count": "int"},
    "host_api": {"name": "str!", "calls": "int", "total_us": "num", "mean_us": "num", "max_us": "num"},
}

def _check_entries(data: dict[str, Any]) -> None:
    """UserError naming the first list entry whose key is missing or of a type the reports cannot read."""
    from rocanalyze.errors import UserError

    for field_name, schema in _ENTRIES.items():
        for i, entry in enumerate(data.get(field_name) or []):
            for key, spec in schema.items():
                kind = spec.rstrip("!?")
                if key not in entry:
                    if "!" in spec:
                        raise UserError(f"'{field_name}[{i}]' has no '{key}': analyze the run again")
                    continue
                value = entry[key]
                if value is None and "?" in spec:
                    continue
                if not fits_json_type(value, _JSON_TYPES[kind]):
                    raise UserError(f"'{field_name}[{i}].{key}' holds a JSON {type(value).__name__} where "
                                    f"rocanalyze writes {kind}: analyze the run again")


def _check_fields(kind: type, data: dict[str, Any], prefix: str) -> None:
    """UserError naming the first field of `data` whose JSON type the dataclass `kind` does not allow."""
    from rocanalyze.errors import UserError

    for f in dataclasses.fields(kind):
        if f.name not in data or (data[f.name] is None and "None" in str(f.type)):
            continue
        found = _wrong_value(data[f.name], str(f.type))
        if found is not None:
            written = "a JSON object" if f.type == "RunInfo" else f.type
            raise UserError(f"'{prefix}{f.name}' holds a JSON {type(found).__name__} where rocanalyze writes "
                            f"{written}: analyze the run again")


def _wrong_value(value: Any, annotation: str) -> Any:
    """The value (or the first item) that does not fit the annotation; None when all fit."""
    if not fits_json_type(value, _JSON_TYPES[annotation.split("[")[0].split(" ")[0]]):
        return value
    items = {"list[dict": (value, (dict,)), "list[str": (value, (str,)),
             "dict[str, float]": (value.values() if isinstance(value, dict) else [], (int, float))}
    for start, (members, allowed) in items.items():
        if annotation.startswith(start):
            return next((item for item in members if not fits_json_type(item, allowed)), None)
    return None


def _jsonable(value: Any) -> Any:
    """numpy scalars and NaN-free floats: analysis code may hand us numpy types."""
    import math

    import numpy as np

    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON-able: {type(value).__name__}")
