#!/usr/bin/env bash
# Retrain the Multi30k en→fr pair with the shipped configs and seeds while recording a training
# timeline (issue 23, the "Watch it learn" page), then copy each timeline beside its checkpoint:
#   scripts/timeline_m30k.sh            # the full runs (~100 min per model on an idle core, both at once)
# The full runs stop at the shipped checkpoints' update counts (RNNsearch 2,475, RNNencdec 4,050) with no
# time budget, so a busy machine gives the same schedule as an idle one, only later.
#   MAX_UPDATES=500 TAG=-short500 NOTE="..." scripts/timeline_m30k.sh   # a short demo run
# Detached on a shared machine:  setsid nohup nice -n 10 scripts/timeline_m30k.sh > runs/timeline_m30k.log 2>&1 &
# Each run writes runs/m30k-en-fr-<model>-timeline<TAG>/{last.pt,best.pt,timeline.npz}; the timeline is
# copied to checkpoints/m30k-en-fr-<model><TAG>.timeline.npz (the weights are not: ship them with
# scripts/ship_m30k.sh only if they score better than the shipped ones).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python}
DATA=${DATA:-data/multi30k}
MODELS=${MODELS:-"rnnsearch rnnencdec"}
TAG=${TAG:-}
NOTE=${NOTE:-"Retrained with configs/m30k-en-fr-<model>.toml (seed 1234) while recording."}
pids=()
for m in $MODELS; do
  out="runs/m30k-en-fr-$m-timeline$TAG"
  case $m in rnnsearch) shipped=2475 ;; rnnencdec) shipped=4050 ;; *) shipped=0 ;; esac
  extra=(--max-updates "${MAX_UPDATES:-$shipped}" --time-budget 0)
  OMP_NUM_THREADS=1 $PY train.py --config "configs/m30k-en-fr-$m.toml" --data "$DATA" --out "$out" \
    --timeline --timeline-presets m30k-en-fr --timeline-note "${NOTE//<model>/$m}" --no-progress \
    ${RESUME:+--resume} "${extra[@]}" > "runs/timeline-m30k-$m$TAG.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for m in $MODELS; do
  cp "runs/m30k-en-fr-$m-timeline$TAG/timeline.npz" "checkpoints/m30k-en-fr-$m$TAG.timeline.npz"
done
ls -la checkpoints/*.timeline.npz
