#!/bin/bash
# usage: eval.sh CFG DATA QUERIES OUT [CODE]
CODE=${5:-/work/main}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
cd $CODE && PYTHONPATH=$CODE /work/main/.venv/bin/python -m biomed_search eval --config $1 --data-dir $2 --dataset drug-kb --kb drug-kb --queries $3 --ablations full --out $4
