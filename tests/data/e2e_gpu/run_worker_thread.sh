#!/bin/bash
# GPU check (lent H200, repository root, not CI): launch_bound's step trained from a worker thread under
# `rocanalyze profile` (the main thread joins it, or returns at once). Steps from a thread other than the
# one that started torch.profiler are counted, not used to step it. Needs .whl/ carried. Logs go to $OUT.
source tests/data/e2e_gpu/device_env.sh
cat > /tmp/thread_gpu.py <<PY
$WORKLOAD_STEP
import threading
def train():
    for _ in range(30):
        step(); mark()
worker = threading.Thread(target=train)
worker.start()
if sys.argv[1] == "join":
    worker.join()
print("main thread done")
PY
for how in join return; do
  echo "=== worker thread, main thread: $how"
  python3 -m rocanalyze profile -o /tmp/thr_$how /tmp/thread_gpu.py $how > $OUT/thr_$how.log 2>&1; echo "exit $?"
  grep -E "rocanalyze:|Segmentation|Error" $OUT/thr_$how.log | head -6
  python3 -c "import json; f=json.load(open('/tmp/thr_$how/run.json'))['torch']; print({k: f.get(k) for k in ('steps','steps_from_other_threads','trace')})"
  python3 -m rocanalyze analyze /tmp/thr_$how 2>&1 | sed -n 2,3p
done
