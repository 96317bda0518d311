#!/bin/bash
# nf.sh OUT [CODE]
OUT=$1; CODE=${2:-/work/main}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
cd $CODE && PYTHONPATH=$CODE /work/main/.venv/bin/python -m biomed_search eval --config /tmp/fp32.yaml --data-dir ${NFDIR:-/tmp/nf/d} --dataset nfcorpus --data /work/shared/data/nfcorpus --out $OUT --ablations full
