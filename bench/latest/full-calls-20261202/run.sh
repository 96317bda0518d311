#!/bin/bash
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
cd /work/main
for r in 1 2; do
  for cfg in int8 torch-2x1; do
    echo "round $r $cfg start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
    .venv/bin/python -m bench.encoders --served-only --config bench/latest/layouts-20261202/$cfg.yaml --concurrency 8 32 64 --served-calls 1536 --served-duration 120 --merge-modes --data-dir /tmp/bench-data --out bench/latest/full-calls-20261202/full-calls-$cfg-r$r.json
    echo "round $r $cfg end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
