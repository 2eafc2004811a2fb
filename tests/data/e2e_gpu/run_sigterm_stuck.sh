#!/bin/bash
# GPU check (lent H200, repository root, not CI): a SIGTERM while the main thread waits in
# torch.cuda.synchronize() on a 60 s kernel (the Python handler cannot run there): the watchdog ends the
# process after 10 s. Also: the default run prints no torch "clears events" warning.
source tests/data/e2e_gpu/device_env.sh
nvidia-smi -L
R=$OUT/runs; mkdir -p $R
echo "=== default run: torch warnings on stderr"
python3 -m rocanalyze profile -o /tmp/w1 examples/workloads/launch_bound.py --steps 25 > $R/w1.log 2>&1; echo "exit $?"
grep -c "clears events" $R/w1.log; grep -i "warn" $R/w1.log | head -3
cat > /tmp/stuck.py <<PY
import torch, time
$WORKLOAD_STEP
for i in range(3):
    step(); mark()
torch.cuda.synchronize()
print("spinning the GPU for 60 s", flush=True)
torch.cuda._sleep(int(60 * 1.98e9))  # cycles at the H200 SM clock
torch.cuda.synchronize()
print("not reached before the kill", flush=True)
PY
echo "=== SIGTERM at 15 s while the main thread waits on the GPU"
t0=$SECONDS; timeout -s TERM 15 python3 -m rocanalyze profile -o /tmp/st /tmp/stuck.py > $R/stuck.log 2>&1; echo "exit $? wall $((SECONDS-t0)) s"
grep -E "rocanalyze|spinning|reached" $R/stuck.log; ls /tmp/st
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv
