#!/usr/bin/env bash
# Issue 47: a lent GPU window never wasted. ONE device call trains the next undone item of the committed queue
# (scripts/gpu_queue.json: a. the RNNencdec-30k twin, b. the RNNsearch-30k continued, c. a fr→en RNNsearch-30k),
# with a wall-clock stop, exports it, scores it greedily and brings back what fits one call (≤ 8 files, ≤ 64 MiB).
#
# Before the window (CPU): the carry folder .gpu-data-tc (scripts/prep_large_vocab.py) and the wheels .whl
# (scripts/europarl_gpu_data.sh), as for scripts/large_vocab_gpu.sh; `scripts/gpu_queue.sh pack` says what the
# next item carries and refuses when it is over 64 MiB (move the committed checkpoints out of the tree but the
# item's INIT, as for issue 8). The call (timeout_s 600; carry [".gpu-data-tc", ".whl"]):
#   export OUT=$OUT; scripts/gpu_queue.sh run
# After it (CPU): scripts/gpu_queue.sh land FILES_AT   (joins the parts, ships the model only if verdict.json
# says so, puts the timeline beside it, bench/results-gpu.json, and marks the item done), then score it with
# beam 5 and CIs: python -m nmt experiment (as in docs/recorded/), and commit.
#
#   run    the first minute: eager against compiled step at PROBE_BATCH (scripts/lv_probe.py: target tokens/s,
#          model FLOPs/token, MFU) into OUT/results-gpu.json (bench/results-gpu.json plus one queue_probes entry);
#          then train.py --config for min(the item's minutes, what DEADLINE leaves after RESERVE seconds for the
#          export), from INIT's weights when the item has one (WARMUP updates, its timeline continued); then
#          nmt.tools.export --int8 --beams 1 on the item's splits; OUT/verdict.json (scripts/gpu_queue.py verdict:
#          "absent" ships a new model, "if-better" only one that beats the shipped greedy BLEU on every compare_on
#          split); OUT also gets the checkpoint in 20 MB parts, results.json, timeline.npz and logs.tgz.
#   pack   the next item and the size of what its call carries (tracked tree + data + wheels), refused over 64 MiB
#   land   (CPU) DIR: what `run` brought back, into place
# Rehearsed on the CPU with the tiny fixtures (tests/test_gpu_queue.py runs it, < 60 s): QUEUE, DATA, WORK,
# BENCH, PROBE_BATCH, PROBE_SECONDS, COMPILE=0 and TRAIN_ARGS override the real settings.
set -euo pipefail
cd "$(dirname "$0")/.."
QUEUE=${QUEUE:-scripts/gpu_queue.json}
DATA=${DATA:-.gpu-data-tc}
OUT=${OUT:-out}
WORK=${WORK:-runs/gpu-queue}
BENCH=${BENCH:-bench/results-gpu.json}
PY=${PY:-python3}
DEADLINE=${DEADLINE:-540}  # seconds of this call's command, start of the machine not included (limit 600)
RESERVE=${RESERVE:-150}  # seconds kept for the export, greedy scoring of three splits and the return
PROBE_BATCH=${PROBE_BATCH:-2048}  # the batch the 30k runs chose (bench/large-vocab-30k.json)
PROBE_SECONDS=${PROBE_SECONDS:-3}
COMPILE=${COMPILE:-1}  # also time the compiled step (and train with it if it is faster)
WARMUP=${WARMUP:-200}
TRAIN_ARGS=${TRAIN_ARGS:-}
export PYTHONUNBUFFERED=1
if [ -d /tmp/site ]; then export PYTHONPATH=/tmp/site; fi
Q() { "$PY" scripts/gpu_queue.py "$@" --queue "$QUEUE"; }

case "${1:-}" in
run)
  eval "$(Q next)"
  if [ -z "$ID" ]; then echo "the queue is empty: nothing to train"; exit 0; fi
  echo "item $ID: $CONFIG, ${MINUTES} minutes${INIT:+, from $INIT}"
  if ls .whl/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site
  fi
  RUN=$WORK/$ID
  rm -rf "$RUN"; mkdir -p "$RUN/export" "$OUT"
  # 1. the first minute: eager against compiled at the chosen batch (a failed compile keeps eager)
  timeout 150 "$PY" scripts/lv_probe.py --config "$CONFIG" --data "$DATA" --batches "$PROBE_BATCH" --taus 0 \
    --seconds "$PROBE_SECONDS" --compile-batches "$([ "$COMPILE" = 1 ] && echo "$PROBE_BATCH")" \
    --out "$RUN/probe.json" --choose "$RUN/probe" >"$RUN/probe.log" 2>&1 || echo "probe failed: see probe.log"
  compile=--no-compile
  if [ -f "$RUN/probe.json" ]; then
    Q bench --probe "$RUN/probe.json" --item "$ID" --date "$(date -u +%F)" --into "$BENCH" \
      --out "$OUT/results-gpu.json"
    [ "$(cat "$RUN/probe/compile" 2>/dev/null)" = 1 ] && compile=--compile
  fi
  # 2. train with a wall-clock stop
  minutes=$("$PY" -c "print(round(max(0.05, min($MINUTES, ($DEADLINE - $SECONDS - $RESERVE) / 60)), 2))")
  echo "training $minutes minutes ($compile), $SECONDS s into the call"
  t_train=$SECONDS
  init=()
  if [ -n "$INIT" ]; then
    init=(--init-from "$INIT" --warmup "$WARMUP")
    if [ -n "$TIMELINE_OF" ] && [ -f "$TIMELINE_OF" ]; then cp "$TIMELINE_OF" "$RUN/timeline.npz"; fi
  fi
  truecase=()
  if [ -d "$DATA/truecase" ]; then truecase=(--truecase "$DATA/truecase"); fi
  # shellcheck disable=SC2086  # TRAIN_ARGS is a list of flags
  "$PY" train.py --config "$CONFIG" --data "$DATA" "${truecase[@]}" --out "$RUN" --no-progress \
    --batch-size "$(cat "$RUN/probe/batch" 2>/dev/null || echo "$PROBE_BATCH")" "$compile" \
    --time-budget "$minutes" "${init[@]}" $TRAIN_ARGS >"$RUN/train.log" 2>&1 || { tail -n 20 "$RUN/train.log"; exit 1; }
  echo "trained in $((SECONDS - t_train)) s"
  # 3. export (int8 vocabulary matrices, truecasers kept) and score greedily; never over a shipped file here
  name=$(basename "$CKPT")
  # shellcheck disable=SC2086  # SPLITS is a list of split names
  "$PY" -m nmt.tools.export --run "$RUN" --name "$NAME" --data "$DATA" --splits $SPLITS --beams 1 --int8 \
    --out "$RUN/export/$name" --results "$RUN/export/results.json" --force 2>"$RUN/export.log" \
    || { tail -n 20 "$RUN/export.log"; exit 1; }
  echo "exported and scored, $SECONDS s into the call"
  Q verdict --item "$ID" --new "$RUN/export/$name" --old "${INIT:-$CKPT}" --out "$OUT/verdict.json"
  # 4. what goes back: ≤ 8 files, ≤ 64 MiB
  split -b 20M -d "$RUN/export/$name" "$OUT/$name.part."
  cp "$RUN/export/results.json" "$OUT/results.json"
  if [ -f "$RUN/timeline.npz" ]; then cp "$RUN/timeline.npz" "$OUT/${name%.pt}.timeline.npz"; fi
  tar czf "$OUT/logs.tgz" -C "$RUN" train.log export.log probe.log $(cd "$RUN" && ls probe.json metrics.jsonl summary.json 2>/dev/null)
  "$PY" scripts/gpu_queue.py check-out "$OUT"
  echo "done in $SECONDS s" ;;
pack)
  eval "$(Q next)"
  if [ -z "$ID" ]; then echo "the queue is empty"; exit 0; fi
  tree=$( (git ls-files -z | xargs -0 du -cb 2>/dev/null || true) | tail -n 1 | cut -f1)
  extra=$( (du -cb "$DATA" .whl ${INIT:+"$INIT"} 2>/dev/null || true) | tail -n 1 | cut -f1)
  if [ ! -d "$DATA" ]; then echo "no $DATA: build it first (scripts/prep_large_vocab.py)" >&2; fi
  echo "next: $ID; tracked tree $((tree / 1048576)) MiB + data, wheels${INIT:+ and INIT} $((extra / 1048576)) MiB"
  if [ $((tree + extra)) -gt $((64 * 1048576)) ]; then
    echo "over 64 MiB: move the committed checkpoints out of the tree (keep ${INIT:-none}), or carry less data" >&2
    exit 1
  fi ;;
land)
  from=${2:?the folder run brought back}
  eval "$(Q next)"
  name=$(basename "$CKPT")
  mkdir -p "$WORK/landed"
  cat "$from/$name".part.* >"$WORK/landed/$name"
  cp "$from/results.json" "$WORK/landed/${name%.pt}.results.json"
  if [ -f "$from/results-gpu.json" ]; then cp "$from/results-gpu.json" "$BENCH"; fi
  if "$PY" -c "import json,sys; sys.exit(0 if json.load(open('$from/verdict.json'))['replace'] else 1)"; then
    cp "$WORK/landed/$name" "$CKPT"
    if [ -f "$from/${name%.pt}.timeline.npz" ]; then cp "$from/${name%.pt}.timeline.npz" "${CKPT%.pt}.timeline.npz"; fi
    echo "shipped $CKPT"
  else
    echo "kept the shipped file: see $from/verdict.json (the new one is in $WORK/landed)"
  fi
  Q done --item "$ID" --note "landed $(date -u +%F): $(tr -d '\n' <"$from/verdict.json")" ;;
*) echo "usage: $0 run|pack|land DIR" >&2; exit 2 ;;
esac
