#!/bin/bash
# eval.sh CFG DATA Q OUT [CODE] [ABL]
CFG=$1; DATA=$2; Q=$3; OUT=$4; CODE=${5:-/work/main}; ABL=${6:-full}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
cd $CODE && PYTHONPATH=$CODE /work/main/.venv/bin/python -m biomed_search eval --config $CFG --data-dir $DATA --dataset drug-kb --kb drug-kb --queries $Q --out $OUT --ablations $ABL
