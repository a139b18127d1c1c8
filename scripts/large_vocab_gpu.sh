#!/usr/bin/env bash
# Issue 20 on one lent GPU: a 30k-word truecased RNNsearch-50 (MODEL=rnnencdec: its RNNencdec-50 twin, the
# same data, vocabularies and budget) on Europarl (all) + Tatoeba, trained in segments of one device
# session each (nmt/training/segments.py), its training timeline (issue 23) recorded as it goes.
#
# Before (on the CPU, not on the device): build the carry folder (≈ 1 h on 2 cores; rehearse with --pairs):
#   nice python scripts/prep_large_vocab.py --data ../shared/data --out .gpu-data-tc --jobs 2
#   scripts/europarl_gpu_data.sh fetches the wheels the device lacks into .whl/ (sacremoses, sacrebleu).
# On the device, 15 minutes a session, both models of the pair at once on the one GPU (the same minutes
# for both; at batch 2048 the two shared it with no gain over one after the other: 177k + 320k target
# tokens/s against 467k for RNNsearch alone). Each call one `run`, starting with
# `export OUT=$OUT; S=scripts/large_vocab_gpu.sh;`, the next one within the 30 s the machine stays warm;
# move the committed checkpoints out of the tree for these calls (as for issue 8) so that the upload
# stays under 64 MiB. Segment 1 (2026-11-26, carry [".gpu-data-tc", ".whl"] in call 1):
#   1. $S setup && MEMORY_SHARE=0.42 $S probe && MODEL=rnnsearch START_WAIT=1 $S start &&
#      MODEL=rnnencdec START_WAIT=20 $S start && $S wait $((525 - SECONDS))
#   2. $S wait-end; MODEL=rnnencdec $S finish & MODEL=rnnsearch $S finish; wait; MODEL=rnnsearch $S fetch
#   3. MODEL=rnnencdec $S finish && MODEL=rnnencdec $S fetch
#      (two int8 checkpoints are ~80 MB, over one call's 64 MiB back; and the device deletes the untracked
#      exported checkpoint between calls, so call 3 exports again, 14 s)
# A later segment goes on from what calls 2 and 3 brought back (kept in .seg/s1 on the development
# machine: each exported checkpoint and its timeline, ≈ 40 MB, so one model a call beside the 48 MiB of
# data): A carries .gpu-data-tc and .whl and runs `$S setup` (and, to try the compiled step,
# `BATCHES=2048 $S probe`); B carries .seg/s1b/europarl-tatoeba-en-fr-rnnsearch-30k.{pt,timeline.npz} (the
# RNNsearch resumed to 1,480 updates; the RNNencdec's latest is .seg/s1's, 1,946) and runs
#   INIT=.seg/s1b/europarl-tatoeba-en-fr-rnnsearch-30k.pt MODEL=rnnsearch BATCH_CHOSEN=2048 TAU_CHOSEN=8000 \
#     MINUTES=7 START_WAIT=1 $S start
# C the same for rnnencdec followed by `$S wait $((480 - SECONDS))`; then calls 2 and 3 as above. Each
# checkpoint lists its segments (device, minutes, updates) in meta["segments"].
#
#   probe   target tokens/s, model FLOPs/token, MFU and worst-case memory of the update at each batch size in
#           BATCHES, full softmax and Jean et al.'s partition softmax (τ = TAU, default 8000), in one process
#           (scripts/lv_probe.py, ≈ 1 min, plus the compile of the step at COMPILE_BATCHES); `start` takes the
#           batch it chose, the partition softmax only if it is ≥ 15 % faster, and --compile if the compiled
#           step is faster (BATCH_CHOSEN, TAU_CHOSEN, COMPILE_CHOSEN=0|1 override, e.g. in a later segment)
#   start   train for MINUTES (detached); with INIT, from that checkpoint's weights (--init-from, a warm-up of
#           WARMUP = 200 updates) and appending to its timeline
#   finish  stop, export with --int8 (fp16 + int8 vocabulary matrices, truecasers kept), score greedily
#           on valid, Tatoeba test and newstest2014 into $RUN/export (beam 5 and test2000q4 later, on the
#           CPU: nmt.tools.experiment), with the run's logs
#   fetch   to $OUT: the exported checkpoint in 15 MB parts (join with `cat part.* > checkpoints/NAME.pt`),
#           its results and logs, and its timeline (6 files)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-.gpu-data-tc}
OUT=${OUT:-out}
PY=${PY:-python3}
MINUTES=${MINUTES:-5.5}  # a 15-minute device session holds about 5.5 minutes of training (two runs at once)
TAU=${TAU:-8000}
BATCHES=${BATCHES:-512,1024,2048}
PROBE_SECONDS=${PROBE_SECONDS:-3}
COMPILE_BATCHES=${COMPILE_BATCHES:-2048}  # also time the compiled step at these (empty: none)
MODEL=${MODEL:-rnnsearch}
INIT=${INIT:-}
WARMUP=${WARMUP:-200}
CFG=configs/large-vocab-en-fr-$MODEL.toml
RUN=runs/large-vocab-en-fr-$MODEL
CKPT=checkpoints/europarl-tatoeba-en-fr-$MODEL-30k.pt
export PYTHONUNBUFFERED=1
if [ -d /tmp/site ]; then export PYTHONPATH=/tmp/site; fi
mkdir -p "$OUT" runs

running() { pgrep -f "train.py --config $CFG" >/dev/null; }
running_any() { pgrep -f "train.py --config configs/large-vocab-en-fr-" >/dev/null; }

launch() {  # launch OUTDIR EXTRA...: one detached training run
  local dir=$1; shift
  mkdir -p "$dir"
  setsid nohup "$PY" train.py --config "$CFG" --data "$DATA" --truecase "$DATA/truecase" --out "$dir" \
    --no-progress "$@" >"$dir/train.log" 2>&1 < /dev/null &
}

case "${1:-}" in
setup)
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
  du -sh "$DATA"; cat "$DATA/summary.json" | head -n 30 ;;
probe)  # one process, no data loading (scripts/lv_probe.py): tokens/s, MFU and worst-case memory
  rm -rf runs/probe-lv
  "$PY" scripts/lv_probe.py --config "$CFG" --data "$DATA" --batches "$BATCHES" --taus "0,$TAU" \
    --seconds "$PROBE_SECONDS" --memory-share "${MEMORY_SHARE:-0.85}" --compile-batches "$COMPILE_BATCHES" \
    --out "$OUT/probe.json" --choose runs/probe-lv ;;
start)
  tau=${TAU_CHOSEN:-$(cat runs/probe-lv/tau 2>/dev/null || echo 0)}
  batch=${BATCH_CHOSEN:-$(cat runs/probe-lv/batch 2>/dev/null || echo 512)}
  compile=$([ "${COMPILE_CHOSEN:-$(cat runs/probe-lv/compile 2>/dev/null || echo 0)}" = 1 ] && echo --compile || echo --no-compile)
  if [ -n "$INIT" ]; then  # a new segment: a fresh folder, the previous weights and timeline
    rm -rf "$RUN"; mkdir -p "$RUN"
    if [ -f "${INIT%.pt}.timeline.npz" ]; then cp "${INIT%.pt}.timeline.npz" "$RUN/timeline.npz"; fi
    launch "$RUN" --init-from "$INIT" --warmup "$WARMUP" --sampled-vocab "$tau" --batch-size "$batch" \
      "$compile" --time-budget "$MINUTES"
  else
    launch "$RUN" --resume --sampled-vocab "$tau" --batch-size "$batch" "$compile" --time-budget "$MINUTES"
  fi
  sleep "${START_WAIT:-30}"; tail -n 3 "$RUN/train.log" ;;
status)
  grep '"valid"' "$RUN/metrics.jsonl" 2>/dev/null | tail -n 1 || true
  tail -n 1 "$RUN/metrics.jsonl" 2>/dev/null || tail -n 3 "$RUN/train.log" ;;
wait)
  end=$((SECONDS + ${2:?seconds}))
  while [ $SECONDS -lt $end ] && running_any; do
    sleep 30; date +%T; for m in rnnsearch rnnencdec; do MODEL=$m "$0" status | cut -c1-200; done
  done ;;
wait-end)
  end=$((SECONDS + 540)); while [ $SECONDS -lt $end ] && running_any; do sleep 5; done
  for m in rnnsearch rnnencdec; do MODEL=$m "$0" status | cut -c1-200; done ;;
finish)
  pkill -INT -f "train.py --config $CFG" || true
  for _ in $(seq 60); do running || break; sleep 1; done
  name=$([ "$MODEL" = rnnencdec ] && echo RNNencdec-50 || echo RNNsearch-50)
  mkdir -p "$RUN/export"
  "$PY" -m nmt.tools.export --run "$RUN" --name "$name 30k truecased" --data "$DATA" \
    --splits valid tatoeba-test newstest2014 --beams 1 --int8 --out "$CKPT" \
    --results "$RUN/export/large-vocab-$MODEL.results.json" --force
  # the logs only: checkpoints travel through `fetch`, in parts
  tar czf "$RUN/export/large-vocab-$MODEL-logs.tgz" "$RUN/metrics.jsonl" "$RUN/train.log" "$RUN/summary.json" \
    $(ls runs/probe-lv/{tau,batch} 2>/dev/null) ;;
fetch)
  split -b 15M -d "$CKPT" "$OUT/$(basename "$CKPT").part."
  cp "$RUN"/export/* "$OUT/"
  cp "$RUN/timeline.npz" "$OUT/$(basename "$CKPT" .pt).timeline.npz" ;;
*) echo "usage: $0 setup|probe|start|status|wait S|wait-end|finish|fetch" >&2; exit 2 ;;
esac
