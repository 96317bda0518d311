# int8 on both sides: ingest the drug KB and NFCorpus with models.runtime onnx-int8, each
# in its own data dir, and evaluate with the same runtime (bench/README.md "int8 quality").
# Run from the repository root: bash eval-results/2026-12-03-int8/run.sh [work dir]
set -eux
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0 TOKENIZERS_PARALLELISM=false
B=.venv/bin/biomed-search
C=eval-results/2026-12-03-int8/int8.yaml
W=${1:-/tmp/int8run}
O=$W/out
mkdir -p "$O"
$B ingest --no-progress --config $C --data-dir "$W/drug" --kb drug-kb ../shared/data/drug_labels/ ../shared/data/compounds/
$B ingest --no-progress --config $C --data-dir "$W/nf" --kb nfcorpus ../shared/data/nfcorpus/corpus.jsonl
$B eval --config $C --data-dir "$W/drug" --dataset drug-kb --queries ../shared/data/drug_kb_dev.jsonl --ablations full --out "$O/drug_kb_dev"
$B eval --config $C --data-dir "$W/drug" --dataset drug-kb --queries ../shared/data/drug_kb_dev_more.jsonl --ablations full --out "$O/drug_kb_dev_more"
$B eval --config $C --data-dir "$W/drug" --dataset eaglerag --ablations full --out "$O/eaglerag"
$B eval --config $C --data-dir "$W/nf" --dataset nfcorpus --data ../shared/data/nfcorpus --ablations full --out "$O/nfcorpus"
$B stop-stores --data-dir "$W/drug"
$B stop-stores --data-dir "$W/nf"
