"""The analysis pipeline: any trace or run folder -> one `Analysis` (what every report reads).

read -> classify -> per rank: window, time accounting -> kernels, timeline, patterns, per-op model,
occupancy -> recommendations. Each step is a plain function listed in rocanalyze.analysis.ANALYZERS.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocanalyze._version import __version__
from rocanalyze.analysis.kernels import display_name
from rocanalyze.analysis.result import Analysis, RunInfo, fits_json_type
from rocanalyze.analysis.timeaccount import NS_PER_US, TimeAccount, account
from rocanalyze.analysis.window import Window, choose_window
from rocanalyze.errors import UserError
from rocanalyze.paths import load_data_toml
from rocanalyze.runfolder import read_record
from rocanalyze.traces.schema import EventTable


def analyze(path: str | Path, *, steps: str | None = None, rank: int | None = None, gpu: str | None = None,
            peaks: str | Path | None = None, progress: bool = False) -> Analysis:
    """Read a trace file or run folder and analyze it."""
    return analyze_with_table(path, steps=steps, rank=rank, gpu=gpu, peaks=peaks, progress=progress)[0]


def analyze_with_table(path: str | Path, *, steps: str | None = None, rank: int | None = None,
                       gpu: str | None = None, peaks: str | Path | None = None, progress: bool = False,
                       allow_empty: bool = False) -> tuple[Analysis, EventTable]:
    """Like analyze(), also returning the full EventTable (the Perfetto writer needs it)."""
    from rocanalyze.traces import read

    path = Path(path)
    if not path.exists():
        raise UserError("no such file or folder", path)
    table = read(path, progress=progress)
    run = _run_info(path, table)
    analysis = analyze_table(table, run=run, steps=steps, rank=rank, gpu=gpu, peaks=peaks,
                             allow_empty=allow_empty or run.command is not None)
    return _attach_run_files(analysis, path), table


def analyze_table(table: EventTable, *, run: RunInfo | None = None, steps: str | None = None,
                  rank: int | None = None, gpu: str | None = None, peaks: str | Path | None = None,
                  allow_empty: bool = False) -> Analysis:
    """Analyze an EventTable already in memory (classification is filled in place)."""
    from rocanalyze.analysis.classify import classify_table
    from rocanalyze.analysis.gpu_spec import select_gpu

    run = run or RunInfo(source=",".join(table.paths), source_format=table.source_format)
    barrier_note = _drop_barrier_packets(table)
    classify_table(table)
    spec = select_gpu(table.devices, override=gpu, peaks_file=peaks)
    notes = list(table.notes) + list(getattr(spec, "notes", []) or []) + barrier_note
    base = dict(run=run, device=spec.to_dict(), quality=dict(table.quality), notes=notes)
    if not len(table.gpu):
        if len(table.aggregates):
            return _aggregate_only(table, base)
        if isinstance(table.metadata.get("dispatches"), pd.DataFrame) and len(table.metadata["dispatches"]):
            return _untimed_dispatches(table, base)
        if not len(table.ops) and (len(table.runtime) or len(table.annotations)):  # not a CPU-only torch trace
            # no GPU work: which GPU it was changes nothing, so no "pass --gpu" note
            return _host_api_only(table, {**base, "notes": list(table.notes) + barrier_note})
        if not allow_empty:
            raise UserError("no GPU activity in this trace (CPU-only profile?)", run.source)
        return Analysis(**{**base, "notes": list(table.notes) + barrier_note  # which GPU: moot without GPU work
                           + ["no GPU activity was recorded (CPU-only run or no GPU work)"]},
                        window_us=0.0, busy_us=0.0, idle_us=0.0)
    ranks = sorted(int(r) for r in table.gpu["rank"].unique())
    primary = ranks[0] if rank is None else rank
    if primary not in ranks:
        raise UserError(f"--rank {rank}: the trace has ranks {', '.join(map(str, ranks))}")
    result = _analyze_rank(table, primary, steps, spec, base)
    if len(ranks) > 1:
        result = result.replace(ranks=_rank_summaries(table, ranks, steps, result))
    return _finish(result, table)


BARRIER_PACKET = "<barrier packet>"


def _drop_barrier_packets(table: EventTable) -> list[str]:
    """rocprof lists AQL barrier packets as dispatches; their 'duration' is a wait on other work, not GPU
    work, so they are left out of kernels and categories (and said so)."""
    notes = []
    for attr, time_col in (("gpu", "dur_ns"), ("aggregates", "total_ns")):
        frame = getattr(table, attr)
        if not len(frame):
            continue
        hit = frame["name"].astype(str).to_numpy() == BARRIER_PACKET
        if hit.any():
            setattr(table, attr, frame[~hit])
            notes.append(f"left out {int(hit.sum())} '{BARRIER_PACKET}' rows ({frame[time_col][hit].sum() / 1e6:.1f} "
                         f"ms): AQL barrier packets wait on other work, they are not kernels")
    return notes


def _cut(table: EventTable, rank: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, int]:
    """One rank's GPU rows on its busiest device, plus its runtime calls and annotations."""
    g = table.gpu[table.gpu["rank"].to_numpy() == rank]
    device = int(g.groupby("device", observed=True)["dur_ns"].sum().idxmax())
    g = g[g["device"].to_numpy() == device]
    ann = table.annotations[table.annotations["rank"].to_numpy() == rank]
    return g, table.runtime, ann, device


def _window_rows(gpu: pd.DataFrame, window: Window) -> pd.DataFrame:
    s = gpu["start_ns"].to_numpy(np.int64)
    e = s + gpu["dur_ns"].to_numpy(np.int64)
    return gpu[(e > window.start_ns) & (s < window.end_ns)]


def _analyze_rank(table: EventTable, rank: int, steps: str | None, spec: Any, base: dict) -> Analysis:
    from rocanalyze.analysis.kernels import kernel_table
    from rocanalyze.analysis.timeline import timeline

    cfg = load_data_toml("analysis.toml")
    gpu, runtime, ann, device = _cut(table, rank)
    window = choose_window(gpu, ann, runtime, steps)
    rows = _window_rows(gpu, window)
    acc = account(rows, runtime, window)
    kernels = kernel_table(rows, table.ops, window, acc.busy_ns)
    windowed = dataclasses.replace(table, gpu=rows, metadata={**table.metadata, "window_ns": (
        window.start_ns, window.end_ns), "rank": rank, "device": device})
    ops, kernel_rates = _op_model(windowed, spec)
    _merge_rates(kernels, kernel_rates)
    occupancy = _occupancy(rows, base["device"], table)
    _merge_occupancy(kernels, occupancy)
    idle_ns = acc.idle_ns
    window_ns = window.dur_ns
    assert sum(acc.categories_ns.values()) + sum(idle_ns.values()) == window_ns, "time accounting leak"
    return Analysis(
        **base,
        window_us=window_ns / NS_PER_US,
        window={"start_us": window.start_ns / NS_PER_US, "end_us": window.end_ns / NS_PER_US, "how": window.how,
                "steps": [s.name for s in window.steps], "rank": rank, "device": device},
        busy_us=acc.busy_ns / NS_PER_US, idle_us=sum(idle_ns.values()) / NS_PER_US,
        idle_breakdown_us={k: v / NS_PER_US for k, v in sorted(idle_ns.items())},
        startup_us=window.startup_ns / NS_PER_US,
        categories_us={k: v / NS_PER_US for k, v in sorted(acc.categories_ns.items(), key=lambda kv: -kv[1])},
        overlap=acc.overlap, launch=acc.launch, steps=acc.steps,
        kernels=kernels, top_kernels=_top(kernels), ops=ops,
        patterns=_patterns(windowed), occupancy=occupancy,
        timeline=timeline(rows, window, cfg["timeline"]["max_bins"]),
    ).replace(notes=base["notes"] + window.notes + _unclassified(kernels, cfg))


def _unclassified(kernels: list[dict], cfg: dict) -> list[str]:
    from rocanalyze.analysis.kernels import unclassified_note

    note = unclassified_note(kernels, cfg["kernels"]["unclassified_note_share"])
    return [note] if note else []


def _op_model(windowed: EventTable, spec: Any) -> tuple[list[dict], list[dict]]:
    from rocanalyze.analysis.opmodel import model_ops

    return model_ops(windowed, spec)


def _merge_rates(kernels: list[dict], rates: list[dict]) -> None:
    by_name = {r["name"]: r for r in rates}
    for k in kernels:
        r = by_name.get(k["name"])
        if r:
            k["tflops"], k["gbps"] = r.get("tflops"), r.get("gbps")


def _top(kernels: list[dict]) -> list[dict]:
    """The top-kernels list: the first N of the per-kernel table (N in analysis.toml)."""
    return kernels[: load_data_toml("analysis.toml")["kernels"]["top"]]


def _merge_occupancy(kernels: list[dict], occupancy: list[dict]) -> None:
    first: dict[str, dict] = {}
    for entry in occupancy:
        first.setdefault(entry["kernel"], entry)
    for k in kernels:
        if k["name"] in first:
            k["occupancy"] = {key: first[k["name"]].get(key) for key in (
                "waves_per_simd", "occupancy_pct", "limiter", "vgpr", "lds_bytes")}


def _patterns(windowed: EventTable) -> list[dict]:
    from rocanalyze.analysis.patterns import find_patterns

    return sorted(find_patterns(windowed), key=lambda p: -p.get("time_us", 0.0))


def _occupancy(rows: pd.DataFrame, device: dict, table: EventTable) -> list[dict]:
    """Occupancy per dispatched kernel; the arch comes from the GPU spec, else from the trace itself."""
    from rocanalyze.analysis.dispatch_occupancy import dispatch_occupancy

    arch = device.get("arch") or next((d.arch for d in table.devices if d.arch), None)
    return dispatch_occupancy(rows, arch)


def _rank_summaries(table: EventTable, ranks: list[int], steps: str | None, primary: Analysis) -> list[dict]:
    """One row per rank; the primary rank's comes from its finished analysis rather than a second pass."""
    out = []
    for r in ranks:
        if r == primary.window["rank"]:
            out.append({"rank": r, "device": primary.window["device"], "window_us": primary.window_us,
                        "busy_us": primary.busy_us, "categories_us": dict(primary.categories_us),
                        "idle_us": primary.idle_us,
                        "exposed_communication_us": primary.overlap["exposed_communication_us"]})
            continue
        gpu, runtime, ann, device = _cut(table, r)
        window = choose_window(gpu, ann, runtime, steps)
        acc: TimeAccount = account(_window_rows(gpu, window), runtime, window)
        out.append({"rank": r, "device": device, "window_us": window.dur_ns / NS_PER_US,
                    "busy_us": acc.busy_ns / NS_PER_US,
                    "categories_us": {k: v / NS_PER_US for k, v in acc.categories_ns.items()},
                    "idle_us": sum(acc.idle_ns.values()) / NS_PER_US,
                    "exposed_communication_us": acc.overlap["exposed_communication_us"]})
    # the slowest rank is the one the others wait for in collectives: most GPU time outside communication
    # (a rank that waits inside an all-reduce looks busy, but it is the one waiting)
    for x in out:
        x["compute_us"] = sum(v for k, v in x["categories_us"].items() if k != "communication")
    slowest = max(out, key=lambda x: x["compute_us"])
    mean = sum(x["compute_us"] for x in out) / len(out)
    for x in out:
        x["slowest"] = x is slowest
        x["imbalance"] = (slowest["compute_us"] - x["compute_us"]) / mean if mean else 0.0
    return out


def _aggregate_only(table: EventTable, base: dict) -> Analysis:
    """Stats-only inputs (results.stats.csv): per-kernel totals, no timeline, window unknown."""
    from rocanalyze.analysis.classify import classify_kernel

    agg = table.aggregates.copy()
    agg["category"] = [c if c else classify_kernel(n, op or None)
                       for n, c, op in zip(agg["name"].astype(str), agg["category"].astype(str),
                                           agg["op"].astype(str), strict=True)]
    total = int(agg["total_ns"].sum())
    cats = agg.groupby("category", observed=True)["total_ns"].sum().sort_values(ascending=False)
    kernels = [{"name": str(r.name), "display": display_name(str(r.name)), "category": str(r.category),
                "kind": str(r.kind), "calls": int(r.calls),
                "total_us": r.total_ns / NS_PER_US, "mean_us": r.total_ns / NS_PER_US / max(1, r.calls),
                "min_us": None, "max_us": None, "share": r.total_ns / total if total else 0.0, "op": str(r.op) or None,
                "module": None, "per_step_us": None, "tflops": None, "gbps": None, "occupancy": None}
               for r in agg.sort_values("total_ns", ascending=False).itertuples()]
    return _finish(Analysis(
        **{**base, "notes": base["notes"] + ["aggregate statistics only (no timeline): the window, idle "
                                             "time and overlaps are unknown; busy is the sum of kernel times"]
           + _unclassified(kernels, load_data_toml("analysis.toml"))},
        window_us=None, busy_us=total / NS_PER_US, idle_us=None,
        categories_us={str(k): v / NS_PER_US for k, v in cats.items()}, kernels=kernels,
        top_kernels=_top(kernels)), table)


def _untimed_dispatches(table: EventTable, base: dict) -> Analysis:
    """Counter files (rocprof -i, rocprofv3 counter collection): dispatches with resources and counters
    but no timestamps. Calls, occupancy and counter totals per kernel; times unknown."""
    from rocanalyze.analysis.classify import classify_kernel

    rows = table.metadata["dispatches"].copy()
    rows["name"] = rows["name"].astype(str)
    counters = table.metadata.get("counters")
    numeric = [c for c in counters.columns if c not in ("gpu_row", "name")] if counters is not None else []
    sums = (counters.assign(name=rows["name"].to_numpy()).groupby("name")[numeric].sum()
            if numeric and len(counters) == len(rows) else None)
    kernels = []
    for name, calls in rows["name"].value_counts().items():
        entry = {"name": name, "display": display_name(name), "category": classify_kernel(name), "kind": "kernel",
                 "calls": int(calls),
                 "total_us": None, "mean_us": None, "min_us": None, "max_us": None, "share": None, "op": None,
                 "module": None, "per_step_us": None, "tflops": None, "gbps": None, "occupancy": None}
        if sums is not None and name in sums.index:
            entry["counters"] = {k: float(v) for k, v in sums.loc[name].items()}
        kernels.append(entry)
    timed = rows.assign(dur_ns=0, kind="kernel")
    occupancy = _occupancy(timed, base["device"], table)
    _merge_occupancy(kernels, occupancy)
    return _finish(Analysis(
        **{**base, "notes": base["notes"] + ["hardware counters per dispatch without timestamps: calls, "
                                             "occupancy and counter totals per kernel; GPU time is unknown"]},
        kernels=kernels, top_kernels=_top(kernels), occupancy=occupancy), table)


def _duration(us: float) -> str:
    return f"{us / 1e3:.1f} ms" if us >= 1e3 else f"{us:.1f} µs"


def _host_api_only(table: EventTable, base: dict) -> Analysis:
    """Host API or marker traces (hip_api_trace.csv, marker_api_trace.csv): the calls, no GPU activity."""
    rt = table.runtime if len(table.runtime) else table.annotations
    frame = pd.DataFrame({"name": rt["name"].astype(str).to_numpy(), "dur": rt["dur_ns"].to_numpy(np.int64)})
    stats = frame.groupby("name")["dur"].agg(["count", "sum", "mean", "max"]).sort_values("sum", ascending=False)
    span = (int((rt["start_ns"] + rt["dur_ns"]).max()) - int(rt["start_ns"].min())) / NS_PER_US
    host_api = [{"name": n, "calls": int(r["count"]), "total_us": r["sum"] / NS_PER_US,
                 "mean_us": r["mean"] / NS_PER_US, "max_us": r["max"] / NS_PER_US} for n, r in stats.iterrows()]
    top = ", ".join(f"{h['name']} {_duration(h['total_us'])}" for h in host_api[:3])
    what = "host API calls" if len(table.runtime) else "markers"
    note = (f"no GPU activity in this trace: it holds {len(rt)} {what} over {_duration(span)} "
            f"(most time in {top}); capture kernels too (rocprofv3 --kernel-trace) to see GPU time")
    return _finish(Analysis(**{**base, "notes": base["notes"] + [note]}, host_api=host_api[:100]), table)


def _finish(analysis: Analysis, table: EventTable) -> Analysis:
    from rocanalyze.analysis.recommend import recommend

    analysis = analysis.replace(quality={**analysis.quality, **_quality(table)})
    return analysis.replace(recommendations=recommend(analysis))


def _quality(table: EventTable) -> dict:
    g = table.gpu
    if not len(g):
        return {}
    out: dict[str, Any] = {"gpu_events": int(len(g))}
    if (g["launch_index"].to_numpy() < 0).any() and len(table.runtime):
        kernels = g["kind"].astype(str).to_numpy() == "kernel"
        out["kernels_without_launch"] = int(((g["launch_index"].to_numpy() < 0) & kernels).sum())
    return out


def _run_folders(path: Path) -> list[Path]:
    """The run folder and, for a torchrun job folder, its rank folders (rank0 first)."""
    if not path.is_dir():
        return []
    ranks = sorted((p for p in path.glob("rank*") if p.is_dir() and p.name[4:].isdigit()),
                   key=lambda p: int(p.name[4:]))
    return [path, *ranks]


def _attach_run_files(analysis: Analysis, path: Path) -> Analysis:
    """What `profile` recorded beside the trace: Triton kernels' occupancy and device memory."""
    occupancy, memory, notes = list(analysis.occupancy), dict(analysis.memory), []
    for folder in _run_folders(path):
        occ_file, mem_file = folder / "occupancy.json", folder / "memory.json"
        if occ_file.is_file():
            entries, note = read_record(occ_file, list)
            occupancy += [dict(e, source=e.get("source") or f"triton ({folder.name})")
                          for e in entries or [] if isinstance(e, dict)]
            notes += [note] if note else []
        if mem_file.is_file() and not memory:
            memory, note = read_record(mem_file)
            memory, notes = memory or {}, notes + ([note] if note else [])
    if occupancy == analysis.occupancy and memory == analysis.memory and not notes:
        return analysis
    kernels = [dict(k) for k in analysis.kernels]
    _merge_occupancy(kernels, [e for e in occupancy if e.get("kernel") and not e.get("error")])
    return analysis.replace(occupancy=occupancy, memory=memory, kernels=kernels, top_kernels=_top(kernels),
                            notes=analysis.notes + notes)


# what the report takes from run.json, and the type `profile` writes each as
_RUN_FIELDS: dict[str, type] = {"command": list, "exit_code": int, "failed": bool, "partial": bool}
_ENV_SECTIONS = ("torch", "variables", "sysctl")  # env.json's sections the reports and rules read as dicts


def _run_info(path: Path, table: EventTable) -> RunInfo:
    from rocanalyze.analysis.classify import rules_digest

    info: dict[str, Any] = {"source": str(path), "source_format": table.source_format,
                            "rocanalyze_version": __version__, "rules_digest": rules_digest(),
                            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    # the run folder's own run.json, else (a torchrun job folder) its lowest rank's
    folders = _run_folders(path)
    run_folder = next((f for f in folders if (f / "run.json").is_file()), None)
    if run_folder is not None:
        meta, note = read_record(run_folder / "run.json")
        table.notes.extend([note] if note else [])
        if (meta or {}).get("status") == "running":  # profile rewrites it when the script ends, however it ends
            table.notes.append("run.json: the run never finished its record: it is still running, or the process "
                               "died without Python's shutdown (a native crash, a kill, os._exit) after this trace "
                               "was saved; its exit code is unknown")
        for key, kind in _RUN_FIELDS.items():
            value = (meta or {}).get(key)
            if value is None:
                continue
            if fits_json_type(value, (kind,)) and (key != "command" or all(isinstance(part, str) for part in value)):
                info[key] = value
            else:
                article = "an" if kind.__name__[0] in "aeiou" else "a"
                table.notes.append(f"run.json: '{key}' left out: {type(value).__name__} {str(value)[:40]!r} "
                                   f"is not {article} {kind.__name__}")
    env_folder = next((f for f in folders if (f / "env.json").is_file()), None)
    if env_folder is not None:
        env, note = read_record(env_folder / "env.json")
        table.notes.extend([note] if note else [])
        for section in [k for k in _ENV_SECTIONS if env and k in env and not isinstance(env[k], dict)]:
            table.notes.append(f"env.json: '{section}' left out: a {type(env[section]).__name__}, not a dict")
            del env[section]
        info.update({"env": env} if env is not None else {})
    return RunInfo(**info)
