# 2026-12-04, this 2-core CPU machine, quiet (load average 0.07 before), tiny random
# cross-encoder (tokenising outweighs its forward pass, as for BERT-base on a GPU):
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
for i in 1 2 3 4; do  # 1-2 before the review mends (307719b), 3-4 after
  python -m bench.gpu_batching --quick --families cross-encoder --pair-concurrency 1 4 16 \
    --seconds 3 --warmup-s 0.5 --out run$i.json > run$i.md
done
