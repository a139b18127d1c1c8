#!/usr/bin/env bash
# Build .gpu-data/ (git-ignored), the Europarl subset that travels to a lent GPU with
# `run(carry=[".gpu-data"])`: the device copies at most 64 MiB per call *including tracked files*
# (the committed checkpoints take ~50 MB), so the training pairs go xz-compressed (~7 MB per 100k
# pairs). PAIRS (default 150000) caps the training subset; the file is pre-shuffled, so a head is a
# uniform sample. On the device: DATA=.gpu-data scripts/europarl_gpu.sh start
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${SRC:-data}
PAIRS=${PAIRS:-150000}
D=.gpu-data
mkdir -p "$D/europarl-v7-fr-en" "$D/wmt"
for l in en fr; do
  zcat "$SRC/europarl-v7-fr-en/train.$l.gz" | head -n "$PAIRS" | xz -9 -T1 > "$D/europarl-v7-fr-en/train.$l.xz"
  zcat "$SRC/europarl-v7-fr-en/dev2000q4.$l.gz" | head -n 1000 | gzip -9 -n > "$D/europarl-v7-fr-en/dev2000q4.$l.gz"
  cp "$SRC/europarl-v7-fr-en/test2000q4.$l.gz" "$SRC/wmt/newstest2014-fren.$l.gz" "$D/" 2>/dev/null || true
  mv "$D/test2000q4.$l.gz" "$D/europarl-v7-fr-en/"; mv "$D/newstest2014-fren.$l.gz" "$D/wmt/"
done
du -sh "$D"; git ls-files -z | xargs -0 du -cb | tail -n 1 | awk '{printf "tracked files: %.1f MB\n", $1/1e6}'
