#!/usr/bin/env bash
# Issue 5, CPU proof of the pipeline: tiny RNNsearch-50 / RNNencdec-50 on the first 5,000 Europarl
# pairs (a uniform sample: the file is pre-shuffled), scored with nmt.experiment on the first 300
# sentences of both test sets. It proves the pipeline end to end; the numbers mean nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-data}
OUT=runs/europarl-cpu-smoke
mkdir -p "$OUT"
for m in rnnsearch-50 rnnencdec-50; do
  python train.py --config "configs/europarl-en-fr-$m.toml" --data "$DATA/europarl-v7-fr-en" \
    --train-split train --no-pretokenized --train-limit 5000 --valid-limit 100 --src-vocab 5000 --tgt-vocab 5000 --emb-dim 64 --hidden-dim 128 \
    --attn-dim 128 --maxout-dim 64 --batch-size 32 --epochs 50 --valid-every 150 --time-budget "${MINUTES:-2.5}" \
    --threads 1 --amp off --no-progress --out "$OUT/$m"
done
python -m nmt.experiment --data "$DATA" --limit 300 --bootstrap 200 --out bench/europarl-cpu-smoke.results.json \
  --model "RNNsearch-50=$OUT/rnnsearch-50/best.pt" --model "RNNencdec-50=$OUT/rnnencdec-50/best.pt" \
  --test wmt/newstest2014-fren --test europarl-v7-fr-en/test2000q4
