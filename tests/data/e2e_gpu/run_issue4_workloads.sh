#!/bin/bash
# GPU end-to-end of issue 4's workloads through `rocanalyze profile` (run on the lent GPU from the
# repository root, not in CI): each workload of scripts/capture_fixtures.py in a fresh process under the
# CLI, then what its analysis puts first against the workload's known bottleneck; then a script that
# crashes (exit 1, its traceback, a partial trace kept) and a Ctrl-C (exit 130, partial trace kept).
# Small outputs (no traces or HTML) are packed into $OUT/issue4_runs.tgz.
#
# Dependencies without network: wheels in .whl/ (pip download for the device's Python), carried.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi -L
python3 -c "import torch, triton, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --find-links .whl typer rich plotly jinja2 msgspec perfetto pyelftools zstandard msgpack 2>&1 | tail -2
fi
R=/tmp/issue4_runs; rm -rf $R; mkdir -p $R
RA="python3 -m rocanalyze profile"
$RA -o /tmp/probe_i4 /nonexistent_i4.py 2>&1 | grep -q "script not found" || { echo "CLI does not start here: library calls instead"; RA="python3 tests/data/e2e_gpu/profile_nocli.py"; }

# name, workload, known bottleneck (as scripts/capture_fixtures.py states it)
WORKLOADS="train_step:category:gemm launch_bound:idle:launch_bound compiled:idle:launch_bound convnet:category:conv
manual_attention:pattern:unfused_attention elementwise_chain:pattern:eager_elementwise_chain fp32_gemm:category:gemm
h2d_copy:category:memcpy item_sync:pattern:host_sync big_gemm:category:gemm"
for w in $WORKLOADS; do
  name=${w%%:*}; echo "=== $name: rocanalyze profile examples/workloads/$name.py"; t0=$SECONDS
  timeout 300 $RA -o $R/$name examples/workloads/$name.py > $R/$name.log 2>&1; rc=$?
  tail -4 $R/$name.log; echo "=== $name: exit $rc, wall $((SECONDS - t0)) s"
done

# a script that crashes after three steps: its own traceback, exit 1, the partial trace kept
cat > /tmp/crash_after_3.py <<'PY'
import sys
sys.path.insert(0, "examples/workloads")
import launch_bound
from rocanalyze import step as mark
step = launch_bound.make("cuda")
for i in range(5):
    step(); mark()
    if i == 2:
        raise RuntimeError("boom after step 3")
PY
echo "=== crash: rocanalyze profile /tmp/crash_after_3.py"
$RA -o $R/crash /tmp/crash_after_3.py > $R/crash.log 2>&1; echo "=== crash: exit $?"
grep -E "Traceback|RuntimeError: boom" $R/crash.log | head -3; ls $R/crash

# Ctrl-C in the middle of a long run: exit 130, what was recorded kept
echo "=== ctrl-c: rocanalyze profile launch_bound.py --steps 100000, SIGINT after 25 s (default recording)"
# job control on: without it bash starts background jobs with SIGINT ignored, and Python keeps it so
set -m
$RA -o $R/ctrlc examples/workloads/launch_bound.py --steps 100000 > $R/ctrlc.log 2>&1 &
pid=$!; sleep 25; t0=$SECONDS; kill -INT $pid; wait $pid; echo "=== ctrl-c: exit $?, $((SECONDS - t0)) s after SIGINT"
set +m; grep -E "interrupted|recorded steps|KeyboardInterrupt" $R/ctrlc.log; ls $R/ctrlc

# the default recording (steps 1-20) against --steps all on a long run: wall time of the whole command
for mode in default all; do
  a=""; [ $mode = all ] && a="--steps all"
  t0=$(date +%s.%N); $RA $a -o $R/long_$mode examples/workloads/launch_bound.py --steps 300 > $R/long_$mode.log 2>&1
  rc=$?; echo "=== long run, $mode: exit $rc, wall $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s," \
    "trace $(stat -c %s $R/long_$mode/trace.json.gz) bytes"; grep -E "recorded steps|steps, from" $R/long_$mode.log
done

python3 - $R "$WORKLOADS" <<'PY'
import json, sys
from pathlib import Path
root, table = Path(sys.argv[1]), sys.argv[2].split()
print("| workload | window | top category | top idle | first pattern | first recommendation | known bottleneck | first? |")
print("|---|---|---|---|---|---|---|---|")
ok = 0
for entry in table:
    name, kind, what = entry.split(":")
    path = root / name / "analysis.json"
    if not path.exists():
        print(f"| {name} | no analysis.json | | | | | {kind}:{what} | no |"); continue
    a = json.loads(path.read_text())
    window = a.get("window_us") or 0.0
    cats = a.get("categories_us") or {}
    idle = a.get("idle_breakdown_us") or {}
    top_cat = max(cats, key=cats.get) if cats else None
    top_idle = max(idle, key=idle.get) if idle else None
    pattern = a["patterns"][0]["kind"] if a.get("patterns") else None
    rec = a["recommendations"][0]["id"] if a.get("recommendations") else None
    first = {"category": top_cat, "idle": top_idle, "pattern": pattern}[kind] == what
    if kind == "pattern":  # the pattern's own recommendation must lead the list too
        first = first and rec == what.replace("_", "-")
    ok += first
    share = lambda us: f"{100 * us / window:.1f}%" if window else "n/a"
    print(f"| {name} | {window / 1000:.1f} ms | {top_cat} {share(cats.get(top_cat, 0))} | {top_idle} "
          f"{share(idle.get(top_idle, 0))} (idle {share(a.get('idle_us') or 0)}) | {pattern} | {rec} | {kind}:{what} | "
          f"{'yes' if first else 'NO'} |")
print(f"known bottleneck first: {ok} of {len(table)}")
PY
tar czf $OUT/issue4_runs.tgz -C /tmp --exclude=trace.json.gz --exclude=trace.pftrace --exclude=report.html issue4_runs
ls -la $OUT
