#!/usr/bin/env bash
# Issue 10's speed target on one lent GPU: the faithfulness corpus CLI on all 1,000 test_2016_flickr
# sentences (`python -m nmt faithfulness … --device cuda`), timed; then the Europarl RNNsearch-50.
#
# Here (this machine), before and after the device calls:
#   scripts/faithfulness_gpu.sh stash MODEL   # move every checkpoint but checkpoints/MODEL.pt to
#                                             # ../ckpt-stash: a `run` sends tracked files too, and the
#                                             # whole tree may hold 64 MiB (m30k: 24 MB, Europarl: 39 MB)
#   scripts/faithfulness_gpu.sh restore       # bring them back; `git status` must then be clean
#   scripts/faithfulness_gpu.sh wheels        # captum, sacremoses, sacrebleu wheels into .whl/ (the
#                                             # device image has torch, scipy, tqdm, numpy; not captum)
# On the device (one `run` each, carry [".whl", ".gpu-data/multi30k", ".gpu-data/wmt",
# ".gpu-data/alignment"], the command starting with `export DATA=.gpu-data OUT=$OUT;`):
#   scripts/faithfulness_gpu.sh probe         # 48 sentences with 1 and with 4 workers -> $OUT/probe-w*.json
#   WORKERS=8 scripts/faithfulness_gpu.sh m30k        # all 1,000 sentences + --time-panel -> $OUT/m30k.json
#                                                     # (H100, 2026-11-22: 143.5 s)
#   WORKERS=10 scripts/faithfulness_gpu.sh europarl   # 1,000 newstest2014 sentences (stash europarl-… first;
#                                                     # 276.4 s)
#   DEVICE=cpu WORKERS=16 scripts/faithfulness_gpu.sh m30k   # the same on the device's 16 CPU cores alone (258.6 s)
# One worker is bound by kernel launches on its CPU thread (48 sentences: 29 s), so run several.
# Each run writes its log beside its JSON. Copy the numbers into bench/faithfulness-*.json and the
# README's "Is attention an explanation?" section.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-data}
OUT=${OUT:-out}
PY=${PY:-python3}
WORKERS=${WORKERS:-4}
DEVICE=${DEVICE:-cuda}  # DEVICE=cpu PROBE_LIMIT=2 rehearses `probe` here
PROBE_LIMIT=${PROBE_LIMIT:-48}
STASH=../ckpt-stash
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 RNNSEARCH_THREADS=1

setup() {  # the carried wheels into /tmp/site (once per fresh machine)
  if [ ! -d /tmp/site ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  fi
  export PYTHONPATH=/tmp/site
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
}

faith() {  # faith NAME CHECKPOINT DATA_DIR SPLIT EXTRA...: one timed CLI run -> $OUT/NAME.json
  local name=$1 ckpt=$2 dir=$3 split=$4; shift 4
  mkdir -p "$OUT"
  "$PY" -m nmt.explanation.faithfulness --checkpoint "$ckpt" --data "$dir" --split "$split" --json "$OUT/$name.json" \
    --device "$DEVICE" --no-progress "$@" 2>&1 | tee "$OUT/$name.log"
}

case "${1:-}" in
stash)
  keep="checkpoints/${2:?stash MODEL, e.g. m30k-en-fr-rnnsearch}.pt"
  [ -f "$keep" ] || { echo "no $keep" >&2; exit 2; }
  mkdir -p "$STASH"
  for f in checkpoints/*.pt; do [ "$f" = "$keep" ] || mv "$f" "$STASH/"; done
  du -sh checkpoints ;;
restore)
  if compgen -G "$STASH/*.pt" >/dev/null; then mv "$STASH"/*.pt checkpoints/; fi
  git status --short checkpoints ;;
wheels)
  for w in captum==0.9.0 sacremoses==0.2.0 sacrebleu==2.6.0; do
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl "$w"
  done
  ls .whl ;;
probe)
  setup
  for w in 1 4; do
    faith "probe-w$w" checkpoints/m30k-en-fr-rnnsearch.pt "$DATA/multi30k" test_2016_flickr --limit "$PROBE_LIMIT" --workers "$w"
  done ;;
m30k)
  setup
  faith m30k checkpoints/m30k-en-fr-rnnsearch.pt "$DATA/multi30k" test_2016_flickr --workers "$WORKERS" \
    --time-panel ${EXTRA:-} ;;
europarl)
  setup
  faith europarl checkpoints/europarl-en-fr-rnnsearch-50.pt "$DATA/wmt" newstest2014-fren --limit 1000 \
    --workers "$WORKERS" ${EXTRA:-} ;;
*)
  sed -n '/^set -euo/q;2,$p' "$0"; exit 2 ;;
esac
