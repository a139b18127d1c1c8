#!/usr/bin/env bash
# Build .gpu-data/ (git-ignored), the Europarl data that travels to a lent GPU with
# `run(carry=[".gpu-data", ".whl"])`: the device copies at most 64 MiB per call *including tracked
# files*, so the committed checkpoints are moved out of the tree for those calls and the training
# pairs go Moses-tokenised (scripts/pretokenize.py: no tokenising on the device) and xz-compressed
# (~34 MB for all 492,274 pairs). PAIRS caps the training pairs (default: all; the file is
# pre-shuffled, so a head is a uniform sample). Also fetches the wheels the device lacks into .whl/.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${SRC:-data}
PAIRS=${PAIRS:-}
D=.gpu-data
mkdir -p "$D/europarl-v7-fr-en" "$D/wmt"
for l in en fr; do
  if [ -n "$PAIRS" ]; then zcat "$SRC/europarl-v7-fr-en/train.$l.gz" | head -n "$PAIRS" > "/tmp/train.$l"
  else zcat "$SRC/europarl-v7-fr-en/train.$l.gz" > "/tmp/train.$l"; fi
  python scripts/pretokenize.py "/tmp/train.$l" "$D/europarl-v7-fr-en/train.tok.$l.xz" &
  zcat "$SRC/europarl-v7-fr-en/dev2000q4.$l.gz" | head -n 1000 | gzip -9 -n > "$D/europarl-v7-fr-en/dev2000q4.$l.gz"
  cp "$SRC/europarl-v7-fr-en/test2000q4.$l.gz" "$D/europarl-v7-fr-en/"
  cp "$SRC/wmt/newstest2014-fren.$l.gz" "$D/wmt/"
done
wait
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl sacremoses==0.2.0 sacrebleu==2.6.0
du -sh "$D" .whl; git ls-files -z | xargs -0 du -cb | tail -n 1 | awk '{printf "tracked files: %.1f MB\n", $1/1e6}'
