#!/usr/bin/env bash
# The prepared run for a lent GPU machine (bench/README.md "On a lent H200"): the layouts
# check, replica batching on / off, the full-size gpu_check and a model call's stages,
# each under its own time limit, results written to $1 (default ./gpu-out). The machine's python3 must hold
# torch with CUDA; wheels in .whl/ are installed to /tmp/site first when present
# (WHEELS=none skips them). The lent H200's image lacks pydantic, open_clip and rdkit; the
# 2026-12-04 run carried these cp312 wheels, at requirements.lock's versions (57 MB):
#   pydantic pydantic_core annotated-types typing-inspection typing_extensions ftfy wcwidth
#   open_clip_torch timm transformers tokenizers regex tqdm rdkit
# About 7 minutes in all; 8 files in $1 (the tool returns at most 8). QUICK=1: tiny
# models (a smoke test of this script anywhere).
# The tool that lends the machine sends at most 64 MiB of checkout and wheels, and
# eval-results/ alone is 71 MB: for the call, take it out of the index (git rm -r -q
# --cached eval-results; /eval-results/ in .git/info/exclude) and put it back after
# (git reset -q -- eval-results; drop the exclude line).
set -uo pipefail
out=${1:-gpu-out}
mkdir -p "$out"
log="$out/stderr.log"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if [ "${WHEELS:-.whl}" != none ] && compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
{
  nvidia-smi -L
  python3 -c "import torch, transformers, timm, open_clip, pydantic
print('torch', torch.__version__, 'transformers', transformers.__version__, 'timm',
      timm.__version__, 'open_clip', open_clip.__version__, 'pydantic', pydantic.__version__)
print('cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '-')"
  nproc; date -u
  # what the image holds, for the next run's wheels (Ray and its dependencies above all)
  python3 -m pip list --format=freeze 2>/dev/null | tr '\n' ' '; echo
} 2>&1 | tee -a "$log"
step() {  # step NAME SECONDS OUTFILE -- command...
  local name=$1 limit=$2 file=$3; shift 4
  local started=$SECONDS
  echo "== $name (limit ${limit}s)" | tee -a "$log"
  timeout "$limit" "$@" >"$out/$file" 2>>"$log"
  echo "== $name: rc=$? in $((SECONDS - started))s" | tee -a "$log"
  cat "$out/$file"
}
step layouts 90 layouts.md -- python3 -m bench.gpu_check --layouts --no-real
quick=${QUICK:+--quick}
step batching 180 batching.md -- python3 -m bench.gpu_batching $quick --seconds 3 --also-no-wait \
  --warmup-s 0.5 --out "$out/batching.json"
step gpu_check 260 gpu_check.md -- python3 -m bench.gpu_check $quick --budget-s 170 \
  --measurements-out "$out/gpu.json"
# a model call's stages, the tokenizer on one thread and on all of the machine's
step stages-1-thread 90 stages-1.md -- env TOKENIZERS_PARALLELISM=false \
  python3 -m bench.gpu_stages $quick
step stages-all-threads 90 stages-n.md -- env TOKENIZERS_PARALLELISM=true \
  python3 -m bench.gpu_stages $quick
