#!/bin/bash
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
cd /work/main
for r in ${ROUNDS:-1 2}; do
  echo "round $r start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  .venv/bin/python -m bench.encoders --served-only --config bench/latest/layouts-20261202/int8.yaml --concurrency 8 32 64 --served-calls 1536 --served-duration 120 --merge-modes --data-dir /tmp/bench-data --out /tmp/mm2/merge-modes${TAG}-r$r.json
  echo "round $r end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
