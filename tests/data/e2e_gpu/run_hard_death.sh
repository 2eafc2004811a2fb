#!/bin/bash
# GPU check (lent H200, repository root, not CI): the line saying where the trace is when the recording
# window closes, and a script that dies hard after it (os._exit, a segfault): the trace of steps 1-20 is
# kept and `analyze` says the run never finished its record. Needs .whl/ carried (see run_issue4_workloads.sh).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi -L
python3 -m pip install -q --no-index --find-links .whl typer rich plotly jinja2 msgspec perfetto pyelftools zstandard msgpack 2>&1 | tail -2
R=$OUT/runs; mkdir -p $R
RA="python3 -m rocanalyze profile"
echo "=== 1. launch_bound --steps 40 (default window 1-20)"
t0=$SECONDS; $RA -o /tmp/r1 examples/workloads/launch_bound.py --steps 40 > $R/r1.log 2>&1; echo "exit $? wall $((SECONDS-t0)) s"
grep -E "^rocanalyze:" $R/r1.log; cp /tmp/r1/run.json /tmp/r1/summary.md $R/ 2>/dev/null
for how in osexit segv; do
cat > /tmp/die_$how.py <<PY
import os, sys, ctypes
sys.path.insert(0, "examples/workloads")
import launch_bound
from rocanalyze import step as mark
step = launch_bound.make("cuda")
for i in range(25):
    step(); mark()
import torch; torch.cuda.synchronize()
print("dying by $how", flush=True)
if "$how" == "osexit":
    os._exit(9)
ctypes.string_at(0)
PY
echo "=== 2. hard death by $how after 25 steps"
t0=$SECONDS; $RA -o /tmp/d_$how /tmp/die_$how.py > $R/d_$how.log 2>&1; echo "exit $? wall $((SECONDS-t0)) s"
grep -E "rocanalyze|dying|Segmentation|Fatal" $R/d_$how.log | head -5; ls -la /tmp/d_$how
python3 -c "import json; print('status', json.load(open('/tmp/d_$how/run.json'))['status'])"
python3 -m rocanalyze analyze /tmp/d_$how -o /tmp/d_${how}_rep > $R/d_${how}_analyze.log 2>&1; echo "analyze exit $?"
head -3 $R/d_${how}_analyze.log; grep -A2 "never finished" $R/d_${how}_analyze.log
done
echo "=== 3. --collector rocprofv3 without rocprofv3"
$RA --collector rocprofv3 -o /tmp/r3 examples/workloads/launch_bound.py; echo "exit $?"
