#!/usr/bin/env bash
# Issue 8 on one lent GPU: train RNNsearch-30/50 and RNNencdec-30/50 concurrently, then score them.
#
#   scripts/europarl_gpu.sh setup   # install the carried wheels (sacremoses, sacrebleu) into /tmp/site
#   scripts/europarl_gpu.sh probe   # aggregate target tokens/s of the four runs at each batch size
#                                   # (a few seconds each, bf16), picks the batch -> $OUT/probe.json
#   scripts/europarl_gpu.sh start   # launch the four runs detached (they survive between calls)
#   scripts/europarl_gpu.sh status  # last training / validation lines of each run
#   scripts/europarl_gpu.sh finish  # stop, export fp16 checkpoints, score both test sets, in parallel
#                                   # (to $OUT: results JSON, throughput JSON, logs)
#   scripts/europarl_gpu.sh fetch M # copy checkpoint M (e.g. rnnsearch-50) to $OUT in 15 MB parts
#                                   # (the device returns ≤ 8 files of ≤ 16 MB per call: one model per call;
#                                   #  join here with `cat part.* > checkpoints/NAME.pt`)
#
# DATA defaults to data/ (europarl-v7-fr-en/ and wmt/ below it); the training split is the
# Moses-tokenised train.tok made by scripts/europarl_gpu_data.sh, which also builds the carry
# folder .gpu-data. Every command uses the wheels installed by `setup` when /tmp/site exists. One
# 30-minute device session (each line one `run`, carry [".gpu-data", ".whl"], and each starting
# with `export DATA=.gpu-data OUT=$OUT; S=scripts/europarl_gpu.sh;`; MINUTES of training):
#   1. $S setup && $S probe && MINUTES=15 $S start && $S wait $((545 - SECONDS))
#   2. $S wait 560                                   (keeps the machine, prints progress)
#   3. $S wait-end && $S finish && $S fetch rnnsearch-50
#   4. $S fetch rnnencdec-50                         (re-exports from runs/ when the checkpoint is gone)
# The machine goes back 30 s after a call returns: issue the next call at once. Check the probe's
# chosen batch against GPU memory: RNNsearch-50 at batch 1,024 ran out of memory on the longest
# batches of the full data (2026-11-22; BATCH=512 for it).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-data}
OUT=${OUT:-out}
PY=${PY:-python3}
MINUTES=${MINUTES:-14}
PROBE_BATCHES=${PROBE_BATCHES:-128 256 512 1024}
MODELS=(rnnsearch-50 rnnencdec-50 rnnsearch-30 rnnencdec-30)
export PYTHONUNBUFFERED=1
if [ -d /tmp/site ]; then export PYTHONPATH=/tmp/site; fi
mkdir -p "$OUT" runs

launch() {  # launch MODEL OUTDIR EXTRA...: one detached training run
  local m=$1 dir=$2; shift 2
  mkdir -p "$dir"
  setsid nohup "$PY" train.py --config "configs/europarl-en-fr-$m.toml" --data "$DATA/europarl-v7-fr-en" \
    --out "$dir" --no-progress "$@" ${EXTRA:-} >"$dir/train.log" 2>&1 < /dev/null &
}

running() { pgrep -f "train.py --config configs/europarl" >/dev/null; }

display_name() { echo "$1" | sed -e 's/rnnsearch/RNNsearch/' -e 's/rnnencdec/RNNencdec/'; }

export_model() {  # export_model MODEL RESULTS: fp16 checkpoint of runs/…/best.pt, scored greedily on dev
  "$PY" -m nmt.tools.export --run "runs/europarl-en-fr-$1" --name "$(display_name "$1")" --data "$DATA/europarl-v7-fr-en" \
    --splits dev2000q4 --beams 1 --out "checkpoints/europarl-en-fr-$1.pt" --results "$2" --force
}

case "${1:-}" in
setup)
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  PYTHONPATH=/tmp/site "$PY" -c "import torch, sacremoses, sacrebleu; print('torch', torch.__version__, torch.cuda.get_device_name(0), 'sacrebleu', sacrebleu.__version__)" ;;
probe)
  rm -rf runs/probe
  for b in $PROBE_BATCHES; do
    for m in "${MODELS[@]}"; do
      launch "$m" "runs/probe/b$b-$m" --batch-size "$b" --train-limit 40000 --valid-limit 16 --time-budget 0.15 \
        --log-every 5 --valid-every 1000000 --save-every 1000000 --epochs 100
    done
    sleep 5; while running; do sleep 1; done
    grep -h "Error\|error" runs/probe/b"$b"-*/train.log | head -n 3 || true
  done
  "$PY" scripts/gpu_throughput.py probe runs/probe "$OUT/probe.json" ;;
start)
  batch=$(cat runs/probe/batch 2>/dev/null || echo 512)
  for m in "${MODELS[@]}"; do
    launch "$m" "runs/europarl-en-fr-$m" --resume --batch-size "${BATCH:-$batch}" --time-budget "$MINUTES"
  done
  sleep 20; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv || true
  for m in "${MODELS[@]}"; do tail -n 2 "runs/europarl-en-fr-$m/train.log"; done ;;
status)
  for m in "${MODELS[@]}"; do
    echo "== $m"; grep '"valid"' "runs/europarl-en-fr-$m/metrics.jsonl" 2>/dev/null | tail -n 1 || true
    tail -n 1 "runs/europarl-en-fr-$m/metrics.jsonl" 2>/dev/null || tail -n 3 "runs/europarl-en-fr-$m/train.log"
  done ;;
wait)  # wait SECONDS: print status every minute, return early when every run has ended
  end=$((SECONDS + ${2:?seconds}))
  while [ $SECONDS -lt $end ] && running; do sleep 60; date +%T; "$0" status | cut -c1-220; done ;;
wait-end)  # let the runs reach their time budget (at most 9 minutes)
  end=$((SECONDS + 540)); while [ $SECONDS -lt $end ] && running; do sleep 5; done
  "$0" status | cut -c1-220 ;;
finish)
  pkill -INT -f "train.py --config configs/europarl" || true
  for _ in $(seq 60); do running || break; sleep 1; done
  for m in "${MODELS[@]}"; do
    ( export_model "$m" "runs/export-$m.json" \
      && "$PY" -m nmt.tools.experiment --data "$DATA" --model "$(display_name "$m")=checkpoints/europarl-en-fr-$m.pt" \
        --test wmt/newstest2014-fren \
        --test europarl-v7-fr-en/test2000q4 --out "runs/results-$m.json" ) >"runs/finish-$m.log" 2>&1 &
  done
  wait || true
  tail -n 4 runs/finish-*.log
  "$PY" scripts/gpu_throughput.py merge runs "$OUT/europarl-en-fr.results.json"
  "$PY" scripts/gpu_throughput.py train runs "$OUT/gpu-throughput.json"
  cp runs/probe/probe.json "$OUT/" 2>/dev/null || true
  tar czf "$OUT/europarl-logs.tgz" runs/europarl-en-fr-*/metrics.jsonl runs/europarl-en-fr-*/train.log \
    runs/europarl-en-fr-*/summary.json runs/finish-*.log runs/export-*.json ;;
fetch)
  ck="checkpoints/europarl-en-fr-${2:?model}.pt"
  if [ ! -f "$ck" ]; then  # each call re-sends the working tree, which drops what finish exported
    export_model "$2" "runs/export-$2-again.json"
  fi
  split -b 15M -d "$ck" "$OUT/europarl-en-fr-$2.pt.part." ;;
*) echo "usage: $0 setup|probe|start|status|wait S|wait-end|finish|fetch MODEL" >&2; exit 2 ;;
esac
