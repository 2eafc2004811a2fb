#!/usr/bin/env bash
# Headless Chromium + selenium for the report's browser test (Debian packages; no browser download).
set -euo pipefail
PY=${PYTHON:-python3}
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    exit 1
  fi
fi
"$PY" -c 'import selenium' 2>/dev/null || "$PY" -m pip install -q 'selenium>=4.20'
