#!/bin/bash
# GPU end-to-end of `rocanalyze profile` (run on the lent H100 from the repository root, not in CI):
# the four workloads issue 6 names, each in a fresh process; the Triton occupancy check against the
# CUDA driver; small outputs (no traces or HTML) packed into $OUT/e2e_runs.tgz.
set -u
export PYTHONUNBUFFERED=1
nvidia-smi -L
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
R=/tmp/runs; mkdir -p $R
RA="python3 -m rocanalyze profile"
python3 -m rocanalyze profile -o /tmp/probe_h6 /nonexistent_h6.py 2>&1 | grep -q "script not found" || { echo "CLI does not start here (typer?): library calls instead"; RA="python3 tests/data/e2e_gpu/profile_nocli.py"; }
prof() { local name=$1; shift; echo "=== $name: rocanalyze profile $*"; local t0=$SECONDS
  timeout 240 $RA -o $R/$name "$@"; local rc=$?
  echo "=== $name: exit $rc, wall $((SECONDS - t0)) s"; }
prof train_step --memory examples/workloads/train_step.py
prof launch_bound examples/workloads/launch_bound.py
prof manual_attention examples/workloads/manual_attention.py
echo "=== compiled (in-process, with the driver occupancy check)"
timeout 300 python3 tests/data/e2e_gpu/check_triton_occupancy.py $R/compiled; echo "=== compiled: exit $?"
for d in $R/*/; do python3 - "$d" <<'PY'
import json, sys
a = json.load(open(sys.argv[1] + "analysis.json"))
cats = sorted(a["categories_us"].items(), key=lambda kv: -kv[1])[:3]
print(sys.argv[1], "window", round(a["window_us"] or 0), "us", a["window"].get("how"), "| top", [(k, round(v)) for k, v in cats],
      "| idle", {k: round(v) for k, v in a["idle_breakdown_us"].items()}, "| patterns", [p["kind"] for p in a["patterns"]][:4],
      "| recs", [r["id"] for r in a["recommendations"]][:4], "| occupancy", len(a["occupancy"]), "| memory", bool(a["memory"]))
PY
done
tar czf $OUT/e2e_runs.tgz -C /tmp --exclude=trace.json.gz --exclude=trace.pftrace --exclude=report.html runs
ls -la $OUT
