#!/bin/bash
# GPU check (lent H200, repository root, not CI): a script that runs its own torch.profiler (CPU + CUDA)
# after 5 steps (inside rocanalyze's default window of steps 1-20) and after 25 (outside it). rocanalyze's
# recording steps aside in the first case and is untouched in the second; the script's profiler records
# its kernels both times. Needs .whl/ carried (see run_issue4_workloads.sh). Logs go to $OUT.
source tests/data/e2e_gpu/device_env.sh
cat > /tmp/own_gpu.py <<PY
$WORKLOAD_STEP
import torch
from torch.profiler import profile, ProfilerActivity
for _ in range(int(sys.argv[1])):
    step(); mark()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as own:
    for _ in range(3):
        step(); mark()
torch.cuda.synchronize()
own.export_chrome_trace("/tmp/own_trace.json")
print("own profiler kernels", sum(1 for e in own.events() if e.device_type.name == "CUDA"))
PY
for n in 5 25; do
  echo "=== own profiler after $n steps"
  python3 -m rocanalyze profile -o /tmp/own$n /tmp/own_gpu.py $n > $OUT/own$n.log 2>&1; echo "exit $?"
  grep -E "rocanalyze:|own profiler|Segmentation|Error" $OUT/own$n.log | head -8
  python3 -c "import json; f=json.load(open('/tmp/own$n/run.json'))['torch']; print({k: f.get(k) for k in ('steps','stepped_aside_at','trace')})"
  python3 -m rocanalyze analyze /tmp/own$n 2>&1 | sed -n 2p
done
python3 -m rocanalyze analyze /tmp/own_trace.json 2>&1 | sed -n 1,3p
