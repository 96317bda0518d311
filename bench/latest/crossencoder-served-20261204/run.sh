#!/bin/bash
# 2026-12-04, this 2-core CPU machine: the production profile's model deployments through
# Ray Serve handles, tiny random weights (scripts/build_tiny_production_cache.py; its
# cross-encoder tokenises far longer than its forward pass takes, as BERT-base does on a
# GPU). new = 85b213c (each request tokenised on arrival, deployments.batching.score_call);
# old = 1e388d6 (tokenised inside the batch), from a git worktree with its own PYTHONPATH.
# Runs 1-2 alternated new / old (old failed: no ../shared beside the worktree), 3-4 old / new.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
python -m scripts.build_tiny_production_cache /tmp/tinyprod --no-image-collections
for i in 1 2 3 4; do
  for side in new old; do
    if [ $side = new ]; then dir=$PWD; else dir=/tmp/old-1e388d6; fi
    (cd $dir && PYTHONPATH=$dir python -m bench.encoders --served-only \
      --profile production --config /tmp/tinyprod/production-tiny.yaml --data-dir /tmp/tinyprod/data-$side \
      --concurrency 8 32 --served-calls 512 --scorer-calls 96 --served-duration 120 \
      --out /tmp/tinyprod/$side$i.json)
  done
done
