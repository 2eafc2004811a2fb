"""Trace reading speed and memory, side by side in one run, each case in a fresh subprocess.

Builds ~2M and ~10M event Kineto traces by repeating the steps of a real training-step trace
(timestamps and ids shifted per repetition), then times, for each size:

  floor      msgspec typed decode of only the fields rocanalyze needs (the whole document in memory)
  floor_min  the same with a minimal field set (ph, cat, name, pid, tid, ts, dur, the two join ids)
  orjson     whole-document orjson.loads (garbage collector paused, as its best case)
  read       rocanalyze.traces.read (streamed, chunked, columns built in batches)
  analyze    rocanalyze.analysis.build.analyze (when that module imports)
  hta        holistictraceanalysis TraceAnalysis load (when installed; benchmark-only dependency)

Peak memory is the child's ru_maxrss. Usage:

    python benchmarks/bench_read.py [--sizes 2000000,10000000] [--work /tmp/rocanalyze-bench] [--cases ...]
        [--source ../shared/realdata/torch_traces/tracelens/mi300x_resnet_act_checkpoint_train.json.gz]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REALDATA = HERE.parent.parent / "shared" / "realdata" / "torch_traces" / "tracelens"
SOURCE = REALDATA / "mi300x_resnet_act_checkpoint_train.json.gz"

# ids that must stay unique per repetition (flows, correlation, ops, python frames)
_ARG_IDS = ("External id", "correlation", "Python id", "Python parent id", "Ev Idx", "Sequence number")


def build_trace(source: Path, events: int, out: Path) -> int:
    """Write `out` (plain JSON) with about `events` trace events; returns the event count written."""
    import orjson

    with gzip.open(source) as fh:
        doc = json.load(fh)
    base = doc.pop("traceEvents")
    timed = [e for e in base if isinstance(e.get("ts"), (int, float))]
    t0 = min(e["ts"] for e in timed)
    t1 = max(e["ts"] + e.get("dur", 0) for e in timed)
    span = (t1 - t0) + 1000.0  # µs between repetitions: the steps follow each other after 1 ms
    id_step = 10_000_000
    reps = max(1, round(events / len(base)))
    written = 0
    with open(out, "wb") as fh:
        head = orjson.dumps(doc)[:-1]  # metadata first, as Kineto writes it
        fh.write(head + b', "traceEvents": [\n')
        for k in range(reps):
            chunk = []
            for e in base:
                if k and e.get("ph") == "M":
                    continue
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    e2["ts"] = round(e2["ts"] + k * span, 3)
                if "id" in e2 and isinstance(e2["id"], int):
                    e2["id"] += k * id_step
                args = e2.get("args")
                if args:
                    args = dict(args)
                    for key in _ARG_IDS:
                        if isinstance(args.get(key), int):
                            args[key] += k * id_step
                    e2["args"] = args
                chunk.append(orjson.dumps(e2))
            sep = b",\n" if k else b""
            fh.write(sep + b",\n".join(chunk))
            written += len(chunk)
        fh.write(b"\n]}\n")
    return written


CASES = {
    "floor": "import benchmarks._floor as f; f.run(PATH)",
    "floor_min": "import benchmarks._floor as f; f.run_min(PATH)",
    "orjson": "import gc, orjson; gc.disable(); d = orjson.loads(open(PATH, 'rb').read()); "
              "print(len(d['traceEvents']))",
    "read": "import rocanalyze.traces as t; e = t.read(PATH); print(len(e.gpu), len(e.ops))",
    "analyze": "from rocanalyze.analysis.build import analyze; a = analyze(PATH); print(a.window_us)",
    "hta": "from hta.trace_analysis import TraceAnalysis; import os, shutil, tempfile; "
           "d = tempfile.mkdtemp(); os.symlink(PATH, os.path.join(d, 'rank-0.json')); "
           "TraceAnalysis(trace_dir=d)",
}


def available(case: str) -> bool:
    """Whether a case can run here (analyze and hta are optional)."""
    probe = {"analyze": "import rocanalyze.analysis.build", "hta": "import hta.trace_analysis"}.get(case)
    if probe is None:
        return True
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def run_case(case: str, path: Path, timeout: float) -> tuple[float, float, str]:
    """Run one case in a fresh interpreter; returns (seconds, peak RSS in MB, last stdout line)."""
    code = f"PATH = {str(path)!r}\nimport time; _t = time.perf_counter()\n{CASES[case]}\n" \
           "import resource; print('ELAPSED', time.perf_counter() - _t, " \
           "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          cwd=HERE.parent, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              p for p in (str(HERE.parent), os.environ.get("PYTHONPATH", "")) if p)})
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or f"exit {proc.returncode}").splitlines()
        return float("nan"), float("nan"), lines[-1][:120]
    elapsed, peak_kb = proc.stdout.split("ELAPSED")[-1].split()
    # the child's own ru_maxrss (kB on Linux): its peak resident memory
    out = proc.stdout.split("ELAPSED")[0].strip().splitlines()
    return float(elapsed), int(peak_kb) / 1024, out[-1] if out else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000000,10000000")
    ap.add_argument("--work", default="/tmp/rocanalyze-bench")
    ap.add_argument("--cases", default="floor,floor_min,orjson,read,analyze,hta")
    ap.add_argument("--large-skip", default="orjson,hta",
                    help="cases skipped above 5M events (whole-document parsers that need >15 GB there)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--source", default=str(SOURCE), help="the real trace whose steps are repeated")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    for size in [int(s) for s in args.sizes.split(",")]:
        path = work / f"trace_{size // 1_000_000}M.json"
        if not path.exists():
            t = time.perf_counter()
            n = build_trace(Path(args.source), size, path)
            print(f"built {path} ({n} events, {path.stat().st_size / 1e6:.0f} MB) "
                  f"in {time.perf_counter() - t:.0f} s", flush=True)
        print(f"\n{path.name}: {path.stat().st_size / 1e6:.0f} MB")
        results: dict[str, tuple[float, float, str]] = {}
        for case in args.cases.split(","):
            if not available(case):
                print(f"  {case:9s} skipped (not installed / not written yet)")
                continue
            if case in args.large_skip.split(",") and size > 5_000_000:
                print(f"  {case:9s} skipped at this size (--large-skip)")
                continue
            secs, peak, out = run_case(case, path, args.timeout)
            results[case] = (secs, peak, out)
            floor = results.get("floor", (float("nan"),))[0]
            low = results.get("floor_min", (float("nan"),))[0]
            print(f"  {case:9s} {secs:7.2f} s  peak {peak:7.0f} MB  x{secs / floor:5.2f} of floor  "
                  f"x{secs / low:5.2f} of floor_min   [{out}]", flush=True)


if __name__ == "__main__":
    main()
