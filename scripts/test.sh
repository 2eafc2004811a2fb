#!/usr/bin/env bash
# Install rocanalyze with its test extras and run the whole test suite (README's test command).
# torch is installed only when `import torch` fails, so a user's ROCm/CUDA build is never replaced.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -m pip install -q -e '.[test]'
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "torch not importable: installing the CPU build torch==2.13.0 for the tests"
  "$PY" -m pip install -q torch==2.13.0
fi
if ! "$PY" -c 'import triton' 2>/dev/null; then
  # the Triton-capture tests compile real kernels; like torch, never replace an installed (ROCm) build
  "$PY" -m pip install -q 'triton==3.9.0' || echo "triton unavailable: the Triton-capture tests will skip"
fi
bash scripts/install-browser.sh || echo "headless Chromium unavailable: browser tests will skip"
exec "$PY" -m pytest -n 2 -q tests "$@"
