#!/usr/bin/env bash
# Issue 22 E: train the rest of Luong et al.'s comparison on Multi30k en→fr (dot, concat, local-m) beside
# the shipped general and local-p models, with the same data, vocabularies and schedule: the same number
# of updates as the shipped model each mirrors (general: 2124, local-p: 2023), so a GPU, a busy CPU or
# an idle one give the same schedule. Then ship each as int8 (≤ 15 MB) and score it:
#   DATA=data/multi30k scripts/luong_variants_gpu.sh            # all three, one after another
#   VARIANTS="global-dot" RESUME=1 scripts/luong_variants_gpu.sh  # continue a killed run
# On the 2-core CPU each takes about 95 minutes on an idle core; on an H100 a few minutes.
# After training: python -m scripts.int8_checkpoint runs/m30k-en-fr-luong-<v>/best.pt checkpoints/m30k-en-fr-luong-<v>.pt
# (see that script's --help), then python -m scripts.ensemble_results with the new members, and the
# evaluation that writes checkpoints/m30k-en-fr-luong.results.json (docs/DEVELOPMENT.md, issue 11).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python}
DATA=${DATA:-data/multi30k}
VARIANTS=${VARIANTS:-"global-dot global-concat local-m"}
for v in $VARIANTS; do
  case $v in local-m) updates=2023 ;; *) updates=2124 ;; esac
  OMP_NUM_THREADS=1 $PY train.py --config "configs/m30k-en-fr-luong-$v.toml" --data "$DATA" \
    --max-updates "$updates" --time-budget 600 --no-progress ${RESUME:+--resume} \
    > "runs/luong-$v.log" 2>&1
done
