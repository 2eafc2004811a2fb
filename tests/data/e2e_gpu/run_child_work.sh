#!/bin/bash
# GPU check (lent H200, repository root, not CI): a script whose GPU work runs in child processes
# (torch.multiprocessing.spawn of 2 workers): this process records no GPU work, and the summary and the
# analysis say the work ran in the children and how to profile them.
source tests/data/e2e_gpu/device_env.sh
R=$OUT/runs; mkdir -p $R
cat > /tmp/spawn_gpu.py <<'PY'
import torch, torch.multiprocessing as mp
def worker(rank):
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    for _ in range(200):
        x = torch.tanh(x @ x)
    torch.cuda.synchronize()
if __name__ == "__main__":
    torch.cuda.init()
    mp.spawn(worker, nprocs=2)
    print("workers done", flush=True)
PY
t0=$SECONDS; python3 -m rocanalyze profile -o /tmp/sg /tmp/spawn_gpu.py > $R/spawn.log 2>&1; echo "exit $? wall $((SECONDS-t0)) s"
grep -E "^rocanalyze|workers|^  \(no" $R/spawn.log
python3 -c "import json; print('children_cpu_s', json.load(open('/tmp/sg/run.json'))['torch']['children_cpu_s'])"
python3 -m rocanalyze analyze /tmp/sg 2>&1 | grep -A3 "child processes" | head -4
