#!/bin/bash
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
cd "$(dirname "$0")/../../.."  # the repository root; usage: bash run.sh int8-m16 int8-m8
for r in 1 2; do
  for cfg in "$@"; do
    echo "round $r $cfg start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
    .venv/bin/python -m bench.encoders --served-only --config bench/latest/merge-items-20261202/$cfg.yaml --concurrency 8 32 64 --served-calls 1536 --served-duration 120 --data-dir /tmp/bench-data --out bench/latest/merge-items-20261202/merge-items-$cfg-r$r.json 2>&1 | grep -v "^(\|INFO\|WARN" 
  done
done
