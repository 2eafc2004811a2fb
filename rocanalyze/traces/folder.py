"""A folder is one run: its traces are read and joined into one EventTable.

- torch.profiler traces, one per rank (torchrun), become one multi-rank table; rocprof files in the
  same folder are left out (another profiler's clock) with a note.
- Otherwise the rocprof files are stacked (kernel trace + API trace + copies, joined by correlation
  id); the same dispatches written twice (results.csv, results.json and results.db of one rocprof
  run) are kept once; stats CSVs give `aggregates` only when no timeline exists; counter-collection
  runs (a replay, not the timeline) contribute counters only.
- Files that are not traces (sysinfo, schemas, thread-trace output) are skipped with a note;
  agent_info.csv and sysinfo.csv still describe the GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from rocanalyze.errors import UserError
from rocanalyze.traces import merge, quality
from rocanalyze.traces.links import link_runtime
from rocanalyze.traces.rocminfo import devices_from_folder
from rocanalyze.traces.schema import AGGREGATE_COLUMNS, GPU_COLUMNS, EventTable, make_frame

_MAX_FILES = 2000


def _files(root: Path) -> list[Path]:
    """Regular files under root (no hidden files or folders), sorted, at most _MAX_FILES."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).parts
        if path.is_file() and not any(p.startswith(".") for p in rel):
            out.append(path)
            if len(out) >= _MAX_FILES:
                break
    return out


# What `rocanalyze profile` writes beside its traces (records, reports, Triton artifacts): never traces.
_RUN_RECORDS = {"run.json", "env.json", "memory.json", "occupancy.json", "job.json", "done", "analysis.json",
                "report.html", "summary.md", "trace.pftrace", "command.txt", "child.json", "join.json"}


def _is_run_record(rel: Path) -> bool:
    return rel.name in _RUN_RECORDS or rel.suffix == ".md" or "triton" in rel.parts[:-1]


def _read_all(root: Path, progress: bool) -> tuple[list[EventTable], list[str]]:
    from rocanalyze.traces import detect

    tables, notes = [], []
    for path in _files(root):
        rel = path.relative_to(root)
        if _is_run_record(rel):
            continue
        if path.stat().st_size == 0:
            notes.append(f"skipped {rel}: empty file")
            continue
        try:
            module = detect(path)
            if module is None:
                notes.append(f"skipped {rel}: not a trace")
                continue
            tables.append(module.read(path, progress=progress))
        except UserError as exc:
            notes.append(f"skipped {rel}: {str(exc).split(': ', 1)[-1]}")
    return tables, notes


def use_run_record(table: EventTable) -> None:
    """What a `rocanalyze profile` run's run.json says about its trace: which steps it recorded, and
    where its last step ends.

    torch names the range after the N-th profiler.step() call ProfilerStep#N, and only the next
    step() closes it; the profiler's stop closes the last one. run.json beside the trace says how
    many steps the script marked (S), so ProfilerStep#N with N >= S is the tail after the last step:
    whatever the script did after it (an evaluation, a benchmark) would count as a step otherwise.
    """
    if not table.paths:
        return
    try:
        facts = json.loads((Path(table.paths[0]).parent / "run.json").read_text())["torch"]
        marked = int(facts["steps"])
        if facts.get("stepped_aside_at") is not None:  # the script's own profiler ended ours there: a cut step
            marked = min(marked, int(facts["stepped_aside_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return          # not a profile run folder, or no torch pass: nothing says where steps end
    notes = [f"run.json: {note}" for note in run_record_notes(facts, gpu_rows=len(table.gpu))]
    ann = table.annotations
    if len(ann) and marked >= 1:
        numbers = pd.to_numeric(ann["name"].astype(str).str.extract(r"#(\d+)\s*$")[0], errors="coerce")
        tail = (ann["kind"] == "step").to_numpy() & (numbers >= marked).to_numpy()
        if tail.any():
            names = ", ".join(ann["name"].astype(str)[tail].tolist()[:3])
            table.annotations = ann[~tail].reset_index(drop=True)
            notes.append(f"left out {names}: the tail after the script's last step (run.json: {marked} steps), "
                         "not a step")
    table.notes = [*table.notes, *notes]


CHILD_CPU_S = 0.5   # CPU seconds in child processes that say the work ran there (CUDA init alone is more)


def run_record_notes(facts: dict, gpu_rows: int | None) -> list[str]:
    """What run.json's torch facts say a reader must know: the schedule's note, the stop's, and where the work
    ran. The analysis notes and `profile`'s summary both print these. gpu_rows: the GPU rows recorded, None when
    not known (not analyzed)."""
    notes = [str(facts[key]) for key in ("schedule_note", "stop_note") if facts.get(key)]
    child = child_process_note(facts, gpu_rows)
    return notes + ([child] if child else [])


def child_process_note(facts: dict, gpu_rows: int | None) -> str | None:
    """When the profiled process recorded no GPU work but its children worked (mp.spawn, a launcher running
    `python train.py`), the GPU work ran where torch.profiler in this process cannot see it."""
    try:
        children_s = float(facts.get("children_cpu_s") or 0.0)
    except (TypeError, ValueError):
        return None
    if gpu_rows is None or gpu_rows or children_s < CHILD_CPU_S or facts.get("gpu_activity") is not True:
        return None   # no GPU visible to torch here: the CPU-only line says enough
    return (f"this process recorded no GPU work, but the child processes the script started used {children_s:.1f} s "
            "of CPU: the work ran there, where this profiler cannot see it; profile the workers themselves "
            "(under torchrun: `torchrun ... -m rocanalyze profile train.py`; a launcher: profile the script it runs)")


def _signature(table: EventTable) -> tuple[int, int, int, int]:
    gpu = table.gpu
    if not len(gpu):
        return (0, 0, 0, len(table.runtime))
    return (len(gpu), int(gpu["start_ns"].min()), int(gpu["dur_ns"].sum()), len(table.runtime))


def _dedupe(tables: list[EventTable], notes: list[str]) -> list[EventTable]:
    """Drop tables holding the same dispatches as a richer one (same count, first start, total time)."""
    kept: list[EventTable] = []
    for t in sorted(tables, key=lambda t: (-len(t.runtime), -len(t.gpu))):
        sig = _signature(t)
        twin = next((k for k in kept if len(t.gpu) and _signature(k)[:3] == sig[:3]), None)
        if twin is not None:
            notes.append(f"skipped {Path(t.paths[0]).name}: the same dispatches as {Path(twin.paths[0]).name}")
        else:
            kept.append(t)
    return kept


def _ranks(tables: list[EventTable], notes: list[str]) -> None:
    """One rank per Kineto file: the recorded rank, or the file's position when ranks collide."""
    recorded = [int(t.gpu["rank"].iloc[0]) if len(t.gpu) else int(t.ops["rank"].iloc[0]) if len(t.ops) else 0
                for t in tables]
    if len(set(recorded)) == len(recorded):
        return
    notes.append("the traces do not record distinct ranks: ranks numbered in file-name order")
    for i, t in enumerate(tables):
        for frame in (t.gpu, t.runtime, t.ops, t.annotations, t.aggregates):
            frame["rank"] = np.int32(i)


def _rocprof(traces: list[EventTable], notes: list[str]) -> list[EventTable]:
    traces = _dedupe(traces, notes)
    timeline = [t for t in traces if len(t.gpu) and t.source_format != "rocprofv3-counters-csv"]
    out = []
    for t in traces:
        if t.source_format == "rocprofv3-counters-csv" and timeline and len(t.gpu):
            counters = t.metadata.get("counters")
            if isinstance(counters, pd.DataFrame):
                counters = counters.assign(gpu_row=-1, name=t.gpu["name"].astype(str).to_numpy(),
                                           dispatch_id=t.gpu["dispatch_id"].to_numpy())
            t = EventTable.build(source_format=t.source_format, paths=t.paths,
                                 metadata={"counters": counters}, devices=t.devices,
                                 notes=[f"{Path(t.paths[0]).name}: counter-collection replay, counters kept "
                                        "(not joined to the timeline)"])
        if len(t.aggregates) and timeline:
            notes.append(f"{Path(t.paths[0]).name}: per-kernel totals not used (the folder has a timeline)")
            t.aggregates = make_frame(AGGREGATE_COLUMNS, {}, 0)
        out.append(t)
    return out


def read_folder(root: Path, *, progress: bool = False) -> EventTable:
    """Read every trace under `root` as one run (see the module docstring)."""
    tables, notes = _read_all(root, progress)
    info = [t for t in tables if t.metadata.get("not_a_trace")]
    traces = [t for t in tables if not t.metadata.get("not_a_trace")]
    if not traces:
        detail = f" ({'; '.join(notes[:3])})" if notes else ""
        raise UserError(f"no trace found in this folder{detail}", root)
    kineto = [t for t in traces if t.source_format == "kineto"]
    if kineto:
        for t in traces:
            if t.source_format != "kineto":
                notes.append(f"not joined: {Path(t.paths[0]).name} ({t.source_format}, another profiler's clock)")
        _ranks(kineto, notes)
        for t in kineto:
            use_run_record(t)
        table = merge.concat(kineto, "kineto")
    else:
        table = merge.concat(_rocprof(traces, notes))
        link_runtime(table)
    if not table.devices:
        table.devices = next((t.devices for t in info if t.devices), []) or devices_from_folder(root)
    if not len(table.gpu):
        table.gpu = make_frame(GPU_COLUMNS, {}, 0)
    table.paths = [str(root)]
    table.metadata["files"] = [p for t in tables for p in t.paths]
    table.notes = list(dict.fromkeys(table.notes + notes))   # ranks often say the same thing
    dropped = sum(int(t.quality.get("dropped_events") or 0) for t in traces)
    table.quality = quality.assess(table, dropped=dropped)
    return table
