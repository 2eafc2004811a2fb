#!/bin/bash
# GPU check (lent H200, repository root, not CI): a script that ends suddenly inside the recording window
# keeps its trace. os._exit(9) at step 10 of the default window (1-20), os._exit(0) after 30 steps, and a
# SIGTERM from `timeout` while `--steps all` records; then `rocanalyze analyze` of each folder.
source tests/data/e2e_gpu/device_env.sh
nvidia-smi -L
R=$OUT/runs; mkdir -p $R
RA="python3 -m rocanalyze profile"
write() {  # write NAME STEPS END: a launch-bound loop of STEPS steps, then END (python)
cat > /tmp/$1.py <<PY
import os, time
$WORKLOAD_STEP
for i in range($2):
    step(); mark()
$3
PY
}
write exit9 10 'import torch; torch.cuda.synchronize(); os._exit(9)'
write exit0 30 'import torch; torch.cuda.synchronize(); print("done", flush=True); os._exit(0)'
write forever 1000000 ''
for name in exit9 exit0; do
  echo "=== $name"
  t0=$SECONDS; $RA -o /tmp/s_$name /tmp/$name.py > $R/$name.log 2>&1; echo "exit $? wall $((SECONDS-t0)) s"
  grep -E "^rocanalyze|^report|^window|^  " $R/$name.log | head -14; ls /tmp/s_$name
done
echo "=== SIGTERM during --steps all"
t0=$SECONDS; timeout -s TERM 20 $RA --steps all -o /tmp/s_term /tmp/forever.py > $R/term.log 2>&1; echo "exit $? wall $((SECONDS-t0)) s"
grep -E "^rocanalyze|^next" $R/term.log; ls -la /tmp/s_term
for name in exit9 term; do
  echo "=== analyze $name"
  python3 -m rocanalyze analyze /tmp/s_$name -o /tmp/s_${name}_rep > $R/${name}_analyze.log 2>&1; echo "analyze exit $?"
  grep -E "^(window|rocanalyze|note)|GPU busy|stopped|partial|left out" $R/${name}_analyze.log | head -8
  cp /tmp/s_${name}_rep/summary.md $R/${name}_summary.md 2>/dev/null
done
python3 - <<'PY'
import json
for n in ("exit9", "exit0", "term"):
    d = json.load(open(f"/tmp/s_{n}/run.json"))
    print(n, {k: d.get(k) for k in ("status", "exit_code", "failed", "partial", "error")}, "steps", d["torch"]["steps"],
          "trace", d["torch"].get("trace"))
PY
