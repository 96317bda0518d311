# 2026-12-04, one lent NVIDIA H200 (16 CPU cores), torch 2.11.0+cu130 there, the other
# packages carried as cp312 wheels (.whl/, bench/gpu_session.sh lists them). Random
# weights in the published layouts; fp16 on CUDA. Outputs of each run, as named here.
# run 1: bash bench/gpu_session.sh $OUT        -> env.txt, layouts-run1.md, batching-run1.*
#        (its gpu_check step stopped at molformer: no rdkit there)
# run 2: gpu_check open-clip failed its warm-up in fp16 (native ViT + HF text tower;
#        fixed in models/open_clip_encoder.py: _cast_hf_text_tower)
# run 3: python3 -m bench.gpu_check --families hf-text,cross-encoder,timm --budget-s 170 \
#          --measurements-out gpu-check-run3.json                     -> gpu-check-run3.*
# run 4: python3 -m bench.gpu_batching --also-no-wait --seconds 3 --warmup-s 0.5 \
#          --pair-concurrency 4 16 --out batching-run4.json             -> batching-run4.*
#        python3 -m bench.gpu_check --families molformer,open-clip --budget-s 120 \
#          --measurements-out gpu-check-run4.json                     -> gpu-check-run4.*
#        python3 -m bench.gpu_check --layouts --no-real               -> layouts-run4.md
# run 6: TOKENIZERS_PARALLELISM=false python3 -m bench.gpu_stages  -> stages-tokenizer-1-thread.md
#        TOKENIZERS_PARALLELISM=true  python3 -m bench.gpu_stages  -> stages-tokenizer-16-threads.md
# (run 5 was refused before starting: the working tree was over the tool's 64 MiB)
