#!/usr/bin/env bash
# Issue 5 on one GPU: train RNNsearch-30/50 and RNNencdec-30/50 concurrently, then score them.
#
#   scripts/europarl_gpu.sh start   # launch the four runs detached (they survive between calls)
#   scripts/europarl_gpu.sh status  # last training / validation lines of each run
#   scripts/europarl_gpu.sh finish  # stop, export fp16 checkpoints, score both test sets (to $OUT: JSON, logs)
#   scripts/europarl_gpu.sh fetch M # copy checkpoint M (e.g. rnnsearch-50) to $OUT in 15 MB parts
#                                   # (the device returns ≤ 8 files of ≤ 16 MB per call: one model per call;
#                                   #  join here with `cat part.* > checkpoints/NAME.pt`)
#
# Each run is resumable (`--resume`), so a fresh machine continues from runs/*/last.pt when that
# folder is carried back. DATA defaults to data/ (europarl-v7-fr-en/ and wmt/ below it); build the
# carry folder with scripts/europarl_gpu_data.sh. Plan for one 30-minute device session:
#   1. DATA=.gpu-data scripts/europarl_gpu.sh start; sleep 560                      (carry .gpu-data)
#   2. sleep 380; DATA=.gpu-data scripts/europarl_gpu.sh finish; OUT=$OUT scripts/europarl_gpu.sh fetch rnnsearch-50
#   3. OUT=$OUT scripts/europarl_gpu.sh fetch rnnencdec-50
# (configs train for 15 minutes each, all four at once on the one GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-data}
OUT=${OUT:-out}
MODELS=(rnnsearch-30 rnnsearch-50 rnnencdec-30 rnnencdec-50)
case "${1:-}" in
start)
  for m in "${MODELS[@]}"; do
    mkdir -p "runs/europarl-en-fr-$m"
    setsid nohup python train.py --config "configs/europarl-en-fr-$m.toml" --data "$DATA/europarl-v7-fr-en" \
      --resume --no-progress >"runs/europarl-en-fr-$m/train.log" 2>&1 < /dev/null &
  done
  sleep 5; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv || true ;;
status)
  for m in "${MODELS[@]}"; do
    echo "== $m"; tail -n 2 "runs/europarl-en-fr-$m/metrics.jsonl" 2>/dev/null || tail -n 3 "runs/europarl-en-fr-$m/train.log"
  done ;;
finish)
  pkill -INT -f "train.py --config configs/europarl" || true; sleep 3
  mkdir -p "$OUT"
  specs=()
  for m in "${MODELS[@]}"; do
    ck="checkpoints/europarl-en-fr-$m.pt"
    python -m nmt.export --run "runs/europarl-en-fr-$m" --name "$m" --data "$DATA/europarl-v7-fr-en" \
      --splits test2000q4 --beams 1 --out "$ck" --results "$OUT/europarl-export.json" --force
    name=$(echo "$m" | sed -e 's/rnnsearch/RNNsearch/' -e 's/rnnencdec/RNNencdec/')
    specs+=(--model "$name=$ck")
  done
  python -m nmt.experiment --data "$DATA" "${specs[@]}" --test wmt/newstest2014-fren \
    --test europarl-v7-fr-en/test2000q4 --out "$OUT/europarl-en-fr.results.json"
  tar czf "$OUT/europarl-logs.tgz" runs/europarl-en-fr-*/metrics.jsonl runs/europarl-en-fr-*/train.log ;;
fetch)
  mkdir -p "$OUT"; split -b 15M -d "checkpoints/europarl-en-fr-${2:?model}.pt" "$OUT/europarl-en-fr-$2.pt.part." ;;
*) echo "usage: $0 start|status|finish|fetch MODEL" >&2; exit 2 ;;
esac
